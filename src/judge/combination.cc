#include "judge/combination.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace canrun::judge {
namespace {

//! Solves a x = b by Gaussian elimination with partial pivoting; `a` is n×n, row-major.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t column = 0; column < n; ++column) {
    std::size_t pivot = column;
    for (std::size_t row = column + 1; row < n; ++row)
      if (std::abs(a[row][column]) > std::abs(a[pivot][column])) pivot = row;
    std::swap(a[column], a[pivot]);
    std::swap(b[column], b[pivot]);
    if (std::abs(a[column][column]) < 1e-300) continue;
    for (std::size_t row = column + 1; row < n; ++row) {
      const double factor = a[row][column] / a[column][column];
      for (std::size_t k = column; k < n; ++k) a[row][k] -= factor * a[column][k];
      b[row] -= factor * b[column];
    }
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t row = n; row-- > 0;) {
    double sum = b[row];
    for (std::size_t k = row + 1; k < n; ++k) sum -= a[row][k] * x[k];
    x[row] = std::abs(a[row][row]) < 1e-300 ? 0.0 : sum / a[row][row];
  }
  return x;
}

double sigmoid(double z) {
  return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z));
}

}  // namespace

double Combination::score(const std::vector<double>& features) const {
  double sum = bias;
  for (std::size_t at = 0; at < weights.size(); ++at) sum += contribution(at, features);
  return sum;
}

double Combination::contribution(std::size_t at, const std::vector<double>& features) const {
  return weights[at] * (features[at] - mean[at]) / scale[at];
}

Combination fit_combination(const std::vector<std::string>& names,
                            const std::vector<std::vector<double>>& features,
                            const std::vector<bool>& fluent, double penalty) {
  const std::size_t n = features.size(), d = names.size();
  Combination c;
  c.names = names;
  c.mean.assign(d, 0.0);
  c.scale.assign(d, 1.0);
  for (std::size_t j = 0; j < d; ++j) {
    double sum = 0, squares = 0;
    for (const auto& x : features) sum += x[j];
    c.mean[j] = n ? sum / n : 0;
    for (const auto& x : features) squares += (x[j] - c.mean[j]) * (x[j] - c.mean[j]);
    const double deviation = n ? std::sqrt(squares / n) : 0;
    c.scale[j] = deviation > 1e-12 ? deviation : 1.0;
  }
  const auto positives = static_cast<double>(std::count(fluent.begin(), fluent.end(), true));
  const double negatives = static_cast<double>(n) - positives;
  const double weight_fluent = positives ? n / (2 * positives) : 0;
  const double weight_other = negatives ? n / (2 * negatives) : 0;

  // Parameters: d weights, then the bias.
  std::vector<double> beta(d + 1, 0.0);
  std::vector<std::vector<double>> z(n, std::vector<double>(d + 1, 1.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) z[i][j] = (features[i][j] - c.mean[j]) / c.scale[j];
  for (int iteration = 0; iteration < 100; ++iteration) {
    std::vector<double> gradient(d + 1, 0.0);
    std::vector<std::vector<double>> hessian(d + 1, std::vector<double>(d + 1, 0.0));
    for (std::size_t j = 0; j < d; ++j) {
      gradient[j] = penalty * beta[j];
      hessian[j][j] = penalty;
    }
    for (std::size_t i = 0; i < n; ++i) {
      double f = 0;
      for (std::size_t j = 0; j <= d; ++j) f += beta[j] * z[i][j];
      const double p = sigmoid(f);
      const double w = fluent[i] ? weight_fluent : weight_other;
      const double residual = w * (p - (fluent[i] ? 1.0 : 0.0));
      const double curvature = w * p * (1 - p);
      for (std::size_t j = 0; j <= d; ++j) {
        gradient[j] += residual * z[i][j];
        for (std::size_t k = 0; k <= d; ++k) hessian[j][k] += curvature * z[i][j] * z[i][k];
      }
    }
    const std::vector<double> step = solve(hessian, gradient);
    double largest = 0;
    for (std::size_t j = 0; j <= d; ++j) {
      beta[j] -= step[j];
      largest = std::max(largest, std::abs(step[j]));
    }
    if (largest < 1e-10) break;
  }
  c.weights.assign(beta.begin(), beta.begin() + static_cast<std::ptrdiff_t>(d));
  c.bias = beta[d];
  return c;
}

double cautious_threshold(const std::vector<double>& scores, const std::vector<bool>& fluent,
                          double false_pass_cost) {
  std::vector<double> sorted = scores;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) return 0;
  std::vector<std::pair<double, double>> candidates;  // threshold, the gap it sits in
  candidates.emplace_back(sorted.front() - 1, 1);
  for (std::size_t at = 1; at < sorted.size(); ++at)
    candidates.emplace_back((sorted[at - 1] + sorted[at]) / 2, sorted[at] - sorted[at - 1]);
  candidates.emplace_back(sorted.back() + 1, 1);
  double best = 0, best_cost = std::numeric_limits<double>::infinity(), best_gap = -1;
  for (const auto& [threshold, gap] : candidates) {
    double cost = 0;
    for (std::size_t at = 0; at < scores.size(); ++at) {
      const bool passes = scores[at] >= threshold;
      cost += fluent[at] ? !passes : passes * false_pass_cost;
    }
    if (cost < best_cost || (cost == best_cost && gap > best_gap)) {
      best = threshold;
      best_cost = cost;
      best_gap = gap;
    }
  }
  return best;
}

std::vector<std::string> with_pair_names(const std::vector<std::string>& names) {
  std::vector<std::string> all = names;
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i; j < names.size(); ++j) all.push_back(names[i] + "*" + names[j]);
  return all;
}

std::vector<double> with_pairs(const std::vector<double>& features) {
  std::vector<double> all = features;
  for (std::size_t i = 0; i < features.size(); ++i)
    for (std::size_t j = i; j < features.size(); ++j) all.push_back(features[i] * features[j]);
  return all;
}

std::vector<int> stratified_folds(const std::vector<std::string>& classes, int k) {
  // Each class starts where the one before it left off, so small classes do not all land in
  // fold 0.
  std::map<std::string, int> next;
  int start = 0;
  std::vector<int> folds;
  folds.reserve(classes.size());
  for (const auto& name : classes) {
    auto [at, inserted] = next.try_emplace(name, start);
    if (inserted) start = (start + 1) % k;
    folds.push_back(at->second++ % k);
  }
  return folds;
}

}  // namespace canrun::judge
