// A checkpoint folder's weights, whichever format it ships them in:
// model.safetensors; sharded safetensors (model.safetensors.index.json);
// pytorch_model.bin, the zip format `torch.save` writes; sharded .bin
// (pytorch_model.bin.index.json). Declared torch-free; defined in the
// model_torch library, since .bin files are read with LibTorch's own
// unpickler, which builds only tensors and the containers a state dict
// uses (an unknown class is an error): loading a checkpoint never runs
// code.
#ifndef DEBERTA_MODEL_CHECKPOINT_FILES_H_
#define DEBERTA_MODEL_CHECKPOINT_FILES_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "model/safetensors.h"

namespace deberta::model {

// The weights of `dir` as one safetensors view (mapped for a single
// model.safetensors; otherwise assembled in memory, so sharded and .bin
// checkpoints take their size again while loading). NotFound naming the
// files looked for when there are none.
absl::StatusOr<std::unique_ptr<SafetensorsFile>> OpenCheckpointWeights(const std::string& dir);

// The tensors of one pytorch_model.bin (a flat state dict of F32, F16,
// BF16, I64 or I32 tensors). InvalidArgument for anything else, including
// the legacy pre-zip pickle format (convert it with `torch.save` first).
absl::StatusOr<std::map<std::string, OwnedTensor>> ReadPytorchBin(const std::string& path);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_CHECKPOINT_FILES_H_
