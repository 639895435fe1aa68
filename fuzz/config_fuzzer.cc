// libFuzzer target: config.json parsing on arbitrary text, then the
// derived sizes the loader uses.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto config = deberta::model::ParseDebertaConfig(std::string(reinterpret_cast<const char*>(data), size));
  if (config.ok()) {
    (void)config->MaxRelativePositions();
    (void)config->labels.size();
  }
  return 0;
}
