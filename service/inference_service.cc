// gRPC handlers: validation, splitting into tasks, reassembly.
#include "service/inference_service.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "service/status_util.h"

namespace deberta::service {
namespace {

namespace pb = deberta::serving::v1;

}  // namespace

// Shared by the tasks of one RPC; the last one to finish answers it.
struct InferenceServiceImpl::Call {
  InferenceServiceImpl* service = nullptr;
  grpc::ServerUnaryReactor* reactor = nullptr;
  Endpoint endpoint = Endpoint::kClassify;
  absl::Time start;
  std::atomic<int> remaining{0};
  absl::Mutex mu;
  absl::Status first_error ABSL_GUARDED_BY(mu);

  void Finish(const absl::Status& status) { service->CloseCall(*this, ToGrpcStatus(status)); }
  void TaskDone(const absl::Status& status) {
    if (!status.ok()) {
      absl::MutexLock lock(&mu);
      if (first_error.ok()) first_error = status;
    }
    if (remaining.fetch_sub(1) == 1) {
      absl::Status result;
      {
        absl::MutexLock lock(&mu);
        result = first_error;
      }
      Finish(result);
      delete this;
    }
  }
};

InferenceServiceImpl::InferenceServiceImpl(const model::ModelInfo& info, const Options& options,
                                           Batcher* batcher, ServiceMetrics* metrics)
    : info_(info), options_(options), batcher_(batcher), metrics_(metrics) {}

void InferenceServiceImpl::OpenCall() {
  {
    absl::MutexLock lock(&calls_mu_);
    ++open_calls_;
  }
  if (metrics_) metrics_->AddInflight(1);
}

void InferenceServiceImpl::CloseCall(const Call& call, const grpc::Status& status) {
  // Metrics first, so that a client that has its answer sees it counted.
  if (metrics_) {
    metrics_->RecordRequest(call.endpoint, GrpcCodeName(status.error_code()), absl::Now() - call.start);
    metrics_->AddInflight(-1);
  }
  call.reactor->Finish(status);
  absl::MutexLock lock(&calls_mu_);
  --open_calls_;
}

bool InferenceServiceImpl::AwaitNoOpenCalls(absl::Time deadline) {
  absl::MutexLock lock(&calls_mu_);
  return calls_mu_.AwaitWithDeadline(
      absl::Condition(+[](int* open) { return *open == 0; }, &open_calls_), deadline);
}

absl::Status InferenceServiceImpl::CheckSequenceCount(int count) const {
  if (count == 0) return absl::InvalidArgumentError("request has no sequences");
  if (count > options_.max_sequences_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", count, " sequences; the maximum is ",
                                                   options_.max_sequences_per_request));
  }
  return absl::OkStatus();
}

absl::Status InferenceServiceImpl::PrepareSequence(int index, const pb::Sequence& in,
                                                   model::Sequence* out) const {
  out->token_ids.assign(in.token_ids().begin(), in.token_ids().end());
  out->token_type_ids.assign(in.token_type_ids().begin(), in.token_type_ids().end());
  const size_t limit = static_cast<size_t>(info_.max_sequence_length);
  if (options_.truncate && out->token_ids.size() > limit && limit >= 2) {
    // Keep the final token ([SEP]) so the sequence stays well-formed.
    out->token_ids[limit - 1] = out->token_ids.back();
    out->token_ids.resize(limit);
    if (!out->token_type_ids.empty()) {
      out->token_type_ids[limit - 1] = out->token_type_ids.back();
      out->token_type_ids.resize(limit);
    }
  }
  absl::Status status = model::ValidateSequence(info_, *out);
  if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat("sequence ", index, ": ", status.message()));
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Submit(
    grpc::CallbackServerContext* context, Endpoint endpoint,
    std::vector<std::unique_ptr<BatchTask>> tasks, const absl::Status& invalid) {
  auto* call = new Call();
  // Once its tasks are scheduled, the batcher may finish the call and
  // delete it before Schedule even returns: after that, use only `reactor`.
  grpc::ServerUnaryReactor* const reactor = context->DefaultReactor();
  call->service = this;
  call->reactor = reactor;
  call->endpoint = endpoint;
  call->start = absl::Now();
  OpenCall();
  absl::Status status = invalid;
  if (status.ok() && !accepting_.load()) {
    status = absl::UnavailableError("server is shutting down");
    if (metrics_) metrics_->RecordRejection("shutting_down");
  } else if (!status.ok() && metrics_) {
    metrics_->RecordRejection(absl::IsInvalidArgument(status) ? "invalid_argument" : "precondition");
  }
  if (status.ok()) {
    int64_t tokens = 0;
    const absl::Time deadline = absl::FromChrono(context->deadline());
    for (auto& task : tasks) {
      tokens += static_cast<int64_t>(task->length());
      task->deadline = deadline;
      task->is_cancelled = [context] { return context->IsCancelled(); };
      auto done = std::move(task->done);
      task->done = [call, done](const absl::Status& s, TaskResult r) {
        if (s.ok()) done(s, std::move(r));
        call->TaskDone(s);
      };
    }
    call->remaining.store(static_cast<int>(tasks.size()));
    status = batcher_->Schedule(std::move(tasks));
    if (status.ok()) {
      if (metrics_) metrics_->RecordInputTokens(endpoint, tokens);
      return reactor;
    }
  }
  call->Finish(status);
  delete call;
  return reactor;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::Classify(grpc::CallbackServerContext* context,
                                                         const pb::ClassifyRequest* request,
                                                         pb::ClassifyResponse* response) {
  response->set_request_id(request->request_id());
  const int n = request->sequences_size();
  const int labels = static_cast<int>(info_.labels.size());
  absl::Status invalid = CheckSequenceCount(n);
  if (!info_.has_classifier) {
    invalid = absl::FailedPreconditionError("the served model has no sequence-classification head");
  } else if (invalid.ok() && (request->top_k() < 0 || request->top_k() > labels)) {
    invalid = absl::InvalidArgumentError(
        absl::StrCat("top_k is ", request->top_k(), "; it must be in [0, ", labels, "]"));
  }
  std::vector<std::unique_ptr<BatchTask>> tasks;
  const int top_k = request->top_k() == 0 ? labels : request->top_k();
  for (int i = 0; invalid.ok() && i < n; ++i) {
    auto task = std::make_unique<BatchTask>();
    task->kind = TaskKind::kClassify;
    invalid = PrepareSequence(i, request->sequences(i), &task->input.sequence);
    pb::Classification* slot = response->add_results();
    task->done = [this, slot, top_k](const absl::Status&, TaskResult result) {
      const model::ClassifyOutput& out = result.classify;
      std::vector<int> order(out.logits.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return out.probabilities[a] > out.probabilities[b]; });
      for (size_t k = 0; k < out.logits.size(); ++k) {
        slot->add_logits(out.logits[k]);
        slot->add_probabilities(out.probabilities[k]);
      }
      for (int k = 0; k < top_k && k < static_cast<int>(order.size()); ++k) {
        pb::LabelScore* label = slot->add_labels();
        label->set_label_id(order[k]);
        label->set_label(order[k] < static_cast<int>(info_.labels.size()) ? info_.labels[order[k]] : "");
        label->set_probability(out.probabilities[order[k]]);
        label->set_logit(out.logits[order[k]]);
      }
    };
    tasks.push_back(std::move(task));
  }
  return Submit(context, Endpoint::kClassify, std::move(tasks), invalid);
}

