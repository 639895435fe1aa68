// deberta-cli as a Unix tool, against the real deberta-server on the demo
// model: per-command --help without build paths, error codes by name and
// distinct exit codes (usage 2, server error 1, unreachable 3), --json with
// zero values, --positions, --deadline, empty sequences refused, and info
// printing every field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "absl/strings/str_cat.h"
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

TEST_F(CliTest, FillMaskPredictsTheGivenPositions) {
  CommandResult result = Cli("fill-mask --sequences='1 17 42 9 2;1 8 2' --positions='1,3;1' --top_k=2 --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("\"position\": 1"));
  EXPECT_THAT(result.output, HasSubstr("\"position\": 3"));
  EXPECT_THAT(result.output, Not(HasSubstr("\"position\": 2")));
}

}  // namespace
}  // namespace deberta::testing
