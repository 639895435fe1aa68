// deberta-cli's task commands against the real deberta-server on golden
// task models (tests/golden_tasks): `rerank` answers the recorded order and
// scores (plain, and in windows with --aggregate=mean), and
// `classify-tokens` the recorded entities of a text; both in --json and
// in their line format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string CliCaseDir(const std::string& name) { return std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name; }

// A server on one golden task case, and the case's expected.json.
class TaskCli {
 public:
  explicit TaskCli(const std::string& name) {
    std::ifstream in(CliCaseDir(name) + "/expected.json");
    golden = json::parse(in);
    started_ = server_.Start(DEBERTA_SERVER_BINARY, {"--model=" + CliCaseDir(name), "--listen_address=127.0.0.1",
                                                     "--port=0", "--metrics_port=0", "--threads=2"});
    int metrics_port = 0;
    started_ = started_ && ParseBannerPorts(server_.ReadLine(), &port_, &metrics_port);
  }
  ~TaskCli() {
    server_.Signal(SIGTERM);
    server_.Wait();
  }
  bool started() const { return started_; }

  CommandResult Run(const std::string& args) const {
    return RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " ", args, " --server=127.0.0.1:", port_));
  }

  json golden;

 private:
  ServerProcess server_;
  bool started_ = false;
  int port_ = 0;
};

// 'text' quoted for the shell.
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void ExpectRanking(const json& got, const json& want) {
  ASSERT_EQ(got["results"].size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got["results"][k]["index"], want[k]["index"]) << k;
    const double score = want[k]["score"].get<double>();
    EXPECT_NEAR(got["results"][k]["score"].get<double>(), score, 1e-4 + 1e-4 * std::abs(score)) << k;
    if (want[k].contains("num_windows")) {
      EXPECT_EQ(got["results"][k]["num_windows"], want[k]["num_windows"]) << k;
    }
  }
}

TEST(TaskCliTest, RerankAnswersTheRecordedOrderPlainAndInWindows) {
  TaskCli cli("rerank_spm");
  ASSERT_TRUE(cli.started());
  const std::vector<std::string> documents = cli.golden["documents"].get<std::vector<std::string>>();
  const std::string base = absl::StrCat("rerank --query=", Quoted(cli.golden["query"].get<std::string>()),
                                        " --documents=", Quoted(absl::StrJoin(documents, "|")));
  {
    const CommandResult plain = cli.Run(base + " --json");
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    ExpectRanking(json::parse(plain.output), cli.golden["answers"]["plain"]);
  }
  {
    const CommandResult windows = cli.Run(base + " --json --max_length=64 --windows --stride=8 --aggregate=mean");
    ASSERT_EQ(windows.exit_code, 0) << windows.output;
    ExpectRanking(json::parse(windows.output), cli.golden["answers"]["windowed_mean"]);
  }
  const CommandResult lines = cli.Run(base + " --top_n=1");
  ASSERT_EQ(lines.exit_code, 0) << lines.output;
  const int best = cli.golden["answers"]["plain"][0]["index"].get<int>();
  EXPECT_THAT(lines.output, HasSubstr(absl::StrCat(best, "\t")));
  EXPECT_THAT(lines.output, HasSubstr(documents[best]));
  EXPECT_EQ(std::count(lines.output.begin(), lines.output.end(), '\n'), 1);
  EXPECT_EQ(cli.Run("rerank --query=q").exit_code, 2);  // No documents: a usage error.
  EXPECT_EQ(cli.Run(base + " --aggregate=median").exit_code, 2);
}

TEST(TaskCliTest, ClassifyTokensAnswersTheRecordedEntities) {
  TaskCli cli("tc_authors_gpt2");
  ASSERT_TRUE(cli.started());
  const json& text = cli.golden["texts"][0];
  const CommandResult result =
      cli.Run(absl::StrCat("classify-tokens --json --aggregation=first --text=", Quoted(text["text"].get<std::string>())));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const json got = json::parse(result.output)["results"][0]["entities"];
  const json& want = text["answers"]["default"]["first"];
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    EXPECT_EQ(got[e]["label"], want[e]["label"]);
    EXPECT_EQ(got[e]["start"], want[e]["start"]);
    EXPECT_EQ(got[e]["end"], want[e]["end"]);
    EXPECT_EQ(got[e]["word"], want[e]["word"]);
  }
  const CommandResult lines =
      cli.Run(absl::StrCat("classify-tokens --aggregation=first --text=", Quoted(text["text"].get<std::string>())));
  ASSERT_EQ(lines.exit_code, 0);
  EXPECT_THAT(lines.output, HasSubstr(absl::StrCat(want.size(), " entities")));
}

}  // namespace
}  // namespace deberta::testing
