// Client commands of deberta-cli against a running deberta-server:
// classify, fill-mask, info, health, bench; and engine-bench, which runs
// the same load on the engine alone.
#ifndef DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_
#define DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"

namespace deberta::service {

// Makes the engine that `engine-bench` measures (deberta-cli passes the
// LibTorch factory; this library stays torch-free).
using EngineMaker = std::function<absl::StatusOr<std::unique_ptr<model::Engine>>()>;

// Runs `command` with its positional `args`; returns the process exit code.
// `engine-bench` runs the engine offline, without a server, on the
// sequences `bench` would send, for the serving-overhead comparison.
int RunClientCommand(const std::string& command, const std::vector<std::string>& args,
                     const EngineMaker& make_engine);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_CLIENT_CLIENT_COMMANDS_H_
