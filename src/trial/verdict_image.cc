// One core, text-to-image: the run's image against the reference's, and neither blank nor NaN.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/image.h"
#include "verify/verification.h"

namespace canrun::trial {

namespace fs = std::filesystem;

Status compare_image_with_reference(const fs::path& run_dir, const run::RunReport& report,
                                    const verify::Reference& reference, const std::string& dtype,
                                    dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  CANRUN_ASSIGN_OR_RETURN(const OutputTensors tensors,
                          read_output_tensors(run_dir, report, reference, "image"));
  const verify::Tensor& got = tensors.got;
  const verify::ImageComparison compared = verify::compare_images(got, tensors.expected);
  const verify::ImageThresholds thresholds = verify::image_thresholds(dtype);
  const std::string size =
      got.shape.size() == 3 ? fmt::format("{}×{}", got.shape[1], got.shape[0]) : "no";
  row.output_text = fmt::format(
      "{} image; against the CPU reference PSNR {:.1f} dB (threshold {:g}), SSIM {:.4f} "
      "(threshold {:g}){}",
      size, compared.psnr_db, thresholds.min_psnr_db, compared.ssim, thresholds.min_ssim,
      throughput_suffix(report, 2));
  if (!compared.shape_error.empty()) {
    fail_comparison(
        row, fmt::format("the image does not match the CPU reference's: {}", compared.shape_error),
        "image");
  } else if (report.nan_values.value_or(0) > 0) {
    fail_comparison(row, fmt::format("the image holds {} NaN values", *report.nan_values), "image");
  } else if (compared.pixel_std < verify::kBlankPixelStd) {
    fail_comparison(
        row,
        fmt::format("the image is blank (pixel standard deviation {:.2f})", compared.pixel_std),
        "image");
  } else if (!(compared.psnr_db >= thresholds.min_psnr_db) ||
             !(compared.ssim >= thresholds.min_ssim)) {
    fail_comparison(row,
                    fmt::format("the image differs from the CPU reference's: PSNR {:.1f} dB "
                                "(threshold {:g}), SSIM {:.4f} (threshold {:g}) in {}",
                                compared.psnr_db, thresholds.min_psnr_db, compared.ssim,
                                thresholds.min_ssim, dtype),
                    "image");
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

}  // namespace canrun::trial
