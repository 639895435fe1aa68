// Models: the registry of served models, their loads, unloads and swaps.
#include "service/models/models.h"

#include <glog/logging.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deberta::service {
namespace {

int64_t Mebibytes(int64_t bytes) { return bytes >> 20; }

}  // namespace

absl::StatusOr<ModelControl> ParseModelControl(absl::string_view name) {
  if (name == "none") return ModelControl::kNone;
  if (name == "explicit") return ModelControl::kExplicit;
  if (name == "poll") return ModelControl::kPoll;
  return absl::InvalidArgumentError(
      absl::StrCat("--model_control is '", name, "'; it must be none, explicit or poll"));
}

const char* ModelControlName(ModelControl control) {
  switch (control) {
    case ModelControl::kNone:
      return "none";
    case ModelControl::kExplicit:
      return "explicit";
    case ModelControl::kPoll:
      return "poll";
  }
  return "none";
}

const char* ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "loading";
    case ModelState::kReady:
      return "ready";
    case ModelState::kUnloading:
      return "unloading";
    case ModelState::kUnavailable:
      return "unavailable";
    case ModelState::kFailed:
      return "failed";
  }
  return "unavailable";
}

Models::Models(Options options, EngineFactory create, std::shared_ptr<prometheus::Registry> registry)
    : options_(std::move(options)),
      create_(std::move(create)),
      registry_(std::move(registry)),
      state_family_(prometheus::BuildGauge()
                        .Name("deberta_model_state")
                        .Help("1 for the state each model version is in (loading, ready, unloading, unavailable, "
                              "failed), 0 for the others.")
                        .Register(*registry_)),
      load_seconds_family_(prometheus::BuildGauge()
                               .Name("deberta_model_load_seconds")
                               .Help("How long the last load of a model version took: reading it, creating its "
                                     "replicas and warming them up.")
                               .Register(*registry_)),
      load_failures_family_(prometheus::BuildCounter()
                                .Name("deberta_model_load_failures_total")
                                .Help("Loads of a model that failed (the version served before, if any, serves on).")
                                .Register(*registry_)),
      unload_seconds_family_(prometheus::BuildGauge()
                                 .Name("deberta_model_unload_seconds")
                                 .Help("How long the last unload (or retirement of a replaced version) of a model "
                                       "took: answering its accepted calls, then freeing it.")
                                 .Register(*registry_)) {}

Models::~Models() { Stop(); }

void Models::SetReadinessListener(std::function<void(const std::string&, bool)> listener) {
  listener_ = std::move(listener);
}

void Models::SetState(const std::string& name, Entry& entry, ModelState state) {
  entry.state = state;
  const std::string version = std::to_string(entry.version);
  for (ModelState s : kAllModelStates) {
    state_family_.Add({{"model", name}, {"version", version}, {"state", ModelStateName(s)}}).Set(s == state ? 1 : 0);
  }
}

void Models::ClearStateSeries(const std::string& name, int64_t version) {
  for (ModelState s : kAllModelStates) {
    state_family_.Add({{"model", name}, {"version", std::to_string(version)}, {"state", ModelStateName(s)}}).Set(0);
  }
}

std::string Models::KnownNames() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

int64_t Models::MemoryInUse(const std::string& except) const {
  int64_t total = 0;
  for (const auto& [name, entry] : entries_) {
    if (entry.serving != nullptr) total += entry.serving->memory_estimate_bytes();
  }
  for (const auto& [name, bytes] : loading_memory_) {
    if (name != except) total += bytes;
  }
  return total;
}

ModelStatusInfo Models::StatusOf(const std::string& name, const Entry& entry) const {
  ModelStatusInfo status;
  status.name = name;
  status.version = entry.serving != nullptr ? entry.serving->version() : entry.version;
  status.state = entry.state;
  status.error = entry.error;
  status.dtype = entry.dtype;
  status.device = entry.device;
  if (entry.serving != nullptr) {
    status.task = entry.serving->Task();
    status.memory_estimate_bytes = entry.serving->memory_estimate_bytes();
  }
  return status;
}

absl::Status Models::AddLoaded(const ServedModel::Options& options, LoadedModel loaded) {
  {
    absl::MutexLock lock(&mu_);
    Entry& entry = entries_[options.name];
    entry.version = options.version;
    entry.busy = true;
    SetState(options.name, entry, ModelState::kLoading);
  }
  absl::Status published = Publish(options, std::move(loaded));
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[options.name];
  entry.busy = false;
  if (!published.ok()) {
    entry.error = std::string(published.message());
    SetState(options.name, entry, ModelState::kFailed);
  }
  return published;
}

