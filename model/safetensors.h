// Reading and writing the safetensors format: an 8-byte little-endian header
// length, a JSON header mapping tensor names to dtype, shape and byte offsets,
// then the raw little-endian data. The reader memory-maps the file and
// validates every offset before handing out views, so a truncated or corrupt
// file is an error, never an out-of-bounds read. Torch-free.
#ifndef DEBERTA_MODEL_SAFETENSORS_H_
#define DEBERTA_MODEL_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deberta::model {

enum class TensorDType { kF32, kF16, kBF16, kI64, kI32 };

// "F32", "F16", "BF16", "I64", "I32".
const char* TensorDTypeName(TensorDType dtype);
size_t TensorDTypeSize(TensorDType dtype);

// A read-only view of one tensor inside a SafetensorsFile. Valid as long as
// the file object that produced it.
struct TensorView {
  TensorDType dtype = TensorDType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t num_bytes = 0;

  int64_t NumElements() const;
};

// An open safetensors file (or in-memory buffer). Immutable after Open, so
// concurrent readers are safe. Owns the mapping; views die with it.
class SafetensorsFile {
 public:
  // Maps `path`. NotFound if it cannot be opened; DataLoss if the header or
  // any tensor's offsets are invalid.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  // Parses a buffer held in memory (takes ownership). Same checks as Open.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> FromBuffer(std::string buffer,
                                                                     std::string name);

  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  // Names of all tensors, sorted.
  std::vector<std::string> Names() const;
  bool Contains(const std::string& name) const { return tensors_.count(name) > 0; }
  // NotFound when absent.
  absl::StatusOr<TensorView> Get(const std::string& name) const;
  // The "__metadata__" string map of the header.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Path or buffer name, for messages.
  const std::string& name() const { return name_; }

 private:
  SafetensorsFile() = default;
  absl::Status Parse();

  std::string name_;
  const uint8_t* bytes_ = nullptr;  // Whole file.
  size_t size_ = 0;
  void* mapping_ = nullptr;         // munmap'ed in the destructor when set.
  std::string owned_buffer_;        // Backing store for FromBuffer.
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: raw little-endian bytes of the given dtype and shape.
struct OwnedTensor {
  TensorDType dtype = TensorDType::kF32;
  std::vector<int64_t> shape;
  std::string bytes;
};

// Serializes `tensors` (written in name order) and `metadata` into the
// safetensors byte layout. InvalidArgument if a tensor's byte count does not
// match its shape.
absl::StatusOr<std::string> SerializeSafetensors(
    const std::map<std::string, OwnedTensor>& tensors,
    const std::map<std::string, std::string>& metadata = {});

// SerializeSafetensors, then writes the result to `path`.
absl::Status WriteSafetensors(const std::string& path,
                              const std::map<std::string, OwnedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_SAFETENSORS_H_
