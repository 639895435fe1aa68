// ProblemType: how a classifier's logits become scores, config.json's
// "problem_type" as Hugging Face spells it.
#ifndef DEBERTA_MODEL_PROBLEM_TYPE_H_
#define DEBERTA_MODEL_PROBLEM_TYPE_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace deberta::model {

enum class ProblemType {
  kSingleLabelClassification,  // softmax over the labels (also when config.json names none)
  kMultiLabelClassification,   // sigmoid of each logit
  kRegression,                 // the logits themselves
};

// "single_label_classification", "multi_label_classification", "regression".
inline const char* ProblemTypeName(ProblemType type) {
  switch (type) {
    case ProblemType::kSingleLabelClassification: return "single_label_classification";
    case ProblemType::kMultiLabelClassification: return "multi_label_classification";
    case ProblemType::kRegression: return "regression";
  }
  return "single_label_classification";
}

// The type ProblemTypeName spells `name`, or nullopt.
inline std::optional<ProblemType> ParseProblemType(absl::string_view name) {
  for (ProblemType type : {ProblemType::kSingleLabelClassification, ProblemType::kMultiLabelClassification,
                           ProblemType::kRegression}) {
    if (name == ProblemTypeName(type)) return type;
  }
  return std::nullopt;
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_PROBLEM_TYPE_H_
