// libFuzzer target: the safetensors reader on arbitrary bytes. Every view
// it hands out must lie inside the buffer (ASan checks the reads).
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = deberta::model::SafetensorsFile::FromBuffer(std::string(reinterpret_cast<const char*>(data), size),
                                                          "fuzz");
  if (!file.ok()) return 0;
  uint64_t sum = 0;
  for (const std::string& name : (*file)->Names()) {
    auto view = (*file)->Get(name);
    if (!view.ok()) continue;
    for (size_t i = 0; i < view->num_bytes; ++i) sum += view->data[i];
    (void)view->NumElements();
  }
  return sum == 1 ? 0 : 0;
}
