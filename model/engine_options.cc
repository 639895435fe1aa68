// String conversions for EngineOptions fields.
#include "model/engine_options.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace deberta::model {

absl::StatusOr<ComputeDType> ParseComputeDType(absl::string_view name) {
  if (name == "float32" || name == "fp32") return ComputeDType::kFloat32;
  if (name == "bfloat16" || name == "bf16") return ComputeDType::kBFloat16;
  if (name == "float16" || name == "fp16") return ComputeDType::kFloat16;
  if (name == "int8") return ComputeDType::kInt8;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (expected float32, bfloat16, float16 or int8)"));
}

const char* ComputeDTypeName(ComputeDType dtype) {
  switch (dtype) {
    case ComputeDType::kFloat32: return "float32";
    case ComputeDType::kBFloat16: return "bfloat16";
    case ComputeDType::kFloat16: return "float16";
    case ComputeDType::kInt8: return "int8";
  }
  return "?";
}

absl::StatusOr<EmdMode> ParseEmdMode(absl::string_view name) {
  if (name == "auto") return EmdMode::kAuto;
  if (name == "emd") return EmdMode::kEmd;
  if (name == "plain") return EmdMode::kPlain;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown EMD mode '", name, "' (expected auto, emd or plain)"));
}

const char* EmdModeName(EmdMode mode) {
  switch (mode) {
    case EmdMode::kAuto: return "auto";
    case EmdMode::kEmd: return "emd";
    case EmdMode::kPlain: return "plain";
  }
  return "?";
}

absl::StatusOr<std::vector<BatchShape>> ParseShapes(absl::string_view text) {
  std::vector<BatchShape> shapes;
  if (text.empty()) return shapes;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, 'x');
    BatchShape shape;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &shape.batch_size) ||
        !absl::SimpleAtoi(parts[1], &shape.length) || shape.batch_size < 1 || shape.length < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad shape '", item, "' (expected SEQUENCESxTOKENS, both >= 1, e.g. 16x128)"));
    }
    shapes.push_back(shape);
  }
  return shapes;
}

std::string FormatShapes(const std::vector<BatchShape>& shapes) {
  return absl::StrJoin(shapes, ",", [](std::string* out, const BatchShape& s) {
    absl::StrAppend(out, s.batch_size, "x", s.length);
  });
}

std::optional<BatchShape> SmallestBucket(const std::vector<BatchShape>& buckets, BatchShape batch) {
  std::optional<BatchShape> best;
  for (const BatchShape& bucket : buckets) {
    if (bucket.batch_size < batch.batch_size || bucket.length < batch.length) continue;
    const int64_t tokens = bucket.batch_size * bucket.length;
    if (!best || tokens < best->batch_size * best->length ||
        (tokens == best->batch_size * best->length && bucket.length < best->length)) {
      best = bucket;
    }
  }
  return best;
}

}  // namespace deberta::model
