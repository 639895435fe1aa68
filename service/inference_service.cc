// gRPC handlers: build tasks, schedule them, answer after the last one.
#include "service/inference_service.h"

#include <google/protobuf/util/json_util.h>

#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "service/incremental_barrier.h"
#include "service/inference_call.h"
#include "service/json_api.h"
#include "service/response_writer.h"
#include "service/status_util.h"

namespace deberta::service {

namespace pb = serving::v1;

namespace {

RequestOptions WithMaskId(RequestOptions options, int32_t mask_token_id) {
  options.mask_token_id = mask_token_id;
  return options;
}

}  // namespace

InferenceServiceImpl::InferenceServiceImpl(const model::ModelInfo& info, const Options& options,
                                           Batcher* batcher, ServiceMetrics* metrics)
    : info_(info),
      options_(options),
      requests_(WithMaskId(options.requests, options.special_tokens.mask)),
      batcher_(batcher),
      metrics_(metrics) {}

void InferenceServiceImpl::StopAccepting() {
  absl::MutexLock lock(&calls_mu_);
  accepting_ = false;
}

bool InferenceServiceImpl::TryAcceptCall() {
  absl::MutexLock lock(&calls_mu_);
  if (!accepting_) return false;
  ++accepted_calls_;
  return true;
}

void InferenceServiceImpl::CallDone() {
  absl::MutexLock lock(&calls_mu_);
  --accepted_calls_;
}

bool InferenceServiceImpl::AwaitNoOpenCalls(absl::Time deadline) {
  absl::MutexLock lock(&calls_mu_);
  return calls_mu_.AwaitWithDeadline(
      absl::Condition(+[](int* open) { return *open == 0; }, &accepted_calls_), deadline);
}

absl::Status InferenceServiceImpl::Authorize(const grpc::CallbackServerContext& context) const {
  if (options_.api_keys == nullptr) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("this server needs an API key: send the metadata 'authorization: Bearer <key>'");
  }
  const std::string key = PresentedKey(absl::string_view(it->second.data(), it->second.size()));
  if (key.empty()) return absl::UnauthenticatedError("the authorization metadata must be 'Bearer <key>'");
  if (!options_.api_keys->Accepts(key)) return absl::UnauthenticatedError("the API key is not valid");
  return absl::OkStatus();
}

AccessRecord InferenceServiceImpl::LogStart(const grpc::CallbackServerContext& context,
                                            const google::protobuf::Message& request,
                                            const std::string& request_id) const {
  AccessRecord log;
  const auto& metadata = context.client_metadata();
  auto value = [&metadata](const char* key) -> std::string {
    auto it = metadata.find(key);
    return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
  };
  // Calls of the JSON API come on the in-process channel (whose peer gRPC
  // reports as "unknown") and say where they came from; from a network
  // peer such metadata is ignored. It only labels the metrics and the log.
  const std::string peer = context.peer();
  const bool in_process = peer == "unknown" || absl::StartsWith(peer, "inproc");
  if (in_process && value(kProtocolMetadata) == "http") log.protocol = Protocol::kHttp;
  if (options_.access_log == nullptr) return log;
  log.request_id = request_id;
  log.peer = peer;
  log.traceparent = ValidTraceparent(value("traceparent"));
  if (std::string http_peer = value(kHttpPeerMetadata); in_process && !http_peer.empty()) log.peer = http_peer;
  if (options_.log_payloads) {
    google::protobuf::util::JsonPrintOptions json;
    json.always_print_primitive_fields = true;
    (void)google::protobuf::util::MessageToJsonString(request, &log.payload, json);
  }
  return log;
}

