// The GetModelInfo task: what is served (model, labels, limits, special
// tokens, device, dtype, CPU kernels, heads, tokenizer). Answered at once.
#ifndef DEBERTA_SERVICE_TASKS_MODEL_INFO_H_
#define DEBERTA_SERVICE_TASKS_MODEL_INFO_H_

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "service/tasks/task.h"

namespace deberta::service {

absl::StatusOr<TaskWork> StartGetModelInfo(const TaskEnv& env, const serving::v1::GetModelInfoRequest& request,
                                           serving::v1::ModelInfo* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_MODEL_INFO_H_
