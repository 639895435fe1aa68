// Engine outputs -> response messages.
#include "service/response_writer.h"

#include <algorithm>
#include <numeric>

namespace deberta::service {

namespace pb = serving::v1;

std::vector<int> OrderByScore(const std::vector<float>& scores) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  return order;
}

void WriteClassification(const model::ClassifyOutput& output, int top_k,
                         const std::vector<std::string>& labels, pb::Classification* out) {
  const int n = static_cast<int>(output.logits.size());
  const std::vector<int> order = OrderByScore(output.probabilities);
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

void WriteZeroShotLabels(const pb::ZeroShotClassifyRequest& request, const std::vector<float>& scores,
                         const std::vector<std::vector<float>>& logits, int entailment,
                         pb::ZeroShotClassifyResponse* out) {
  for (int i : OrderByScore(scores)) {
    pb::ZeroShotLabel* label = out->add_labels();
    label->set_label(request.candidate_labels(i));
    label->set_score(scores[i]);
    label->set_entailment_logit(logits[i][entailment]);
  }
}

}  // namespace deberta::service
