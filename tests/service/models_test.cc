// Many models in one server (service/models/): a repository of folders and
// versions read with serving.json, requests that name their model, per-model
// health and metrics, explicit load and unload with an admin key, versions
// swapped in by a poll under continuous load without a failed call, a
// failed load that leaves the old version serving, and the memory limit.
// The engines are fakes whose first label names the folder they were
// loaded from, so an answer says which version gave it.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "service/models/model_repository.h"
#include "service/server.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::service {
namespace {

namespace fs = std::filesystem;
namespace pb = serving::v1;
using ::testing::HasSubstr;
using testing::ContextWithDeadline;
using testing::FakeEngine;

// A config.json small enough for the memory estimate to read.
constexpr char kConfig[] = R"({"model_type": "deberta-v2", "vocab_size": 100, "hidden_size": 8,
  "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 64})";

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A version folder, written beside and renamed in (as docs/models.md
// advises), so that a poll never sees it half-written.
void WriteVersion(const fs::path& model, int version, bool broken = false) {
  const fs::path staging = model.parent_path() / absl::StrCat(".staging-", model.filename().string(), version);
  WriteFile(staging / "config.json", kConfig);
  if (broken) WriteFile(staging / "broken", "");
  fs::create_directories(model);
  fs::rename(staging, model / std::to_string(version));
}

// Engines whose first label is "<model folder>/<version folder>", the
// rest as FakeEngine's; a folder holding a file "broken" fails to load.
class FakeFactory {
 public:
  EngineFactory factory() {
    return [this](const model::EngineOptions& options) -> absl::StatusOr<std::unique_ptr<model::Engine>> {
      const fs::path folder(options.model);
      if (fs::exists(folder / "broken")) return absl::InvalidArgumentError("the checkpoint is broken");
      auto engine = std::make_unique<FakeEngine>();
      engine->mutable_info()->labels[0] =
          absl::StrCat(folder.parent_path().filename().string(), "/", folder.filename().string());
      engine->mutable_info()->name = folder.filename().string();
      absl::MutexLock lock(&mu_);
      engines_.push_back(engine.get());
      return engine;
    };
  }
  // The engine made last (owned by the server).
  FakeEngine* last() {
    absl::MutexLock lock(&mu_);
    return engines_.back();
  }

 private:
  absl::Mutex mu_;
  std::vector<FakeEngine*> engines_ ABSL_GUARDED_BY(mu_);
};

class ModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repository_ = fs::temp_directory_path() /
                  absl::StrCat("models_test_", ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                               getpid());
    fs::remove_all(repository_);
    WriteVersion(repository_ / "alpha", 1);
    WriteVersion(repository_ / "beta", 1);
    WriteFile(repository_ / "beta" / "serving.json", R"({"max_batch_size": 4, "threads": 1})");
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(repository_);
  }

  ServerConfig Config(ModelControl control = ModelControl::kNone) {
    ServerConfig config;
    config.models.repository = repository_.string();
    config.models.control = control;
    config.models.cpu_cores = 4;
    config.models.poll_interval = absl::Hours(1);  // Tests poll by hand.
    if (control == ModelControl::kExplicit) {
      WriteFile(repository_.parent_path() / absl::StrCat(repository_.filename().string(), ".admin"), "admin-key\n");
      config.models.admin_api_keys_file =
          (repository_.parent_path() / absl::StrCat(repository_.filename().string(), ".admin")).string();
    }
    return config;
  }

