// The Detokenize task.
#include "service/tasks/detokenize.h"

#include <string>
#include <vector>

namespace deberta::service {

absl::StatusOr<TaskWork> StartDetokenize(const TaskEnv& env, const serving::v1::DetokenizeRequest& request,
                                         serving::v1::DetokenizeResponse* response) {
  if (env.requests.tokenizer == nullptr) {
    return absl::FailedPreconditionError("the served checkpoint has no tokenizer files");
  }
  const std::vector<int32_t> ids(request.token_ids().begin(), request.token_ids().end());
  absl::StatusOr<std::string> text = env.requests.tokenizer->Decode(ids);
  if (!text.ok()) return text.status();
  response->set_text(*text);
  return TaskWork{};
}

}  // namespace deberta::service