InferenceCall* InferenceServiceImpl::StartCall(Endpoint endpoint, grpc::CallbackServerContext* context,
                                               const google::protobuf::Message& request,
                                               const std::string& request_id, bool* accepted) {
  const absl::Time deadline = absl::FromChrono(context->deadline());
  AccessRecord log = LogStart(*context, request, request_id);
  if (absl::Status auth = Authorize(*context); !auth.ok()) {
    *accepted = false;
    auto* call = new InferenceCall(endpoint, deadline, metrics_, /*on_done=*/nullptr, options_.access_log,
                                   std::move(log));
    if (metrics_) metrics_->RecordRejection(RejectionReason::kUnauthenticated);
    call->Finish(auth);
    return call;
  }
  *accepted = TryAcceptCall();
  if (*accepted) {
    return new InferenceCall(endpoint, deadline, metrics_, [this] { CallDone(); }, options_.access_log,
                             std::move(log));
  }
  auto* call = new InferenceCall(endpoint, deadline, metrics_, /*on_done=*/nullptr, options_.access_log,
                                 std::move(log));
  if (metrics_) metrics_->RecordRejection(RejectionReason::kShuttingDown);
  call->Finish(absl::UnavailableError("server is shutting down"));
  return call;
}

InferenceCall* InferenceServiceImpl::Reject(InferenceCall* call, const absl::Status& invalid) {
  if (metrics_) {
    metrics_->RecordRejection(absl::IsFailedPrecondition(invalid) ? RejectionReason::kFailedPrecondition
                                                                  : RejectionReason::kInvalidArgument);
  }
  call->Finish(invalid);
  return call;
}

