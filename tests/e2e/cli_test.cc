// deberta-cli as a Unix tool, against the real deberta-server on the demo
// model: per-command --help without build paths, error codes by name and
// distinct exit codes (usage 2, server error 1, unreachable 3), --json with
// zero values, --positions, --deadline, empty sequences refused, and info
// printing every field; --buckets and --cuda_graphs at start-up; bench and
// engine-bench counting text tokens alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start(DEBERTA_SERVER_BINARY, {"--model=demo", "--listen_address=127.0.0.1", "--port=0",
                                                       "--metrics_port=0", "--threads=1"}));
    const std::string banner = server_->ReadLine();
    int metrics_port = 0;
    ASSERT_TRUE(ParseBannerPorts(banner, &port_, &metrics_port)) << banner;
  }
  static void TearDownTestSuite() {
    server_->Signal(SIGTERM);
    server_->Wait();
    delete server_;
  }

  static CommandResult Cli(const std::string& args) {
    return RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " ", args, " --server=127.0.0.1:", port_));
  }

  static ServerProcess* server_;
  static int port_;
};

ServerProcess* CliTest::server_ = nullptr;
int CliTest::port_ = 0;

TEST_F(CliTest, HelpListsTheCommandsOwnFlagsWithoutBuildPaths) {
  CommandResult usage = RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " --help"));
  EXPECT_EQ(usage.exit_code, 0);
  EXPECT_THAT(usage.output, HasSubstr("fill-mask"));
  EXPECT_THAT(usage.output, Not(HasSubstr("No flags matched")));

  CommandResult fill = RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " fill-mask --help"));
  EXPECT_EQ(fill.exit_code, 0);
  EXPECT_THAT(fill.output, HasSubstr("--positions"));
  EXPECT_THAT(fill.output, HasSubstr("--deadline"));
  EXPECT_THAT(fill.output, HasSubstr("exit codes"));
  EXPECT_THAT(fill.output, Not(HasSubstr("--concurrency")));  // bench only.
  EXPECT_THAT(RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " bench --help")).output, HasSubstr("--concurrency"));

  CommandResult full = RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " --helpfull"));
  EXPECT_THAT(full.output, HasSubstr("Flags from tools/client_commands.cc"));
  EXPECT_THAT(full.output, Not(HasSubstr(CMAKE_SOURCE_DIR)));
}

TEST_F(CliTest, ErrorsNameTheirCodeAndExitCodesTellUsageServerAndConnectionApart) {
  CommandResult bad_id = Cli("classify --sequences='1 99999 2'");
  EXPECT_EQ(bad_id.exit_code, 1);
  EXPECT_THAT(bad_id.output, HasSubstr("error: INVALID_ARGUMENT: "));

  CommandResult empty = Cli("classify --sequences='1 2;;1 3 2'");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.output, HasSubstr("--sequences: group 2 of 3 is empty"));
  EXPECT_EQ(Cli("classify --sequences='1 x 2'").exit_code, 2);
  EXPECT_EQ(Cli("fill-mask --sequences='1 7 2' --positions='1;2'").exit_code, 2);  // 2 groups, 1 sequence.

  CommandResult unreachable =
      RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " info --server=127.0.0.1:1 --deadline=2s"));
  EXPECT_EQ(unreachable.exit_code, 3);
  EXPECT_THAT(unreachable.output, HasSubstr("error: UNAVAILABLE: "));
  CommandResult too_short = Cli("classify --sequences='1 7 2' --deadline=1us");
  EXPECT_EQ(too_short.exit_code, 3);
  EXPECT_THAT(too_short.output, HasSubstr("DEADLINE_EXCEEDED"));
}

TEST_F(CliTest, JsonAndInfoKeepZeroValues) {
  CommandResult info = Cli("info");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_THAT(info.output, HasSubstr("pad_token_id: 0\n"));
  CommandResult json = Cli("info --json");
  EXPECT_THAT(json.output, HasSubstr("\"pad_token_id\": 0"));

  CommandResult classify = Cli("classify --sequences='1 17 42 2' --top_k=3 --json");
  EXPECT_EQ(classify.exit_code, 0) << classify.output;
  EXPECT_THAT(classify.output, HasSubstr("\"label_id\": 0"));
}

