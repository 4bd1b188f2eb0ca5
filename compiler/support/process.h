// Running the host compiler and test programs from the driver.
#pragma once

#include <string>
#include <vector>

namespace onnxc {

struct ProcessResult {
  int exit_code = -1;    // -1 when it did not exit normally
  int signal = 0;        // the signal that ended it, if any
  bool timed_out = false;
  std::string output;    // stdout and stderr together
};

// Runs argv[0] (searched in PATH) with the arguments; kills it after timeout_s seconds (0: none).
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_s = 0);

}  // namespace onnxc
