// The Tokenize task: text (and a pair) through the checkpoint's tokenizer,
// as the model would see it: ids, pieces, type ids, character offsets. No
// engine work: answered at once.
#ifndef DEBERTA_SERVICE_TASKS_TOKENIZE_H_
#define DEBERTA_SERVICE_TASKS_TOKENIZE_H_

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "service/tasks/task.h"

namespace deberta::service {

// FailedPrecondition without tokenizer files; InvalidArgument for a bad
// max_length or text that does not fit without truncation.
absl::StatusOr<TaskWork> StartTokenize(const TaskEnv& env, const serving::v1::TokenizeRequest& request,
                                       serving::v1::TokenizeResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_TOKENIZE_H_