// --cuda_graphs off a GPU or without buckets is a usage error at start-up;
// a server with buckets answers as one without (padding changes nothing).
TEST_F(CliTest, BucketsServeTheSameAnswersAndCudaGraphsNeedACudaDevice) {
  const std::string server = absl::StrCat(DEBERTA_SERVER_BINARY, " --model=demo --port=0 --metrics_port=0 --threads=1");
  CommandResult cpu = RunCommand(absl::StrCat(server, " --buckets=4x32 --cuda_graphs"));
  EXPECT_NE(cpu.exit_code, 0);
  EXPECT_THAT(cpu.output, HasSubstr("--cuda_graphs needs a CUDA --device"));
  CommandResult bad = RunCommand(absl::StrCat(server, " --buckets=4x"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("--buckets: "));

  ServerProcess bucketed;
  ASSERT_TRUE(bucketed.Start(DEBERTA_SERVER_BINARY, {"--model=demo", "--listen_address=127.0.0.1", "--port=0",
                                                     "--metrics_port=0", "--threads=1", "--buckets=4x32,16x64"}));
  int port = 0, metrics_port = 0;
  const std::string banner = bucketed.ReadLine();
  ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port)) << banner;
  const std::string request = " classify --sequences='1 17 42 2;1 5 2' --json";
  CommandResult padded = RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, request, " --server=127.0.0.1:", port));
  CommandResult plain = Cli(request);
  ASSERT_EQ(padded.exit_code, 0) << padded.output;
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  // Equal up to float32 rounding (products over longer rows sum in another
  // order).
  const nlohmann::json got = nlohmann::json::parse(padded.output)["results"],
                       want = nlohmann::json::parse(plain.output)["results"];
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(want.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(got[i]["logits"].size(), want[i]["logits"].size());
    for (size_t k = 0; k < want[i]["logits"].size(); ++k) {
      EXPECT_NEAR(got[i]["logits"][k].get<double>(), want[i]["logits"][k].get<double>(), 1e-5) << i << " " << k;
    }
    EXPECT_EQ(got[i]["labels"][0]["label"], want[i]["labels"][0]["label"]);
  }
  bucketed.Signal(SIGTERM);
  bucketed.Wait();
}

TEST_F(CliTest, FillMaskPredictsTheGivenPositions) {
  CommandResult result = Cli("fill-mask --sequences='1 17 42 9 2;1 8 2' --positions='1,3;1' --top_k=2 --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("\"position\": 1"));
  EXPECT_THAT(result.output, HasSubstr("\"position\": 3"));
  EXPECT_THAT(result.output, Not(HasSubstr("\"position\": 2")));
}

// bench --send_text and engine-bench --send_text run the same texts and
// count a text's tokens alike: the whole text's (the server's num_tokens),
// however many windows it takes; engine-bench spreads a text's count over
// its windows.
TEST_F(CliTest, SendTextCountsEachTextsTokensOnBothSidesWindowsOrNot) {
  const std::string texts = " --send_text --min_len=60 --max_len=60 --duration=1s --json";
  const std::string windows = " --max_length=24 --windows --stride=16";
  auto tokens_per_answer = [](const CommandResult& result) {
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const nlohmann::json level = nlohmann::json::parse(result.output)[0];
    EXPECT_TRUE(level["errors"].empty()) << result.output;
    EXPECT_GT(level["ok"].get<double>(), 10) << result.output;
    return level["tokens_per_s"].get<double>() / level["sequences_per_s"].get<double>();
  };
  const double server_plain = tokens_per_answer(Cli("bench --concurrency=2" + texts));
  const double server_windows = tokens_per_answer(Cli("bench --concurrency=2" + texts + windows));
  const std::string engine = absl::StrCat(DEBERTA_CLI_BINARY, " engine-bench --model=demo --threads=1 --batch_size=4");
  const double engine_plain = tokens_per_answer(RunCommand(engine + texts));
  const double engine_windows = tokens_per_answer(RunCommand(engine + texts + windows));
  // About 80 tokens a text (60 random ids decoded and tokenized again).
  EXPECT_GT(server_plain, 50);
  EXPECT_NEAR(server_windows / server_plain, 1, 0.1);
  EXPECT_NEAR(engine_plain / server_plain, 1, 0.1);
  // Per engine sequence: a window's share (about 11 windows a text), not
  // the 24 tokens a window holds.
  EXPECT_LT(engine_windows, 0.25 * engine_plain);
}

}  // namespace
}  // namespace deberta::testing
