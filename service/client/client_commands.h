// Client commands of deberta-cli against a running deberta-server:
// classify, fill-mask, info, health, bench.
#ifndef DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_
#define DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_

#include <string>
#include <vector>

namespace deberta::service {

// Runs `command` with its positional `args`; returns the process exit code.
int RunClientCommand(const std::string& command, const std::vector<std::string>& args);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_
