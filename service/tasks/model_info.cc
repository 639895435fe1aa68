// The GetModelInfo task.
#include "service/tasks/model_info.h"

#include <string>

namespace deberta::service {

absl::StatusOr<TaskWork> StartGetModelInfo(const TaskEnv& env, const serving::v1::GetModelInfoRequest& /*request*/,
                                           serving::v1::ModelInfo* response) {
  const model::ModelInfo& info = env.info;
  response->set_model_name(info.name);
  response->set_model_type(info.model_type);
  response->set_description(info.description);
  for (const std::string& label : info.labels) response->add_labels(label);
  response->set_vocab_size(info.vocab_size);
  response->set_max_sequence_length(info.max_sequence_length);
  const model::SpecialTokens& special = env.special_tokens;
  response->set_pad_token_id(special.pad);
  response->set_cls_token_id(special.cls);
  response->set_sep_token_id(special.sep);
  response->set_unk_token_id(special.unk);
  response->set_mask_token_id(special.mask);
  response->set_device(info.device);
  response->set_dtype(info.dtype);
  response->set_emd_enabled(info.emd_enabled);
  response->set_cpu_kernels(info.cpu_kernels);
  response->set_server_version(env.server_version);
  response->set_version(env.model_version);
  response->set_has_classifier(info.has_classifier);
  response->set_has_fill_mask(info.has_mlm_head);
  response->set_has_token_classifier(info.has_token_classifier);
  response->set_is_reranker(info.has_classifier && info.labels.size() == 1);
  response->set_problem_type(model::ProblemTypeName(info.problem_type));
  const model::Tokenizer* tokenizer = env.requests.tokenizer;
  response->set_tokenizer(tokenizer != nullptr ? tokenizer->kind() : "");
  response->set_tokenizer_vocab_size(tokenizer != nullptr ? tokenizer->vocab_size() : 0);
  return TaskWork{};
}

}  // namespace deberta::service
