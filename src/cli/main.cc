// canrun's entry point: the only place exceptions are caught.
#include <exception>

#include "cli/app.h"
#include "cli/exit_code.h"
#include "core/log.h"

int main(int argc, char** argv) {
  try {
    return canrun::cli::run(argc, argv);
  } catch (const std::exception& unexpected) {
    canrun::log::error("internal error: {}", unexpected.what());
    return canrun::cli::kExitFailed;
  }
}
