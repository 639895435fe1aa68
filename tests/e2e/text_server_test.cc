// Text over gRPC with the checkpoint's own tokenizer: every golden
// tokenizer case through the Tokenize and Detokenize RPCs, text requests
// giving exactly the logits of the reference's ids, text pairs, truncation
// and fill-mask text. The models are random (the demo's size, with a
// vocabulary as large as each tokenizer's); the tokenizers are the vendored
// golden ones (tests/golden_tokenizers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/engine_factory.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using nlohmann::json;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string TokenizerDir(const std::string& name) {
  return std::string(DEBERTA_GOLDEN_TOKENIZERS_DIR) + "/" + name;
}

json Cases(const std::string& name) {
  std::ifstream in(TokenizerDir(name) + "/cases.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// A checkpoint folder: random demo-size weights with the vocabulary of the
// golden tokenizer `name`, and that tokenizer's files.
std::string MakeCheckpoint(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("text_server_" + name);
  fs::create_directories(dir);
  model::RandomModelShape shape = model::DemoModelShape();
  shape.vocab = Cases(name)["vocab_size_with_mask"].get<int64_t>() + 7;
  EXPECT_TRUE(model::WriteRandomCheckpoint(dir.string(), shape).ok());
  for (const auto& entry : fs::directory_iterator(TokenizerDir(name))) {
    if (entry.path().filename() != "cases.json") {
      fs::copy_file(entry.path(), dir / entry.path().filename(), fs::copy_options::overwrite_existing);
    }
  }
  return dir.string();
}

std::unique_ptr<TestServer> StartOn(const std::string& dir) {
  model::EngineOptions options;
  options.model = dir;
  options.num_threads = 1;
  auto engine = model::CreateTorchEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  auto tokenizer = model::LoadTokenizer(dir);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  if (!engine.ok() || !tokenizer.ok()) return nullptr;
  auto server = StartTestServer(*std::move(engine), service::ServerConfig(), *std::move(tokenizer));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

class TextServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cases_ = Cases(GetParam());
    server_ = StartOn(MakeCheckpoint(GetParam()));
    ASSERT_NE(server_, nullptr);
  }
  pb::TokenizeResponse Tokenize(const pb::TokenizeRequest& request) {
    pb::TokenizeResponse response;
    auto context = ContextWithDeadline();
    grpc::Status status = server_->stub->Tokenize(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }
  json cases_;
  std::unique_ptr<TestServer> server_;
};

TEST_P(TextServerTest, EveryGoldenCaseThroughTokenizeAndDetokenize) {
  for (const json& record : cases_["texts"]) {
    pb::TokenizeRequest request;
    request.set_text(record["text"].get<std::string>());
    pb::TokenizeResponse response = Tokenize(request);
    EXPECT_THAT(response.token_ids(), ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>()))
        << record["name"];
    EXPECT_THAT(response.token_type_ids(), ::testing::Each(0));
    EXPECT_EQ(response.offsets_size(), response.token_ids_size());
    pb::DetokenizeRequest detokenize;
    for (int32_t id : record["ids"].get<std::vector<int32_t>>()) detokenize.add_token_ids(id);
    pb::DetokenizeResponse text;
    auto context = ContextWithDeadline();
    ASSERT_TRUE(server_->stub->Detokenize(context.get(), detokenize, &text).ok());
    EXPECT_EQ(text.text(), record["decoded"].get<std::string>()) << record["name"];
  }
  for (const json& record : cases_["pairs"]) {
    pb::TokenizeRequest request;
    request.set_text(record["text"].get<std::string>());
    request.set_text_pair(record["text_pair"].get<std::string>());
    pb::TokenizeResponse response = Tokenize(request);
    EXPECT_THAT(response.token_ids(), ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>()));
    EXPECT_THAT(response.token_type_ids(), ElementsAreArray(record["token_type_ids"].get<std::vector<int32_t>>()));
  }
  for (const json& record : cases_["truncation"]) {
    pb::TokenizeRequest request;
    request.set_text(record["text"].get<std::string>());
    if (!record["text_pair"].is_null()) request.set_text_pair(record["text_pair"].get<std::string>());
    request.set_truncation(pb::TRUNCATION_LONGEST_FIRST);
    request.set_max_length(record["max_length"].get<int32_t>());
    pb::TokenizeResponse response = Tokenize(request);
    EXPECT_THAT(response.token_ids(), ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>()))
        << record["name"];
    EXPECT_THAT(response.token_type_ids(), ElementsAreArray(record["token_type_ids"].get<std::vector<int32_t>>()))
        << record["name"];
    int64_t full = 0, kept = 0;
    for (const json& n : record["full_lengths"]) full += n.get<int64_t>();
    for (const json& n : record["kept_lengths"]) kept += n.get<int64_t>();
    EXPECT_EQ(response.truncated(), kept < full) << record["name"];
  }
}

