// TEI's gRPC messages -> the bodies of its HTTP routes (tei_api.h) -> TEI's
// gRPC answers.
#include "service/protocols/tei_grpc.h"

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "service/endpoint.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/tei_api.h"
#include "service/status_util.h"
#include "tei/v1/tei.grpc.pb.h"

namespace deberta::service {
namespace {

namespace tei = ::tei::v1;
namespace pb = serving::v1;
using json = nlohmann::json;
using Stub = GrpcAdapterBackend::Stub;
using HealthStub = GrpcAdapterBackend::HealthStub;
using SteadyClock = std::chrono::steady_clock;

CallOrigin TeiOrigin(const grpc::CallbackServerContext& context) { return CallOrigin::FromGrpc(context, Protocol::kTei); }

void SetMetadata(const TeiCalls& calls, SteadyClock::time_point started, tei::Metadata* metadata) {
  metadata->set_compute_chars(static_cast<uint32_t>(calls.characters));
  metadata->set_compute_tokens(static_cast<uint32_t>(calls.timing().tokens));
  metadata->set_total_time_ns(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - started).count()));
  metadata->set_queue_time_ns(static_cast<uint64_t>(calls.timing().queue_micros) * 1000);
  metadata->set_inference_time_ns(static_cast<uint64_t>(calls.timing().inference_micros) * 1000);
}

// truncate and truncation_direction as the HTTP body says them; false:
// absent (the server's --truncate).
json TruncationFields(bool truncate, tei::TruncationDirection direction) {
  json body = json::object();
  if (truncate) body["truncate"] = true;
  if (direction == tei::TRUNCATION_DIRECTION_LEFT) body["truncation_direction"] = "Left";
  return body;
}

absl::Status Predict(const CallOrigin& origin, Stub& stub, json inputs, bool raw_scores, bool truncate,
                     tei::TruncationDirection direction, tei::PredictResponse* response) {
  const SteadyClock::time_point started = SteadyClock::now();
  TeiCalls calls(origin, stub, "");
  json body = TruncationFields(truncate, direction);
  body["inputs"] = std::move(inputs);
  body["raw_scores"] = raw_scores;
  absl::StatusOr<json> answer = TeiPredict(calls, body);
  if (!answer.ok()) return answer.status();
  for (const json& prediction : *answer) {
    tei::Prediction* out = response->add_predictions();
    out->set_score(prediction["score"].get<float>());
    out->set_label(prediction["label"].get<std::string>());
  }
  SetMetadata(calls, started, response->mutable_metadata());
  return absl::OkStatus();
}

absl::Status PredictOne(const CallOrigin& origin, Stub& stub, const tei::PredictRequest& request,
                        tei::PredictResponse* response) {
  return Predict(origin, stub, request.inputs(), request.raw_scores(), request.truncate(),
                 request.truncation_direction(), response);
}

absl::Status PredictPairOne(const CallOrigin& origin, Stub& stub, const tei::PredictPairRequest& request,
                            tei::PredictResponse* response) {
  if (request.inputs_size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("PredictPair's inputs must hold two texts (the text and its pair), not ", request.inputs_size()));
  }
  return Predict(origin, stub, json::array({request.inputs(0), request.inputs(1)}), request.raw_scores(),
                 request.truncate(), request.truncation_direction(), response);
}

absl::Status RerankOne(const CallOrigin& origin, Stub& stub, const tei::RerankRequest& request,
                       tei::RerankResponse* response) {
  const SteadyClock::time_point started = SteadyClock::now();
  TeiCalls calls(origin, stub, "");
  json body = TruncationFields(request.truncate(), request.truncation_direction());
  body["query"] = request.query();
  body["texts"] = json(std::vector<std::string>(request.texts().begin(), request.texts().end()));
  body["raw_scores"] = request.raw_scores();
  body["return_text"] = request.return_text();
  absl::StatusOr<json> answer = TeiRerank(calls, body);
  if (!answer.ok()) return answer.status();
  for (const json& rank : *answer) {
    tei::Rank* out = response->add_ranks();
    out->set_index(rank["index"].get<uint32_t>());
    out->set_score(rank["score"].get<float>());
    if (rank.contains("text")) out->set_text(rank["text"].get<std::string>());
  }
  SetMetadata(calls, started, response->mutable_metadata());
  return absl::OkStatus();
}

absl::Status TokenizeOne(const CallOrigin& origin, Stub& stub, const tei::EncodeRequest& request,
                         tei::EncodeResponse* response) {
  TeiCalls calls(origin, stub, "");
  json body = {{"inputs", request.inputs()}, {"add_special_tokens", request.add_special_tokens()}};
  if (request.has_prompt_name()) body["prompt_name"] = request.prompt_name();
  absl::StatusOr<json> answer = TeiTokenize(calls, body);
  if (!answer.ok()) return answer.status();
  for (const json& token : answer->at(0)) {
    tei::SimpleToken* out = response->add_tokens();
    out->set_id(token["id"].get<uint32_t>());
    out->set_text(token["text"].get<std::string>());
    out->set_special(token["special"].get<bool>());
    if (!token["start"].is_null()) out->set_start(token["start"].get<uint32_t>());
    if (!token["stop"].is_null()) out->set_stop(token["stop"].get<uint32_t>());
  }
  return absl::OkStatus();
}

