// The Detokenize task: token ids back to text with the checkpoint's
// tokenizer. No engine work: answered at once.
#ifndef DEBERTA_SERVICE_TASKS_DETOKENIZE_H_
#define DEBERTA_SERVICE_TASKS_DETOKENIZE_H_

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "service/tasks/task.h"

namespace deberta::service {

// FailedPrecondition without tokenizer files; InvalidArgument for an id
// outside the vocabulary.
absl::StatusOr<TaskWork> StartDetokenize(const TaskEnv& env, const serving::v1::DetokenizeRequest& request,
                                         serving::v1::DetokenizeResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_DETOKENIZE_H_
