// The adapters for other servers' APIs (service/protocols/) over a
// FakeEngine server with a real GPT-2 tokenizer, called with curl: what
// each maps onto our tasks (Cohere's document cut to max_tokens_per_doc,
// its billed tokens, Hugging Face's task choice and batch shapes), their
// errors in their APIs' shapes naming the field at fault, and the
// `protocol` label and access-log field of their calls. The real clients
// of these APIs run against the real server in tests/e2e/compat_clients_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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
  void Start(std::vector<std::string> labels, bool tei_at_root = false, bool token_classifier = true) {
    auto engine = std::make_unique<FakeEngine>();
    engine->mutable_info()->has_token_classifier = token_classifier;
    engine->mutable_info()->labels = std::move(labels);
    engine->mutable_info()->vocab_size = 861;  // tc_authors_gpt2's.
    engine->mutable_info()->max_sequence_length = 64;
    auto tokenizer = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = tokenizer->get();
    service::ServerConfig config;
    config.http_port = 0;
    config.tei_compatible_routes = tei_at_root;
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

  // Our Classify's logits of one text, over gRPC.
  std::vector<float> Logits(const std::string& text) {
    serving::v1::ClassifyRequest request;
    request.add_sequences()->set_text(text);
    serving::v1::ClassifyResponse response;
    EXPECT_TRUE(server_->stub->Classify(ContextWithDeadline().get(), request, &response).ok());
    return {response.results(0).logits().begin(), response.results(0).logits().end()};
  }

  int Tokens(const std::string& text) const { return static_cast<int>(tokenizer_->Tokenize(text)->size()); }

  std::string Metrics() const {
    return prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  }

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

  // The calls are counted under their protocol. (The access log's protocol
  // field comes from the same metadata; json_api_test reads the log.)
  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"rerank\",model=\"fake\",protocol=\"cohere\""));
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

TEST_F(ProtocolsTest, TeiPredictAnswersInItsShapesWithSoftmaxScoresAndItsHeaders) {
  Start({"a", "b", "c"});
  // One text: every label, highest first, the softmax of our logits.
  HttpAnswer one = Curl(port_, "POST", "/tei/predict", R"({"inputs": "the quick brown fox"})", "-D /dev/stderr");
  ASSERT_EQ(one.status, 200) << one.body;
  const json scores = json::parse(one.body.substr(one.body.find('[')));
  const std::vector<float> logits = Logits("the quick brown fox");
  ASSERT_EQ(scores.size(), logits.size()) << one.body;
  double sum = 0;
  for (float logit : logits) sum += std::exp(double{logit});
  for (size_t i = 0; i < scores.size(); ++i) {
    const std::string label = scores[i]["label"];
    const size_t id = static_cast<size_t>(label[0] - 'a');
    EXPECT_NEAR(scores[i]["score"].get<double>(), std::exp(double{logits[id]}) / sum, 1e-6) << label;
    if (i > 0) {
      EXPECT_LE(scores[i]["score"].get<double>(), scores[i - 1]["score"].get<double>());
    }
  }
  // TEI's headers, with the server's own counts.
  for (const char* header : {"x-compute-time: ", "x-compute-tokens: ", "x-compute-characters: 19", "x-queue-time: ",
                             "x-inference-time: "}) {
    EXPECT_THAT(one.body, HasSubstr(header));
  }
  EXPECT_THAT(one.body, HasSubstr(absl::StrCat("x-compute-tokens: ", Tokens("the quick brown fox") + 2)));

  // A pair is one input; a batch of a single and a pair is a list per input.
  json pair = Post("/tei/predict", {{"inputs", {"a premise", "a hypothesis"}}}, 200);
  ASSERT_EQ(pair.size(), 3u) << pair.dump();
  EXPECT_TRUE(pair[0].contains("label"));
  json batch = Post("/tei/predict", {{"inputs", {{"one"}, {"a premise", "a hypothesis"}}}, {"raw_scores", true}}, 200);
  ASSERT_EQ(batch.size(), 2u) << batch.dump();
  EXPECT_EQ(batch[0].size(), 3u);
  const std::vector<float> one_logits = Logits("one");
  EXPECT_NEAR(batch[0][0]["score"].get<double>(), *std::max_element(one_logits.begin(), one_logits.end()),
              1e-6);  // raw_scores: the best logit.

  // Errors: TEI's statuses and types.
  json left = Post("/tei/predict", {{"inputs", "a"}, {"truncation_direction", "Left"}}, 422);
  EXPECT_EQ(left["error_type"], "Validation");
  EXPECT_THAT(left["error"].get<std::string>(), HasSubstr("Left"));
  json three = Post("/tei/predict", {{"inputs", {"a", "b", "c"}}}, 422);
  EXPECT_THAT(three["error"].get<std::string>(), HasSubstr("pair"));
  json not_reranker = Post("/tei/rerank", {{"query", "q"}, {"texts", {"a"}}}, 424);
  EXPECT_EQ(not_reranker["error_type"], "Backend");
  // The routes sit under /tei, and at the root only with --tei_compatible_routes.
  EXPECT_EQ(Curl(port_, "POST", "/predict", R"({"inputs": "a"})").status, 404);
  EXPECT_EQ(Curl(port_, "POST", "/tei/models/fake/predict", R"({"inputs": "a"})").status, 200);
  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"tei\""));
}