absl::Status Models::Publish(const ServedModel::Options& options, LoadedModel loaded) {
  absl::StatusOr<std::unique_ptr<ServedModel>> created = ServedModel::Create(options, std::move(loaded), registry_);
  if (!created.ok()) return created.status();
  std::shared_ptr<ServedModel> model = *std::move(created);
  // The executor threads initialize and warm up the engines before this
  // returns; calls still go to the old version meanwhile.
  if (absl::Status s = model->Start(); !s.ok()) return s;
  std::shared_ptr<ServedModel> old;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the server is shutting down");
    Entry& entry = entries_[options.name];
    old = std::move(entry.serving);
    // The old version's state series go to 0: it no longer serves.
    if (old != nullptr && old->version() != options.version) ClearStateSeries(options.name, old->version());
    entry.serving = model;  // New calls go to the new version from here.
    entry.version = options.version;
    entry.error.clear();
    entry.failed_version = 0;
    entry.failed_stamp.clear();
    entry.dtype = model->info().dtype;
    entry.device = model->info().device;
    SetState(options.name, entry, ModelState::kReady);
  }
  LOG(INFO) << "model " << options.name << " version " << options.version << " ready ("
            << model->info().dtype << ", " << model->info().device
            << (options.memory_estimate_bytes > 0
                    ? absl::StrCat(", estimated ", Mebibytes(options.memory_estimate_bytes), " MiB")
                    : std::string())
            << ")"
            << (old != nullptr ? absl::StrCat("; version ", old->version(), " retires") : "");
  if (listener_) listener_(options.name, true);
  if (old != nullptr) Retire(std::move(old));
  return absl::OkStatus();
}

void Models::Retire(std::shared_ptr<ServedModel> old) {
  const absl::Time start = absl::Now();
  old->StopAccepting();
  old->StartDraining();
  old->AwaitNoOpenCalls(absl::InfiniteFuture());
  old->Stop();
  unload_seconds_family_.Add({{"model", old->name()}, {"version", std::to_string(old->version())}})
      .Set(absl::ToDoubleSeconds(absl::Now() - start));
  LOG(INFO) << "model " << old->name() << " version " << old->version() << ": every accepted call answered; freed";
  // Calls that are answered but not yet deleted may hold it a moment longer.
  old.reset();
#ifdef __GLIBC__
  // The allocator keeps freed weights and activations for reuse; give them
  // back, so the process's memory returns to what the models serving need
  // (measured: docs/models.md).
  malloc_trim(0);
#endif
}

ServedModel::Options Models::ServedOptions(const ModelSource& source, int64_t memory_estimate) const {
  ServedModel::Options served;
  served.name = source.name;
  served.version = source.version;
  served.batcher = source.settings.batcher;
  served.requests = source.settings.requests;
  served.server_version = options_.server_version;
  served.memory_estimate_bytes = memory_estimate;
  return served;
}

absl::Status Models::LoadSource(const ModelSource& source) {
  const absl::Time start = absl::Now();
  absl::StatusOr<int64_t> estimate = EstimateModelMemory(source);
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the server is shutting down");
    Entry& entry = entries_[source.name];
    if (entry.busy) {
      return absl::FailedPreconditionError(
          absl::StrCat("model ", source.name, " is already being loaded or unloaded; try again when it is done"));
    }
    entry.dtype = model::ComputeDTypeName(source.settings.engine.dtype);
    entry.device = source.settings.engine.device;
    absl::Status refused = estimate.status();
    if (refused.ok() && options_.memory_limit_bytes > 0 &&
        MemoryInUse(source.name) + *estimate > options_.memory_limit_bytes) {
      refused = absl::ResourceExhaustedError(absl::StrCat(
          "model ", source.name, " version ", source.version, " needs an estimated ", Mebibytes(*estimate),
          " MiB; with the ", Mebibytes(MemoryInUse(source.name)), " MiB of the models loaded that exceeds --memory_limit (",
          Mebibytes(options_.memory_limit_bytes), " MiB)"));
    }
    if (!refused.ok()) {
      entry.error = std::string(refused.message());
      entry.failed_version = source.version;
      entry.failed_stamp = FolderStamp(source.folder);
      load_failures_family_.Add({{"model", source.name}}).Increment();
      if (entry.serving == nullptr) {
        entry.version = source.version;
        SetState(source.name, entry, ModelState::kFailed);
      }
      LOG(WARNING) << "load refused: " << refused.message();
      return refused;
    }
    entry.busy = true;
    loading_memory_[source.name] = *estimate;
    if (entry.serving == nullptr) {
      entry.version = source.version;
      SetState(source.name, entry, ModelState::kLoading);
    }
  }
  LOG(INFO) << "loading model " << source.name << " version " << source.version << " from " << source.folder
            << " (" << model::ComputeDTypeName(source.settings.engine.dtype) << ", " << source.settings.engine.device
            << ", threads " << source.settings.engine.num_threads << ", replicas " << source.settings.replicas << ")";
  absl::Status status;
  if (!create_) {
    status = absl::FailedPreconditionError("this server cannot create engines");
  } else {
    absl::StatusOr<LoadedModel> loaded = LoadModelSource(source, create_, options_.default_tokens);
    status = loaded.ok() ? Publish(ServedOptions(source, *estimate), *std::move(loaded)) : loaded.status();
  }
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[source.name];
  entry.busy = false;
  loading_memory_.erase(source.name);
  if (status.ok()) {
    load_seconds_family_.Add({{"model", source.name}, {"version", std::to_string(source.version)}})
        .Set(absl::ToDoubleSeconds(absl::Now() - start));
    return status;
  }
  entry.error = std::string(status.message());
  entry.failed_version = source.version;
  entry.failed_stamp = FolderStamp(source.folder);
  load_failures_family_.Add({{"model", source.name}}).Increment();
  if (entry.serving == nullptr) {
    entry.version = source.version;
    SetState(source.name, entry, ModelState::kFailed);
    LOG(WARNING) << "model " << source.name << " version " << source.version << " failed to load: " << status;
  } else {
    LOG(WARNING) << "model " << source.name << " version " << source.version << " failed to load (version "
                 << entry.serving->version() << " serves on): " << status;
  }
  return status;
}

