// RunCommand: a shell command's exit code and output, for tests that drive
// the real binaries (deberta-cli, curl).
#ifndef DEBERTA_TESTS_TESTING_RUN_COMMAND_H_
#define DEBERTA_TESTS_TESTING_RUN_COMMAND_H_

#include <string>

namespace deberta::testing {

struct CommandResult {
  int exit_code = -1;  // -1 if it did not exit normally.
  std::string output;  // stdout and stderr.
};

CommandResult RunCommand(const std::string& command);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_RUN_COMMAND_H_
