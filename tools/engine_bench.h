// `deberta-cli engine-bench`: the load `bench` sends, run on the engine
// alone in one thread, in batches of --batch_size, without a server: the
// other side of the serving-overhead comparison (bench/serve_bench.sh).
#ifndef DEBERTA_TOOLS_ENGINE_BENCH_H_
#define DEBERTA_TOOLS_ENGINE_BENCH_H_

#include <memory>

#include "model/engine.h"

namespace deberta::tools {

// Runs on the calling thread (after engine->InitializeThread); latencies
// are per engine call. Returns the exit code.
int EngineBenchCommand(model::Engine& engine);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_ENGINE_BENCH_H_
