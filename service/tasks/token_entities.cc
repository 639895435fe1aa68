// Entities from per-token probabilities: per token, per word, grouped.
#include "service/tasks/token_entities.h"

#include <algorithm>

namespace deberta::service {
namespace {

// The first index of the largest value.
size_t Argmax(const std::vector<float>& p) {
  return static_cast<size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

TokenEntity EntityOf(const std::vector<float>& p, const std::vector<std::string>& labels, int32_t start,
                     int32_t end, int32_t index) {
  const size_t best = Argmax(p);
  return {labels[best], p[best], start, end, index};
}

// One entity per content token, space tokens included.
std::vector<TokenEntity> PerToken(const std::vector<TextToken>& tokens,
                                  const std::vector<std::vector<float>>& probabilities,
                                  const std::vector<std::string>& labels) {
  std::vector<TokenEntity> entities;
  entities.reserve(tokens.size());
  for (size_t t = 0; t < tokens.size(); ++t) {
    entities.push_back(EntityOf(probabilities[t], labels, tokens[t].start, tokens[t].end, tokens[t].index));
  }
  return entities;
}

// The words of docs/tasks.md 1.2: runs of non-space tokens, each from a
// word start (or the first non-space token after a space token) to the
// next; space tokens belong to none.
std::vector<std::vector<size_t>> Words(const std::vector<TextToken>& tokens) {
  std::vector<std::vector<size_t>> words;
  bool in_word = false;
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t].space) {
      in_word = false;
      continue;
    }
    if (!in_word || tokens[t].word_start) words.emplace_back();
    words.back().push_back(t);
    in_word = true;
  }
  return words;
}

// One entity per word, as `aggregation` (first, average or max) scores it.
std::vector<TokenEntity> PerWord(const std::vector<TextToken>& tokens,
                                 const std::vector<std::vector<float>>& probabilities,
                                 const std::vector<std::string>& labels, EntityAggregation aggregation) {
  std::vector<TokenEntity> entities;
  for (const std::vector<size_t>& word : Words(tokens)) {
    const int32_t start = tokens[word.front()].start, end = tokens[word.back()].end;
    switch (aggregation) {
      case EntityAggregation::kAverage: {
        std::vector<double> sum(labels.size(), 0.0);
        for (size_t t : word) {
          for (size_t l = 0; l < sum.size(); ++l) sum[l] += probabilities[t][l];
        }
        std::vector<float> mean(sum.size());
        for (size_t l = 0; l < sum.size(); ++l) mean[l] = static_cast<float>(sum[l] / word.size());
        entities.push_back(EntityOf(mean, labels, start, end, -1));
        break;
      }
      case EntityAggregation::kMax: {
        size_t best = word.front();  // Earliest on ties.
        for (size_t t : word) {
          if (probabilities[t][Argmax(probabilities[t])] > probabilities[best][Argmax(probabilities[best])]) best = t;
        }
        entities.push_back(EntityOf(probabilities[best], labels, start, end, -1));
        break;
      }
      default:  // kFirst.
        entities.push_back(EntityOf(probabilities[word.front()], labels, start, end, -1));
        break;
    }
  }
  return entities;
}

// B-X: (true, X); I-X: (false, X); anything else: (false, the whole name),
// unlike transformers, which keeps only what follows the last hyphen.
std::pair<bool, std::string> BeginAndTag(const std::string& label) {
  if (label.size() > 2 && label[1] == '-' && (label[0] == 'B' || label[0] == 'I')) {
    return {label[0] == 'B', label.substr(2)};
  }
  return {false, label};
}

// Consecutive entities of one tag, each group begun by a B- or a new tag.
std::vector<TokenEntity> Group(const std::vector<TokenEntity>& entities) {
  std::vector<TokenEntity> groups;
  double score_sum = 0;
  int members = 0;
  auto close = [&] {
    if (members > 0) groups.back().score = static_cast<float>(score_sum / members);
  };
  for (const TokenEntity& entity : entities) {
    auto [begins, tag] = BeginAndTag(entity.label);
    if (members > 0 && !begins && tag == groups.back().label) {
      groups.back().end = entity.end;
      score_sum += entity.score;
      ++members;
      continue;
    }
    close();
    groups.push_back({tag, 0, entity.start, entity.end, -1});
    score_sum = entity.score;
    members = 1;
  }
  close();
  return groups;
}

}  // namespace

std::vector<TokenEntity> AggregateEntities(const std::vector<TextToken>& tokens,
                                           const std::vector<std::vector<float>>& probabilities,
                                           const std::vector<std::string>& labels, EntityAggregation aggregation,
                                           const std::vector<std::string>& ignore_labels) {
  std::vector<TokenEntity> entities;
  switch (aggregation) {
    case EntityAggregation::kNone: entities = PerToken(tokens, probabilities, labels); break;
    case EntityAggregation::kSimple: entities = Group(PerToken(tokens, probabilities, labels)); break;
    default: entities = Group(PerWord(tokens, probabilities, labels, aggregation)); break;
  }
  const auto ignored = [&](const TokenEntity& e) {
    return std::find(ignore_labels.begin(), ignore_labels.end(), e.label) != ignore_labels.end();
  };
  entities.erase(std::remove_if(entities.begin(), entities.end(), ignored), entities.end());
  return entities;
}

std::string CodePointSubstring(absl::string_view text, int32_t start, int32_t end) {
  if (start < 0 || end <= start) return "";
  size_t begin_byte = text.size(), end_byte = text.size();
  int32_t point = -1;  // The code point the byte at `i` belongs to.
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // A continuation byte.
    ++point;
    if (point == start) begin_byte = i;
    if (point == end) {
      end_byte = i;
      break;
    }
  }
  if (begin_byte >= end_byte) return "";
  return std::string(text.substr(begin_byte, end_byte - begin_byte));
}

}  // namespace deberta::service
