#include "verify/image.h"

#include <fmt/format.h>

#include <cmath>

namespace canrun::verify {
namespace {

constexpr int kWindow = 7;

//! The luma of an H × W × 3 image.
std::vector<double> luma(const Tensor& image) {
  const std::size_t pixels = image.values.size() / 3;
  std::vector<double> out(pixels);
  for (std::size_t i = 0; i < pixels; ++i) {
    const double* rgb = image.values.data() + 3 * i;
    out[i] = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
  }
  return out;
}

double standard_deviation(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double variance = 0;
  for (double v : values) variance += (v - mean) * (v - mean);
  return std::sqrt(variance / static_cast<double>(values.size()));
}

}  // namespace

ImageThresholds image_thresholds(std::string_view dtype) {
  // Measured on the diffusers fixtures (tests/fixtures/diffusers_models.py: a Stable Diffusion
  // UNet pipeline at 32 px, a PixArt-Sigma transformer pipeline at 256 px, 2 steps) on the CPU,
  // TorchInductor against the eager reference (bench/calibrate_thresholds.py): float32 at worst
  // PSNR 83 dB and SSIM 1.0000, bfloat16 44.6 dB and 0.9996. An accelerator rounds otherwise
  // (cuDNN convolutions run float32 as TF32 by default; its bfloat16 kernels fuse differently),
  // so the floors leave room: float32 35 dB and 0.98, bfloat16 and float16 25 dB and 0.90. An
  // image from other noise or a broken denoiser is near 10 dB.
  if (dtype == "float32") return {35.0, 0.98};
  return {25.0, 0.90};
}

double psnr_db(const Tensor& a, const Tensor& b) {
  double squared = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    squared += (a.values[i] - b.values[i]) * (a.values[i] - b.values[i]);
  }
  if (squared == 0) return INFINITY;
  const double mse = squared / static_cast<double>(a.values.size());
  return 10 * std::log10(255.0 * 255.0 / mse);
}

double ssim(const Tensor& a, const Tensor& b) {
  const auto height = static_cast<int>(a.shape[0]);
  const auto width = static_cast<int>(a.shape[1]);
  const std::vector<double> x = luma(a), y = luma(b);
  const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
  constexpr double n = kWindow * kWindow;
  double total = 0;
  int windows = 0;
  for (int top = 0; top + kWindow <= height; ++top) {
    for (int left = 0; left + kWindow <= width; ++left) {
      double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
      for (int i = top; i < top + kWindow; ++i) {
        for (int j = left; j < left + kWindow; ++j) {
          const double u = x[i * width + j], v = y[i * width + j];
          sx += u;
          sy += v;
          sxx += u * u;
          syy += v * v;
          sxy += u * v;
        }
      }
      const double mx = sx / n, my = sy / n;
      const double vx = (sxx - n * mx * mx) / (n - 1), vy = (syy - n * my * my) / (n - 1);
      const double cxy = (sxy - n * mx * my) / (n - 1);
      total += ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
      ++windows;
    }
  }
  return windows ? total / windows : (psnr_db(a, b) == INFINITY ? 1.0 : 0.0);
}

ImageComparison compare_images(const Tensor& got, const Tensor& reference) {
  ImageComparison out;
  const auto is_image = [](const Tensor& t) {
    return t.shape.size() == 3 && t.shape[2] == 3 && t.shape[0] > 0 && t.shape[1] > 0;
  };
  if (!is_image(got) || got.shape != reference.shape) {
    out.shape_error = fmt::format("an image of shape [{}], the reference's [{}]",
                                  fmt::join(got.shape, ", "), fmt::join(reference.shape, ", "));
    return out;
  }
  out.pixel_std = standard_deviation(got.values);
  out.psnr_db = psnr_db(got, reference);
  out.ssim = ssim(got, reference);
  return out;
}

}  // namespace canrun::verify
