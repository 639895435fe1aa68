// The CPU engine of oneDNN's primitives that this library creates itself
// (PackedLinear, Int8Linear, CpuAttention), and the weights' reorder into
// a primitive's layout; only for files built with oneDNN.
#ifndef DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_
#define DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_

#include <ATen/ATen.h>
#include <oneapi/dnnl/dnnl.hpp>

namespace deberta::model {

// One for the process, made on first use; primitives and memories on it
// may be used from any thread.
inline const dnnl::engine& OnednnCpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// A linear layer's weights `weight` [out, in] (contiguous, of `type`),
// reordered into `layout` (a primitive's weights_desc for the [in, out]
// matrix): bytes for the primitive's weights argument. Throws dnnl::error.
inline at::Tensor ReorderWeights(const at::Tensor& weight, dnnl::memory::data_type type,
                                 const dnnl::memory::desc& layout) {
  const dnnl::engine& engine = OnednnCpuEngine();
  // weight [out, in] row-major is the [in, out] matrix in layout "ba".
  dnnl::memory source({{weight.size(1), weight.size(0)}, type, dnnl::memory::format_tag::ba}, engine,
                      weight.data_ptr());
  at::Tensor bytes = at::empty({static_cast<int64_t>(layout.get_size())}, at::kByte);
  dnnl::memory target(layout, engine, bytes.data_ptr());
  dnnl::stream stream(engine);
  dnnl::reorder(source, target).execute(stream, source, target);
  stream.wait();
  return bytes;
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ONEDNN_ENGINE_H_
