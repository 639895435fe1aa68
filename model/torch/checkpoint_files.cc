// Checkpoint formats: safetensors (single, sharded) and torch.save .bin.
#include "model/checkpoint_files.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "model/read_file.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<TensorDType> DTypeOf(const at::Tensor& tensor, const std::string& name) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return TensorDType::kF32;
    case at::kHalf: return TensorDType::kF16;
    case at::kBFloat16: return TensorDType::kBF16;
    case at::kLong: return TensorDType::kI64;
    case at::kInt: return TensorDType::kI32;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "' has dtype ", c10::toString(tensor.scalar_type()),
                       "; a checkpoint holds float32, float16, bfloat16, int64 or int32 tensors"));
  }
}

// The shard files of an index (`weight_map` values), in name order.
absl::StatusOr<std::set<std::string>> ShardsOf(const std::string& index_path) {
  absl::StatusOr<std::string> text = ReadFileToString(index_path);
  if (!text.ok()) return text.status();
  const nlohmann::json index = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(index_path, " has no \"weight_map\" object"));
  }
  std::set<std::string> shards;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(index_path, ": the shard of '", tensor,
                                                     "' is not a file name in the folder"));
    }
    shards.insert(file.get<std::string>());
  }
  if (shards.empty()) return absl::InvalidArgumentError(absl::StrCat(index_path, " lists no shards"));
  return shards;
}

// Adds one shard's tensors, refusing a name seen in an earlier shard.
absl::Status Merge(std::map<std::string, OwnedTensor> shard, const std::string& shard_path,
                   std::map<std::string, OwnedTensor>* all) {
  for (auto& [name, tensor] : shard) {
    if (!all->emplace(name, std::move(tensor)).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' appears twice (again in ", shard_path, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, OwnedTensor>> CopySafetensors(const std::string& path) {
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path);
  if (!file.ok()) return file.status();
  std::map<std::string, OwnedTensor> tensors;
  for (const std::string& name : (*file)->Names()) {
    absl::StatusOr<TensorView> view = (*file)->Get(name);
    if (!view.ok()) return view.status();
    tensors[name] = {view->dtype, view->shape,
                     std::string(reinterpret_cast<const char*>(view->data), view->num_bytes)};
  }
  return tensors;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> FromTensors(const std::map<std::string, OwnedTensor>& tensors,
                                                             const std::string& name) {
  absl::StatusOr<std::string> bytes = SerializeSafetensors(tensors);
  if (!bytes.ok()) return bytes.status();
  return SafetensorsFile::FromBuffer(*std::move(bytes), name);
}

}  // namespace

absl::StatusOr<std::map<std::string, OwnedTensor>> ReadPytorchBin(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok()) return bytes.status();
  // torch.save's zip format starts with a local file header ("PK\3\4");
  // the legacy format is a bare pickle stream.
  if (bytes->size() < 4 || bytes->compare(0, 4, "PK\x03\x04") != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not in torch.save's zip format (the legacy pickle format is not read: re-save it "
              "with torch.save, or convert it to model.safetensors)"));
  }
  std::map<std::string, OwnedTensor> tensors;
  try {
    const std::vector<char> data(bytes->begin(), bytes->end());
    bytes->clear();
    const c10::IValue root = torch::jit::pickle_load(data);
    if (!root.isGenericDict()) {
      return absl::InvalidArgumentError(absl::StrCat(path, " does not hold a state dict (a name -> tensor map)"));
    }
    for (const auto& entry : root.toGenericDict()) {
      if (!entry.key().isString() || !entry.value().isTensor()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, " is not a flat state dict: every entry must be a name and a tensor"));
      }
      const std::string name = entry.key().toStringRef();
      const at::Tensor tensor = entry.value().toTensor().contiguous().cpu();
      absl::StatusOr<TensorDType> dtype = DTypeOf(tensor, name);
      if (!dtype.ok()) return dtype.status();
      OwnedTensor& out = tensors[name];
      out.dtype = *dtype;
      out.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
      out.bytes.assign(static_cast<const char*>(tensor.data_ptr()), tensor.nbytes());
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": ", what.substr(0, what.find('\n'))));
  }
  return tensors;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> OpenCheckpointWeights(const std::string& dir) {
  const fs::path folder(dir);
  std::error_code error;
  auto has = [&](const char* file) { return fs::exists(folder / file, error); };
  if (has("model.safetensors")) return SafetensorsFile::Open((folder / "model.safetensors").string());
  for (const char* index : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (!has(index)) continue;
    const bool bin = absl::string_view(index).substr(0, 7) == "pytorch";
    absl::StatusOr<std::set<std::string>> shards = ShardsOf((folder / index).string());
    if (!shards.ok()) return shards.status();
    std::map<std::string, OwnedTensor> all;
    for (const std::string& shard : *shards) {
      const std::string path = (folder / shard).string();
      absl::StatusOr<std::map<std::string, OwnedTensor>> tensors = bin ? ReadPytorchBin(path) : CopySafetensors(path);
      if (!tensors.ok()) return tensors.status();
      if (absl::Status s = Merge(*std::move(tensors), path, &all); !s.ok()) return s;
    }
    return FromTensors(all, (folder / index).string());
  }
  if (has("pytorch_model.bin")) {
    const std::string path = (folder / "pytorch_model.bin").string();
    absl::StatusOr<std::map<std::string, OwnedTensor>> tensors = ReadPytorchBin(path);
    if (!tensors.ok()) return tensors.status();
    return FromTensors(*tensors, path);
  }
  return absl::NotFoundError(absl::StrCat(
      "no weights in ", dir,
      ": expected model.safetensors, model.safetensors.index.json, pytorch_model.bin or pytorch_model.bin.index.json"));
}

}  // namespace deberta::model
