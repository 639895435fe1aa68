// Models: every model the server serves, by name, and their life: loaded
// from the model repository at start, then (with --model_control) loaded,
// unloaded and swapped to a new version on request (explicit) or when the
// repository changes (poll). A swap loads and warms up the new version
// beside the old, switches new calls to it at once, lets the old one
// answer every call it accepted, then frees it; a failed load leaves the
// old version serving and says why (log, metrics, ListModels).
// Calls find their model with Acquire, which counts them against the
// version they got, so no version is freed under a call.
#ifndef DEBERTA_SERVICE_MODELS_MODELS_H_
#define DEBERTA_SERVICE_MODELS_MODELS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/models/model_loader.h"
#include "service/models/model_repository.h"
#include "service/models/served_model.h"

namespace deberta::service {

// As Triton's --model-control-mode: none (what was loaded at start stays),
// explicit (LoadModel/UnloadModel RPCs with an admin key), poll (the
// repository is re-read every --repository_poll_interval).
enum class ModelControl { kNone, kExplicit, kPoll };
absl::StatusOr<ModelControl> ParseModelControl(absl::string_view name);
const char* ModelControlName(ModelControl control);

// The life of a model, as ListModels reports it (the proto's ModelState).
enum class ModelState { kLoading, kReady, kUnloading, kUnavailable, kFailed };
const char* ModelStateName(ModelState state);  // "loading", "ready", ...
inline constexpr ModelState kAllModelStates[] = {ModelState::kLoading, ModelState::kReady, ModelState::kUnloading,
                                                 ModelState::kUnavailable, ModelState::kFailed};

// One model as ListModels reports it.
struct ModelStatusInfo {
  std::string name;
  int64_t version = 0;
  std::string task;
  ModelState state = ModelState::kUnavailable;
  std::string error;  // Of the last failed load; empty otherwise.
  std::string dtype;
  std::string device;
  int64_t memory_estimate_bytes = 0;
};

// Thread-safe.
class Models {
 public:
  struct Options {
    // Empty: no repository; the models are those given to AddLoaded.
    std::string repository;
    ModelControl control = ModelControl::kNone;
    absl::Duration poll_interval = absl::Seconds(15);
    // Every model's settings unless its serving.json says otherwise.
    ModelSettings defaults;
    // Special ids of a checkpoint without tokenizer files (the flags).
    model::SpecialTokens default_tokens;
    std::string server_version;
    // Loads whose estimated memory, added to the loaded models', would
    // exceed this are refused (ResourceExhausted). 0: no limit.
    int64_t memory_limit_bytes = 0;
    // CPU cores to divide between the models (DivideThreads).
    int cpu_cores = 1;
    bool allow_thread_oversubscription = false;
  };

  // `create` makes the engines of repository models (may be null when there
  // is no repository). The registry is the server's.
  Models(Options options, EngineFactory create, std::shared_ptr<prometheus::Registry> registry);
  ~Models();  // Stop()

  // Serves `loaded` under `options.name`: the server's one model (--model).
  // Starts it (warm-up) before returning.
  absl::Status AddLoaded(const ServedModel::Options& options, LoadedModel loaded);
  // Loads every model of the repository; the first failure is the error.
  absl::Status LoadRepository();
  // With ModelControl::kPoll: re-reads the repository every poll interval
  // from now until Stop.
  void StartPolling();
  // One poll: new model folders are loaded, removed ones unloaded, models
  // whose served version changed swapped. Errors are reported per model
  // (ListModels, log, metrics), never returned.
  void PollOnce();

  // The version serving `name`, with this call counted against it until
  // its CallDone. Empty `name`: the only model. NotFound (naming the known
  // models) for an unknown name, InvalidArgument (naming them) for an
  // empty one when there are several, Unavailable for a model that is not
  // loaded (loading, unloading, unloaded, failed).
  absl::StatusOr<std::shared_ptr<ServedModel>> Acquire(absl::string_view name);

  // Loads `name` from the repository, or its newest version (swapped in).
  // Blocks until it is ready or failed; returns its status after.
  absl::StatusOr<ModelStatusInfo> Load(const std::string& name);
  // Stops new calls to `name`, waits for its accepted ones, frees it.
  absl::StatusOr<ModelStatusInfo> Unload(const std::string& name);
  // Runs `work` on a thread of its own (a load or an unload for an RPC,
  // which must not hold a gRPC thread), joined by Stop; false (and `work`
  // not run) once stopping.
  bool RunInBackground(std::function<void()> work);

  // Every model, in name order; with a repository, its folders not loaded
  // too (state unavailable).
  std::vector<ModelStatusInfo> List() const;
  // Whether every model is ready (the server's readiness).
  bool AllReady() const;
  ModelControl control() const { return options_.control; }
  bool has_repository() const { return !options_.repository.empty(); }

  // Told (model name, ready) whenever a model's readiness changes; set
  // before the first load.
  void SetReadinessListener(std::function<void(const std::string&, bool)> listener);

  // Shutdown, in order: StartDraining (queued work runs at once), Stop
  // (polling and background work end, every version answers what it
  // holds and is freed). Idempotent.
  void StartDraining();
  void Stop();

 private:
  struct Entry {
    std::shared_ptr<ServedModel> serving;  // Null while none is.
    ModelState state = ModelState::kUnavailable;
    int64_t version = 0;         // Serving, or loading.
    int64_t failed_version = 0;  // Last version whose load failed (poll skips it
    std::string failed_stamp;    // while its folder's FolderStamp stays this).
    std::string error;
    bool busy = false;           // A load or unload is under way.
    std::string dtype, device;   // Of the last version loaded or tried.
  };

  // Loads `source` beside what `name` serves, then swaps it in.
  absl::Status LoadSource(const ModelSource& source);
  // Starts and publishes a loaded version, retiring the one it replaces.
  absl::Status Publish(const ServedModel::Options& options, LoadedModel loaded);
  // Waits for `old`'s accepted calls, then stops it.
  void Retire(std::shared_ptr<ServedModel> old);
  // Every model folder of the repository: its source with its share of
  // the cores, or why it cannot be read (one read of the repository).
  absl::StatusOr<std::map<std::string, absl::StatusOr<ModelSource>>> ReadSources() const;
  // `name`'s source of ReadSources (NotFound: not in the repository).
  absl::StatusOr<ModelSource> ReadSource(const std::string& name) const;
  ModelStatusInfo StatusOf(const std::string& name, const Entry& entry) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void SetState(const std::string& name, Entry& entry, ModelState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A version's state series all to 0: it no longer serves.
  void ClearStateSeries(const std::string& name, int64_t version);
  std::string KnownNames() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t MemoryInUse(const std::string& except) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  ServedModel::Options ServedOptions(const ModelSource& source, int64_t memory_estimate) const;

  const Options options_;
  const EngineFactory create_;
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>& state_family_;
  prometheus::Family<prometheus::Gauge>& load_seconds_family_;
  prometheus::Family<prometheus::Counter>& load_failures_family_;
  prometheus::Family<prometheus::Gauge>& unload_seconds_family_;

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> loading_memory_ ABSL_GUARDED_BY(mu_);  // Estimates of loads under way.
  std::function<void(const std::string&, bool)> listener_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> background_ ABSL_GUARDED_BY(mu_);
  std::thread poller_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_MODELS_MODELS_H_
