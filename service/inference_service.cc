// gRPC handlers: every RPC through Serve (key, admission, log, metrics),
// its task's work scheduled, the answer after the last task.
#include "service/inference_service.h"

#include <google/protobuf/util/json_util.h>

#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/incremental_barrier.h"
#include "service/inference_call.h"
#include "service/protocols/in_process_call.h"
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

pb::ModelState ToProto(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return pb::MODEL_STATE_LOADING;
    case ModelState::kReady:
      return pb::MODEL_STATE_READY;
    case ModelState::kUnloading:
      return pb::MODEL_STATE_UNLOADING;
    case ModelState::kUnavailable:
      return pb::MODEL_STATE_UNAVAILABLE;
    case ModelState::kFailed:
      return pb::MODEL_STATE_FAILED;
  }
  return pb::MODEL_STATE_UNSPECIFIED;
}

void WriteModelStatus(const ModelStatusInfo& info, pb::ModelStatus* out) {
  out->set_name(info.name);
  out->set_version(info.version);
  out->set_task(info.task);
  out->set_state(ToProto(info.state));
  out->set_error(info.error);
  out->set_dtype(info.dtype);
  out->set_device(info.device);
  out->set_memory_estimate_bytes(info.memory_estimate_bytes);
}

RejectionReason ReasonOf(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) ? RejectionReason::kFailedPrecondition
                                            : RejectionReason::kInvalidArgument;
}

// Calls on the server's in-process channel (the HTTP protocols') have no
// network peer: gRPC reports "unknown" or "inproc...".
bool IsInProcess(const grpc::CallbackServerContext& context) {
  const std::string peer = context.peer();
  return peer == "unknown" || absl::StartsWith(peer, "inproc");
}

}  // namespace

InferenceServiceImpl::InferenceServiceImpl(Models* models, const Options& options, const Borrowed& borrowed)
    : models_(models),
      log_payloads_(options.log_payloads),
      api_keys_(borrowed.api_keys),
      admin_keys_(borrowed.admin_keys),
      access_log_(borrowed.access_log),
      metrics_(borrowed.metrics) {}

void InferenceServiceImpl::StopAccepting() { calls_.StopAccepting(); }

bool InferenceServiceImpl::TryAcceptCall() { return calls_.TryAccept(); }

void InferenceServiceImpl::CallDone() { calls_.Done(); }

bool InferenceServiceImpl::AwaitNoOpenCalls(absl::Time deadline) { return calls_.AwaitNone(deadline); }

absl::Status InferenceServiceImpl::Authorize(const grpc::CallbackServerContext& context, bool admin) const {
  if (admin && admin_keys_ == nullptr) {
    return absl::PermissionDeniedError(
        "loading and unloading models needs --model_control=explicit and --admin_api_keys_file");
  }
  if (!admin && api_keys_ == nullptr) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(absl::StrCat("this call needs ", admin ? "an admin" : "an",
                                                   " API key: send the metadata 'authorization: Bearer <key>'"));
  }
  const std::string key = PresentedKey(absl::string_view(it->second.data(), it->second.size()));
  if (key.empty()) return absl::UnauthenticatedError("the authorization metadata must be 'Bearer <key>'");
  const bool is_admin = admin_keys_ != nullptr && admin_keys_->Accepts(key);
  if (admin) {
    if (is_admin) return absl::OkStatus();
    if (api_keys_ != nullptr && api_keys_->Accepts(key)) {
      return absl::PermissionDeniedError("this API key may not load or unload models (it is not an admin key)");
    }
    return absl::UnauthenticatedError("the API key is not valid");
  }
  if (!api_keys_->Accepts(key) && !is_admin) return absl::UnauthenticatedError("the API key is not valid");
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
  // Calls of the HTTP protocols come on the in-process channel (whose peer gRPC
  // reports as "unknown") and say where they came from; from a network
  // peer such metadata is ignored. It only labels the metrics and the log.
  const std::string peer = context.peer();
  const bool in_process = IsInProcess(context);
  if (in_process) {
    if (std::optional<Protocol> protocol = ProtocolFromName(value(kProtocolMetadata))) log.protocol = *protocol;
  }
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
                                               const std::string& request_id, const std::string& model_name,
                                               bool admin, bool* accepted, std::shared_ptr<ServedModel>* model) {
  *accepted = false;
  const absl::Time deadline = absl::FromChrono(context->deadline());
  AccessRecord log = LogStart(*context, request, request_id);
  log.model = model_name;
  // Answered at once, counted in the server's metrics.
  auto refuse = [&](const absl::Status& status, RejectionReason reason, std::function<void()> on_done) {
    auto* call = new InferenceCall(endpoint, deadline, metrics_, std::move(on_done), access_log_, std::move(log));
    if (metrics_) metrics_->RecordRejection(reason);
    call->Finish(status);
    return call;
  };
  if (absl::Status auth = Authorize(*context, admin); !auth.ok()) {
    return refuse(auth, RejectionReason::kUnauthenticated, nullptr);
  }
  if (!TryAcceptCall()) {
    return refuse(absl::UnavailableError("server is shutting down"), RejectionReason::kShuttingDown, nullptr);
  }
  if (model == nullptr) {
    *accepted = true;
    return new InferenceCall(endpoint, deadline, metrics_, [this] { CallDone(); }, access_log_, std::move(log));
  }
  absl::StatusOr<std::shared_ptr<ServedModel>> found = models_->Acquire(model_name);
  if (!found.ok()) {
    const RejectionReason reason =
        absl::IsUnavailable(found.status()) ? RejectionReason::kModelUnavailable : RejectionReason::kUnknownModel;
    return refuse(found.status(), reason, [this] { CallDone(); });
  }
  *model = *found;
  *accepted = true;
  if (log.model.empty()) log.model = (*model)->name();
  // The call holds its version until it is deleted: the version's metrics
  // are recorded at its answer, and the version is freed only after its
  // count of open calls is back to zero.
  auto* call = new InferenceCall(endpoint, deadline, &(*model)->metrics(),
                                 [this, held = *found] {
                                   held->CallDone();
                                   CallDone();
                                 },
                                 access_log_, std::move(log));
  if (IsInProcess(*context)) call->SendTimingTo(context);
  return call;
}

