// Safetensors reader (mmap, validated) and writer.
#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/status_macros.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

using json = nlohmann::json;

// Headers above this are rejected before parsing (the format's own limit).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

absl::StatusOr<TensorDType> ParseDType(const std::string& name) {
  if (name == "F32") return TensorDType::kF32;
  if (name == "F16") return TensorDType::kF16;
  if (name == "BF16") return TensorDType::kBF16;
  if (name == "I64") return TensorDType::kI64;
  if (name == "I32") return TensorDType::kI32;
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype '", name, "' (supported: F32, F16, BF16, I64, I32)"));
}

uint64_t ReadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

const char* TensorDTypeName(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::kF32: return "F32";
    case TensorDType::kF16: return "F16";
    case TensorDType::kBF16: return "BF16";
    case TensorDType::kI64: return "I64";
    case TensorDType::kI32: return "I32";
  }
  return "?";
}

size_t TensorDTypeSize(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::kF32: case TensorDType::kI32: return 4;
    case TensorDType::kF16: case TensorDType::kBF16: return 2;
    case TensorDType::kI64: return 8;
  }
  return 0;
}

int64_t TensorView::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_ != nullptr) munmap(mapping_, size_);
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot stat ", path));
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->name_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* mapping = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping == MAP_FAILED) {
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot mmap ", path, ": ", strerror(errno)));
    }
    file->mapping_ = mapping;
    file->bytes_ = static_cast<const uint8_t*>(mapping);
  }
  ::close(fd);
  DEBERTA_RETURN_IF_ERROR(file->Parse());
  return file;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::FromBuffer(std::string buffer,
                                                                             std::string name) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->name_ = std::move(name);
  file->owned_buffer_ = std::move(buffer);
  file->bytes_ = reinterpret_cast<const uint8_t*>(file->owned_buffer_.data());
  file->size_ = file->owned_buffer_.size();
  DEBERTA_RETURN_IF_ERROR(file->Parse());
  return file;
}

absl::Status SafetensorsFile::Parse() {
  auto corrupt = [this](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(name_, ": not a valid safetensors file: ", why));
  };
  if (size_ < 8) return corrupt(absl::StrCat("file has ", size_, " bytes, fewer than the 8-byte header length"));
  uint64_t header_len = ReadLittleEndian64(bytes_);
  if (header_len > kMaxHeaderBytes) {
    return corrupt(absl::StrCat("header length ", header_len, " exceeds the 100 MiB limit"));
  }
  if (header_len > size_ - 8) {
    return corrupt(absl::StrCat("header length ", header_len, " runs past the end of the file (",
                                size_, " bytes; truncated?)"));
  }
  const char* header_begin = reinterpret_cast<const char*>(bytes_ + 8);
  json header = json::parse(header_begin, header_begin + header_len, /*cb=*/nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return corrupt("header is not a JSON object");

  const uint8_t* data = bytes_ + 8 + header_len;
  const uint64_t data_size = size_ - 8 - header_len;
  for (const auto& [key, entry] : header.items()) {
    if (key == "__metadata__") {
      if (!entry.is_object()) return corrupt("__metadata__ is not an object");
      for (const auto& [mk, mv] : entry.items()) {
        if (mv.is_string()) metadata_[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string& name = key;  // A lambda may not capture a structured binding before C++20.
    auto bad = [&](absl::string_view why) { return corrupt(absl::StrCat("tensor '", name, "': ", why)); };
    if (!entry.is_object()) return bad("entry is not an object");
    auto dtype_it = entry.find("dtype");
    auto shape_it = entry.find("shape");
    auto offsets_it = entry.find("data_offsets");
    if (dtype_it == entry.end() || !dtype_it->is_string()) return bad("missing dtype");
    if (shape_it == entry.end() || !shape_it->is_array()) return bad("missing shape");
    if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
      return bad("data_offsets must be [begin, end]");
    }
    auto dtype = ParseDType(dtype_it->get<std::string>());
    if (!dtype.ok()) return bad(dtype.status().message());
    TensorView view;
    view.dtype = *dtype;
    uint64_t elements = 1;
    for (const json& d : *shape_it) {
      if (!d.is_number_unsigned()) return bad("shape entries must be non-negative integers");
      uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && elements > std::numeric_limits<uint64_t>::max() / 16 / dim) {
        return bad("shape is too large");
      }
      elements *= dim;
      view.shape.push_back(static_cast<int64_t>(dim));
    }
    const json& b = (*offsets_it)[0];
    const json& e = (*offsets_it)[1];
    if (!b.is_number_unsigned() || !e.is_number_unsigned()) {
      return bad("data_offsets must be non-negative integers");
    }
    uint64_t begin = b.get<uint64_t>(), end = e.get<uint64_t>();
    if (begin > end || end > data_size) {
      return bad(absl::StrCat("data_offsets [", begin, ", ", end, "] outside the ", data_size,
                              "-byte data section (truncated?)"));
    }
    uint64_t expected = elements * TensorDTypeSize(view.dtype);
    if (end - begin != expected) {
      return bad(absl::StrCat("holds ", end - begin, " bytes but dtype ", TensorDTypeName(view.dtype),
                              " and its shape need ", expected));
    }
    view.data = data + begin;
    view.num_bytes = static_cast<size_t>(expected);
    tensors_.emplace(key, std::move(view));
  }
  return absl::OkStatus();
}

std::vector<std::string> SafetensorsFile::Names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, view] : tensors_) names.push_back(name);
  return names;
}

absl::StatusOr<TensorView> SafetensorsFile::Get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    return absl::NotFoundError(absl::StrCat(name_, ": no tensor named '", name, "'"));
  }
  return it->second;
}

absl::StatusOr<std::string> SerializeSafetensors(
    const std::map<std::string, OwnedTensor>& tensors,
    const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    uint64_t elements = 1;
    for (int64_t d : t.shape) elements *= static_cast<uint64_t>(d);
    if (elements * TensorDTypeSize(t.dtype) != t.bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': ", t.bytes.size(),
                                                     " bytes do not match its shape"));
    }
    header[name] = {{"dtype", TensorDTypeName(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string header_text = header.dump();
  // Pad the header with spaces so the data section starts 8-byte aligned.
  while ((header_text.size() + 8) % 8 != 0) header_text.push_back(' ');
  std::string out;
  out.reserve(8 + header_text.size() + offset);
  uint64_t len = header_text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += header_text;
  for (const auto& [name, t] : tensors) out += t.bytes;
  return out;
}

absl::Status WriteSafetensors(const std::string& path,
                              const std::map<std::string, OwnedTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  DEBERTA_ASSIGN_OR_RETURN(std::string bytes, SerializeSafetensors(tensors, metadata));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("failed writing ", path));
  return absl::OkStatus();
}

}  // namespace deberta::model