  void Start(const ServerConfig& config) {
    auto server = testing::StartRepositoryServer(config, factory_.factory());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // The first label of a classify answer of `model` ("" on error), and
  // its status.
  grpc::Status Classify(const std::string& model, std::string* first_label) {
    pb::ClassifyRequest request;
    request.set_model(model);
    pb::Sequence* sequence = request.add_sequences();
    for (int id : {1, 5, 2}) sequence->add_token_ids(id);
    pb::ClassifyResponse response;
    auto context = ContextWithDeadline(30);
    grpc::Status status = server_->stub->Classify(context.get(), request, &response);
    first_label->clear();
    if (status.ok() && response.results_size() == 1) {
      for (const auto& label : response.results(0).labels()) {
        if (label.label_id() == 0) *first_label = label.label();
      }
    }
    return status;
  }

  pb::ListModelsResponse List() {
    pb::ListModelsResponse response;
    auto context = ContextWithDeadline(10);
    EXPECT_TRUE(server_->stub->ListModels(context.get(), pb::ListModelsRequest(), &response).ok());
    return response;
  }

  std::string Metrics() {
    return prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  }

  fs::path repository_;
  FakeFactory factory_;
  std::unique_ptr<testing::TestServer> server_;
};

TEST(ModelRepositoryTest, ServingJsonSettingsApplyAndBadKeysNameTheFileAndKey) {
  ModelSettings defaults;
  int64_t pinned = 0;
  auto applied = ApplyServingJson(R"({"dtype": "bfloat16", "threads": 2, "max_batch_size": 8, "version": 3,
                                      "batch_timeout_ms": 5, "warmup_shapes": "2x16"})",
                                  "m/serving.json", defaults, &pinned);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->engine.dtype, model::ComputeDType::kBFloat16);
  EXPECT_EQ(applied->engine.num_threads, 2);
  EXPECT_TRUE(applied->threads_set);
  EXPECT_EQ(applied->batcher.max_batch_size, 8u);
  EXPECT_EQ(applied->batcher.batch_timeout, absl::Milliseconds(5));
  EXPECT_EQ(pinned, 3);

  auto unknown = ApplyServingJson(R"({"max_batch": 8})", "m/serving.json", defaults, &pinned);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("m/serving.json: \"max_batch\" is not a setting"));
  auto bad_type = ApplyServingJson(R"({"threads": "two"})", "m/serving.json", defaults, &pinned);
  EXPECT_THAT(bad_type.status().message(), HasSubstr("\"threads\" must be an integer"));
  auto bad_dtype = ApplyServingJson(R"({"dtype": "float8"})", "m/serving.json", defaults, &pinned);
  EXPECT_THAT(bad_dtype.status().message(), HasSubstr("\"dtype\""));
  EXPECT_FALSE(ApplyServingJson("[1]", "m/serving.json", defaults, &pinned).ok());
}

TEST(ModelRepositoryTest, ThreadsAreDividedAndOversubscriptionRefused) {
  std::vector<ModelSource> models(3);
  models[0].name = "a";
  models[0].settings.engine.num_threads = 2;
  models[0].settings.threads_set = true;
  models[1].name = "b";
  models[2].name = "c";
  ASSERT_TRUE(DivideThreads(models, 5, false).ok());
  EXPECT_EQ(models[0].settings.engine.num_threads, 2);
  EXPECT_EQ(models[1].settings.engine.num_threads, 2);  // 3 left: 2 and 1.
  EXPECT_EQ(models[2].settings.engine.num_threads, 1);
  models[0].settings.engine.num_threads = 8;
  absl::Status over = DivideThreads(models, 4, false);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.message(), HasSubstr("--allow_thread_oversubscription"));
  EXPECT_TRUE(DivideThreads(models, 4, true).ok());
}

TEST(ModelRepositoryTest, MemorySizes) {
  EXPECT_EQ(*ParseMemorySize("8G"), int64_t{8} << 30);
  EXPECT_EQ(*ParseMemorySize("512MiB"), int64_t{512} << 20);
  EXPECT_EQ(*ParseMemorySize("1000"), 1000);
  EXPECT_FALSE(ParseMemorySize("lots").ok());
  EXPECT_FALSE(ParseMemorySize("-1G").ok());
}

