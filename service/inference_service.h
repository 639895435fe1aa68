// InferenceServiceImpl: the gRPC callback handlers, one line each: every
// RPC goes through one path (Serve), which checks the API key, admits the
// call (or answers Unavailable while draining), finds the model the
// request names (Models::Acquire, which holds that version until the call
// is done), starts its access-log line and metrics, and hands the request
// to its task (service/tasks/), whose work it schedules on that model's
// Batcher; the call is answered after the last task, or at once when the
// task needs no engine or fails its checks. ListModels, LoadModel and
// UnloadModel (admin key) act on the Models.
// Every call is an InferenceCall reactor that owns the call's state.
// Reactions never block.
#ifndef DEBERTA_SERVICE_INFERENCE_SERVICE_H_
#define DEBERTA_SERVICE_INFERENCE_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "model/engine.h"
#include "model/special_tokens.h"
#include "service/access_log.h"
#include "service/api_keys.h"
#include "service/batcher.h"
#include "service/metrics.h"
#include "service/models/models.h"
#include "service/open_calls.h"
#include "service/request_builder.h"
#include "service/tasks/task.h"

namespace deberta::service {

class InferenceCall;

// Thread-safe. Borrows its dependencies (the models, metrics, API keys and
// access log), which must outlive the gRPC server that holds this service.
class InferenceServiceImpl final : public serving::v1::InferenceService::CallbackService {
 public:
  // Settings only; the objects the service uses come to its constructor.
  struct Options {
    // Every model's limits and truncation of requests unless its
    // serving.json says otherwise (the server gives them to its Models;
    // each model's tokenizer and mask id are its own).
    RequestOptions requests;
    // Special ids of a checkpoint without tokenizer files (its Models'
    // default); GetModelInfo reports each model's own.
    model::SpecialTokens special_tokens;
    std::string server_version;
    // With an access log: each line carries the request message too (token
    // ids and text). REQUIRES: an access log when set.
    bool log_payloads = false;
  };

  // The objects a service borrows besides the models; each may be null.
  struct Borrowed {
    // When set, every call needs `authorization: Bearer <key>` with one of
    // these keys (or an admin key).
    const ApiKeys* api_keys = nullptr;
    // LoadModel and UnloadModel need one of these keys; null: they are
    // refused (PermissionDenied).
    const ApiKeys* admin_keys = nullptr;
    // One line per request when set.
    AccessLog* access_log = nullptr;
    // The server's metrics: calls refused before a model was found.
    ServiceMetrics* metrics = nullptr;
  };

  InferenceServiceImpl(Models* models, const Options& options, const Borrowed& borrowed);

  // After this, new requests get Unavailable (the server is draining).
  void StopAccepting();
  // Blocks until every accepted Classify and FillMask call is done, or
  // until `deadline`; returns whether none is left.
  bool AwaitNoOpenCalls(absl::Time deadline);

  grpc::ServerUnaryReactor* Classify(grpc::CallbackServerContext* context,
                                     const serving::v1::ClassifyRequest* request,
                                     serving::v1::ClassifyResponse* response) override;
  grpc::ServerUnaryReactor* FillMask(grpc::CallbackServerContext* context,
                                     const serving::v1::FillMaskRequest* request,
                                     serving::v1::FillMaskResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const serving::v1::GetModelInfoRequest* request,
                                         serving::v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* ZeroShotClassify(grpc::CallbackServerContext* context,
                                             const serving::v1::ZeroShotClassifyRequest* request,
                                             serving::v1::ZeroShotClassifyResponse* response) override;
  grpc::ServerUnaryReactor* ClassifyTokens(grpc::CallbackServerContext* context,
                                           const serving::v1::ClassifyTokensRequest* request,
                                           serving::v1::ClassifyTokensResponse* response) override;
  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context, const serving::v1::RerankRequest* request,
                                   serving::v1::RerankResponse* response) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const serving::v1::TokenizeRequest* request,
                                     serving::v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* Detokenize(grpc::CallbackServerContext* context,
                                       const serving::v1::DetokenizeRequest* request,
                                       serving::v1::DetokenizeResponse* response) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const serving::v1::ListModelsRequest* request,
                                       serving::v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* LoadModel(grpc::CallbackServerContext* context,
                                      const serving::v1::LoadModelRequest* request,
                                      serving::v1::ModelStatus* response) override;
  grpc::ServerUnaryReactor* UnloadModel(grpc::CallbackServerContext* context,
                                        const serving::v1::UnloadModelRequest* request,
                                        serving::v1::ModelStatus* response) override;

 private:
  // The one path of every model's RPC: StartCall, then the task's `start`
  // on the model's env, then Submit its tasks (or answer at once).
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Serve(Endpoint endpoint, grpc::CallbackServerContext* context, const Request* request,
                                  Response* response, const std::string& request_id,
                                  StartTask<Request, Response> start);
  // LoadModel and UnloadModel: `action` on a background thread (a load
  // takes seconds), the call answered with its status.
  using ControlAction = std::function<absl::StatusOr<ModelStatusInfo>(const std::string& model)>;
  grpc::ServerUnaryReactor* Control(Endpoint endpoint, grpc::CallbackServerContext* context,
                                    const std::string& model, serving::v1::ModelStatus* response,
                                    ControlAction action);
  // OK, or Unauthenticated when API keys are on and the call carries none
  // of them; with `admin`, PermissionDenied unless it carries an admin key.
  absl::Status Authorize(const grpc::CallbackServerContext& context, bool admin) const;
  // Counts a call as accepted unless the server has stopped accepting.
  bool TryAcceptCall();
  // An accepted call is done (from its OnDone).
  void CallDone();
  // A new call: authorized, accepted (counted until its OnDone) and, when
  // `model` is set, given the version serving the model named `model_name`
  // (held until its OnDone); or already answered (Unauthenticated,
  // Unavailable while draining, the model not found or not loaded, each
  // recorded as a rejection), and then `accepted` is false.
  InferenceCall* StartCall(Endpoint endpoint, grpc::CallbackServerContext* context,
                           const google::protobuf::Message& request, const std::string& request_id,
                           const std::string& model_name, bool admin, bool* accepted,
                           std::shared_ptr<ServedModel>* model);
  // The start of a call's access-log line: its protocol (always, for the
  // metrics), and with the access log on the request id, peer, traceparent
  // (and `request` itself with log_payloads).
  AccessRecord LogStart(const grpc::CallbackServerContext& context, const google::protobuf::Message& request,
                        const std::string& request_id) const;
  // Answers a request that failed its task's checks; returns the call.
  InferenceCall* Reject(InferenceCall* call, ServiceMetrics* metrics, const absl::Status& invalid);
  // Schedules the work's tasks; the call is answered after the last task,
  // or at once if scheduling fails. When every task succeeded, the work's
  // `complete` (if set) runs first, on the thread of the last task, and its
  // status is the answer's.
  void Submit(InferenceCall* call, ServedModel& model, Endpoint endpoint, TaskWork work);

  Models* const models_;
  const bool log_payloads_;
  const ApiKeys* const api_keys_;    // May be null (no keys needed).
  const ApiKeys* const admin_keys_;  // May be null (no admin calls).
  AccessLog* const access_log_;    // May be null (no access log).
  ServiceMetrics* const metrics_;  // May be null.
  OpenCalls calls_;  // Accepted and not yet done.
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INFERENCE_SERVICE_H_
