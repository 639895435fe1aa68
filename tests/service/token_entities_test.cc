// Token-classification post-processing against the golden task cases
// (tests/golden_tasks, docs/tasks.md 1.3): from each case's stored logits
// and token spans, every strategy's entities under every ignore variant
// must be the recorded answer (labels, spans, words and indices exact,
// scores within 1e-4 + 1e-4|x|); the windowed case takes each token's
// probabilities from the window TokenWindowChoice picks, as recorded. Also
// the edge cases of grouping and words, by hand.
#include "service/tasks/token_entities.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "nlohmann/json.hpp"
#include "service/tasks/classify_tokens.h"
#include "service/tasks/long_input.h"

namespace deberta::service {
namespace {

using json = nlohmann::json;

json ReadEntitiesCase(const std::string& name) {
  std::ifstream in(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name + "/expected.json");
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

std::vector<float> Softmax(const json& logits) {
  std::vector<double> e;
  double max = -INFINITY, sum = 0;
  for (const json& l : logits) max = std::max(max, l.get<double>());
  for (const json& l : logits) sum += e.emplace_back(std::exp(l.get<double>() - max));
  std::vector<float> p;
  for (double v : e) p.push_back(static_cast<float>(v / sum));
  return p;
}

const std::map<std::string, EntityAggregation> kStrategies = {{"none", EntityAggregation::kNone},
                                                              {"simple", EntityAggregation::kSimple},
                                                              {"first", EntityAggregation::kFirst},
                                                              {"average", EntityAggregation::kAverage},
                                                              {"max", EntityAggregation::kMax}};

void ExpectAnswer(const std::string& text, const std::vector<TokenEntity>& got, const json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "entity " << i);
    const json& w = want[i];
    EXPECT_EQ(got[i].label, w["label"].get<std::string>());
    const double score = w["score"].get<double>();
    EXPECT_NEAR(got[i].score, score, 1e-4 + 1e-4 * std::abs(score));
    EXPECT_EQ(got[i].start, w["start"].get<int>());
    EXPECT_EQ(got[i].end, w["end"].get<int>());
    EXPECT_EQ(got[i].index, w["index"].get<int>());
    EXPECT_EQ(CodePointSubstring(text, got[i].start, got[i].end), w["word"].get<std::string>());
  }
}

// Every text, variant and strategy of a case; `probabilities_of(text, i)`
// gives content token i's probabilities.
template <typename ProbabilitiesOf>
void CheckCase(const std::string& name, ProbabilitiesOf probabilities_of) {
  const json c = ReadEntitiesCase(name);
  const std::vector<std::string> labels = c["labels"].get<std::vector<std::string>>();
  int answers = 0;
  for (const json& text : c["texts"]) {
    std::vector<TextToken> tokens;
    std::vector<std::vector<float>> probabilities;
    for (size_t i = 0; i < text["tokens"].size(); ++i) {
      const json& t = text["tokens"][i];
      tokens.push_back({static_cast<int32_t>(i + 1), t["start"].get<int32_t>(), t["end"].get<int32_t>(),
                        t["space"].get<bool>(), t["word_start"].get<bool>()});
      probabilities.push_back(probabilities_of(text, i));
    }
    for (const auto& [variant, by_strategy] : text["answers"].items()) {
      std::vector<std::string> ignore;
      c["variants"][variant]["in_effect"].get_to(ignore);
      for (const auto& [strategy, want] : by_strategy.items()) {
        SCOPED_TRACE(::testing::Message() << name << " " << text["name"].get<std::string>() << " " << variant
                                          << " " << strategy);
        ExpectAnswer(text["text"].get<std::string>(),
                     AggregateEntities(tokens, probabilities, labels, kStrategies.at(strategy), ignore), want);
        ++answers;
      }
    }
  }
  EXPECT_GT(answers, 30) << "the case holds fewer answers than expected";
}

TEST(TokenEntitiesGoldenTest, HuggingFaceHeadOnSentencePieceText) {
  CheckCase("tc_hf_spm", [](const json& text, size_t i) { return Softmax(text["logits"][i + 1]); });
}

TEST(TokenEntitiesGoldenTest, AuthorsHeadOnGpt2Text) {
  CheckCase("tc_authors_gpt2", [](const json& text, size_t i) { return Softmax(text["logits"][i + 1]); });
}

TEST(TokenEntitiesGoldenTest, WindowedTextTakesEachTokenFromItsDeepestWindow) {
  const json c = ReadEntitiesCase("long_tc_spm");
  for (const json& text : c["texts"]) {
    std::vector<TokenWindow> windows;
    for (const json& w : text["windows"]) windows.push_back({w["start"].get<int32_t>(), w["end"].get<int32_t>()});
    const std::vector<int32_t> choice = TokenWindowChoice(windows, static_cast<int64_t>(text["tokens"].size()));
    for (size_t i = 0; i < choice.size(); ++i) {
      ASSERT_EQ(choice[i], text["tokens"][i]["window"].get<int32_t>()) << text["name"] << " token " << i;
    }
  }
  CheckCase("long_tc_spm", [](const json& text, size_t i) {
    const json& window = text["windows"][text["tokens"][i]["window"].get<size_t>()];
    return Softmax(window["logits"][i - window["start"].get<size_t>() + 1]);
  });
}

// Two labels, O and an entity, one-hot probabilities but for the score.
std::vector<float> P(const std::vector<std::string>& labels, const std::string& label, float score) {
  std::vector<float> p(labels.size(), (1 - score) / (labels.size() - 1));
  p[std::find(labels.begin(), labels.end(), label) - labels.begin()] = score;
  return p;
}

TEST(TokenEntitiesTest, BeginsSplitGroupsAndUnprefixedLabelsGroupUnderTheirWholeName) {
  const std::vector<std::string> labels{"O", "B-PER", "I-PER", "DATE-TIME"};
  std::vector<TextToken> tokens;
  for (int32_t t = 0; t < 5; ++t) tokens.push_back({t + 1, 2 * t, 2 * t + 1, false, true});
  const std::vector<std::vector<float>> p{P(labels, "B-PER", 0.9f), P(labels, "B-PER", 0.7f),
                                          P(labels, "I-PER", 0.5f), P(labels, "DATE-TIME", 0.8f),
                                          P(labels, "DATE-TIME", 0.6f)};
  const auto groups = AggregateEntities(tokens, p, labels, EntityAggregation::kSimple, {"O"});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].label, "PER");  // B-PER alone: the next B- starts anew.
  EXPECT_EQ(groups[0].end, 1);
  EXPECT_EQ(groups[1].label, "PER");  // B-PER I-PER.
  EXPECT_NEAR(groups[1].score, 0.6f, 1e-6);
  EXPECT_EQ(groups[1].start, 2);
  EXPECT_EQ(groups[1].end, 5);
  EXPECT_EQ(groups[2].label, "DATE-TIME");  // Not "TIME", as transformers would name it.
  EXPECT_EQ(groups[2].index, -1);
}

