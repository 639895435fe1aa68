// The HTTP surface as users' tools see it, against the real deberta-server
// binary on the demo model (with its GPT-2 tokenizer): the served OpenAPI
// document passes an OpenAPI validator from npm (which rejects a broken
// copy), and the try-it page, driven in Debian's headless Chromium, renders
// exactly what the JSON API answers for the same input, without a console
// error or a CSP violation; on golden task models (a token classifier, a
// reranker) the page shows only their forms, highlights the entities the
// API finds and lists the documents in the API's order. The browser's
// screenshots are kept in the build folder (the README's docs/try-it.png
// comes from the first).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

const std::string kWebDir = std::string(CMAKE_SOURCE_DIR) + "/tests/web";

class WebTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The npm packages pinned by tests/web/package-lock.json
    // (scripts/install_deps.sh installs them; a fresh checkout gets them here).
    if (access((kWebDir + "/node_modules").c_str(), F_OK) != 0) {
      CommandResult npm =
          RunCommand(absl::StrCat("npm ci --prefix ", kWebDir, " --no-audit --no-fund --loglevel=error"));
      ASSERT_EQ(npm.exit_code, 0) << npm.output;
    }
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start(DEBERTA_SERVER_BINARY, {"--model=demo", "--listen_address=127.0.0.1", "--port=0",
                                                       "--metrics_port=-1", "--http_port=0", "--threads=1"}));
    const std::string banner = server_->ReadLine();
    ASSERT_TRUE(ParseBannerHttpPort(banner, &http_port_)) << banner;
    base_ = absl::StrCat("http://127.0.0.1:", http_port_);
  }
  static void TearDownTestSuite() {
    server_->Signal(SIGTERM);
    server_->Wait();
    delete server_;
  }

  static json PostJson(const std::string& path, const std::string& body) {
    CommandResult curl = RunCommand(absl::StrCat("curl -sf -X POST --data-raw '", body, "' ", base_, path));
    EXPECT_EQ(curl.exit_code, 0) << curl.output;
    return json::parse(curl.output, nullptr, /*allow_exceptions=*/false);
  }

  static ServerProcess* server_;
  static int http_port_;
  static std::string base_;
};

ServerProcess* WebTest::server_ = nullptr;
int WebTest::http_port_ = 0;
std::string WebTest::base_;

