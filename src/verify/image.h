// Verification of a text-to-image task against the CPU reference: the image run.py wrote
// (H × W × 3, 8 bits) must not be blank, must hold no NaN (counted by run.py before the
// conversion to 8 bits), and must be within the dtype's PSNR and SSIM of the reference image,
// drawn from the same seed on the CPU.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "verify/tensor_file.h"

namespace canrun::verify {

struct ImageThresholds {
  double min_psnr_db = 0;
  double min_ssim = 0;
};

//! Per dtype of the weights (see image.cc for what they were calibrated on).
ImageThresholds image_thresholds(std::string_view dtype);

//! An image whose pixels' standard deviation is below this is blank (one colour).
inline constexpr double kBlankPixelStd = 1.0;

struct ImageComparison {
  double psnr_db = 0;  //!< +inf for identical images
  double ssim = 0;
  double pixel_std = 0;  //!< of the image under test
  std::string shape_error;
};

//! PSNR over every channel (peak 255), and the mean SSIM of the luma (ITU-R BT.601) over 7 × 7
//! windows with the constants of Wang et al. (K1 0.01, K2 0.03, sample covariance), as
//! scikit-image's structural_similarity computes it by default.
ImageComparison compare_images(const Tensor& got, const Tensor& reference);

double psnr_db(const Tensor& a, const Tensor& b);
double ssim(const Tensor& a, const Tensor& b);

}  // namespace canrun::verify