absl::StatusOr<std::map<std::string, absl::StatusOr<ModelSource>>> Models::ReadSources() const {
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.repository);
  if (!names.ok()) return names.status();
  std::map<std::string, absl::StatusOr<ModelSource>> sources;
  // Every readable model takes part in dividing the cores, so each gets
  // the share it would have at start-up.
  std::vector<ModelSource> readable;
  for (const std::string& name : *names) {
    absl::StatusOr<ModelSource> source = ReadModel(options_.repository, name, options_.defaults);
    if (source.ok()) {
      readable.push_back(*std::move(source));
    } else {
      sources.emplace(name, source.status());
    }
  }
  const absl::Status divided = DivideThreads(readable, options_.cpu_cores, options_.allow_thread_oversubscription);
  for (ModelSource& source : readable) {
    std::string name = source.name;
    sources.emplace(std::move(name), divided.ok() ? absl::StatusOr<ModelSource>(std::move(source))
                                                  : absl::StatusOr<ModelSource>(divided));
  }
  return sources;
}

absl::StatusOr<ModelSource> Models::ReadSource(const std::string& name) const {
  absl::StatusOr<std::map<std::string, absl::StatusOr<ModelSource>>> sources = ReadSources();
  if (!sources.ok()) return sources.status();
  auto it = sources->find(name);
  if (it == sources->end()) {
    std::vector<std::string> names;
    for (const auto& [known, source] : *sources) names.push_back(known);
    return absl::NotFoundError(absl::StrCat("the repository ", options_.repository, " has no model '", name,
                                            "'; its models: ", names.empty() ? "none" : absl::StrJoin(names, ", ")));
  }
  return std::move(it->second);
}

absl::Status Models::LoadRepository() {
  absl::StatusOr<std::vector<ModelSource>> sources = ScanRepository(options_.repository, options_.defaults);
  if (!sources.ok()) return sources.status();
  if (sources->empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the model repository ", options_.repository, " has no model folders (each model is a folder holding "
        "a checkpoint, or numbered version folders)"));
  }
  if (absl::Status s = DivideThreads(*sources, options_.cpu_cores, options_.allow_thread_oversubscription); !s.ok()) {
    return s;
  }
  for (const ModelSource& source : *sources) {
    if (absl::Status s = LoadSource(source); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ServedModel>> Models::Acquire(absl::string_view name) {
  absl::ReaderMutexLock lock(&mu_);
  auto it = entries_.end();
  if (name.empty()) {
    if (entries_.size() == 1) {
      it = entries_.begin();
    } else if (entries_.empty()) {
      return absl::UnavailableError("no model is loaded");
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "this server serves several models (", KnownNames(),
          "): name one in the request's model field, or in the path /v1/models/{model}/..."));
    }
  } else {
    it = entries_.find(std::string(name));
    if (it == entries_.end()) {
      return absl::NotFoundError(absl::StrCat("no model named '", name, "'; the models are: ", KnownNames()));
    }
  }
  const Entry& entry = it->second;
  if (entry.serving == nullptr || !entry.serving->TryAcceptCall()) {
    return absl::UnavailableError(absl::StrCat("model ", it->first, " is not loaded (", ModelStateName(entry.state),
                                               entry.error.empty() ? "" : absl::StrCat(": ", entry.error), ")"));
  }
  return entry.serving;
}

