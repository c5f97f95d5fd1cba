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

Result<OutputTensors> read_output_tensors(const fs::path& run_dir, const run::RunReport& report,
                                          const verify::Reference& reference,
                                          const std::string& name) {
  CANRUN_ASSIGN_OR_RETURN(const fs::path file, run_file(run_dir, report.outputs_file, "outputs"));
  CANRUN_ASSIGN_OR_RETURN(verify::Tensor got, verify::read_tensor(file, name));
  CANRUN_ASSIGN_OR_RETURN(verify::Tensor expected,
                          verify::read_tensor(reference.outputs_file, name));
  return OutputTensors{std::move(got), std::move(expected)};
}

std::string throughput_suffix(const run::RunReport& report, int decimals) {
  if (!report.throughput) return {};
  return fmt::format("; {:.{}f} {}", *report.throughput, decimals, report.throughput_unit);
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
