// What every task file shares: the service's view of the model (TaskEnv),
// the work a request becomes (TaskWork), and the one signature of a task's
// entry point. A task turns its request into work, names the engine call
// it needs by the task type it builds (engine_task.h) and writes its
// answer; the service does the rest for every RPC alike (the API key, the
// metrics, the access log, scheduling, cancellation and deadlines:
// inference_service.h).
#ifndef DEBERTA_SERVICE_TASKS_TASK_H_
#define DEBERTA_SERVICE_TASKS_TASK_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/special_tokens.h"
#include "service/batch_task.h"
#include "service/request_builder.h"

namespace deberta::service {

// Read-only, shared by every call; outlives them.
struct TaskEnv {
  model::ModelInfo info;
  // Limits, truncation, the tokenizer, and the mask id fill-mask predicts
  // when a sequence names no positions.
  RequestOptions requests;
  model::SpecialTokens special_tokens;
  std::string server_version;
  int64_t model_version = 1;  // Its numbered folder in a model repository.
};

// What a request became: tasks for the batcher, answered after the last
// one, or none when the task answered at once (its response is written).
struct TaskWork {
  std::vector<std::unique_ptr<BatchTask>> tasks;
  // Runs after every task succeeded, before the answer; its status is the
  // answer's (e.g. zero-shot's scores over all candidates). May be null.
  std::function<absl::Status()> complete;
};

// A task's entry point: checks the request, then returns its work, writing
// the response now or from its tasks' writers (the response outlives the
// call's tasks). An error is the answer: InvalidArgument for bad input,
// FailedPrecondition when the served model cannot do it.
template <typename Request, typename Response>
using StartTask = absl::StatusOr<TaskWork> (*)(const TaskEnv& env, const Request& request, Response* response);

// Indices of `scores`, highest score first; ties keep index order.
std::vector<int> OrderByScore(const std::vector<float>& scores);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_TASK_H_