TEST(TokenEntitiesTest, SpaceTokensEndWordsAndBelongToNone) {
  const std::vector<std::string> labels{"O", "B-LOC", "I-LOC"};
  // "▁New", "▁", "York" with no word start: the space token still splits
  // them into two words.
  const std::vector<TextToken> tokens{{1, 0, 3, false, true}, {2, 4, 4, true, false}, {3, 4, 8, false, false}};
  const std::vector<std::vector<float>> p{P(labels, "B-LOC", 0.9f), P(labels, "O", 0.99f), P(labels, "B-LOC", 0.8f)};
  const auto words = AggregateEntities(tokens, p, labels, EntityAggregation::kFirst, {});
  ASSERT_EQ(words.size(), 2u);  // The space token yields no entity.
  EXPECT_EQ(words[0].end, 3);
  EXPECT_EQ(words[1].start, 4);
  const auto per_token = AggregateEntities(tokens, p, labels, EntityAggregation::kNone, {});
  ASSERT_EQ(per_token.size(), 3u);  // Under none, it does.
  EXPECT_EQ(per_token[1].index, 2);
}

// Windows [0, 5) and [3, 8) of 8 one-character words "a b c d e f g h";
// "d e f" is B-PER I-PER I-PER across the edge. Each window is wrong at its
// own edge (window 0 at e, window 1 at d): each token reads the window it
// lies deepest in, so the entity comes out whole and right.
TEST(TokenEntitiesTest, AWindowEdgeInsideAnEntityLeavesItWhole) {
  const std::vector<std::string> labels{"O", "B-PER", "I-PER"};
  TokenClassifyInput input;
  input.text = "a b c d e f g h";
  for (int32_t t = 0; t < 8; ++t) input.tokens.push_back({t + 1, 2 * t, 2 * t + 1, false, true});
  input.windows = {{0, 5}, {3, 8}};
  input.num_tokens = 10;
  // Per window, [CLS] its tokens [SEP]: logit 5 for `label[t]` of token t.
  auto window_output = [&](const TokenWindow& w, const std::vector<int>& label) {
    model::TokenClassifyOutput out;
    out.num_labels = 3;
    out.logits.assign(static_cast<size_t>((w.end - w.start + 2) * 3), 0.0f);
    for (int32_t t = w.start; t < w.end; ++t) out.logits[static_cast<size_t>((t - w.start + 1) * 3 + label[t])] = 5;
    return out;
  };
  const std::vector<model::TokenClassifyOutput> outputs{
      window_output(input.windows[0], {0, 0, 0, 1, 0, 2, 0, 0}),   // Wrong at e (its last token).
      window_output(input.windows[1], {0, 0, 0, 0, 2, 2, 0, 0})};  // Wrong at d (its first).
  TokenClassifyInputs how;
  how.aggregation = EntityAggregation::kSimple;
  how.ignore_labels = {"O"};
  const std::vector<TokenEntity> entities = InputEntities(input, outputs, how, labels);
  ASSERT_EQ(entities.size(), 1u);
  EXPECT_EQ(entities[0].label, "PER");
  EXPECT_EQ(entities[0].start, 6);
  EXPECT_EQ(entities[0].end, 11);
}

TEST(TokenEntitiesTest, CodePointSubstringCountsCharactersNotBytes) {
  EXPECT_EQ(CodePointSubstring("a我爱b", 1, 3), "我爱");
  EXPECT_EQ(CodePointSubstring("a😀b", 1, 2), "😀");
  EXPECT_EQ(CodePointSubstring("abc", 2, 9), "c");
  EXPECT_EQ(CodePointSubstring("abc", 2, 2), "");
}

}  // namespace
}  // namespace deberta::service
