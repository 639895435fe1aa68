// libFuzzer target: requests to tasks. The bytes are a ClassifyRequest or
// a FillMaskRequest (the first byte chooses), parsed and built against a
// model of 100 ids and 3 labels with the golden GPT-2 tokenizer for text;
// every task built must pass the model's own validation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/tokenizer.h"
#include "service/request_builder.h"

namespace {

namespace pb = deberta::serving::v1;

const deberta::model::Tokenizer* Golden() {
  static auto* tokenizer = [] {
    auto loaded = deberta::model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TOKENIZERS_DIR) + "/gpt2_v1_like");
    if (!loaded.ok()) std::abort();
    return loaded->release();
  }();
  return tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  deberta::model::ModelInfo info;
  info.vocab_size = 1000;
  info.max_sequence_length = 64;
  info.labels = {"contradiction", "neutral", "entailment"};
  info.has_classifier = true;
  info.has_mlm_head = true;
  deberta::service::RequestOptions options;
  options.max_sequences_per_request = 8;
  options.mask_token_id = 860;
  options.max_top_k = 10;
  options.max_fill_mask_candidates = 1000;
  options.truncate = (data[0] & 2) != 0;
  options.tokenizer = Golden();
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto check = [&](const std::vector<std::unique_ptr<deberta::service::BatchTask>>& tasks, bool masked) {
    for (const auto& task : tasks) {
      const bool ok = masked ? deberta::model::ValidateMaskedSequence(info, task->input).ok()
                             : deberta::model::ValidateSequence(info, task->input.sequence).ok();
      if (!ok) std::abort();
    }
  };
  switch (data[0] % 3) {
    case 0: {
      pb::ClassifyRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildClassifyTasks(request, info, options);
      if (built.ok()) check(built->tasks, /*masked=*/false);
      break;
    }
    case 1: {
      pb::FillMaskRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildFillMaskTasks(request, info, options);
      if (built.ok()) check(*built, /*masked=*/true);
      break;
    }
    default: {
      pb::ZeroShotClassifyRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildZeroShotTasks(request, info, options);
      if (built.ok()) check(built->tasks, /*masked=*/false);
    }
  }
  return 0;
}
