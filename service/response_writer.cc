// Engine outputs -> response messages.
#include "service/response_writer.h"

#include <algorithm>
#include <numeric>

namespace deberta::service {

namespace pb = serving::v1;

void WriteClassification(const model::ClassifyOutput& output, int top_k,
                         const std::vector<std::string>& labels, pb::Classification* out) {
  const int n = static_cast<int>(output.logits.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return output.probabilities[a] > output.probabilities[b];
  });
  for (int k = 0; k < n; ++k) {
    out->add_logits(output.logits[k]);
    out->add_probabilities(output.probabilities[k]);
  }
  for (int k = 0; k < top_k && k < n; ++k) {
    const int id = order[k];
    pb::LabelScore* label = out->add_labels();
    label->set_label_id(id);
    label->set_label(id < static_cast<int>(labels.size()) ? labels[id] : "");
    label->set_probability(output.probabilities[id]);
    label->set_logit(output.logits[id]);
  }
}

void WriteFillMaskResult(const model::FillMaskOutput& output, const model::Tokenizer* tokenizer,
                         const std::vector<int32_t>* text_input_ids, pb::FillMaskResult* out) {
  std::vector<int32_t> filled;
  if (text_input_ids != nullptr) filled = *text_input_ids;
  for (const model::MaskPrediction& p : output.predictions) {
    pb::MaskPrediction* prediction = out->add_predictions();
    prediction->set_position(p.position);
    for (const model::TokenScore& c : p.candidates) {
      pb::TokenCandidate* candidate = prediction->add_candidates();
      candidate->set_token_id(c.token_id);
      candidate->set_probability(c.probability);
      if (tokenizer == nullptr) continue;
      candidate->set_token(tokenizer->Piece(c.token_id));
      if (text_input_ids != nullptr && p.position >= 0 && p.position < static_cast<int32_t>(filled.size())) {
        const int32_t mask = filled[p.position];
        filled[p.position] = c.token_id;
        // Decode drops the other masks and the special tokens.
        if (auto text = tokenizer->Decode(filled); text.ok()) candidate->set_sequence(*text);
        filled[p.position] = mask;
      }
    }
  }
}

}  // namespace deberta::service
