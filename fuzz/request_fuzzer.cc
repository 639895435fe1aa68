// libFuzzer target: requests to the tasks' inputs. The bytes are a
// ClassifyRequest, a FillMaskRequest, a ZeroShotClassifyRequest, a
// ClassifyTokensRequest or a RerankRequest (the first byte chooses), parsed
// and checked against a model of 1000 ids and 3 NLI labels (1 label for
// rerank) with the golden GPT-2 tokenizer for text; every input built, each
// window included, must pass the model's own validation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/tokenizer.h"
#include "service/request_builder.h"
#include "service/tasks/classify.h"
#include "service/tasks/classify_tokens.h"
#include "service/tasks/fill_mask.h"
#include "service/tasks/rerank.h"
#include "service/tasks/zero_shot.h"

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
  info.has_token_classifier = true;
  deberta::service::RequestOptions options;
  options.max_sequences_per_request = 8;
  options.mask_token_id = 860;
  options.max_top_k = 10;
  options.max_fill_mask_candidates = 1000;
  options.truncate = (data[0] & 2) != 0;
  options.tokenizer = Golden();
  options.max_windows = 4;
  options.max_rerank_documents = 8;
  options.max_tokens_per_request = 400;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto check = [](bool ok) {
    if (!ok) std::abort();
  };
  auto valid = [&](const std::vector<deberta::model::Sequence>& sequences) {
    for (const auto& sequence : sequences) check(deberta::model::ValidateSequence(info, sequence).ok());
  };
  switch (data[0] % 5) {
    case 0: {
      pb::ClassifyRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildClassifyInputs(request, info, options);
      if (!built.ok()) break;
      for (const auto& input : built->sequences) valid(input.sequences);
      break;
    }
    case 1: {
      pb::FillMaskRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildFillMaskInputs(request, info, options);
      if (!built.ok()) break;
      for (const auto& input : *built) check(deberta::model::ValidateMaskedSequence(info, input.input).ok());
      break;
    }
    case 2: {
      pb::ZeroShotClassifyRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildZeroShotInputs(request, info, options);
      if (!built.ok()) break;
      for (const auto& pairs : built->windows) valid(pairs);
      break;
    }
    case 3: {
      pb::ClassifyTokensRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      auto built = deberta::service::BuildClassifyTokensInputs(request, info, Golden()->special_tokens(), options);
      if (!built.ok()) break;
      for (const auto& input : built->inputs) valid(input.sequences);
      break;
    }
    default: {
      pb::RerankRequest request;
      if (!request.ParseFromString(bytes)) return 0;
      info.labels = {"LABEL_0"};
      auto built = deberta::service::BuildRerankInputs(request, info, options);
      if (!built.ok()) break;
      for (const auto& document : built->documents) valid(document.sequences);
    }
  }
  return 0;
}
