// The adapters for other servers' APIs (service/protocols/) over a
// FakeEngine server with a real GPT-2 tokenizer, called with curl: what
// each maps onto our tasks (Cohere's document cut to max_tokens_per_doc,
// its billed tokens, Hugging Face's task choice and batch shapes), their
// errors in their APIs' shapes naming the field at fault, and the
// `protocol` label and access-log field of their calls. The real clients
// of these APIs run against the real server in tests/e2e/compat_clients_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "model/tokenizer.h"
#include "service/server_config.h"
#include "tests/testing/curl.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class ProtocolsTest : public ::testing::Test {
 protected:
  // A fake engine with `labels` (one: a reranker) behind the golden GPT-2
  // token classifier's tokenizer.
  void Start(std::vector<std::string> labels) {
    auto engine = std::make_unique<FakeEngine>();
    engine->mutable_info()->labels = std::move(labels);
    engine->mutable_info()->vocab_size = 861;  // tc_authors_gpt2's.
    engine->mutable_info()->max_sequence_length = 64;
    auto tokenizer = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = tokenizer->get();
    service::ServerConfig config;
    config.http_port = 0;
    config.access_log = service::AccessLogFormat::kJson;
    config.access_log_out = &log_;
    auto server = StartTestServer(std::move(engine), config, *std::move(tokenizer));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    port_ = server_->server->http_port();
  }

  // POST `body` to `path`; the answer parsed (null when it is not JSON).
  json Post(const std::string& path, const json& body, int expected_status) {
    HttpAnswer answer = Curl(port_, "POST", path, body.dump());
    EXPECT_EQ(answer.status, expected_status) << path << " " << body.dump() << " -> " << answer.body;
    return json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  }

  int Tokens(const std::string& text) const { return static_cast<int>(tokenizer_->Tokenize(text)->size()); }

  std::string Metrics() const {
    return prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  }

  std::ostringstream log_;
  std::unique_ptr<TestServer> server_;
  const model::Tokenizer* tokenizer_ = nullptr;
  int port_ = 0;
};

TEST_F(ProtocolsTest, CohereCutsEachDocumentToMaxTokensAndBillsEveryDocumentsTokens) {
  Start({"LABEL_0"});
  const std::string query = "where is the fox";
  std::string long_document;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&long_document, "the quick brown fox jumps ");
  const std::vector<std::string> documents = {"a fox", long_document, "a dog"};
  ASSERT_GT(Tokens(query) + Tokens(long_document) + 3, 64) << "the long document must not fit";

  // Cohere never refuses a long document: it is cut to the model's length
  // (the server alone, without --truncate, would refuse it).
  json all = Post("/v2/rerank", {{"query", query}, {"documents", documents}}, 200);
  ASSERT_EQ(all["results"].size(), 3u) << all.dump();
  EXPECT_EQ(all["meta"]["billed_units"]["input_tokens"],
            (Tokens(query) + Tokens("a fox") + 3) + 64 + (Tokens(query) + Tokens("a dog") + 3));

  // max_tokens_per_doc 5: every document at most 5 tokens; top_n 1 answers
  // one result but bills all three.
  json cut = Post("/v2/rerank",
                  {{"query", query},
                   {"documents", {"a fox", {{"text", long_document}}, "a dog"}},
                   {"max_tokens_per_doc", 5},
                   {"top_n", 1},
                   {"return_documents", true}},
                  200);
  ASSERT_EQ(cut["results"].size(), 1u) << cut.dump();
  const int q = Tokens(query);
  EXPECT_EQ(cut["meta"]["billed_units"]["input_tokens"],
            (q + Tokens("a fox") + 3) + (q + 5 + 3) + (q + Tokens("a dog") + 3));
  EXPECT_EQ(cut["meta"]["tokens"]["input_tokens"], cut["meta"]["billed_units"]["input_tokens"]);
  const int index = cut["results"][0]["index"].get<int>();
  EXPECT_EQ(cut["results"][0]["document"]["text"], index == 1 ? long_document : documents[index]);
  const double score = cut["results"][0]["relevance_score"].get<double>();
  EXPECT_GE(score, 0.0);
  EXPECT_LE(score, 1.0);
  EXPECT_EQ(cut["meta"]["api_version"]["version"], "2");

  // The calls are counted and logged under their protocol.
  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"rerank\",model=\"fake\",protocol=\"cohere\""));
  server_.reset();
  const std::vector<std::string> lines = absl::StrSplit(log_.str(), '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(json::parse(lines.back())["protocol"], "cohere");
}

TEST_F(ProtocolsTest, CohereErrorsAreItsMessageBodyNamingTheField) {
  Start({"LABEL_0"});
  json missing = Post("/v2/rerank", {{"documents", {"a"}}}, 400);
  EXPECT_THAT(missing["message"].get<std::string>(), HasSubstr("query"));
  json misspelt = Post("/v2/rerank", {{"query", "q"}, {"documents", {"a"}}, {"topn", 1}}, 400);
  EXPECT_THAT(misspelt["message"].get<std::string>(), HasSubstr("unknown field topn"));
  json not_text = Post("/v2/rerank", {{"query", "q"}, {"documents", {"a", {{"title", "b"}}}}}, 400);
  EXPECT_THAT(not_text["message"].get<std::string>(), HasSubstr("documents[1]"));
  json zero = Post("/v2/rerank", {{"query", "q"}, {"documents", {"a"}}, {"top_n", 0}}, 400);
  EXPECT_THAT(zero["message"].get<std::string>(), HasSubstr("top_n"));
  json wrong_type = Post("/v2/rerank", {{"query", "q"}, {"documents", {"a"}}, {"max_tokens_per_doc", "5"}}, 400);
  EXPECT_THAT(wrong_type["message"].get<std::string>(), HasSubstr("max_tokens_per_doc must be an integer"));
  json unknown = Post("/v2/rerank", {{"model", "nope"}, {"query", "q"}, {"documents", {"a"}}}, 404);
  EXPECT_THAT(unknown["message"].get<std::string>(), HasSubstr("nope"));
  // `priority` (Cohere's queueing hint) is accepted.
  Post("/v2/rerank", {{"query", "q"}, {"documents", {"a"}}, {"priority", 2}}, 200);
}