// Decoding keeps no special token; asked to keep them, it answers only ids
// that hold none (where keeping them changes nothing).
absl::Status NoSpecialTokens(const CallOrigin& origin, Stub& stub, const tei::DecodeRequest& request) {
  pb::GetModelInfoRequest info_request;
  pb::ModelInfo info;
  if (absl::Status s = CallInProcess(origin, stub, &Stub::GetModelInfo, info_request, &info); !s.ok()) return s;
  const std::set<uint32_t> special = {
      static_cast<uint32_t>(info.pad_token_id()), static_cast<uint32_t>(info.cls_token_id()),
      static_cast<uint32_t>(info.sep_token_id()), static_cast<uint32_t>(info.unk_token_id()),
      static_cast<uint32_t>(info.mask_token_id())};
  for (uint32_t id : request.ids()) {
    if (special.count(id) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "skip_special_tokens false is not supported for ids that hold special tokens (", id,
          "): this server's tokenizers decode content tokens only"));
    }
  }
  return absl::OkStatus();
}

absl::Status DecodeOne(const CallOrigin& origin, Stub& stub, const tei::DecodeRequest& request,
                       tei::DecodeResponse* response) {
  if (!request.skip_special_tokens()) {
    if (absl::Status s = NoSpecialTokens(origin, stub, request); !s.ok()) return s;
  }
  TeiCalls calls(origin, stub, "");
  const json body = {{"ids", std::vector<uint32_t>(request.ids().begin(), request.ids().end())},
                     {"skip_special_tokens", true}};
  absl::StatusOr<json> answer = TeiDecode(calls, body);
  if (!answer.ok()) return answer.status();
  response->set_text(answer->at(0).get<std::string>());
  return absl::OkStatus();
}

absl::Status InfoOne(const CallOrigin& origin, Stub& stub, const TeiGrpcLimits& limits, tei::InfoResponse* response) {
  TeiCalls calls(origin, stub, "");
  absl::StatusOr<json> info = TeiInfo(calls);
  if (!info.ok()) return info.status();
  response->set_version((*info)["version"].get<std::string>());
  response->set_model_id((*info)["model_id"].get<std::string>());
  response->set_model_dtype((*info)["model_dtype"].get<std::string>());
  const json& type = (*info)["model_type"];
  // A model without a classifier (fill-mask only) has no TEI type; it
  // reports TEI's default, embedding.
  if (type.contains("reranker")) response->set_model_type(tei::MODEL_TYPE_RERANKER);
  if (type.contains("classifier")) response->set_model_type(tei::MODEL_TYPE_CLASSIFIER);
  response->set_max_input_length(static_cast<uint32_t>((*info)["max_input_length"].get<int64_t>()));
  response->set_max_concurrent_requests(limits.max_concurrent_requests);
  response->set_max_batch_tokens(limits.max_batch_tokens);
  response->set_max_batch_requests(limits.max_batch_requests);
  response->set_max_client_batch_size(limits.max_client_batch_size);
  return absl::OkStatus();
}

}  // namespace

class TeiGrpcServices::InfoService : public tei::Info::CallbackService {
 public:
  InfoService(GrpcAdapterBackend* backend, TeiGrpcLimits limits) : backend_(backend), limits_(limits) {}

  grpc::ServerUnaryReactor* Info(grpc::CallbackServerContext* context, const tei::InfoRequest*,
                                 tei::InfoResponse* response) override {
    return backend_->Unary(context, [this, context, response](Stub& stub, HealthStub&) {
      return InfoOne(TeiOrigin(*context), stub, limits_, response);
    });
  }

 private:
  GrpcAdapterBackend* const backend_;
  const TeiGrpcLimits limits_;
};

namespace {

// A unary call and a stream of the same request on one function of
// (origin, stub, request, response).
template <typename Request, typename Response>
using OneRequest = absl::Status (*)(const CallOrigin&, Stub&, const Request&, Response*);

template <typename Request, typename Response>
grpc::ServerUnaryReactor* UnaryOf(GrpcAdapterBackend* backend, grpc::CallbackServerContext* context,
                                  const Request* request, Response* response, OneRequest<Request, Response> one) {
  return backend->Unary(context, [context, request, response, one](Stub& stub, HealthStub&) {
    return one(TeiOrigin(*context), stub, *request, response);
  });
}

template <typename Request, typename Response>
grpc::ServerBidiReactor<Request, Response>* StreamOf(GrpcAdapterBackend* backend, grpc::CallbackServerContext* context,
                                                     OneRequest<Request, Response> one) {
  return new SerialStream<Request, Response>(
      backend, [context, one](const Request& request, Response* response, Stub& stub, HealthStub&) {
        return one(TeiOrigin(*context), stub, request, response);
      });
}

}  // namespace

