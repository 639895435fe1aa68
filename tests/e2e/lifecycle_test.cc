// Lifecycle of the real deberta-server binary: it drains queued requests on
// SIGTERM and exits 0. (The drain itself is tested in process, on a fake
// engine, in tests/service/drain_test.cc.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/http_get.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

TEST(SigtermTest, QueuedRequestsFinishAndTheProcessExitsZero) {
  ServerProcess process;
  // Batches would wait an hour to fill: only the drain can run them soon.
  ASSERT_TRUE(process.Start(DEBERTA_SERVER_BINARY, {"--model=demo", "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
                             "--threads=1", "--batch_timeout=1h", "--max_batch_size=64"}));
  const std::string banner = process.ReadLine();
  int port = 0, metrics_port = 0;
  ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port)) << banner;

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
    return text.ok() && absl::StrContains(*text, absl::StrCat("\ndeberta_queue_sequences{endpoint=\"classify\",model=\"demo\",version=\"1\"} ",
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
