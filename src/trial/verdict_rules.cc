#include "trial/verdict_rules.h"

#include <fmt/format.h>

namespace canrun::trial {

namespace fs = std::filesystem;

Result<fs::path> run_file(const fs::path& run_dir, const std::string& name, std::string_view what) {
  if (name.empty()) return corrupt(fmt::format("run.py did not name its {} file", what));
  const fs::path path = run_dir / name;
  if (!fs::is_regular_file(path))
    return corrupt(fmt::format("run.py named {} as its {} file, but it is not there", name, what));
  return path;
}

void fail_comparison(dataset::VerdictRow& row, std::string error, std::string_view what) {
  row.result = VerdictResult::kFailMismatch;
  row.error = std::move(error);
  row.error_signature = fmt::format("FAIL_MISMATCH | {} differ from the CPU reference", what);
}

void fail_for_reference(const run::Classification& failure, const fs::path& reference_run_dir,
                        dataset::VerdictRow& row) {
  row.result = VerdictResult::kReferenceFail;
  row.error = fmt::format(
      "the CPU reference failed ({}), so there is no verdict on the backend ({}):\n{}",
      to_string(failure.result), (reference_run_dir / "run.py").string(), failure.error);
  row.error_signature = "REFERENCE_FAIL | " + failure.signature;
}

}  // namespace canrun::trial