TEST_P(TextServerTest, TextGivesExactlyTheLogitsOfTheReferencesIds) {
  pb::ClassifyRequest text, ids;
  for (const json& record : cases_["pairs"]) {
    pb::Sequence* s = text.add_sequences();
    s->set_text(record["text"].get<std::string>());
    s->set_text_pair(record["text_pair"].get<std::string>());
    pb::Sequence* t = ids.add_sequences();
    for (int32_t id : record["input_ids"].get<std::vector<int32_t>>()) t->add_token_ids(id);
    for (int32_t type : record["token_type_ids"].get<std::vector<int32_t>>()) t->add_token_type_ids(type);
    if (text.sequences_size() == 8) break;
  }
  pb::ClassifyResponse from_text, from_ids;
  auto c1 = ContextWithDeadline(), c2 = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->Classify(c1.get(), text, &from_text).ok());
  ASSERT_TRUE(server_->stub->Classify(c2.get(), ids, &from_ids).ok());
  ASSERT_EQ(from_text.results_size(), from_ids.results_size());
  for (int i = 0; i < from_text.results_size(); ++i) {
    EXPECT_THAT(from_text.results(i).logits(), ElementsAreArray(from_ids.results(i).logits())) << i;
    EXPECT_EQ(from_text.results(i).num_tokens(), ids.sequences(i).token_ids_size());
    EXPECT_FALSE(from_text.results(i).truncated());
  }
}

TEST_P(TextServerTest, FillMaskTextPredictsAtTheMasksAndFillsThemIn) {
  for (const json& record : cases_["masked"]) {
    const json& want = record["lstrip_split"];
    pb::FillMaskRequest request;
    request.add_sequences()->mutable_sequence()->set_text(record["text"].get<std::string>());
    request.set_top_k(2);
    pb::FillMaskResponse response;
    auto context = ContextWithDeadline();
    grpc::Status status = server_->stub->FillMask(context.get(), request, &response);
    ASSERT_TRUE(status.ok()) << record["name"] << ": " << status.error_message();
    const pb::FillMaskResult& result = response.results(0);
    EXPECT_EQ(result.num_tokens(), static_cast<int32_t>(want["input_ids"].size()));
    std::vector<int32_t> positions;
    for (const auto& p : result.predictions()) {
      positions.push_back(p.position());
      for (const auto& c : p.candidates()) {
        EXPECT_FALSE(c.token().empty());
        EXPECT_FALSE(c.sequence().empty() && c.token_id() > 3) << record["name"];
      }
    }
    EXPECT_THAT(positions, ElementsAreArray(want["mask_positions"].get<std::vector<int32_t>>())) << record["name"];
  }
}

TEST_P(TextServerTest, TooLongTextWithoutTruncationNamesItsLength) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "word ";
  pb::ClassifyRequest request;
  request.add_sequences()->set_text(text);
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = server_->stub->Classify(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("the limit is 512"));
  request.set_truncation(pb::TRUNCATION_LONGEST_FIRST);
  request.set_max_length(64);
  auto again = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->Classify(again.get(), request, &response).ok());
  EXPECT_EQ(response.results(0).num_tokens(), 64);
  EXPECT_TRUE(response.results(0).truncated());
}

INSTANTIATE_TEST_SUITE_P(Golden, TextServerTest,
                         ::testing::Values("gpt2_v1_like", "spm_multilingual", "spm_v3_like"));

// A copy of checkpoint `from` with config.json's `field` set to `value`.
std::string WithConfigField(const std::string& from, const std::string& suffix, const std::string& field,
                            const json& value) {
  const std::string dir = from + suffix;
  std::filesystem::remove_all(dir);
  std::filesystem::copy(from, dir);
  std::ifstream in(dir + "/config.json");
  std::stringstream text;
  text << in.rdbuf();
  json config = json::parse(text.str());
  config[field] = value;
  std::ofstream(dir + "/config.json") << config.dump();
  return dir;
}