TEST_F(WebTest, OpenApiDocumentPassesTheValidatorAndABrokenCopyDoesNot) {
  CommandResult valid =
      RunCommand(absl::StrCat("node ", kWebDir, "/validate_openapi.mjs ", base_, "/v1/openapi.json"));
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  // The eight RPCs, two probes and the document itself.
  EXPECT_THAT(valid.output, HasSubstr("valid: 40 paths"));

  // The same document with a reference to a schema that does not exist.
  CommandResult served = RunCommand(absl::StrCat("curl -sf ", base_, "/v1/openapi.json"));
  ASSERT_EQ(served.exit_code, 0);
  json document = json::parse(served.output);
  document["paths"]["/v1/classify"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"] =
      "#/components/schemas/NoSuchMessage";
  const std::string broken = absl::StrCat(::testing::TempDir(), "/openapi-broken-", getpid(), ".json");
  std::ofstream(broken) << document.dump();
  CommandResult invalid = RunCommand(absl::StrCat("node ", kWebDir, "/validate_openapi.mjs ", broken));
  EXPECT_EQ(invalid.exit_code, 1) << invalid.output;
  EXPECT_THAT(invalid.output, HasSubstr("NoSuchMessage"));
  std::remove(broken.c_str());
}

TEST_F(WebTest, TryItPageRendersWhatTheApiAnswers) {
  const std::string classify_text = "the quick brown fox";
  const std::string fill_mask_text = "the quick [MASK] fox";
  const std::string screenshot = std::string(CMAKE_BINARY_DIR) + "/try-it.png";
  CommandResult browser = RunCommand(absl::StrCat("node ", kWebDir, "/try_it_page.mjs ", base_, " '",
                                                  classify_text, "' '", fill_mask_text, "' ", screenshot));
  ASSERT_EQ(browser.exit_code, 0) << browser.output;
  const json page = json::parse(browser.output.substr(browser.output.rfind("\n{") + 1), nullptr, false);
  ASSERT_FALSE(page.is_discarded()) << browser.output;
  EXPECT_TRUE(page["problems"].empty()) << page["problems"].dump();

  const json model = PostJson("/v1/model", "{}");
  EXPECT_EQ(page["model"][0], json({"Model", model["modelName"]}));
  EXPECT_EQ(page["model"][8], json({"Tokenizer", model["tokenizer"]}));

  // Classify: one row per label, in the API's order, its probability to
  // four places and a bar as wide as the probability.
  const json classify = PostJson("/v1/classify", absl::StrCat(R"({"sequences": [{"text": ")", classify_text, R"("}]})"));
  const json& labels = classify["results"][0]["labels"];
  ASSERT_EQ(page["classify"].size(), labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    const double probability = labels[i]["probability"].get<double>();
    EXPECT_EQ(page["classify"][i],
              json({labels[i]["label"], std::to_string(labels[i]["labelId"].get<int>()),
                    absl::StrFormat("%.4f", probability), ""}));
    const double width = std::stod(page["classifyBars"][i].get<std::string>());
    EXPECT_NEAR(width, probability * 100, 1e-3);
  }

  // Fill-mask with top 3: a row per candidate, ranked as the API ranks them.
  const json fill = PostJson(
      "/v1/fill-mask", absl::StrCat(R"({"sequences": [{"sequence": {"text": ")", fill_mask_text, R"("}}], "topK": 3})"));
  std::vector<json> expected;
  for (const json& prediction : fill["results"][0]["predictions"]) {
    int rank = 0;
    for (const json& candidate : prediction["candidates"]) {
      expected.push_back({std::to_string(prediction["position"].get<int>()), std::to_string(++rank),
                          std::to_string(candidate["tokenId"].get<int>()), candidate["token"],
                          absl::StrFormat("%.4f", candidate["probability"].get<double>()), ""});
    }
  }
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(page["fillMask"], json(expected));
  EXPECT_EQ(access(screenshot.c_str(), F_OK), 0) << screenshot;
}

// A deberta-server on a golden task case with the JSON API, for the task forms.
class TaskPage {
 public:
  explicit TaskPage(const std::string& name)
      : TaskPage(std::vector<std::string>{"--model=" + std::string(CMAKE_SOURCE_DIR) + "/tests/golden_tasks/" + name,
                                          "--threads=1"}) {}
  // A server with these flags besides the ports (e.g. a model repository).
  explicit TaskPage(std::vector<std::string> flags) {
    for (const char* flag : {"--listen_address=127.0.0.1", "--port=0", "--metrics_port=-1", "--http_port=0"}) {
      flags.push_back(flag);
    }
    started_ = server_.Start(DEBERTA_SERVER_BINARY, flags);
    int http_port = 0;
    started_ = started_ && ParseBannerHttpPort(server_.ReadLine(), &http_port);
    base = absl::StrCat("http://127.0.0.1:", http_port);
  }
  ~TaskPage() {
    server_.Signal(SIGTERM);
    server_.Wait();
  }
  bool started() const { return started_; }

  json Post(const std::string& path, const json& body) const {
    const std::string file = absl::StrCat(::testing::TempDir(), "/task-body-", getpid(), ".json");
    std::ofstream(file) << body.dump();
    CommandResult curl = RunCommand(absl::StrCat("curl -sf -X POST --data-binary @", file, " ", base, path));
    std::remove(file.c_str());
    EXPECT_EQ(curl.exit_code, 0) << curl.output;
    return json::parse(curl.output, nullptr, false);
  }

  // What the page rendered for `input` (try_it_tasks.mjs).
  json Drive(const json& input, const std::string& screenshot) const {
    const std::string file = absl::StrCat(::testing::TempDir(), "/task-input-", getpid(), ".json");
    std::ofstream(file) << input.dump();
    CommandResult browser = RunCommand(absl::StrCat("node ", kWebDir, "/try_it_tasks.mjs ", base, " ", file, " ",
                                                    std::string(CMAKE_BINARY_DIR), "/", screenshot));
    std::remove(file.c_str());
    EXPECT_EQ(browser.exit_code, 0) << browser.output;
    const json page = json::parse(browser.output.substr(browser.output.rfind("\n{") + 1), nullptr, false);
    EXPECT_FALSE(page.is_discarded()) << browser.output;
    return page;
  }

  std::string base;

 private:
  ServerProcess server_;
  bool started_ = false;
};

TEST_F(WebTest, EntitiesViewHighlightsWhatTheApiFinds) {
  TaskPage server("tc_authors_gpt2");
  ASSERT_TRUE(server.started());
  // Names, places, and an emoji that byte-level BPE splits across tokens.
  const std::string text = "Maria Lopez joined the finance team in Vienna \xf0\x9f\x99\x82 last May.";
  const json page = server.Drive({{"entities", {{"text", text}, {"aggregation", "AGGREGATION_FIRST"}}}},
                                 "try-it-entities.png");
  ASSERT_FALSE(page.is_discarded());
  EXPECT_TRUE(page["problems"].empty()) << page["problems"].dump();
  EXPECT_EQ(page["shown"], json({{"classify", false}, {"fill-mask", false}, {"entities", true}, {"rerank", false}}));
  const json answer = server.Post("/v1/classify-tokens", {{"sequences", {{{"text", text}}}},
                                                          {"aggregation", "AGGREGATION_FIRST"}});
  const json& entities = answer["results"][0]["entities"];
  ASSERT_GT(entities.size(), 0u);
  ASSERT_EQ(page["entities"].size(), entities.size());
  json marks = json::array();
  for (size_t i = 0; i < entities.size(); ++i) {
    const json& e = entities[i];
    EXPECT_EQ(page["entities"][i], json({e["label"],
                                         absl::StrFormat("%.4f", e["score"].get<double>()),
                                         std::to_string(e.value("start", 0)), std::to_string(e.value("end", 0)),
                                         e.value("word", ""), ""}));
    if (!e.value("word", "").empty()) marks.push_back({e["word"], e["label"]});
  }
  // Each entity's own characters are marked, with its label; the text reads as sent.
  EXPECT_EQ(page["marks"], marks);
  EXPECT_EQ(page["highlightedText"], text);
}

TEST_F(WebTest, AModelSelectorOnAServerOfSeveralNamesTheModelOfEveryCall) {
  // Two models (the golden GPT-2 token classifier under two names) in a repository.
  const std::string repository = absl::StrCat(::testing::TempDir(), "/web-repository-", getpid());
  std::filesystem::remove_all(repository);
  std::filesystem::create_directories(repository);
  const std::string checkpoint = std::string(CMAKE_SOURCE_DIR) + "/tests/golden_tasks/tc_authors_gpt2";
  std::filesystem::create_directory_symlink(checkpoint, repository + "/ner");
  std::filesystem::create_directory_symlink(checkpoint, repository + "/pii");
  {
    TaskPage server(std::vector<std::string>{"--model_repository=" + repository, "--threads=2"});
    ASSERT_TRUE(server.started());
    const std::string text = "Maria Lopez joined the finance team in Vienna last May.";
    const json page = server.Drive(
        {{"model", "pii"}, {"entities", {{"text", text}, {"aggregation", "AGGREGATION_FIRST"}}}},
        "try-it-models.png");
    ASSERT_FALSE(page.is_discarded());
    EXPECT_TRUE(page["problems"].empty()) << page["problems"].dump();
    EXPECT_EQ(page["models"], json({"ner", "pii"}));
    EXPECT_EQ(page["shown"]["entities"], true);
    const json answer = server.Post("/v1/models/pii/classify-tokens",
                                    {{"sequences", {{{"text", text}}}}, {"aggregation", "AGGREGATION_FIRST"}});
    const json& entities = answer["results"][0]["entities"];
    ASSERT_GT(entities.size(), 0u);
    ASSERT_EQ(page["entities"].size(), entities.size());
    for (size_t i = 0; i < entities.size(); ++i) EXPECT_EQ(page["entities"][i][0], entities[i]["label"]);
  }
  std::filesystem::remove_all(repository);
}

TEST_F(WebTest, RerankFormListsTheDocumentsInTheApisOrder) {
  TaskPage server("rerank_spm");
  ASSERT_TRUE(server.started());
  std::ifstream in(std::string(CMAKE_SOURCE_DIR) + "/tests/golden_tasks/rerank_spm/expected.json");
  const json golden = json::parse(in);
  const json input = {{"query", golden["query"]}, {"documents", golden["documents"]}, {"topN", 5}};
  const json page = server.Drive({{"rerank", input}}, "try-it-rerank.png");
  ASSERT_FALSE(page.is_discarded());
  EXPECT_TRUE(page["problems"].empty()) << page["problems"].dump();
  EXPECT_EQ(page["shown"], json({{"classify", true}, {"fill-mask", false}, {"entities", false}, {"rerank", true}}));
  const json answer = server.Post("/v1/rerank", input);
  const json& results = answer["results"];
  ASSERT_EQ(results.size(), 5u);
  ASSERT_EQ(page["rerank"].size(), 5u);
  for (size_t k = 0; k < results.size(); ++k) {
    const int index = results[k].value("index", 0);
    EXPECT_EQ(page["rerank"][k], json({std::to_string(k + 1), std::to_string(index),
                                       absl::StrFormat("%.4f", results[k]["score"].get<double>()), "",
                                       golden["documents"][index]}));
    EXPECT_EQ(index, golden["answers"]["plain"][k]["index"].get<int>());
  }
}

TEST_F(WebTest, PageAndItsFilesCarryAStrictContentSecurityPolicy) {
  for (const char* path : {"/", "/try-it.js", "/try-it.css"}) {
    CommandResult head = RunCommand(absl::StrCat("curl -sf -D - -o /dev/null ", base_, path));
    ASSERT_EQ(head.exit_code, 0) << path;
    EXPECT_THAT(head.output, HasSubstr("Content-Security-Policy: default-src 'none'; script-src 'self';")) << path;
    EXPECT_THAT(head.output, HasSubstr("X-Content-Type-Options: nosniff")) << path;
  }
}

}  // namespace
}  // namespace deberta::testing