grpc::ServerUnaryReactor* InferenceServiceImpl::FillMask(grpc::CallbackServerContext* context,
                                                         const pb::FillMaskRequest* request,
                                                         pb::FillMaskResponse* response) {
  response->set_request_id(request->request_id());
  const int n = request->sequences_size();
  const int top_k = request->top_k() == 0 ? 5 : request->top_k();
  absl::Status invalid = CheckSequenceCount(n);
  if (!info_.has_mlm_head) {
    invalid = absl::FailedPreconditionError("the served model has no masked-LM head");
  } else if (invalid.ok() && (top_k < 1 || top_k > info_.vocab_size)) {
    invalid = absl::InvalidArgumentError(
        absl::StrCat("top_k is ", request->top_k(), "; it must be in [1, ", info_.vocab_size, "]"));
  }
  std::vector<std::unique_ptr<BatchTask>> tasks;
  for (int i = 0; invalid.ok() && i < n; ++i) {
    const pb::FillMaskSequence& in = request->sequences(i);
    auto task = std::make_unique<BatchTask>();
    task->kind = TaskKind::kFillMask;
    task->input.top_k = top_k;
    invalid = PrepareSequence(i, in.sequence(), &task->input.sequence);
    if (!invalid.ok()) break;
    const auto& ids = task->input.sequence.token_ids;
    if (in.positions_size() > 0) {
      task->input.positions.assign(in.positions().begin(), in.positions().end());
    } else {
      for (size_t t = 0; t < ids.size(); ++t) {
        if (ids[t] == options_.special_tokens.mask) task->input.positions.push_back(static_cast<int32_t>(t));
      }
      if (task->input.positions.empty()) {
        invalid = absl::InvalidArgumentError(absl::StrCat(
            "sequence ", i, ": no mask token (id ", options_.special_tokens.mask,
            ") and no positions given"));
        break;
      }
    }
    std::sort(task->input.positions.begin(), task->input.positions.end());
    if (absl::Status s = model::ValidateMaskedSequence(info_, task->input); !s.ok()) {
      invalid = absl::InvalidArgumentError(absl::StrCat("sequence ", i, ": ", s.message()));
      break;
    }
    pb::FillMaskResult* slot = response->add_results();
    task->done = [slot](const absl::Status&, TaskResult result) {
      for (const model::MaskPrediction& p : result.fill_mask.predictions) {
        pb::MaskPrediction* out = slot->add_predictions();
        out->set_position(p.position);
        for (const model::TokenScore& c : p.candidates) {
          pb::TokenCandidate* candidate = out->add_candidates();
          candidate->set_token_id(c.token_id);
          candidate->set_probability(c.probability);
        }
      }
    };
    tasks.push_back(std::move(task));
  }
  return Submit(context, Endpoint::kFillMask, std::move(tasks), invalid);
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
  const SpecialTokens& special = options_.special_tokens;
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
  if (metrics_) metrics_->RecordRequest(Endpoint::kGetModelInfo, "OK", absl::Now() - start);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace deberta::service