// Zero-shot on an NLI-labelled random model (labels in another case than
// the usual, as checkpoints differ): the scores are computed here by hand
// from the classifier's own logits of the same (premise, hypothesis) pairs.
TEST(ZeroShotTest, ScoresAreHuggingFacesFromTheClassifierLogits) {
  auto server = StartOn(WithConfigField(MakeCheckpoint("spm_v3_like"), "_nli", "id2label",
                                        {{"0", "CONTRADICTION"}, {"1", "Neutral"}, {"2", "Entailment"}}));
  ASSERT_NE(server, nullptr);
  const std::string premise = "A man is playing a guitar on stage.";
  const std::vector<std::string> labels{"music", "sports", "cooking"};
  pb::ClassifyRequest pairs;
  for (const std::string& label : labels) {
    pb::Sequence* s = pairs.add_sequences();
    s->set_text(premise);
    s->set_text_pair("This example is " + label + ".");
  }
  pb::ClassifyResponse classified;
  auto c0 = ContextWithDeadline();
  ASSERT_TRUE(server->stub->Classify(c0.get(), pairs, &classified).ok());
  std::vector<double> entail, contra;
  for (const auto& result : classified.results()) {
    entail.push_back(result.logits(2));
    contra.push_back(result.logits(0));
  }
  for (bool multi_label : {false, true}) {
    pb::ZeroShotClassifyRequest request;
    request.set_text(premise);
    for (const std::string& label : labels) request.add_candidate_labels(label);
    request.set_multi_label(multi_label);
    pb::ZeroShotClassifyResponse response;
    auto context = ContextWithDeadline();
    grpc::Status status = server->stub->ZeroShotClassify(context.get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.labels_size(), 3);
    double sum = 0;
    for (double e : entail) sum += std::exp(e);
    for (int k = 0; k < 3; ++k) {
      const auto& got = response.labels(k);
      const size_t i = std::find(labels.begin(), labels.end(), got.label()) - labels.begin();
      ASSERT_LT(i, labels.size());
      const double want = multi_label ? std::exp(entail[i]) / (std::exp(entail[i]) + std::exp(contra[i]))
                                      : std::exp(entail[i]) / sum;
      EXPECT_NEAR(got.score(), want, 1e-5) << got.label();
      EXPECT_FLOAT_EQ(got.entailment_logit(), entail[i]);
      if (k > 0) {
        EXPECT_GE(response.labels(k - 1).score(), got.score());
      }
    }
  }
  pb::ZeroShotClassifyRequest no_slot;
  no_slot.set_text(premise);
  no_slot.add_candidate_labels("music");
  no_slot.set_hypothesis_template("About music.");
  pb::ZeroShotClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = server->stub->ZeroShotClassify(context.get(), no_slot, &response);
  EXPECT_EQ(status.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("{}"));
}

