// Lifecycle of the real deberta-server binary: it drains queued requests on
// SIGTERM and exits 0. (The drain itself is tested in process, on a fake
// engine, in tests/service/drain_test.cc.)
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
#include "tests/testing/http_get.h"
#include "tests/testing/pending_call.h"

extern char** environ;

namespace deberta::testing {
namespace {

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