TEST_F(ProtocolsTest, TeiRerankTokenizeDecodeInfoAndHealthAtTheRoot) {
  Start({"LABEL_0"}, /*tei_at_root=*/true);
  json ranks = Post("/rerank", {{"query", "q"}, {"texts", {"a fox", "a dog", "a cat"}}, {"return_text", true}}, 200);
  ASSERT_EQ(ranks.size(), 3u) << ranks.dump();
  for (size_t i = 0; i + 1 < ranks.size(); ++i) {
    EXPECT_GE(ranks[i]["score"].get<double>(), ranks[i + 1]["score"].get<double>());
  }
  const std::vector<std::string> texts = {"a fox", "a dog", "a cat"};
  EXPECT_EQ(ranks[0]["text"], texts[ranks[0]["index"].get<int>()]);
  EXPECT_FALSE(Post("/rerank", {{"query", "q"}, {"texts", {"a"}}}, 200)[0].contains("text"));

  // Tokens with TEI's byte offsets: "é" is two bytes.
  const std::string text = "caf\u00e9 au lait";
  json tokens = Post("/tokenize", json::parse(absl::StrCat(R"({"inputs": ")", text, R"("})")), 200);
  ASSERT_EQ(tokens.size(), 1u) << tokens.dump();
  const json& list = tokens[0];
  ASSERT_GE(list.size(), 3u);
  EXPECT_TRUE(list.front()["special"].get<bool>());
  EXPECT_TRUE(list.back()["special"].get<bool>());
  const std::string utf8 = json::parse(absl::StrCat("\"", text, "\"")).get<std::string>();
  for (size_t i = 1; i + 1 < list.size(); ++i) {
    EXPECT_FALSE(list[i]["special"].get<bool>());
    const int start = list[i]["start"].get<int>(), stop = list[i]["stop"].get<int>();
    EXPECT_EQ(list[i]["text"], utf8.substr(start, stop - start)) << list[i].dump();
    EXPECT_LE(stop, static_cast<int>(utf8.size()));
  }
  EXPECT_EQ(list[list.size() - 2]["stop"].get<int>(), static_cast<int>(utf8.size()));
  json bare = Post("/tokenize", {{"inputs", {"a fox", "a dog"}}, {"add_special_tokens", false}}, 200);
  ASSERT_EQ(bare.size(), 2u);
  EXPECT_EQ(static_cast<int>(bare[0].size()), Tokens("a fox"));

  // Decode: the ids of a tokenization give its text back.
  json ids = json::array();
  for (const json& token : bare[0]) ids.push_back(token["id"]);
  EXPECT_EQ(Post("/decode", {{"ids", ids}}, 200), json::array({"a fox"}));
  EXPECT_EQ(Post("/decode", {{"ids", {ids, ids}}}, 200), json::array({"a fox", "a fox"}));
  EXPECT_THAT(Post("/decode", {{"ids", ids}, {"skip_special_tokens", false}}, 422)["error"].get<std::string>(),
              HasSubstr("skip_special_tokens"));

  // Info: a reranker with its one label; health: 200.
  HttpAnswer info = Curl(port_, "GET", "/info");
  ASSERT_EQ(info.status, 200) << info.body;
  const json described = json::parse(info.body);
  EXPECT_EQ(described["model_type"]["reranker"]["id2label"]["0"], "LABEL_0") << info.body;
  EXPECT_EQ(described["max_input_length"], 64);
  EXPECT_EQ(Curl(port_, "GET", "/health").status, 200);
  EXPECT_EQ(Curl(port_, "GET", "/tei/health").status, 200);
}

