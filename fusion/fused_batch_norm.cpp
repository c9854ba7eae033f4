#include "hfta/fusion/fused_batch_norm.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/batch_norm.h"
#include "hfta/fusion/module_cast.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

template <std::size_t D>
FusedBatchNormImpl<D>::FusedBatchNormImpl(std::int64_t models, torch::nn::BatchNormOptions options,
                                          const at::TensorOptions& tensor_options, Layout layout)
    : models_(models), options_(std::move(options)), layout_(layout) {
  if (!options_.momentum().has_value()) {
    throw std::invalid_argument("fused batch norm needs a numeric momentum (not None)");
  }
  const std::int64_t channels = models * options_.num_features();
  if (options_.affine()) {
    weight = register_parameter("weight", at::empty({channels}, tensor_options));
    bias = register_parameter("bias", at::empty({channels}, tensor_options));
  }
  if (options_.track_running_stats()) {
    running_mean = register_buffer("running_mean", at::empty({channels}, tensor_options));
    running_var = register_buffer("running_var", at::empty({channels}, tensor_options));
    num_batches_tracked = register_buffer(
        "num_batches_tracked", at::zeros({models}, tensor_options.dtype(at::kLong)));
  }
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, Plain(options_));
}

template <std::size_t D>
at::Tensor FusedBatchNormImpl<D>::normalize(const at::Tensor& x, std::int64_t slot) {
  // All channels, or model `slot`'s: narrow views update its running statistics in place.
  const std::int64_t c = options_.num_features();
  auto part = [&](const at::Tensor& t) { return t.defined() && slot >= 0 ? t.narrow(0, slot * c, c) : t; };
  if (is_training() || !options_.track_running_stats()) {
    return batch_norm_training(x, part(weight), part(bias), part(running_mean), part(running_var),
                               *options_.momentum(), options_.eps());
  }
  return at::batch_norm(x, part(weight), part(bias), part(running_mean), part(running_var), false,
                        *options_.momentum(), options_.eps(), /*cudnn_enabled=*/true);
}

template <std::size_t D>
StrategyChoice FusedBatchNormImpl<D>::tune(const at::Tensor& example) {
  if (layout_ == Layout::kMatmul && batch_norm_rows_direct(example)) return {};  // one kernel, no choice
  return tune_strategy(*this, example, [this](const at::Tensor& x) { return forward(x); },
                       [this](Strategy s) { strategy_ = s; });
}

template <std::size_t D>
at::Tensor FusedBatchNormImpl<D>::forward(const at::Tensor& x) {
  const bool batch_stats = is_training() || !options_.track_running_stats();
  // The matmul layout's direct kernel computes all B models in one call and
  // leaves no strategy to choose.
  const bool rows = batch_stats && layout_ == Layout::kMatmul && batch_norm_rows_direct(x);
  if (take_tune_request() && models_ > 1) tune(x);
  if (is_training() && options_.track_running_stats()) {
    torch::NoGradGuard no_grad;
    num_batches_tracked.add_(1);
  }
  if (rows) {
    return batch_norm_training_rows(x, weight, bias, running_mean, running_var, *options_.momentum(), options_.eps());
  }
  if (models_ == 1) {
    // [1, N, C, (L)] is one model's batch as it is: no transposes (at this
    // size their autograd nodes cost a third of the op).
    return layout_ == Layout::kConv ? normalize(x, -1) : normalize(x.squeeze(0), -1).unsqueeze(0);
  }
  if (!grouped(strategy_)) {
    // Model by model, each on a contiguous copy of its batch, as an array of
    // that model alone computes it (the same kernel, bit for bit). In the
    // matmul layout a model's gradient then also arrives contiguous, as alone.
    std::vector<at::Tensor> ys;
    const auto xs = layout_ == Layout::kConv ? x.chunk(models_, 1) : x.unbind(0);
    for (std::int64_t b = 0; b < models_; ++b) ys.push_back(normalize(xs[b].contiguous(), b));
    return layout_ == Layout::kConv ? at::cat(ys, 1) : at::stack(ys);
  }
  if (layout_ == Layout::kConv) return normalize(x, -1);
  // [B, N, C, (L)] -> [N, B*C, (L)] -> normalize -> back.
  auto sizes = x.sizes().vec();
  std::vector<std::int64_t> fused = {sizes[1], sizes[0] * sizes[2]};
  if (sizes.size() == 4) fused.push_back(sizes[3]);
  const at::Tensor y = normalize(x.transpose(0, 1).reshape(fused), -1);
  std::vector<std::int64_t> stacked = {sizes[1], sizes[0]};
  stacked.insert(stacked.end(), sizes.begin() + 2, sizes.end());
  return y.view(stacked).transpose(0, 1);
}

template <std::size_t D>
void FusedBatchNormImpl<D>::load_slot(std::int64_t slot, const Plain& plain) {
  torch::NoGradGuard no_grad;
  const std::int64_t c = options_.num_features();
  if (options_.affine()) {
    weight.narrow(0, slot * c, c).copy_(plain->weight);
    bias.narrow(0, slot * c, c).copy_(plain->bias);
  }
  if (options_.track_running_stats()) {
    running_mean.narrow(0, slot * c, c).copy_(plain->running_mean);
    running_var.narrow(0, slot * c, c).copy_(plain->running_var);
    num_batches_tracked[slot].copy_(plain->num_batches_tracked);
  }
}

template <std::size_t D>
typename FusedBatchNormImpl<D>::Plain FusedBatchNormImpl<D>::extract_slot(std::int64_t slot) const {
  Plain plain(options_);
  const at::Tensor& any = options_.affine() ? weight : running_mean;
  if (any.defined()) to_floating(*plain, any.scalar_type(), any.device());
  torch::NoGradGuard no_grad;
  const std::int64_t c = options_.num_features();
  if (options_.affine()) {
    plain->weight.copy_(weight.narrow(0, slot * c, c));
    plain->bias.copy_(bias.narrow(0, slot * c, c));
  }
  if (options_.track_running_stats()) {
    plain->running_mean.copy_(running_mean.narrow(0, slot * c, c));
    plain->running_var.copy_(running_var.narrow(0, slot * c, c));
    plain->num_batches_tracked.copy_(num_batches_tracked[slot]);
  }
  return plain;
}

template <std::size_t D>
void FusedBatchNormImpl<D>::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<Plain>(seed, options_));
}

template class FusedBatchNormImpl<1>;
template class FusedBatchNormImpl<2>;

}  // namespace hfta::fusion