absl::StatusOr<ModelStatusInfo> Models::Load(const std::string& name) {
  if (!has_repository()) {
    return absl::FailedPreconditionError("this server has no model repository (start it with --model_repository)");
  }
  absl::StatusOr<ModelSource> source = ReadSource(name);
  if (!source.ok()) return source.status();
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it != entries_.end() && it->second.serving != nullptr && it->second.serving->version() == source->version) {
      return StatusOf(name, it->second);  // Already serving that version.
    }
  }
  if (absl::Status s = LoadSource(*source); !s.ok()) return s;
  absl::ReaderMutexLock lock(&mu_);
  return StatusOf(name, entries_.at(name));
}

absl::StatusOr<ModelStatusInfo> Models::Unload(const std::string& name) {
  std::shared_ptr<ServedModel> old;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      return absl::NotFoundError(absl::StrCat("no model named '", name, "'; the models are: ", KnownNames()));
    }
    Entry& entry = it->second;
    if (entry.busy) {
      return absl::FailedPreconditionError(
          absl::StrCat("model ", name, " is being loaded or unloaded; try again when it is done"));
    }
    if (entry.serving == nullptr) return StatusOf(name, entry);
    old = std::move(entry.serving);
    entry.busy = true;
    SetState(name, entry, ModelState::kUnloading);
  }
  if (listener_) listener_(name, false);
  LOG(INFO) << "unloading model " << name << " version " << old->version()
            << ": new calls refused, accepted ones answered";
  Retire(std::move(old));
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_.at(name);
  entry.busy = false;
  SetState(name, entry, ModelState::kUnavailable);
  return StatusOf(name, entry);
}

void Models::PollOnce() {
  absl::StatusOr<std::map<std::string, absl::StatusOr<ModelSource>>> sources = ReadSources();
  if (!sources.ok()) {
    LOG(WARNING) << "repository poll: " << sources.status();
    return;
  }
  std::vector<std::string> gone;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, entry] : entries_) {
      if (sources->count(name) == 0) gone.push_back(name);
    }
  }
  for (const std::string& name : gone) {
    LOG(INFO) << "repository poll: model folder " << name << " is gone";
    (void)Unload(name);
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it != entries_.end() && it->second.serving == nullptr && !it->second.busy) {
      ClearStateSeries(name, it->second.version);
      entries_.erase(it);
    }
  }
  for (auto& [name, source] : *sources) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      Entry& entry = entries_[name];
      if (entry.busy) continue;
      if (!source.ok()) {
        const std::string error(source.status().message());
        if (entry.error != error) {
          LOG(WARNING) << "repository poll: model " << name << ": " << error;
          load_failures_family_.Add({{"model", name}}).Increment();
        }
        entry.error = error;
        if (entry.serving == nullptr) SetState(name, entry, ModelState::kFailed);
        continue;
      }
      if (entry.serving != nullptr && entry.serving->version() == source->version) continue;
      // A version that failed is tried again only once its files change.
      if (entry.failed_version == source->version && entry.failed_stamp == FolderStamp(source->folder)) continue;
    }
    (void)LoadSource(*source);
  }
}

void Models::StartPolling() {
  if (options_.control != ModelControl::kPoll || !has_repository()) return;
  poller_ = std::thread([this] {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll_interval)) return;
      }
      PollOnce();
    }
  });
}

bool Models::RunInBackground(std::function<void()> work) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  background_.emplace_back(std::move(work));
  return true;
}

std::vector<ModelStatusInfo> Models::List() const {
  std::vector<ModelStatusInfo> list;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : entries_) list.push_back(StatusOf(name, entry));
  if (has_repository()) {
    absl::StatusOr<std::vector<std::string>> names = ListModelNames(options_.repository);
    if (names.ok()) {
      for (const std::string& name : *names) {
        if (entries_.count(name) == 0) {
          ModelStatusInfo status;
          status.name = name;
          list.push_back(status);
        }
      }
    }
  }
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return list;
}

bool Models::AllReady() const {
  absl::ReaderMutexLock lock(&mu_);
  if (entries_.empty()) return false;
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const auto& item) { return item.second.serving != nullptr; });
}

void Models::StartDraining() {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : entries_) {
    if (entry.serving != nullptr) entry.serving->StartDraining();
  }
}

void Models::Stop() {
  std::vector<std::thread> background;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    background = std::move(background_);
    background_.clear();
  }
  if (poller_.joinable()) poller_.join();
  for (std::thread& thread : background) thread.join();
  // Each version answers what it holds; it is freed with this object (so
  // the engines outlive the server's shutdown, as its owner expects).
  std::vector<std::shared_ptr<ServedModel>> serving;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, entry] : entries_) {
      if (entry.serving != nullptr) serving.push_back(entry.serving);
    }
  }
  for (const auto& model : serving) model->Stop();
}

}  // namespace deberta::service
