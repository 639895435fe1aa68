// Hugging Face's Inference API (the task shapes of Inference Endpoints and
// of transformers' pipelines) on the server's HTTP port, so that
// @huggingface/inference, huggingface_hub's InferenceClient or plain
// requests written for an endpoint work against this server unchanged:
//
//   POST /hf/models/{model}                   the model's task
//   POST /hf/models/{model}/pipeline/{task}   a task named: text-classification,
//                                             token-classification, fill-mask or
//                                             zero-shot-classification
//
// with the body {"inputs": ..., "parameters": {...}}. Either URL is what
// the clients take as their endpoint URL. A model's task, unnamed: zero-shot
// when the parameters hold candidate_labels, else token classification for
// a token classifier, text classification for a sequence classifier, and
// fill-mask for a masked language model.
//   text-classification       inputs: a text, {text, text_pair}, or a list of
//                             them; parameters top_k, function_to_apply
//                             (sigmoid, softmax, none), truncation. Answer: per
//                             input, [{label, score}] highest first.
//   token-classification      inputs: a text or a list; aggregation_strategy
//                             (none, simple (the default), first, average,
//                             max), ignore_labels, stride (windows over long
//                             texts, overlapping by stride tokens). Answer: per
//                             input, [{entity_group, score, word, start, end}]
//                             ({entity, ..., index} with none).
//   fill-mask                 inputs: a text with the mask token, or a list;
//                             top_k (5). Answer: [{score, token, token_str,
//                             sequence}] per mask. `targets` is refused.
//   zero-shot-classification  inputs: a text; candidate_labels (a list or a
//                             comma-separated string), hypothesis_template,
//                             multi_label. Answer: {sequence, labels, scores}.
// Errors are {"error": ...} with the HTTP status of the gRPC code. Each
// request is calls on the server's in-process channel, protocol "hf".
#ifndef DEBERTA_SERVICE_PROTOCOLS_HF_INFERENCE_H_
#define DEBERTA_SERVICE_PROTOCOLS_HF_INFERENCE_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

namespace deberta::service {

inline constexpr char kHuggingFacePrefix[] = "/hf/models/";

// Registers the two POST routes; `channel` is the server's in-process channel.
void AddHuggingFaceRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel);

// Their OpenAPI path items, for the server's document.
nlohmann::json HuggingFaceOpenApi();

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_HF_INFERENCE_H_
