// `deberta-cli run`: inputs.json -> Trace -> safetensors.
#include "model/torch/reference_run.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/safetensors.h"
#include "model/status_macros.h"
#include "model/torch/network_loader.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

using json = nlohmann::json;

// Reads a rectangular int matrix field of inputs.json.
absl::StatusOr<at::Tensor> ReadMatrix(const json& j, const char* field, at::ScalarType dtype) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_array() || it->empty() || !(*it)[0].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("inputs.json: '", field, "' must be a [B][L] list"));
  }
  const int64_t rows = static_cast<int64_t>(it->size()), cols = static_cast<int64_t>((*it)[0].size());
  at::Tensor t = at::zeros({rows, cols}, at::kLong);
  auto a = t.accessor<int64_t, 2>();
  for (int64_t r = 0; r < rows; ++r) {
    const json& row = (*it)[r];
    if (!row.is_array() || static_cast<int64_t>(row.size()) != cols) {
      return absl::InvalidArgumentError(absl::StrCat("inputs.json: '", field, "' row ", r,
                                                     " has a different length"));
    }
    for (int64_t c = 0; c < cols; ++c) {
      if (!row[c].is_number_integer()) {
        return absl::InvalidArgumentError(absl::StrCat("inputs.json: '", field, "' must hold integers"));
      }
      a[r][c] = row[c].get<int64_t>();
    }
  }
  return t.to(dtype);
}

OwnedTensor ToOwned(const at::Tensor& tensor) {
  at::Tensor t = tensor.to(at::kCPU).contiguous();
  OwnedTensor out;
  if (t.scalar_type() == at::kLong) {
    out.dtype = TensorDType::kI64;
  } else {
    t = t.to(at::kFloat).contiguous();
    out.dtype = TensorDType::kF32;
  }
  out.shape = t.sizes().vec();
  out.bytes.assign(static_cast<const char*>(t.data_ptr()), t.nbytes());
  return out;
}

}  // namespace

std::vector<std::string> DefaultReferenceOutputs() {
  return {"hidden_states.k", "last_hidden_state", "pooled_output", "classifier_logits",
          "mlm_logits_emd", "mlm_logits_no_emd"};
}

absl::Status RunReferenceBatch(const ReferenceRunOptions& options) {
  std::ifstream in(options.inputs_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", options.inputs_path));
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(options.inputs_path, ": not a JSON object"));

  DEBERTA_ASSIGN_OR_RETURN(LoadedNetwork loaded, LoadNetwork(options.engine));
  NetworkInputs inputs;
  DEBERTA_ASSIGN_OR_RETURN(at::Tensor ids, ReadMatrix(j, "input_ids", at::kLong));
  DEBERTA_ASSIGN_OR_RETURN(at::Tensor mask, ReadMatrix(j, "attention_mask", at::kFloat));
  if (mask.sizes() != ids.sizes()) return absl::InvalidArgumentError("attention_mask shape differs from input_ids");
  if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= loaded.config.vocab_size) {
    return absl::InvalidArgumentError("input_ids outside the vocabulary");
  }
  if (ids.size(1) > loaded.info.max_sequence_length) {
    return absl::InvalidArgumentError(absl::StrCat("inputs are ", ids.size(1), " tokens long; the model allows ",
                                                   loaded.info.max_sequence_length));
  }
  inputs.input_ids = ids.to(loaded.device);
  inputs.mask = mask.to(loaded.device);
  if (loaded.config.type_vocab_size > 0 && j.contains("token_type_ids")) {
    DEBERTA_ASSIGN_OR_RETURN(at::Tensor types, ReadMatrix(j, "token_type_ids", at::kLong));
    inputs.token_type_ids = types.to(loaded.device);
  }

  // The names to write: "hidden_states.k" stands for every layer's states.
  // Defaults the model lacks (no EMD, no classifier) are skipped; names the
  // caller asked for must exist, which is checked before the forward pass.
  const std::set<std::string> available = loaded.network->TraceNames();
  const bool explicit_names = !options.outputs.empty();
  std::set<std::string> wanted;
  for (const std::string& name : explicit_names ? options.outputs : DefaultReferenceOutputs()) {
    if (name == "hidden_states.k") {
      for (const std::string& known : available) {
        if (absl::StartsWith(known, "hidden_states.")) wanted.insert(known);
      }
    } else if (available.count(name) > 0) {
      wanted.insert(name);
    } else if (explicit_names) {
      return absl::InvalidArgumentError(absl::StrCat("output '", name, "' is not available for this model; available: ",
                                                     absl::StrJoin(available, ", ")));
    }
  }

  // Only what the names need is computed (Trace's `wanted`).
  std::map<std::string, at::Tensor> trace;
  try {
    c10::InferenceMode inference_mode;
    trace = loaded.network->Trace(inputs, &wanted);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("forward failed: ", e.what()));
  }
  std::map<std::string, OwnedTensor> selected;
  for (const std::string& name : wanted) {
    auto it = trace.find(name);
    if (it == trace.end()) return absl::InternalError(absl::StrCat("the forward pass did not produce '", name, "'"));
    selected[name] = ToOwned(it->second);
  }
  return WriteSafetensors(options.output_path, selected,
                          {{"model", loaded.info.name}, {"device", loaded.info.device},
                           {"dtype", loaded.info.dtype}, {"emd", loaded.info.emd_enabled ? "on" : "off"}});
}

}  // namespace deberta::model
