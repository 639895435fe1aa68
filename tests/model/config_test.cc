// config.json parsing: defaults, both pos_att_type styles, labels, and a
// clear error naming the field for every bad input.
#include "model/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/golden_case.h"

namespace deberta::model {
namespace {

using ::testing::HasSubstr;

constexpr char kMinimal[] = R"({"model_type": "deberta-v2", "vocab_size": 10, "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16)";

std::string With(const std::string& extra) { return std::string(kMinimal) + extra + "}"; }

TEST(ConfigTest, DefaultsOfTheSpec) {
  auto c = ParseDebertaConfig(With(""));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->embedding_size, 8);
  EXPECT_EQ(c->attention_head_size, 4);
  EXPECT_EQ(c->max_position_embeddings, 512);
  EXPECT_DOUBLE_EQ(c->layer_norm_eps, 1e-7);
  EXPECT_TRUE(c->position_biased_input);
  EXPECT_FALSE(c->relative_attention);
  EXPECT_EQ(c->conv_act, "tanh");
  EXPECT_EQ(c->pooler_hidden_act, "gelu");
  EXPECT_EQ(c->labels, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_EQ(c->MaxRelativePositions(), 512);
}

TEST(ConfigTest, GoldenConfigsParse) {
  auto a = LoadDebertaConfig(deberta::testing::GoldenDir() + "/a_v1_base_like/config.json");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->layout, CheckpointLayout::kV1);
  EXPECT_TRUE(a->c2p && a->p2c);
  EXPECT_EQ(a->RelativeSpan(), 64);
  auto b = LoadDebertaConfig(deberta::testing::GoldenDir() + "/b_v3_base_like/config.json");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->c2p && b->p2c && b->share_att_key && b->norm_rel_ebd_layer_norm);
  EXPECT_EQ(b->RelativeSpan(), 16);
  EXPECT_EQ(b->labels, (std::vector<std::string>{"contradiction", "entailment", "neutral"}));
  auto c = LoadDebertaConfig(deberta::testing::GoldenDir() + "/c_v2_xlarge_like/config.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->attention_head_size, 16);
  EXPECT_EQ(c->conv_act, "gelu");
  EXPECT_EQ(c->labels, (std::vector<std::string>{"CONTRADICTION", "NEUTRAL", "ENTAILMENT"}));
}

TEST(ConfigTest, PoolingObjectGivesPoolerActivation) {
  auto c = ParseDebertaConfig(With(R"(, "pooling": {"hidden_act": "tanh", "dropout": 0})"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pooler_hidden_act, "tanh");
}

TEST(ConfigTest, LegacyFieldIsRecorded) {
  EXPECT_TRUE(ParseDebertaConfig(With(R"(, "legacy": false)"))->has_legacy_field);
  EXPECT_FALSE(ParseDebertaConfig(With(""))->has_legacy_field);
}

TEST(ConfigTest, ProblemTypeIsParsedIntoItsEnum) {
  EXPECT_EQ(ParseDebertaConfig(With(""))->problem_type, ProblemType::kSingleLabelClassification);
  EXPECT_EQ(ParseDebertaConfig(With(R"(, "problem_type": "multi_label_classification")"))->problem_type,
            ProblemType::kMultiLabelClassification);
  EXPECT_EQ(ParseDebertaConfig(With(R"(, "problem_type": "regression")"))->problem_type, ProblemType::kRegression);
  for (ProblemType type : {ProblemType::kSingleLabelClassification, ProblemType::kMultiLabelClassification,
                           ProblemType::kRegression}) {
    EXPECT_EQ(ParseProblemType(ProblemTypeName(type)), type) << ProblemTypeName(type);
  }
  EXPECT_EQ(ParseProblemType("ranking"), std::nullopt);
}

struct BadConfig {
  std::string json;
  std::string message;
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, IsInvalidArgumentNamingTheField) {
  auto c = ParseDebertaConfig(GetParam().json);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadConfigTest,
    ::testing::Values(
        BadConfig{"not json", "not valid JSON"},
        BadConfig{R"({"model_type": "bert"})", "'model_type' is 'bert'"},
        BadConfig{R"({"model_type": "deberta", "hidden_size": 8})", "'vocab_size' is required"},
        BadConfig{With(R"(, "hidden_size": "8")"), "'hidden_size' must be an integer"},
        BadConfig{With(R"(, "relative_attention": true)"), "'pos_att_type' is required"},
        BadConfig{With(R"(, "relative_attention": true, "pos_att_type": "c2p|p2p")"),
                  "unsupported term 'p2p'"},
        BadConfig{With(R"(, "hidden_act": "mish")"), "'hidden_act' names unsupported activation"},
        BadConfig{With(R"(, "id2label": {"0": "a", "1": "b"}, "num_labels": 3)"),
                  "'num_labels' is 3 but id2label has 2"},
        BadConfig{With(R"(, "id2label": {"0": "a", "5": "b"})"), "'id2label' has key '5'"},
        BadConfig{With(R"(, "conv_kernel_size": 2)"), "'conv_kernel_size' must be odd"},
        BadConfig{With(R"(, "talking_head": true)"), "'talking_head'"},
        BadConfig{With(R"(, "num_attention_heads": 3)"), "not a multiple of num_attention_heads"},
        BadConfig{With(R"(, "vocab_size": 0)"), "'vocab_size' must be > 0"},
        BadConfig{With(R"(, "relative_attention": true, "pos_att_type": 7)"),
                  "'pos_att_type' must be a string or a list"},
        BadConfig{With(R"(, "problem_type": "ranking")"), "'problem_type' is 'ranking'"}));

}  // namespace
}  // namespace deberta::model