TEST_F(ProtocolsTest, CohereOnAModelThatIsNotARerankerNamesItsLabels) {
  Start({"a", "b", "c"});
  json answer = Post("/v2/rerank", {{"query", "q"}, {"documents", {"a"}}}, 400);
  EXPECT_THAT(answer["message"].get<std::string>(), HasSubstr("not a reranker"));
}

TEST_F(ProtocolsTest, HuggingFaceChoosesTheModelsTaskAndAnswersInTransformersShapes) {
  Start({"contradiction", "neutral", "entailment"});  // NLI labels, for zero-shot.
  // The fake engine has a token classifier: the model's task is token
  // classification; candidate_labels make it zero-shot.
  json entities = Post("/hf/models/fake", {{"inputs", "the quick brown fox"},
                                           {"parameters", {{"aggregation_strategy", "none"}, {"ignore_labels", json::array()}}}},
                       200);
  ASSERT_TRUE(entities.is_array()) << entities.dump();
  // ignore_labels [] keeps every token: one entity per token, with `entity` and `index`.
  ASSERT_EQ(static_cast<int>(entities.size()), Tokens("the quick brown fox")) << entities.dump();
  EXPECT_TRUE(entities[0].contains("entity")) << entities.dump();
  EXPECT_TRUE(entities[0].contains("index"));

  // A named task, a batch of two: a list per input, every label, highest first.
  json classes = Post("/hf/models/fake/pipeline/text-classification", {{"inputs", {"one text", "another text"}}}, 200);
  ASSERT_EQ(classes.size(), 2u) << classes.dump();
  ASSERT_EQ(classes[0].size(), 3u);
  EXPECT_GE(classes[0][0]["score"].get<double>(), classes[0][1]["score"].get<double>());
  // A pair.
  json pair = Post("/hf/models/fake/pipeline/text-classification",
                   {{"inputs", {{"text", "a premise"}, {"text_pair", "a hypothesis"}}}, {"parameters", {{"top_k", 2}}}},
                   200);
  ASSERT_EQ(pair.size(), 1u) << pair.dump();
  EXPECT_EQ(pair[0].size(), 2u);
  // function_to_apply none: the logits themselves.
  json raw = Post("/hf/models/fake/pipeline/text-classification",
                  {{"inputs", "one text"}, {"parameters", {{"function_to_apply", "none"}}}}, 200);
  EXPECT_GT(raw[0][0]["score"].get<double>(), 1.0) << raw.dump();  // The fake's best logit is 2.

  json zero_shot = Post("/hf/models/fake", {{"inputs", "a text"}, {"parameters", {{"candidate_labels", "x, y"}}}}, 200);
  EXPECT_EQ(zero_shot["sequence"], "a text") << zero_shot.dump();
  EXPECT_EQ(zero_shot["labels"].size(), 2u);
  EXPECT_EQ(zero_shot["scores"].size(), 2u);

  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify_tokens\",model=\"fake\",protocol=\"hf\""));
  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"zero_shot_classify\",model=\"fake\",protocol=\"hf\""));
}

TEST_F(ProtocolsTest, HuggingFaceErrorsAreItsErrorBodyNamingTheField) {
  Start({"a", "b", "c"});
  EXPECT_THAT(Post("/hf/models/fake", {{"parameters", json::object()}}, 400)["error"].get<std::string>(),
              HasSubstr("inputs is required"));
  EXPECT_THAT(Post("/hf/models/fake/pipeline/text-classification",
                   {{"inputs", "a"}, {"parameters", {{"topk", 1}}}}, 400)["error"].get<std::string>(),
              HasSubstr("unknown field parameters.topk"));
  EXPECT_THAT(Post("/hf/models/fake/pipeline/fill-mask",
                   {{"inputs", "a"}, {"parameters", {{"targets", {"b"}}}}}, 400)["error"].get<std::string>(),
              HasSubstr("targets is not supported"));
  EXPECT_THAT(Post("/hf/models/fake/pipeline/summarization", {{"inputs", "a"}}, 404)["error"].get<std::string>(),
              HasSubstr("unknown task 'summarization'"));
  EXPECT_THAT(Post("/hf/models/nope", {{"inputs", "a"}}, 404)["error"].get<std::string>(), HasSubstr("nope"));
  EXPECT_THAT(Post("/hf/models/fake/pipeline/token-classification",
                   {{"inputs", "a"}, {"parameters", {{"aggregation_strategy", "most"}}}}, 400)["error"].get<std::string>(),
              HasSubstr("aggregation_strategy"));
  EXPECT_THAT(Post("/hf/models/fake/pipeline/text-classification", {{"inputs", {1, 2}}}, 400)["error"].get<std::string>(),
              HasSubstr("inputs[0] must be a string"));
  // `options` (Hugging Face's own service's) is accepted.
  Post("/hf/models/fake/pipeline/text-classification", {{"inputs", "a"}, {"options", {{"wait_for_model", true}}}},
       200);
}

}  // namespace
}  // namespace deberta::testing
