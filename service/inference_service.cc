// gRPC handlers: every RPC through Serve (key, admission, log, metrics),
// its task's work scheduled, the answer after the last task.
#include "service/inference_service.h"

#include <google/protobuf/util/json_util.h>

#include <memory>

#include "absl/strings/match.h"
#include "service/incremental_barrier.h"
#include "service/inference_call.h"
#include "service/json_api.h"
#include "service/status_util.h"
#include "service/tasks/classify.h"
#include "service/tasks/classify_tokens.h"
#include "service/tasks/detokenize.h"
#include "service/tasks/fill_mask.h"
#include "service/tasks/model_info.h"
#include "service/tasks/rerank.h"
#include "service/tasks/tokenize.h"
#include "service/tasks/zero_shot.h"

namespace deberta::service {

namespace pb = serving::v1;

namespace {

TaskEnv MakeTaskEnv(const model::ModelInfo& info, const InferenceServiceImpl::Options& options,
                    const model::Tokenizer* tokenizer) {
  TaskEnv env;
  env.info = info;
  env.requests = options.requests;
  env.requests.tokenizer = tokenizer;
  env.requests.mask_token_id = options.special_tokens.mask;
  env.special_tokens = options.special_tokens;
  env.server_version = options.server_version;
  return env;
}

}  // namespace

InferenceServiceImpl::InferenceServiceImpl(const model::ModelInfo& info, const Options& options,
                                           Batcher* batcher, const Borrowed& borrowed)
    : env_(MakeTaskEnv(info, options, borrowed.tokenizer)),
      log_payloads_(options.log_payloads),
      batcher_(batcher),
      api_keys_(borrowed.api_keys),
      access_log_(borrowed.access_log),
      metrics_(borrowed.metrics) {}

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
  if (api_keys_ == nullptr) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("this server needs an API key: send the metadata 'authorization: Bearer <key>'");
  }
  const std::string key = PresentedKey(absl::string_view(it->second.data(), it->second.size()));
  if (key.empty()) return absl::UnauthenticatedError("the authorization metadata must be 'Bearer <key>'");
  if (!api_keys_->Accepts(key)) return absl::UnauthenticatedError("the API key is not valid");
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
  if (access_log_ == nullptr) return log;
  log.request_id = request_id;
  log.peer = peer;
  log.traceparent = ValidTraceparent(value("traceparent"));
  if (std::string http_peer = value(kHttpPeerMetadata); in_process && !http_peer.empty()) log.peer = http_peer;
  if (log_payloads_) {
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
    auto* call = new InferenceCall(endpoint, deadline, metrics_, /*on_done=*/nullptr, access_log_,
                                   std::move(log));
    if (metrics_) metrics_->RecordRejection(RejectionReason::kUnauthenticated);
    call->Finish(auth);
    return call;
  }
  *accepted = TryAcceptCall();
  if (*accepted) {
    return new InferenceCall(endpoint, deadline, metrics_, [this] { CallDone(); }, access_log_,
                             std::move(log));
  }
  auto* call = new InferenceCall(endpoint, deadline, metrics_, /*on_done=*/nullptr, access_log_,
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

void InferenceServiceImpl::Submit(InferenceCall* call, Endpoint endpoint, TaskWork work) {
  std::vector<std::unique_ptr<BatchTask>> tasks = std::move(work.tasks);
  int64_t tokens = 0;
  absl::Status scheduled;
  {
    // The call is answered once every task is done and this scope has
    // ended, whichever comes last: the batcher may run them all before
    // Schedule returns.
    IncrementalBarrier barrier([call, complete = std::move(work.complete)] {
      if (complete && call->ReportedStatus().ok()) call->ReportTask(complete());
      call->FinishWithReportedStatus();
    });
    for (size_t i = 0; i < tasks.size(); ++i) {
      BatchTask& task = *tasks[i];
      tokens += static_cast<int64_t>(task.length());
      task.deadline = call->deadline();
      task.cancelled = call->cancelled();
      task.done = [call, piece = barrier.Inc()](const absl::Status& status, TaskTiming timing) {
        call->ReportTiming(timing.queued, timing.inference);
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

template <typename Request, typename Response>
grpc::ServerUnaryReactor* InferenceServiceImpl::Serve(Endpoint endpoint, grpc::CallbackServerContext* context,
                                                      const Request* request, Response* response,
                                                      const std::string& request_id,
                                                      StartTask<Request, Response> start) {
  bool accepted = false;
  InferenceCall* call = StartCall(endpoint, context, *request, request_id, &accepted);
  if (!accepted) return call;
  absl::StatusOr<TaskWork> work = start(env_, *request, response);
  if (!work.ok()) return Reject(call, work.status());
  if (work->tasks.empty()) {
    call->Finish(work->complete ? work->complete() : absl::OkStatus());
    return call;
  }
  Submit(call, endpoint, *std::move(work));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Classify(grpc::CallbackServerContext* context,
                                                         const pb::ClassifyRequest* request,
                                                         pb::ClassifyResponse* response) {
  return Serve(Endpoint::kClassify, context, request, response, request->request_id(), &StartClassify);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::FillMask(grpc::CallbackServerContext* context,
                                                         const pb::FillMaskRequest* request,
                                                         pb::FillMaskResponse* response) {
  return Serve(Endpoint::kFillMask, context, request, response, request->request_id(), &StartFillMask);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ZeroShotClassify(grpc::CallbackServerContext* context,
                                                                 const pb::ZeroShotClassifyRequest* request,
                                                                 pb::ZeroShotClassifyResponse* response) {
  return Serve(Endpoint::kZeroShotClassify, context, request, response, request->request_id(), &StartZeroShot);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ClassifyTokens(grpc::CallbackServerContext* context,
                                                               const pb::ClassifyTokensRequest* request,
                                                               pb::ClassifyTokensResponse* response) {
  return Serve(Endpoint::kClassifyTokens, context, request, response, request->request_id(), &StartClassifyTokens);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Rerank(grpc::CallbackServerContext* context,
                                                       const pb::RerankRequest* request, pb::RerankResponse* response) {
  return Serve(Endpoint::kRerank, context, request, response, request->request_id(), &StartRerank);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::GetModelInfo(grpc::CallbackServerContext* context,
                                                             const pb::GetModelInfoRequest* request,
                                                             pb::ModelInfo* response) {
  return Serve(Endpoint::kGetModelInfo, context, request, response, "", &StartGetModelInfo);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Tokenize(grpc::CallbackServerContext* context,
                                                         const pb::TokenizeRequest* request,
                                                         pb::TokenizeResponse* response) {
  return Serve(Endpoint::kTokenize, context, request, response, "", &StartTokenize);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Detokenize(grpc::CallbackServerContext* context,
                                                           const pb::DetokenizeRequest* request,
                                                           pb::DetokenizeResponse* response) {
  return Serve(Endpoint::kDetokenize, context, request, response, "", &StartDetokenize);
}

}  // namespace deberta::service