// A premise longer than max_length in windows (docs/tasks.md 3): every
// candidate sees the same windows of the premise (room left for the longest
// hypothesis), its scores per window are the zero-shot scores, and the
// answer is their mean; recomputed here from the classifier's logits of the
// same token ids.
TEST(ZeroShotTest, ALongPremiseInWindowsAggregatesEachWindowsScores) {
  auto server = StartOn(WithConfigField(MakeCheckpoint("spm_v3_like"), "_nli", "id2label",
                                        {{"0", "contradiction"}, {"1", "neutral"}, {"2", "entailment"}}));
  ASSERT_NE(server, nullptr);
  const std::string premise =
      "A man is playing a guitar on stage while the crowd sings along, and later the band plays two more songs "
      "before the lights go out and everyone walks home through the warm summer night.";
  const std::vector<std::string> labels{"music", "a long day of sports"};
  int32_t cls = -1, sep = -1;
  auto content_ids = [&](const std::string& text) {
    pb::TokenizeRequest request;
    request.set_text(text);
    pb::TokenizeResponse response;
    auto context = ContextWithDeadline();
    EXPECT_TRUE(server->stub->Tokenize(context.get(), request, &response).ok());
    cls = response.token_ids(0);
    sep = response.token_ids(response.token_ids_size() - 1);
    return std::vector<int32_t>(response.token_ids().begin() + 1, response.token_ids().end() - 1);
  };
  const std::vector<int32_t> text = content_ids(premise);
  std::vector<std::vector<int32_t>> hypotheses;
  size_t longest = 0;
  for (const std::string& label : labels) {
    hypotheses.push_back(content_ids("This example is " + label + "."));
    longest = std::max(longest, hypotheses.back().size());
  }
  const int max_length = 32;
  const size_t capacity = max_length - 3 - longest;
  const size_t windows = (text.size() + capacity - 1) / capacity;  // Stride 0.
  ASSERT_GE(windows, 2u);
  std::vector<double> mean(labels.size(), 0.0);
  for (size_t w = 0; w < windows; ++w) {
    pb::ClassifyRequest pairs;
    for (const std::vector<int32_t>& hypothesis : hypotheses) {
      pb::Sequence* s = pairs.add_sequences();
      s->add_token_ids(cls);
      for (size_t t = w * capacity; t < std::min(text.size(), (w + 1) * capacity); ++t) s->add_token_ids(text[t]);
      s->add_token_ids(sep);
      for (int32_t id : hypothesis) s->add_token_ids(id);
      s->add_token_ids(sep);
    }
    pb::ClassifyResponse classified;
    auto context = ContextWithDeadline();
    ASSERT_TRUE(server->stub->Classify(context.get(), pairs, &classified).ok());
    double sum = 0;
    for (const auto& result : classified.results()) sum += std::exp(result.logits(2));
    for (size_t i = 0; i < labels.size(); ++i) mean[i] += std::exp(classified.results(i).logits(2)) / sum / windows;
  }
  pb::ZeroShotClassifyRequest request;
  request.set_text(premise);
  for (const std::string& label : labels) request.add_candidate_labels(label);
  request.set_max_length(max_length);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  request.mutable_long_input()->set_aggregate(pb::LongInput::AGGREGATE_MEAN);
  pb::ZeroShotClassifyResponse response;
  auto context = ContextWithDeadline();
  const grpc::Status status = server->stub->ZeroShotClassify(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.num_windows(), static_cast<int32_t>(windows));
  ASSERT_EQ(response.labels_size(), 2);
  for (const auto& got : response.labels()) {
    const size_t i = std::find(labels.begin(), labels.end(), got.label()) - labels.begin();
    ASSERT_LT(i, labels.size());
    EXPECT_NEAR(got.score(), mean[i], 1e-5) << got.label();
    EXPECT_EQ(got.entailment_logit(), 0.0f);  // Several windows: no one logit.
  }
  EXPECT_GE(response.labels(0).score(), response.labels(1).score());
}

TEST(ZeroShotTest, AModelWithoutNliLabelsIsFailedPrecondition) {
  auto server = StartOn(MakeCheckpoint("gpt2_v1_like"));  // negative / neutral / positive.
  ASSERT_NE(server, nullptr);
  pb::ZeroShotClassifyRequest request;
  request.set_text("hello");
  request.add_candidate_labels("greeting");
  pb::ZeroShotClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = server->stub->ZeroShotClassify(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("entailment and contradiction"));
}

TEST(ProblemTypeTest, ScoresFollowTheCheckpointsProblemType) {
  const std::string base = MakeCheckpoint("gpt2_v1_like");
  for (const char* problem : {"single_label_classification", "multi_label_classification", "regression"}) {
    auto server = StartOn(WithConfigField(base, std::string("_") + problem, "problem_type", problem));
    ASSERT_NE(server, nullptr);
    pb::ModelInfo info;
    auto c1 = ContextWithDeadline();
    ASSERT_TRUE(server->stub->GetModelInfo(c1.get(), {}, &info).ok());
    EXPECT_EQ(info.problem_type(), problem);
    pb::ClassifyRequest request;
    request.add_sequences()->set_text("The weather is nice today.");
    pb::ClassifyResponse response;
    auto c2 = ContextWithDeadline();
    ASSERT_TRUE(server->stub->Classify(c2.get(), request, &response).ok());
    const auto& result = response.results(0);
    double sum = 0;
    for (float l : result.logits()) sum += std::exp(l);
    for (int k = 0; k < result.logits_size(); ++k) {
      const double l = result.logits(k);
      const double want = std::string(problem) == "multi_label_classification" ? 1 / (1 + std::exp(-l))
                          : std::string(problem) == "regression"              ? l
                                                                              : std::exp(l) / sum;
      EXPECT_NEAR(result.probabilities(k), want, 1e-5) << problem << " label " << k;
    }
  }
}

TEST(TextWithoutTokenizerTest, IsFailedPreconditionNamingTheFiles) {
  model::EngineOptions options;
  options.num_threads = 1;
  auto engine = model::CreateTorchEngine(options);  // The demo model: no tokenizer files.
  ASSERT_TRUE(engine.ok());
  auto server = StartTestServer(*std::move(engine), service::ServerConfig());
  ASSERT_TRUE(server.ok());
  pb::ClassifyRequest request;
  request.add_sequences()->set_text("hello");
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = (*server)->stub->Classify(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("spm.model"));
}

}  // namespace
}  // namespace deberta::testing