TEST_F(ModelsTest, TheHighestVersionServesUnlessServingJsonPinsOne) {
  WriteVersion(repository_ / "alpha", 2);
  WriteVersion(repository_ / "alpha", 10);
  EXPECT_EQ(ReadModel(repository_.string(), "alpha", {})->version, 10);
  WriteFile(repository_ / "alpha" / "serving.json", R"({"version": 2})");
  EXPECT_EQ(ReadModel(repository_.string(), "alpha", {})->version, 2);
  WriteFile(repository_ / "alpha" / "serving.json", R"({"version": 7})");
  EXPECT_EQ(ReadModel(repository_.string(), "alpha", {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(ReadModel(repository_.string(), "../alpha", {}).ok());
}

TEST_F(ModelsTest, RequestsNameTheirModelAndEachAnswersFromItsOwn) {
  Start(Config());
  std::string label;
  ASSERT_TRUE(Classify("alpha", &label).ok());
  EXPECT_EQ(label, "alpha/1");
  ASSERT_TRUE(Classify("beta", &label).ok());
  EXPECT_EQ(label, "beta/1");

  grpc::Status none = Classify("", &label);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(none.error_message(), HasSubstr("several models (alpha, beta)"));
  grpc::Status unknown = Classify("gamma", &label);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("the models are: alpha, beta"));

  // GetModelInfo per model: its name (not its version folder) and version.
  pb::GetModelInfoRequest info_request;
  info_request.set_model("beta");
  pb::ModelInfo info;
  auto context = ContextWithDeadline(10);
  ASSERT_TRUE(server_->stub->GetModelInfo(context.get(), info_request, &info).ok());
  EXPECT_EQ(info.model_name(), "beta");
  EXPECT_EQ(info.version(), 1);

  pb::ListModelsResponse list = List();
  ASSERT_EQ(list.models_size(), 2);
  EXPECT_EQ(list.models(0).name(), "alpha");
  EXPECT_EQ(list.models(0).state(), pb::MODEL_STATE_READY);
  EXPECT_EQ(list.models(0).task(), "classify,token_classification,fill_mask");
  EXPECT_EQ(list.models(1).name(), "beta");
  EXPECT_EQ(list.models(1).version(), 1);
  EXPECT_GT(list.models(1).memory_estimate_bytes(), 0);

  EXPECT_EQ(server_->HealthStatus(""), "SERVING");
  EXPECT_EQ(server_->HealthStatus("alpha"), "SERVING");
  EXPECT_EQ(server_->HealthStatus("beta"), "SERVING");

  const std::string metrics = Metrics();
  EXPECT_THAT(metrics, HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"alpha\","
                                 "protocol=\"grpc\",version=\"1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"beta\","
                                 "protocol=\"grpc\",version=\"1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("deberta_rejections_total{reason=\"unknown_model\"} 2\n"));
  EXPECT_THAT(metrics, HasSubstr("deberta_model_state{model=\"beta\",state=\"ready\",version=\"1\"} 1\n"));
  // beta's own batch limit from its serving.json.
  EXPECT_THAT(metrics, HasSubstr("deberta_batcher_limit{limit=\"max_batch_size\",model=\"beta\",version=\"1\"} 4\n"));
}

TEST_F(ModelsTest, ExplicitControlNeedsAnAdminKeyThenSwapsUnloadsAndLoads) {
  Start(Config(ModelControl::kExplicit));
  auto call = [&](bool load, const std::string& model, const std::string& key, pb::ModelStatus* status) {
    auto context = ContextWithDeadline(30);
    if (!key.empty()) context->AddMetadata("authorization", "Bearer " + key);
    if (load) {
      pb::LoadModelRequest request;
      request.set_model(model);
      return server_->stub->LoadModel(context.get(), request, status);
    }
    pb::UnloadModelRequest request;
    request.set_model(model);
    return server_->stub->UnloadModel(context.get(), request, status);
  };
  pb::ModelStatus status;
  EXPECT_EQ(call(true, "alpha", "", &status).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call(true, "alpha", "wrong", &status).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  WriteVersion(repository_ / "alpha", 2);
  ASSERT_TRUE(call(true, "alpha", "admin-key", &status).ok());
  EXPECT_EQ(status.version(), 2);
  EXPECT_EQ(status.state(), pb::MODEL_STATE_READY);
  std::string label;
  ASSERT_TRUE(Classify("alpha", &label).ok());
  EXPECT_EQ(label, "alpha/2");

  ASSERT_TRUE(call(false, "alpha", "admin-key", &status).ok());
  EXPECT_EQ(status.state(), pb::MODEL_STATE_UNAVAILABLE);
  grpc::Status unloaded = Classify("alpha", &label);
  EXPECT_EQ(unloaded.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(unloaded.error_message(), HasSubstr("model alpha is not loaded (unavailable)"));
  EXPECT_EQ(server_->HealthStatus("alpha"), "NOT_SERVING");
  EXPECT_EQ(server_->HealthStatus(""), "NOT_SERVING");
  EXPECT_EQ(server_->HealthStatus("beta"), "SERVING");
  ASSERT_TRUE(Classify("beta", &label).ok());  // The other model is untouched.

  EXPECT_EQ(call(true, "gamma", "admin-key", &status).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(call(true, "alpha", "admin-key", &status).ok());
  ASSERT_TRUE(Classify("alpha", &label).ok());
  EXPECT_EQ(label, "alpha/2");
  EXPECT_EQ(server_->HealthStatus(""), "SERVING");
}

TEST_F(ModelsTest, ControlRpcsAreRefusedWithoutExplicitControl) {
  Start(Config());
  pb::LoadModelRequest request;
  request.set_model("alpha");
  pb::ModelStatus status;
  auto context = ContextWithDeadline(10);
  grpc::Status refused = server_->stub->LoadModel(context.get(), request, &status);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(ModelsTest, APollSwapsInANewVersionUnderLoadWithoutAFailedCall) {
  Start(Config(ModelControl::kPoll));
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0}, answered{0}, from_new{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        std::string label;
        grpc::Status status = Classify("alpha", &label);
        if (!status.ok()) {
          ++failed;
          ADD_FAILURE() << status.error_message();
        } else {
          ++answered;
          if (label == "alpha/2") ++from_new;
        }
      }
    });
  }
  while (answered.load() < 50) std::this_thread::yield();
  WriteVersion(repository_ / "alpha", 2);
  server_->server->models().PollOnce();  // Loads 2, switches, retires 1.
  const int at_swap = answered.load();
  while (answered.load() < at_swap + 50) std::this_thread::yield();
  stop = true;
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(from_new.load(), 0);
  std::string label;
  ASSERT_TRUE(Classify("alpha", &label).ok());
  EXPECT_EQ(label, "alpha/2");  // Every call after the swap.
  pb::ListModelsResponse list = List();
  EXPECT_EQ(list.models(0).version(), 2);
  const std::string metrics = Metrics();
  EXPECT_THAT(metrics, HasSubstr("deberta_model_state{model=\"alpha\",state=\"ready\",version=\"1\"} 0\n"));
  EXPECT_THAT(metrics, HasSubstr("deberta_model_state{model=\"alpha\",state=\"ready\",version=\"2\"} 1\n"));
}

TEST_F(ModelsTest, AFailedVersionLeavesTheOldOneServingAndSaysWhy) {
  Start(Config(ModelControl::kPoll));
  WriteVersion(repository_ / "alpha", 2, /*broken=*/true);
  server_->server->models().PollOnce();
  std::string label;
  ASSERT_TRUE(Classify("alpha", &label).ok());
  EXPECT_EQ(label, "alpha/1");
  pb::ListModelsResponse list = List();
  EXPECT_EQ(list.models(0).state(), pb::MODEL_STATE_READY);
  EXPECT_EQ(list.models(0).version(), 1);
  EXPECT_THAT(list.models(0).error(), HasSubstr("model alpha version 2: the checkpoint is broken"));
  EXPECT_THAT(Metrics(), HasSubstr("deberta_model_load_failures_total{model=\"alpha\"} 1\n"));
  // The same files are not tried again at every poll.
  server_->server->models().PollOnce();
  EXPECT_THAT(Metrics(), HasSubstr("deberta_model_load_failures_total{model=\"alpha\"} 1\n"));
  // A new model folder appears; one that is gone is unloaded.
  WriteVersion(repository_ / "gamma", 1);
  fs::remove_all(repository_ / "beta");
  server_->server->models().PollOnce();
  ASSERT_TRUE(Classify("gamma", &label).ok());
  EXPECT_EQ(Classify("beta", &label).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ModelsTest, AnUnloadAnswersTheCallsItAcceptedAndRefusesNewOnes) {
  ServerConfig config = Config(ModelControl::kExplicit);
  Start(config);
  // The last engine made is beta's (models load in name order).
  FakeEngine* beta = factory_.last();
  beta->Block();
  std::string held_label;
  grpc::Status held;
  std::thread in_flight([&] { held = Classify("beta", &held_label); });
  beta->AwaitBlockedBatch();
  absl::Notification unloaded;
  std::thread unload([&] {
    EXPECT_TRUE(server_->server->models().Unload("beta").ok());
    unloaded.Notify();
  });
  // New calls are refused as soon as the unload has begun.
  while (List().models(1).state() != pb::MODEL_STATE_UNLOADING) std::this_thread::yield();
  std::string label;
  grpc::Status refused = Classify("beta", &label);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("(unloading)"));
  EXPECT_FALSE(unloaded.HasBeenNotified());  // It waits for the call it accepted.
  beta->Unblock();
  in_flight.join();
  unload.join();
  EXPECT_TRUE(held.ok()) << held.error_message();
  EXPECT_EQ(held_label, "beta/1");
}

TEST_F(ModelsTest, ALoadOverTheMemoryLimitIsRefused) {
  ServerConfig config = Config();
  config.models.memory_limit_bytes = 1024;
  auto server = testing::StartRepositoryServer(config, factory_.factory());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(server.status().message(), HasSubstr("exceeds --memory_limit"));
}

TEST_F(ModelsTest, BadServingJsonIsAStartUpErrorNamingTheFile) {
  WriteFile(repository_ / "alpha" / "serving.json", R"({"treads": 2})");
  auto server = testing::StartRepositoryServer(Config(), factory_.factory());
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("alpha/serving.json: \"treads\" is not a setting"));
}

}  // namespace
}  // namespace deberta::service