void InferenceServiceImpl::Submit(InferenceCall* call, Endpoint endpoint,
                                  std::vector<std::unique_ptr<BatchTask>> tasks,
                                  std::vector<std::function<void(TaskResult)>> write,
                                  std::function<absl::Status()> complete) {
  int64_t tokens = 0;
  absl::Status scheduled;
  {
    // The call is answered once every task is done and this scope has
    // ended, whichever comes last: the batcher may run them all before
    // Schedule returns.
    IncrementalBarrier barrier([call, complete = std::move(complete)] {
      if (complete && call->ReportedStatus().ok()) call->ReportTask(complete());
      call->FinishWithReportedStatus();
    });
    for (size_t i = 0; i < tasks.size(); ++i) {
      BatchTask& task = *tasks[i];
      tokens += static_cast<int64_t>(task.length());
      task.deadline = call->deadline();
      task.cancelled = call->cancelled();
      task.done = [call, write = std::move(write[i]), piece = barrier.Inc()](const absl::Status& status,
                                                                            TaskResult result) {
        call->ReportTiming(result.queued, result.inference);
        if (status.ok()) write(std::move(result));
        call->ReportTask(status);
        piece();
      };
    }
    call->AddWork(static_cast<int64_t>(tasks.size()), tokens);
    scheduled = batcher_->Schedule(std::move(tasks));
  }
  if (!scheduled.ok()) {
    // No task will run (so the barrier never fires): answer here.
    call->Finish(scheduled);
    return;
  }
  // The call may be answered and gone by now: use only locals.
  if (metrics_) metrics_->RecordInputTokens(endpoint, tokens);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Classify(grpc::CallbackServerContext* context,
                                                         const pb::ClassifyRequest* request,
                                                         pb::ClassifyResponse* response) {
  response->set_request_id(request->request_id());
  bool accepted = false;
  InferenceCall* call = StartCall(Endpoint::kClassify, context, *request, request->request_id(), &accepted);
  if (!accepted) return call;
  absl::StatusOr<ClassifyTasks> built = BuildClassifyTasks(*request, info_, requests_);
  if (!built.ok()) return Reject(call, built.status());
  std::vector<std::function<void(TaskResult)>> write;
  for (const auto& task : built->tasks) {
    pb::Classification* slot = response->add_results();
    slot->set_num_tokens(static_cast<int32_t>(task->length()));
    slot->set_truncated(task->truncated);
    write.push_back([this, slot, top_k = built->top_k](TaskResult result) {
      WriteClassification(result.classify, top_k, info_.labels, slot);
    });
  }
  Submit(call, Endpoint::kClassify, std::move(built->tasks), std::move(write));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::FillMask(grpc::CallbackServerContext* context,
                                                         const pb::FillMaskRequest* request,
                                                         pb::FillMaskResponse* response) {
  response->set_request_id(request->request_id());
  bool accepted = false;
  InferenceCall* call = StartCall(Endpoint::kFillMask, context, *request, request->request_id(), &accepted);
  if (!accepted) return call;
  absl::StatusOr<std::vector<std::unique_ptr<BatchTask>>> tasks =
      BuildFillMaskTasks(*request, info_, requests_);
  if (!tasks.ok()) return Reject(call, tasks.status());
  std::vector<std::function<void(TaskResult)>> write;
  for (const auto& task : *tasks) {
    pb::FillMaskResult* slot = response->add_results();
    slot->set_num_tokens(static_cast<int32_t>(task->length()));
    std::optional<std::vector<int32_t>> text_ids;
    if (task->from_text) text_ids = task->input.sequence.token_ids;
    write.push_back([this, slot, text_ids = std::move(text_ids)](TaskResult result) {
      WriteFillMaskResult(result.fill_mask, requests_.tokenizer, text_ids ? &*text_ids : nullptr, slot);
    });
  }
  Submit(call, Endpoint::kFillMask, *std::move(tasks), std::move(write));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ZeroShotClassify(grpc::CallbackServerContext* context,
                                                                 const pb::ZeroShotClassifyRequest* request,
                                                                 pb::ZeroShotClassifyResponse* response) {
  response->set_request_id(request->request_id());
  bool accepted = false;
  InferenceCall* call = StartCall(Endpoint::kZeroShotClassify, context, *request, request->request_id(), &accepted);
  if (!accepted) return call;
  absl::StatusOr<ZeroShotTasks> built = BuildZeroShotTasks(*request, info_, requests_);
  if (!built.ok()) return Reject(call, built.status());
  // Each candidate's logits land in its slot; the scores need them all.
  auto logits = std::make_shared<std::vector<std::vector<float>>>(built->tasks.size());
  std::vector<std::function<void(TaskResult)>> write;
  for (size_t i = 0; i < built->tasks.size(); ++i) {
    write.push_back([logits, i](TaskResult result) { (*logits)[i] = std::move(result.classify.logits); });
  }
  auto complete = [request, response, logits, entailment = built->entailment,
                   contradiction = built->contradiction]() {
    const std::vector<float> scores = ZeroShotScores(*logits, entailment, contradiction, request->multi_label());
    WriteZeroShotLabels(*request, scores, *logits, entailment, response);
    return absl::OkStatus();
  };
  Submit(call, Endpoint::kZeroShotClassify, std::move(built->tasks), std::move(write), complete);
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::GetModelInfo(grpc::CallbackServerContext* context,
                                                             const pb::GetModelInfoRequest* request,
                                                             pb::ModelInfo* response) {
  const absl::Time start = absl::Now();
  if (absl::Status auth = Authorize(*context); !auth.ok()) {
    return AnswerNow(context, Endpoint::kGetModelInfo, *request, start, auth);
  }
  response->set_model_name(info_.name);
  response->set_model_type(info_.model_type);
  response->set_description(info_.description);
  for (const std::string& label : info_.labels) response->add_labels(label);
  response->set_vocab_size(info_.vocab_size);
  response->set_max_sequence_length(info_.max_sequence_length);
  const model::SpecialTokens& special = options_.special_tokens;
  response->set_pad_token_id(special.pad);
  response->set_cls_token_id(special.cls);
  response->set_sep_token_id(special.sep);
  response->set_unk_token_id(special.unk);
  response->set_mask_token_id(special.mask);
  response->set_device(info_.device);
  response->set_dtype(info_.dtype);
  response->set_emd_enabled(info_.emd_enabled);
  response->set_cpu_kernels(info_.cpu_kernels);
  response->set_server_version(options_.server_version);
  response->set_has_classifier(info_.has_classifier);
  response->set_has_fill_mask(info_.has_mlm_head);
  response->set_problem_type(info_.problem_type);
  response->set_tokenizer(requests_.tokenizer != nullptr ? requests_.tokenizer->kind() : "");
  response->set_tokenizer_vocab_size(requests_.tokenizer != nullptr ? requests_.tokenizer->vocab_size() : 0);
  return AnswerNow(context, Endpoint::kGetModelInfo, *request, start, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceServiceImpl::AnswerNow(grpc::CallbackServerContext* context,
                                                          Endpoint endpoint, const google::protobuf::Message& request,
                                                          absl::Time start, const absl::Status& status) {
  AccessRecord log = LogStart(*context, request, "");
  if (metrics_) {
    if (absl::IsUnauthenticated(status)) metrics_->RecordRejection(RejectionReason::kUnauthenticated);
    metrics_->RecordRequest(endpoint, log.protocol, status.code(), absl::Now() - start);
  }
  if (options_.access_log != nullptr) {
    options_.access_log->Write(std::move(log), EndpointName(endpoint), start, status.code());
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Tokenize(grpc::CallbackServerContext* context,
                                                         const pb::TokenizeRequest* request,
                                                         pb::TokenizeResponse* response) {
  const absl::Time start = absl::Now();
  if (absl::Status auth = Authorize(*context); !auth.ok()) {
    return AnswerNow(context, Endpoint::kTokenize, *request, start, auth);
  }
  const model::Tokenizer* tokenizer = requests_.tokenizer;
  if (tokenizer == nullptr) {
    return AnswerNow(context, Endpoint::kTokenize, *request, start,
                     absl::FailedPreconditionError("the served checkpoint has no tokenizer files"));
  }
  absl::StatusOr<TextLimits> limits =
      ResolveTextLimits(request->truncation(), request->max_length(), info_, requests_);
  if (!limits.ok()) return AnswerNow(context, Endpoint::kTokenize, *request, start, limits.status());
  std::optional<absl::string_view> pair;
  if (request->has_text_pair()) pair = request->text_pair();
  absl::StatusOr<model::EncodedText> encoded =
      model::EncodeText(*tokenizer, request->text(), pair, limits->max_length, limits->truncation);
  if (!encoded.ok()) return AnswerNow(context, Endpoint::kTokenize, *request, start, encoded.status());
  for (int32_t id : encoded->input_ids) {
    response->add_token_ids(id);
    const model::SpecialTokens& special = tokenizer->special_tokens();
    response->add_pieces(id == special.cls ? "[CLS]" : id == special.sep ? "[SEP]" : tokenizer->Piece(id));
  }
  for (int32_t type : encoded->token_type_ids) response->add_token_type_ids(type);
  const model::CharIndex chars_a(request->text()), chars_b(request->text_pair());
  for (size_t i = 0; i < encoded->offsets.size(); ++i) {
    const model::CharIndex& chars = encoded->token_type_ids[i] == 0 ? chars_a : chars_b;
    const auto [begin, end] = chars.Map(encoded->offsets[i].first, encoded->offsets[i].second);
    pb::TokenOffset* offset = response->add_offsets();
    offset->set_begin(begin);
    offset->set_end(end);
  }
  response->set_truncated(encoded->truncated);
  response->set_full_length(static_cast<int32_t>(encoded->full_length));
  return AnswerNow(context, Endpoint::kTokenize, *request, start, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Detokenize(grpc::CallbackServerContext* context,
                                                           const pb::DetokenizeRequest* request,
                                                           pb::DetokenizeResponse* response) {
  const absl::Time start = absl::Now();
  if (absl::Status auth = Authorize(*context); !auth.ok()) {
    return AnswerNow(context, Endpoint::kDetokenize, *request, start, auth);
  }
  if (requests_.tokenizer == nullptr) {
    return AnswerNow(context, Endpoint::kDetokenize, *request, start,
                     absl::FailedPreconditionError("the served checkpoint has no tokenizer files"));
  }
  const std::vector<int32_t> ids(request->token_ids().begin(), request->token_ids().end());
  absl::StatusOr<std::string> text = requests_.tokenizer->Decode(ids);
  if (text.ok()) response->set_text(*text);
  return AnswerNow(context, Endpoint::kDetokenize, *request, start, text.status());
}

}  // namespace deberta::service