class TeiGrpcServices::PredictService : public tei::Predict::CallbackService {
 public:
  explicit PredictService(GrpcAdapterBackend* backend) : backend_(backend) {}

  grpc::ServerUnaryReactor* Predict(grpc::CallbackServerContext* context, const tei::PredictRequest* request,
                                    tei::PredictResponse* response) override {
    return UnaryOf(backend_, context, request, response, &PredictOne);
  }
  grpc::ServerUnaryReactor* PredictPair(grpc::CallbackServerContext* context, const tei::PredictPairRequest* request,
                                        tei::PredictResponse* response) override {
    return UnaryOf(backend_, context, request, response, &PredictPairOne);
  }
  grpc::ServerBidiReactor<tei::PredictRequest, tei::PredictResponse>* PredictStream(
      grpc::CallbackServerContext* context) override {
    return StreamOf(backend_, context, &PredictOne);
  }
  grpc::ServerBidiReactor<tei::PredictPairRequest, tei::PredictResponse>* PredictPairStream(
      grpc::CallbackServerContext* context) override {
    return StreamOf(backend_, context, &PredictPairOne);
  }

 private:
  GrpcAdapterBackend* const backend_;
};

namespace {

// RerankStream: one text per message, the first message's query and
// settings; answered once the client has sent them all.
class RerankCollector : public grpc::ServerReadReactor<tei::RerankStreamRequest> {
 public:
  RerankCollector(GrpcAdapterBackend* backend, grpc::CallbackServerContext* context, tei::RerankResponse* response)
      : backend_(backend), context_(context), response_(response) {
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (ok) {
      if (first_) {
        request_.set_query(message_.query());
        request_.set_truncate(message_.truncate());
        request_.set_raw_scores(message_.raw_scores());
        request_.set_return_text(message_.return_text());
        request_.set_truncation_direction(message_.truncation_direction());
        first_ = false;
      }
      request_.add_texts(message_.text());
      return StartRead(&message_);
    }
    backend_->Schedule(
        [this](Stub& stub, HealthStub&) {
          Finish(ToGrpcStatus(RerankOne(TeiOrigin(*context_), stub, request_, response_)));
        },
        [this](const absl::Status& why) { Finish(ToGrpcStatus(why)); });
  }

  void OnDone() override { delete this; }

 private:
  GrpcAdapterBackend* const backend_;
  grpc::CallbackServerContext* const context_;
  tei::RerankResponse* const response_;
  tei::RerankStreamRequest message_;
  tei::RerankRequest request_;
  bool first_ = true;
};

}  // namespace

class TeiGrpcServices::RerankService : public tei::Rerank::CallbackService {
 public:
  explicit RerankService(GrpcAdapterBackend* backend) : backend_(backend) {}

  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context, const tei::RerankRequest* request,
                                   tei::RerankResponse* response) override {
    return UnaryOf(backend_, context, request, response, &RerankOne);
  }
  grpc::ServerReadReactor<tei::RerankStreamRequest>* RerankStream(grpc::CallbackServerContext* context,
                                                                  tei::RerankResponse* response) override {
    return new RerankCollector(backend_, context, response);
  }

 private:
  GrpcAdapterBackend* const backend_;
};

class TeiGrpcServices::TokenizeService : public tei::Tokenize::CallbackService {
 public:
  explicit TokenizeService(GrpcAdapterBackend* backend) : backend_(backend) {}

  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context, const tei::EncodeRequest* request,
                                     tei::EncodeResponse* response) override {
    return UnaryOf(backend_, context, request, response, &TokenizeOne);
  }
  grpc::ServerBidiReactor<tei::EncodeRequest, tei::EncodeResponse>* TokenizeStream(
      grpc::CallbackServerContext* context) override {
    return StreamOf(backend_, context, &TokenizeOne);
  }
  grpc::ServerUnaryReactor* Decode(grpc::CallbackServerContext* context, const tei::DecodeRequest* request,
                                   tei::DecodeResponse* response) override {
    return UnaryOf(backend_, context, request, response, &DecodeOne);
  }
  grpc::ServerBidiReactor<tei::DecodeRequest, tei::DecodeResponse>* DecodeStream(
      grpc::CallbackServerContext* context) override {
    return StreamOf(backend_, context, &DecodeOne);
  }

 private:
  GrpcAdapterBackend* const backend_;
};

TeiGrpcServices::TeiGrpcServices(GrpcAdapterBackend* backend, TeiGrpcLimits limits)
    : info_(std::make_unique<InfoService>(backend, limits)),
      predict_(std::make_unique<PredictService>(backend)),
      rerank_(std::make_unique<RerankService>(backend)),
      tokenize_(std::make_unique<TokenizeService>(backend)) {}

TeiGrpcServices::~TeiGrpcServices() = default;

std::vector<grpc::Service*> TeiGrpcServices::services() {
  return {info_.get(), predict_.get(), rerank_.get(), tokenize_.get()};
}

}  // namespace deberta::service
