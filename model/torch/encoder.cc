// DeBERTa encoder and ConvLayer.
#include "model/torch/encoder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "model/status_macros.h"

namespace deberta::model {

ConvLayerImpl::ConvImpl::ConvImpl(int64_t channels, int64_t groups, int64_t kernel) {
  weight = register_parameter("weight", at::zeros({channels, channels / groups, kernel}),
                              /*requires_grad=*/false);
  bias = register_parameter("bias", at::zeros({channels}), /*requires_grad=*/false);
}

ConvLayerImpl::ConvLayerImpl(const DebertaConfig& config)
    : activation_(ActivationFromName(config.conv_act)),
      groups_(config.conv_groups),
      kernel_(config.conv_kernel_size) {
  conv = register_module("conv", std::make_shared<ConvImpl>(config.hidden_size, groups_, kernel_));
  LayerNorm = register_module("LayerNorm", Norm(config.hidden_size, config.layer_norm_eps));
}

at::Tensor ConvLayerImpl::forward(const at::Tensor& embeddings, const at::Tensor& layer_output,
                                  const at::Tensor& mask) const {
  // Conv1d over the sequence axis with "same" zero padding.
  at::Tensor c = at::conv1d(embeddings.transpose(1, 2), conv->weight, conv->bias, /*stride=*/{1},
                            /*padding=*/{(kernel_ - 1) / 2}, /*dilation=*/{1}, groups_)
                     .transpose(1, 2);
  const at::Tensor m = mask.unsqueeze(-1);
  c = Activate(activation_, c * m);  // Masked before the activation.
  return LayerNorm->forward(layer_output + c) * m;
}

EncoderImpl::EncoderImpl(const DebertaConfig& config) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    layers_.push_back(EncoderLayer(config));
    layer->push_back(layers_.back());
  }
  if (config.relative_attention) {
    rel_embeddings = register_module("rel_embeddings",
                                     Embedding(2 * config.RelativeSpan(), config.hidden_size));
    if (config.norm_rel_ebd_layer_norm) {
      LayerNorm = register_module("LayerNorm", Norm(config.hidden_size, config.layer_norm_eps));
    }
  }
  if (config.conv_kernel_size > 0) conv = register_module("conv", ConvLayer(config));
}

void EncoderImpl::Prepare(at::ScalarType compute_dtype) {
  if (rel_embeddings) {
    relative_table_ = rel_embeddings->weight;
    if (LayerNorm) relative_table_ = LayerNorm->forward(relative_table_);
  }
  for (auto& l : layers_) l->attention->self->Prepare(relative_table_, compute_dtype);
}

void EncoderImpl::QuantizeLayersToInt8() {
  for (auto& l : layers_) {
    l->attention->self->QuantizeToInt8();
    l->attention->output->dense->QuantizeToInt8();
    l->intermediate->dense->QuantizeToInt8(/*then=*/l->activation());
    l->output->dense->QuantizeToInt8();
  }
}

void EncoderImpl::PackLayersForCpu() {
  for (size_t i = 0; i < layers_.size(); ++i) {
    // EMD runs the last layer with queries apart from keys and values.
    layers_[i]->attention->self->PackForCpu(/*split=*/i + 1 == layers_.size());
    layers_[i]->intermediate->dense->PackForCpu(/*then=*/layers_[i]->activation());
  }
}

absl::StatusOr<std::vector<at::Tensor>> EncoderImpl::forward(const at::Tensor& embeddings, AttentionContext& ctx,
                                                             LiveRows& live, bool keep_all,
                                                             bool first_position_only) const {
  std::vector<at::Tensor> states{embeddings};
  at::Tensor x0 = embeddings;  // The ConvLayer's input after layer 0.
  at::Tensor h = embeddings;
  // Rows no longer wanted are dropped before each of a layer's three parts
  // of similar cost (attention with its projections, the feed-forward's up
  // and its down product: 4, 4 and 4 H^2 per token), so a gone caller
  // costs at most a third of a layer.
  auto drop_unwanted = [&](std::initializer_list<at::Tensor*> current) {
    std::vector<at::Tensor*> per_row(current);
    per_row.push_back(&x0);
    for (at::Tensor& state : states) per_row.push_back(&state);
    return live.DropUnwanted(&ctx.padding, per_row);
  };
  for (size_t k = 0; k < layers_.size(); ++k) {
    DEBERTA_RETURN_IF_ERROR(drop_unwanted({&h}));
    // The ConvLayer after layer 0 reads every position of its output.
    const bool first_only = first_position_only && k + 1 == layers_.size() && !(k == 0 && conv);
    at::Tensor a = first_only ? layers_[k]->attention->forward(h.narrow(1, 0, 1), h, FirstQueryContext(ctx))
                              : layers_[k]->attention->forward(h, h, ctx);
    DEBERTA_RETURN_IF_ERROR(drop_unwanted({&a}));
    at::Tensor up = layers_[k]->FeedForwardUp(a);
    DEBERTA_RETURN_IF_ERROR(drop_unwanted({&up, &a}));
    h = layers_[k]->FeedForwardDown(up, a);
    if (k == 0 && conv) h = conv->forward(x0, h, ctx.padding.mask);
    if (!keep_all && states.size() > 1) states.erase(states.begin());
    states.push_back(h);
  }
  return states;
}

namespace {

// The lengths whose attention primitives the kernel warm-up makes.
constexpr int64_t kWarmLengths = 128;

}  // namespace

void EncoderImpl::WarmUpKernels(const DebertaConfig& config, int64_t max_length, bool every_length) const {
  if (layers_.empty() || max_length < 1) return;
  const EncoderLayer& first = layers_.front();
  const EncoderLayer& last = layers_.back();
  // Every layer's products have the shapes of the first's, and the last
  // also has its queries apart from keys and values (EMD's).
  for (const EncoderLayer* l : {&first, &last}) {
    (*l)->attention->self->PrepareProjectionRowGrid();
    (*l)->attention->output->dense->PrepareRowGrid();
    (*l)->intermediate->dense->PrepareRowGrid(/*in_compute_dtype=*/true);  // FeedForwardUp's.
    (*l)->output->dense->PrepareRowGrid();
  }
  if (!every_length) return;
  // Each cached primitive holds tens to hundreds of KiB (JIT code); past
  // kWarmLengths a first length's four attention primitives cost under a
  // tenth of its forward, so those are left to their first batch.
  for (int64_t length = 1; length <= std::min(max_length, kWarmLengths); ++length) {
    const at::Tensor h = at::zeros({1, length, config.hidden_size});
    const AttentionContext ctx = MakeAttentionContext(config, at::ones({1, length}));
    first->attention->self->PrepareCpuAttentionKernels(ctx);
    // LibTorch's products for a query at position 0 alone (kFirstOnly) make theirs on their first run.
    last->attention->forward(h.narrow(1, 0, 1), h, FirstQueryContext(ctx));
  }
}

at::Tensor EncoderImpl::RunLayer(int64_t k, const at::Tensor& query_states,
                                 const at::Tensor& key_value_states,
                                 const AttentionContext& ctx) const {
  return layers_[k]->forward(query_states, key_value_states, ctx);
}

}  // namespace deberta::model
