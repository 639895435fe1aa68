// --replicas on the real deberta-server binary with the demo model: two CPU
// replicas (one thread each) both run batches, every answer is the same
// whichever replica computed it, the drain on SIGTERM joins them and the
// process exits 0; more CPU replicas than threads is refused at start-up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <regex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testing/http_get.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;

// Batches run by `replica` so far, from /metrics (-1 if not exported).
int ReplicaBatches(int metrics_port, int replica) {
  auto text = HttpGet(metrics_port, "/metrics");
  if (!text.ok()) return -1;
  std::smatch match;
  const std::regex series(absl::StrCat("\ndeberta_replica_batches_total\\{model=\"demo\",replica=\"", replica,
                                       "\",version=\"1\"\\} (\\d+)\n"));
  if (!std::regex_search(*text, match, series)) return -1;
  return std::stoi(match[1]);
}

TEST(ReplicasEndToEndTest, TwoCpuReplicasBothServeIdenticalAnswersAndDrain) {
  ServerProcess process;
  ASSERT_TRUE(process.Start(DEBERTA_SERVER_BINARY,
                            {"--model=demo", "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
                             "--threads=2", "--replicas=2", "--max_batch_size=1"}));
  const std::string banner = process.ReadLine();
  EXPECT_THAT(banner, HasSubstr("2 replicas"));
  int port = 0, metrics_port = 0;
  ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port)) << banner;
  EXPECT_EQ(ReplicaBatches(metrics_port, 0), 0);
  EXPECT_EQ(ReplicaBatches(metrics_port, 1), 0);

  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto stub = pb::InferenceService::NewStub(channel);
  // Waves of concurrent calls on one sequence, until each replica has run
  // some (which replica takes a batch is up to timing).
  std::vector<float> first_answer;
  int calls = 0;
  while ((ReplicaBatches(metrics_port, 0) == 0 || ReplicaBatches(metrics_port, 1) == 0) && calls < 400) {
    std::vector<std::unique_ptr<PendingCall>> wave;
    for (int i = 0; i < 4; ++i) {
      wave.push_back(std::make_unique<PendingCall>());
      wave.back()->Start(stub.get(), 20);
    }
    for (auto& call : wave) {
      grpc::Status status = call->Wait();
      ASSERT_TRUE(status.ok()) << status.error_message();
      ASSERT_EQ(call->response.results_size(), 1);
      const auto& logits = call->response.results(0).logits();
      std::vector<float> answer(logits.begin(), logits.end());
      if (first_answer.empty()) first_answer = answer;
      EXPECT_EQ(answer, first_answer) << "call " << calls;  // Bit for bit: same weights, same kernels.
      ++calls;
    }
  }
  EXPECT_GT(ReplicaBatches(metrics_port, 0), 0);
  EXPECT_GT(ReplicaBatches(metrics_port, 1), 0);

  ASSERT_EQ(process.Signal(SIGTERM), 0);
  const int status = process.Wait();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ReplicasEndToEndTest, MoreCpuReplicasThanThreadsIsRefusedAtStartUp) {
  const CommandResult result = RunCommand(absl::StrCat(DEBERTA_SERVER_BINARY,
                                                       " --model=demo --port=0 --metrics_port=-1 --threads=2 "
                                                       "--replicas=3"));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("3 replicas on the CPU need at least as many threads"));
}

}  // namespace
}  // namespace deberta::testing
