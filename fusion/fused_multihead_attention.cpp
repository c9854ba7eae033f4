#include "hfta/fusion/fused_multihead_attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/batched_matmul.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedMultiheadAttentionImpl::FusedMultiheadAttentionImpl(
    std::int64_t models, torch::nn::MultiheadAttentionOptions options,
    const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)) {
  const std::int64_t e = options_.embed_dim();
  if (options_.kdim() != e || options_.vdim() != e || options_.add_bias_kv() ||
      options_.add_zero_attn()) {
    throw std::invalid_argument(
        "fused attention supports kdim = vdim = embed_dim without add_bias_kv or add_zero_attn");
  }
  if (e % options_.num_heads() != 0) {
    throw std::invalid_argument("embed_dim must be divisible by num_heads");
  }
  in_proj = register_module("in_proj", FusedLinear(models, e, 3 * e, options_.bias(), tensor_options));
  out_proj = register_module("out_proj", FusedLinear(models, e, e, options_.bias(), tensor_options));
  attn_dropout = register_module(
      "attn_dropout", FusedDropout(std::vector<double>(models, options_.dropout()), Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) {
    load_slot(b, torch::nn::MultiheadAttention(options_));
  }
}

std::tuple<at::Tensor, at::Tensor> FusedMultiheadAttentionImpl::forward(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const at::Tensor& key_padding_mask, bool need_weights, const at::Tensor& attn_mask) {
  const std::int64_t m = models_, n = query.size(1), l = query.size(2), s = key.size(2);
  const std::int64_t e = options_.embed_dim(), h = options_.num_heads(), dh = e / h;
  const auto& w = in_proj->weight;
  const auto& bias = in_proj->bias;
  // Projections: one batched product for q, k and v when they are the same tensor.
  auto project = [&](const at::Tensor& x, std::int64_t from, std::int64_t width) {
    const at::Tensor flat = x.reshape({m, -1, e});
    const at::Tensor wt = w.narrow(2, from, width);
    return batched_matmul(flat, wt, bias.defined() ? bias.narrow(1, from, width) : at::Tensor());
  };
  at::Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {
    const auto qkv = project(query, 0, 3 * e).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    q = project(query, 0, e);
    k = project(key, e, e);
    v = project(value, 2 * e, e);
  }
  q = q * (1.0 / std::sqrt(static_cast<double>(dh)));  // as LibTorch scales q
  // [B, N*L, E] -> [B*N*H, L, Dh]: each (model, sample, head) attends on its own.
  auto heads = [&](const at::Tensor& t, std::int64_t len) {
    return t.reshape({m, n, len, h, dh}).permute({0, 1, 3, 2, 4}).reshape({m * n * h, len, dh});
  };
  at::Tensor scores = batched_matmul(heads(q, l), heads(k, s).transpose(1, 2));  // [B*N*H, L, S]
  if (attn_mask.defined()) {
    if (attn_mask.scalar_type() == at::kBool) {
      scores = scores.masked_fill(attn_mask, -std::numeric_limits<double>::infinity());
    } else {
      scores = scores + attn_mask;
    }
  }
  if (key_padding_mask.defined()) {
    scores = scores.view({m, n, h, l, s})
                 .masked_fill(key_padding_mask.view({1, n, 1, 1, s}),
                              -std::numeric_limits<double>::infinity())
                 .view({m * n * h, l, s});
  }
  at::Tensor weights = at::softmax(scores, -1);
  const at::Tensor dropped = attn_dropout->forward(weights.view({m, n * h, l, s})).view({m * n * h, l, s});
  const at::Tensor context = batched_matmul(dropped, heads(v, s))
                                 .view({m, n, h, l, dh})
                                 .permute({0, 1, 3, 2, 4})
                                 .reshape({m, n, l, e});
  const at::Tensor out = out_proj->forward(context);
  if (!need_weights) return {out, at::Tensor()};
  return {out, weights.view({m, n, h, l, s}).mean(2)};
}

void FusedMultiheadAttentionImpl::load_slot(std::int64_t slot,
                                            const torch::nn::MultiheadAttention& plain) {
  in_proj->load_slot(slot, plain->in_proj_weight, plain->in_proj_bias);
  out_proj->load_slot(slot, plain->out_proj);
}

torch::nn::MultiheadAttention FusedMultiheadAttentionImpl::extract_slot(std::int64_t slot) const {
  torch::nn::MultiheadAttention plain(options_);
  plain->to(in_proj->weight.device(), in_proj->weight.scalar_type());
  torch::NoGradGuard no_grad;
  const auto [w, b] = in_proj->slot_tensors(slot);
  plain->in_proj_weight.copy_(w);
  if (b.defined()) plain->in_proj_bias.copy_(b);
  const auto [ow, ob] = out_proj->slot_tensors(slot);
  plain->out_proj->weight.copy_(ow);
  if (ob.defined()) plain->out_proj->bias.copy_(ob);
  return plain;
}

void FusedMultiheadAttentionImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<torch::nn::MultiheadAttention>(seed, options_));
}

}  // namespace hfta::fusion