InferenceCall* InferenceServiceImpl::Reject(InferenceCall* call, ServiceMetrics* metrics,
                                            const absl::Status& invalid) {
  if (metrics) metrics->RecordRejection(ReasonOf(invalid));
  call->Finish(invalid);
  return call;
}

void InferenceServiceImpl::Submit(InferenceCall* call, ServedModel& model, Endpoint endpoint, TaskWork work) {
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
    scheduled = model.batcher().Schedule(std::move(tasks));
  }
  if (!scheduled.ok()) {
    // No task will run (so the barrier never fires): answer here.
    call->Finish(scheduled);
    return;
  }
  // The call may be answered and gone by now: use only locals (the model
  // is the caller's reference).
  model.metrics().RecordInputTokens(endpoint, tokens);
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* InferenceServiceImpl::Serve(Endpoint endpoint, grpc::CallbackServerContext* context,
                                                      const Request* request, Response* response,
                                                      const std::string& request_id,
                                                      StartTask<Request, Response> start) {
  bool accepted = false;
  std::shared_ptr<ServedModel> model;
  InferenceCall* call =
      StartCall(endpoint, context, *request, request_id, request->model(), /*admin=*/false, &accepted, &model);
  if (!accepted) return call;
  absl::StatusOr<TaskWork> work = start(model->env(), *request, response);
  if (!work.ok()) return Reject(call, &model->metrics(), work.status());
  if (work->tasks.empty()) {
    call->Finish(work->complete ? work->complete() : absl::OkStatus());
    return call;
  }
  Submit(call, *model, endpoint, *std::move(work));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Control(Endpoint endpoint, grpc::CallbackServerContext* context,
                                                        const std::string& model, pb::ModelStatus* response,
                                                        ControlAction action) {
  bool accepted = false;
  pb::LoadModelRequest logged;  // The access log's payload: the model's name.
  logged.set_model(model);
  InferenceCall* call = StartCall(endpoint, context, logged, "", model, /*admin=*/true, &accepted, nullptr);
  if (!accepted) return call;
  if (models_->control() != ModelControl::kExplicit) {
    return Reject(call, metrics_,
                  absl::FailedPreconditionError(absl::StrCat("models are loaded and unloaded on request only with "
                                                             "--model_control=explicit (this server: ",
                                                             ModelControlName(models_->control()), ")")));
  }
  if (model.empty()) return Reject(call, metrics_, absl::InvalidArgumentError("name the model to load or unload"));
  const bool started = models_->RunInBackground([call, response, model, action = std::move(action)] {
    absl::StatusOr<ModelStatusInfo> status = action(model);
    if (status.ok()) WriteModelStatus(*status, response);
    call->Finish(status.status());
  });
  if (!started) call->Finish(absl::UnavailableError("server is shutting down"));
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

grpc::ServerUnaryReactor* InferenceServiceImpl::ListModels(grpc::CallbackServerContext* context,
                                                           const pb::ListModelsRequest* request,
                                                           pb::ListModelsResponse* response) {
  bool accepted = false;
  InferenceCall* call =
      StartCall(Endpoint::kListModels, context, *request, "", "", /*admin=*/false, &accepted, nullptr);
  if (!accepted) return call;
  for (const ModelStatusInfo& info : models_->List()) WriteModelStatus(info, response->add_models());
  call->Finish(absl::OkStatus());
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::LoadModel(grpc::CallbackServerContext* context,
                                                          const pb::LoadModelRequest* request,
                                                          pb::ModelStatus* response) {
  return Control(Endpoint::kLoadModel, context, request->model(), response,
                 [models = models_](const std::string& model) { return models->Load(model); });
}

grpc::ServerUnaryReactor* InferenceServiceImpl::UnloadModel(grpc::CallbackServerContext* context,
                                                            const pb::UnloadModelRequest* request,
                                                            pb::ModelStatus* response) {
  return Control(Endpoint::kUnloadModel, context, request->model(), response,
                 [models = models_](const std::string& model) { return models->Unload(model); });
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Detokenize(grpc::CallbackServerContext* context,
                                                           const pb::DetokenizeRequest* request,
                                                           pb::DetokenizeResponse* response) {
  return Serve(Endpoint::kDetokenize, context, request, response, "", &StartDetokenize);
}

}  // namespace deberta::service
