// How the judge's features (judge/judge.py) become one fluency score: a logistic regression on
// the features and their pairwise products (quadratic terms: a loop is bad where the words are
// plain English, a low likelihood is bad unless the text is a list...), fitted on labelled texts,
// and a threshold on its score that weighs a false PASS kFalsePassCost times a false FAIL. Also
// the folds that estimate how it does on texts it was not fitted on. Pure functions of their
// inputs: the same texts give the same combination.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <vector>

namespace canrun::judge {

//! What a false PASS costs, in false FAILs, when the threshold is chosen. Measured on the
//! labelled set (held-out part): the strict threshold (no false PASS on the fitting part) fails
//! 14 of 103 fluent texts; weights from 3 to 30 all give the same held-out figures.
inline constexpr double kFalsePassCost = 10;

//! The L2 penalty of the fit, chosen by 5-fold cross-validation on the labelled set (the least
//! kFalsePassCost-weighted errors among 0.3, 1, 3 and 10).
inline constexpr double kPenalty = 3;

struct Combination {
  std::vector<std::string> names;  //!< the features, in the order of `weights`
  std::vector<double> mean;        //!< each feature is standardised: (x - mean) / scale
  std::vector<double> scale;
  std::vector<double> weights;  //!< of the standardised features
  double bias = 0;

  //! The combined score: the log-odds that the text is fluent.
  double score(const std::vector<double>& features) const;
  //! What feature `at` adds to the score of `features`.
  double contribution(std::size_t at, const std::vector<double>& features) const;
};

//! Fits a logistic regression (L2 penalty `penalty` on the standardised weights, not the bias;
//! each label weighted to count as much as the other) by Newton's method. Needs both labels.
Combination fit_combination(const std::vector<std::string>& names,
                            const std::vector<std::vector<double>>& features,
                            const std::vector<bool>& fluent, double penalty = kPenalty);

//! The threshold with the least `false_pass_cost` × false PASS + false FAIL on `scores`; among
//! equal costs, the middle of the widest gap between neighbouring scores.
double cautious_threshold(const std::vector<double>& scores, const std::vector<bool>& fluent,
                          double false_pass_cost = kFalsePassCost);

//! `names` followed by the name of each product of two of them ("a*b", "a*a"), in the order
//! with_pairs() gives the values.
std::vector<std::string> with_pair_names(const std::vector<std::string>& names);
std::vector<double> with_pairs(const std::vector<double>& features);

//! A fold number in [0, k) for each text, stratified by class (each class dealt round-robin in
//! its order of appearance), so every fold holds its share of every class.
std::vector<int> stratified_folds(const std::vector<std::string>& classes, int k);

}  // namespace canrun::judge
