// Writing engine outputs into response messages: pure functions, one per
// endpoint, called from each task's `done` on the batcher thread.
#ifndef DEBERTA_SERVICE_RESPONSE_WRITER_H_
#define DEBERTA_SERVICE_RESPONSE_WRITER_H_

#include <string>
#include <vector>

#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "model/tokenizer.h"

namespace deberta::service {

// Indices of `scores`, highest score first; ties keep index order.
std::vector<int> OrderByScore(const std::vector<float>& scores);

// Every logit and probability in label-id order, then the `top_k` most
// probable labels, highest first (ties keep label order).
void WriteClassification(const model::ClassifyOutput& output, int top_k,
                         const std::vector<std::string>& labels, serving::v1::Classification* out);

// One prediction per predicted position, candidates highest first. With a
// tokenizer, each candidate also carries its piece; with `text_input_ids`
// (the input, when it was built from text) also the text with the
// candidate in place of its mask.
void WriteFillMaskResult(const model::FillMaskOutput& output, const model::Tokenizer* tokenizer,
                         const std::vector<int32_t>* text_input_ids, serving::v1::FillMaskResult* out);

// Every candidate label with its score and entailment logit, highest score
// first (`logits`: each candidate's classifier logits, in request order).
void WriteZeroShotLabels(const serving::v1::ZeroShotClassifyRequest& request, const std::vector<float>& scores,
                         const std::vector<std::vector<float>>& logits, int entailment,
                         serving::v1::ZeroShotClassifyResponse* out);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_RESPONSE_WRITER_H_
