// The CPU engine of oneDNN's primitives that this library creates itself
// (PackedLinear, Int8Linear); only for files built with oneDNN.
#ifndef DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_
#define DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_

#include <oneapi/dnnl/dnnl.hpp>

namespace deberta::model {

// One for the process, made on first use; primitives and memories on it
// may be used from any thread.
inline const dnnl::engine& OnednnCpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_
