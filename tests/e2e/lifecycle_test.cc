// Lifecycle: the drain refuses new work with UNAVAILABLE and finishes
// accepted work (in process, on a FakeEngine held mid-batch), and the real
// deberta-server binary drains queued requests on SIGTERM and exits 0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "tests/e2e/test_server.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/http_get.h"

extern char** environ;

namespace deberta::testing {
namespace {

namespace pb = serving::v1;

pb::ClassifyRequest OneSequence(int32_t first_id) {
  pb::ClassifyRequest request;
  const std::vector<int32_t> tokens{first_id, 5, 6, 7};
  request.add_sequences()->mutable_token_ids()->Add(tokens.begin(), tokens.end());
  return request;
}

// An RPC started with the callback client API; Wait() gives its status.
struct PendingCall {
  grpc::ClientContext context;
  pb::ClassifyRequest request;
  pb::ClassifyResponse response;
  grpc::Status status;
  absl::Notification done;

  void Start(pb::InferenceService::Stub* stub, int32_t first_id) {
    request = OneSequence(first_id);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    stub->async()->Classify(&context, &request, &response, [this](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
  }
  grpc::Status Wait() {
    done.WaitForNotification();
    return status;
  }
};

// Polls `condition` (a positive condition, never used to prove absence).
template <typename Condition>
bool Eventually(Condition condition) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(DrainTest, RefusesNewWorkAndFinishesAcceptedWork) {
  auto engine = std::make_unique<FakeEngine>();
  FakeEngine* fake = engine.get();
  service::ServerConfig config;
  config.batcher.batch_timeout = absl::ZeroDuration();
  config.batcher.max_batch_size = 1;
  auto server = StartTestServer(std::move(engine), config);
  ASSERT_TRUE(server.ok()) << server.status();
  TestServer& test = **server;

  const size_t warm_up_batches = fake->BatchesByFirstToken().size();
  fake->Block();
  PendingCall running, queued;
  running.Start(test.stub.get(), 11);
  fake->AwaitBlockedBatch();  // 11 is inside the engine,
  queued.Start(test.stub.get(), 12);
  auto metrics_text = [&] {
    return prometheus::TextSerializer().Serialize(test.server->metrics().registry()->Collect());
  };
  // ... and 12 is accepted and queued behind it.
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(metrics_text(), "\ndeberta_queue_sequences{endpoint=\"classify\"} 1\n"); }));

  std::thread shutdown([&] { test.server->Shutdown(); });
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(metrics_text(), "\ndeberta_draining 1\n"); }));
  // New work is refused while accepted work is still running.
  pb::ClassifyResponse refused;
  auto context = ContextWithDeadline(10);
  grpc::Status status = test.stub->Classify(context.get(), OneSequence(13), &refused);
  EXPECT_EQ(status.error_code(), grpc::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(test.HealthStatus(), "NOT_SERVING");

  fake->Unblock();
  EXPECT_TRUE(running.Wait().ok()) << running.status.error_message();
  EXPECT_TRUE(queued.Wait().ok()) << queued.status.error_message();
  shutdown.join();
  std::vector<int32_t> firsts;
  const auto batches = fake->BatchesByFirstToken();
  for (size_t b = warm_up_batches; b < batches.size(); ++b) {
    firsts.insert(firsts.end(), batches[b].begin(), batches[b].end());
  }
  EXPECT_THAT(firsts, ::testing::ElementsAre(11, 12));  // 13 never reached the engine.
}

// The real binary, as a child process with its stdout on a pipe.
class ServerProcess {
 public:
  bool Start(const std::vector<std::string>& flags) {
    int out[2];
    if (pipe(out) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args{DEBERTA_SERVER_BINARY};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const int error = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (error != 0) return false;
    stdout_ = fdopen(out[0], "r");
    return stdout_ != nullptr;
  }
  // The next line the server prints ("" at end of file).
  std::string ReadLine() {
    char line[1024];
    return fgets(line, sizeof(line), stdout_) ? std::string(line) : std::string();
  }
  int Signal(int signal) { return kill(pid_, signal); }
  // Exit status as waitpid reports it.
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
    if (stdout_) fclose(stdout_);
  }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
};

TEST(SigtermTest, QueuedRequestsFinishAndTheProcessExitsZero) {
  ServerProcess process;
  // Batches would wait an hour to fill: only the drain can run them soon.
  ASSERT_TRUE(process.Start({"--model=demo", "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
                             "--threads=1", "--batch_timeout=1h", "--max_batch_size=64"}));
  const std::string banner = process.ReadLine();
  std::smatch ports;
  ASSERT_TRUE(std::regex_search(banner, ports, std::regex(R"(:(\d+), metrics on :(\d+))"))) << banner;
  const int port = std::stoi(ports[1]), metrics_port = std::stoi(ports[2]);

  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto stub = pb::InferenceService::NewStub(channel);
  constexpr int kQueued = 5;
  std::vector<std::unique_ptr<PendingCall>> calls;
  for (int i = 0; i < kQueued; ++i) {
    calls.push_back(std::make_unique<PendingCall>());
    calls.back()->Start(stub.get(), 20 + i);
  }
  ASSERT_TRUE(Eventually([&] {
    auto text = HttpGet(metrics_port, "/metrics");
    return text.ok() && absl::StrContains(*text, absl::StrCat("\ndeberta_queue_sequences{endpoint=\"classify\"} ",
                                                              kQueued, "\n"));
  }));

  ASSERT_EQ(process.Signal(SIGTERM), 0);
  for (auto& call : calls) EXPECT_TRUE(call->Wait().ok()) << call->status.error_message();
  const int status = process.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_THAT(process.ReadLine(), ::testing::HasSubstr("signal 15, draining"));
  EXPECT_THAT(process.ReadLine(), ::testing::HasSubstr("stopped"));
}

}  // namespace
}  // namespace deberta::testing