TEST_F(ProtocolsTest, KserveDescribesTheModelAndInfersFromTextOrTokenIds) {
  Start({"a", "b", "c"}, /*tei_at_root=*/false, /*token_classifier=*/false);
  EXPECT_EQ(json::parse(Curl(port_, "GET", "/v2/health/live").body), json({{"live", true}}));
  EXPECT_EQ(json::parse(Curl(port_, "GET", "/v2/health/ready").body), json({{"ready", true}}));
  EXPECT_EQ(json::parse(Curl(port_, "GET", "/v2").body)["name"], "deberta-serve");
  HttpAnswer ready = Curl(port_, "GET", "/v2/models/fake/ready");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(json::parse(ready.body)["ready"], true);

  HttpAnswer metadata = Curl(port_, "GET", "/v2/models/fake");
  ASSERT_EQ(metadata.status, 200) << metadata.body;
  const json described = json::parse(metadata.body);
  EXPECT_EQ(described["versions"], json::array({"1"}));
  EXPECT_EQ(described["inputs"][0], json({{"name", "text"}, {"datatype", "BYTES"}, {"shape", {-1}}}));
  EXPECT_EQ(described["outputs"][0], json({{"name", "logits"}, {"datatype", "FP32"}, {"shape", {-1, 3}}}));
  EXPECT_EQ(Curl(port_, "GET", "/v2/models/fake/versions/1").status, 200);
  EXPECT_EQ(Curl(port_, "GET", "/v2/models/fake/versions/2").status, 404);

  // Two texts: logits and probabilities [2, 3], row-major, as our Classify's.
  json texts = Post("/v2/models/fake/infer",
                    {{"id", "r-1"}, {"inputs", {{{"name", "text"}, {"shape", {2}}, {"datatype", "BYTES"},
                                                {"data", {"one text", "another text"}}}}}},
                    200);
  EXPECT_EQ(texts["id"], "r-1");
  EXPECT_EQ(texts["model_name"], "fake");
  EXPECT_EQ(texts["model_version"], "1");
  ASSERT_EQ(texts["outputs"].size(), 3u) << texts.dump();
  const json& logits = texts["outputs"][0];
  EXPECT_EQ(logits["name"], "logits");
  EXPECT_EQ(logits["shape"], json({2, 3}));
  const std::vector<float> first = Logits("one text"), second = Logits("another text");
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(logits["data"][j].get<double>(), first[j], 1e-6);
    EXPECT_NEAR(logits["data"][3 + j].get<double>(), second[j], 1e-6);
  }
  EXPECT_EQ(texts["outputs"][2]["name"], "label");
  EXPECT_EQ(texts["outputs"][2]["shape"], json({2}));

  // Token ids with padding (attention_mask 0), nested data, and one output asked for.
  json ids = Post("/v2/models/fake/versions/1/infer",
                  {{"inputs",
                    {{{"name", "input_ids"}, {"shape", {2, 4}}, {"datatype", "INT64"}, {"data", {{1, 7, 8, 2}, {1, 9, 2, 0}}}},
                     {{"name", "attention_mask"}, {"shape", {2, 4}}, {"datatype", "INT64"}, {"data", {1, 1, 1, 1, 1, 1, 1, 0}}}}},
                   {"outputs", {{{"name", "probabilities"}}}}},
                  200);
  ASSERT_EQ(ids["outputs"].size(), 1u) << ids.dump();
  serving::v1::ClassifyRequest request;
  for (const std::vector<int32_t>& row : {std::vector<int32_t>{1, 7, 8, 2}, std::vector<int32_t>{1, 9, 2}}) {
    serving::v1::Sequence* sequence = request.add_sequences();
    for (int32_t id : row) sequence->add_token_ids(id);
  }
  serving::v1::ClassifyResponse native;
  ASSERT_TRUE(server_->stub->Classify(ContextWithDeadline().get(), request, &native).ok());
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(ids["outputs"][0]["data"][r * 3 + j].get<double>(), native.results(r).probabilities(j), 1e-6);
    }
  }

  // Errors name what is wrong.
  EXPECT_THAT(Post("/v2/models/fake/infer",
                   {{"inputs", {{{"name", "pixels"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"x"}}}}}}, 400)["error"]
                  .get<std::string>(),
              HasSubstr("unknown input 'pixels'"));
  EXPECT_THAT(Post("/v2/models/fake/infer",
                   {{"inputs", {{{"name", "text"}, {"shape", {2}}, {"datatype", "BYTES"}, {"data", {"x"}}}}}}, 400)["error"]
                  .get<std::string>(),
              HasSubstr("holds 2"));
  EXPECT_THAT(Post("/v2/models/fake/infer",
                   {{"inputs", {{{"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"x"}}}}},
                    {"outputs", {{{"name", "embedding"}}}}}, 400)["error"].get<std::string>(),
              HasSubstr("no output 'embedding'"));
  EXPECT_THAT(Metrics(), HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"kserve\""));
}

TEST_F(ProtocolsTest, KserveAnswersATokenClassifiersEntitiesAsJsonText) {
  Start({"O", "B-PER", "I-PER"});
  json answer = Post("/v2/models/fake/infer",
                     {{"inputs", {{{"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"the quick brown fox"}}}}},
                      {"parameters", {{"aggregation_strategy", "none"}}}},
                     200);
  ASSERT_EQ(answer["outputs"].size(), 1u) << answer.dump();
  EXPECT_EQ(answer["outputs"][0]["name"], "entities");
  EXPECT_EQ(answer["outputs"][0]["datatype"], "BYTES");
  const json entities = json::parse(answer["outputs"][0]["data"][0].get<std::string>());
  serving::v1::ClassifyTokensRequest request;
  request.set_aggregation(serving::v1::AGGREGATION_NONE);
  request.add_sequences()->set_text("the quick brown fox");
  serving::v1::ClassifyTokensResponse native;
  ASSERT_TRUE(server_->stub->ClassifyTokens(ContextWithDeadline().get(), request, &native).ok());
  ASSERT_EQ(entities.size(), static_cast<size_t>(native.results(0).entities_size()));
  for (size_t i = 0; i < entities.size(); ++i) {
    EXPECT_EQ(entities[i]["label"], native.results(0).entities(static_cast<int>(i)).label());
    EXPECT_EQ(entities[i]["start"], native.results(0).entities(static_cast<int>(i)).start());
  }
  EXPECT_THAT(Post("/v2/models/fake/infer",
                   {{"inputs", {{{"name", "text"}, {"shape", {1}}, {"datatype", "BYTES"}, {"data", {"x"}}}}},
                    {"parameters", {{"aggregation_strategy", "most"}}}}, 400)["error"].get<std::string>(),
              HasSubstr("aggregation_strategy"));
}

}  // namespace
}  // namespace deberta::testing
