// Checkpoint name mapping and loading.
#include "model/torch/weights.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deberta::model {
namespace {

// Legacy (Hugging Face BERT-style) MLM head names -> authors' layout.
const std::pair<const char*, const char*> kLegacyHeadPrefixes[] = {
    {"cls.predictions.transform.dense.", "lm_predictions.lm_head.dense."},
    {"cls.predictions.transform.LayerNorm.", "lm_predictions.lm_head.LayerNorm."},
    {"cls.predictions.bias", "lm_predictions.lm_head.bias"},
    {"cls.predictions.decoder.bias", "lm_predictions.lm_head.bias"},
};

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<at::ScalarType> TorchDType(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::kF32: return at::kFloat;
    case TensorDType::kF16: return at::kHalf;
    case TensorDType::kBF16: return at::kBFloat16;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", TensorDTypeName(dtype), " is not a weight dtype (F32, F16, BF16)"));
  }
}

}  // namespace

std::string NetworkParameterName(const std::string& key) {
  if (key == "deberta.embeddings.position_ids" || key == "embeddings.position_ids") return "";
  if (absl::StartsWith(key, "mask_predictions.")) return "";   // v3 RTD head.
  if (key == "cls.predictions.decoder.weight") return "";      // Tied copy of word embeddings.
  for (const auto& [from, to] : kLegacyHeadPrefixes) {
    if (absl::StartsWith(key, from)) return absl::StrCat(to, key.substr(strlen(from)));
  }
  if (absl::StartsWith(key, "embeddings.") || absl::StartsWith(key, "encoder.")) {
    return absl::StrCat("deberta.", key);  // Saved from a bare DebertaModel.
  }
  return key;
}

NetworkParts DetectNetworkParts(const SafetensorsFile& checkpoint, const DebertaConfig& config) {
  std::set<std::string> names;
  for (const std::string& key : checkpoint.Names()) names.insert(NetworkParameterName(key));
  NetworkParts parts;
  // Token-classification checkpoints have classifier.* but no pooler: only
  // a pooler marks a sequence classifier.
  parts.classifier = names.count("pooler.dense.weight") > 0;
  parts.mlm_head = names.count("lm_predictions.lm_head.dense.weight") > 0;
  parts.position_table = names.count("deberta.embeddings.position_embeddings.weight") > 0;
  // docs/tasks.md 1.1: a ...ForTokenClassification architecture, or the
  // authors' proj + classifier pair.
  const bool named = std::any_of(config.architectures.begin(), config.architectures.end(),
                                 [](const std::string& a) { return absl::EndsWith(a, "ForTokenClassification"); });
  const bool projection = names.count("proj.weight") > 0;
  if (!parts.classifier && names.count("classifier.weight") > 0 && (named || projection)) {
    parts.token_classifier = true;
    parts.token_projection = projection;
  }
  return parts;
}

absl::StatusOr<LoadReport> LoadWeights(const SafetensorsFile& checkpoint,
                                       DebertaNetworkImpl& network) {
  LoadReport report;
  std::map<std::string, std::string> key_for_parameter;
  for (const std::string& key : checkpoint.Names()) {
    std::string name = NetworkParameterName(key);
    if (name.empty() || !key_for_parameter.emplace(name, key).second) {
      report.unused_keys.push_back(key);
      continue;
    }
    if (absl::StartsWith(key, "cls.predictions.")) report.legacy_mlm_head = true;
  }

  std::vector<std::string> missing, problems;
  std::set<std::string> used;
  at::NoGradGuard no_grad;
  for (auto& item : network.named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    at::Tensor& param = item.value();
    auto it = key_for_parameter.find(name);
    if (it == key_for_parameter.end()) {
      missing.push_back(name);
      continue;
    }
    used.insert(it->first);
    TensorView view = *checkpoint.Get(it->second);
    if (view.shape != param.sizes().vec()) {
      problems.push_back(absl::StrCat(it->second, " has shape ", ShapeString(view.shape),
                                      ", expected ", ShapeString(param.sizes().vec())));
      continue;
    }
    auto dtype = TorchDType(view.dtype);
    if (!dtype.ok()) {
      problems.push_back(absl::StrCat(it->second, ": ", dtype.status().message()));
      continue;
    }
    // from_blob does not copy; the copy_ converts into the float32 parameter.
    at::Tensor source = at::from_blob(const_cast<uint8_t*>(view.data), view.shape,
                                      at::TensorOptions().dtype(*dtype));
    param.copy_(source);
  }
  for (const auto& [name, key] : key_for_parameter) {
    if (!used.count(name)) report.unused_keys.push_back(key);
  }
  if (!missing.empty() || !problems.empty()) {
    std::string message = absl::StrCat(checkpoint.name(), ": checkpoint does not match config.json");
    if (!missing.empty()) {
      absl::StrAppend(&message, "; missing ", missing.size(), " tensor(s): ",
                      absl::StrJoin(missing, ", "));
    }
    if (!problems.empty()) absl::StrAppend(&message, "; ", absl::StrJoin(problems, "; "));
    return absl::InvalidArgumentError(message);
  }
  return report;
}

}  // namespace deberta::model
