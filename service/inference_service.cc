// gRPC handlers: build tasks, schedule them, answer after the last one.
#include "service/inference_service.h"

#include "service/incremental_barrier.h"
#include "service/inference_call.h"
#include "service/response_writer.h"

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

InferenceCall* InferenceServiceImpl::StartCall(Endpoint endpoint, grpc::CallbackServerContext* context,
                                               bool* accepted) {
  const absl::Time deadline = absl::FromChrono(context->deadline());
  *accepted = TryAcceptCall();
  if (*accepted) return new InferenceCall(endpoint, deadline, metrics_, [this] { CallDone(); });
  auto* call = new InferenceCall(endpoint, deadline, metrics_, /*on_done=*/nullptr);
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
                                  grpc::CallbackServerContext* context,
                                  std::vector<std::unique_ptr<BatchTask>> tasks,
                                  std::vector<std::function<void(TaskResult)>> write) {
  int64_t tokens = 0;
  const absl::Time deadline = absl::FromChrono(context->deadline());
  absl::Status scheduled;
  {
    // The call is answered once every task is done and this scope has
    // ended, whichever comes last: the batcher may run them all before
    // Schedule returns.
    IncrementalBarrier barrier([call] { call->FinishWithReportedStatus(); });
    for (size_t i = 0; i < tasks.size(); ++i) {
      BatchTask& task = *tasks[i];
      tokens += static_cast<int64_t>(task.length());
      task.deadline = deadline;
      task.cancelled = call->cancelled();
      task.done = [call, write = std::move(write[i]), piece = barrier.Inc()](const absl::Status& status,
                                                                            TaskResult result) {
        if (status.ok()) write(std::move(result));
        call->ReportTask(status);
        piece();
      };
    }
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
  InferenceCall* call = StartCall(Endpoint::kClassify, context, &accepted);
  if (!accepted) return call;
  absl::StatusOr<ClassifyTasks> built = BuildClassifyTasks(*request, info_, requests_);
  if (!built.ok()) return Reject(call, built.status());
  std::vector<std::function<void(TaskResult)>> write;
  for (size_t i = 0; i < built->tasks.size(); ++i) {
    write.push_back([this, slot = response->add_results(), top_k = built->top_k](TaskResult result) {
      WriteClassification(result.classify, top_k, info_.labels, slot);
    });
  }
  Submit(call, Endpoint::kClassify, context, std::move(built->tasks), std::move(write));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::FillMask(grpc::CallbackServerContext* context,
                                                         const pb::FillMaskRequest* request,
                                                         pb::FillMaskResponse* response) {
  response->set_request_id(request->request_id());
  bool accepted = false;
  InferenceCall* call = StartCall(Endpoint::kFillMask, context, &accepted);
  if (!accepted) return call;
  absl::StatusOr<std::vector<std::unique_ptr<BatchTask>>> tasks =
      BuildFillMaskTasks(*request, info_, requests_);
  if (!tasks.ok()) return Reject(call, tasks.status());
  std::vector<std::function<void(TaskResult)>> write;
  for (size_t i = 0; i < tasks->size(); ++i) {
    write.push_back([slot = response->add_results()](TaskResult result) {
      WriteFillMaskResult(result.fill_mask, slot);
    });
  }
  Submit(call, Endpoint::kFillMask, context, *std::move(tasks), std::move(write));
  return call;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::GetModelInfo(grpc::CallbackServerContext* context,
                                                             const pb::GetModelInfoRequest*,
                                                             pb::ModelInfo* response) {
  const absl::Time start = absl::Now();
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
  response->set_server_version(options_.server_version);
  response->set_has_classifier(info_.has_classifier);
  response->set_has_fill_mask(info_.has_mlm_head);
  if (metrics_) metrics_->RecordRequest(Endpoint::kGetModelInfo, absl::StatusCode::kOk, absl::Now() - start);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace deberta::service
