#include "hfta/fusion/fused_conv.h"

#include <stdexcept>
#include <type_traits>
#include <variant>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/channels_last_conv.h"
#include "hfta/fusion/dnnl_conv.h"
#include "hfta/fusion/pointwise_conv.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {
namespace {

// LibTorch 1.13's options hold c10::variant, later versions std::variant: the
// using-declarations make both found (the other by argument-dependent lookup).
using std::get;
using std::holds_alternative;

template <std::size_t D>
std::vector<std::int64_t> vec(const torch::ExpandingArray<D>& a) {
  return std::vector<std::int64_t>(a->begin(), a->end());
}

template <std::size_t D, typename Options>
std::vector<std::int64_t> explicit_padding(const Options& o) {
  using Padding = std::decay_t<decltype(o.padding())>;
  if constexpr (std::is_same_v<Padding, torch::ExpandingArray<D>>) {
    return vec(o.padding());  // transposed convolutions: always numbers
  } else {
    // kSame/kValid are enum tags in the variant; fused arrays take explicit numbers.
    if (!holds_alternative<torch::ExpandingArray<D>>(o.padding())) {
      throw std::invalid_argument(
          "fused convolutions take explicit padding (numbers), not 'same' or 'valid'");
    }
    return vec(get<torch::ExpandingArray<D>>(o.padding()));
  }
}

}  // namespace

template <std::size_t D, bool T>
FusedConvImpl<D, T>::FusedConvImpl(std::int64_t models, Options options,
                                   const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)) {
  if (!holds_alternative<torch::enumtype::kZeros>(options_.padding_mode())) {
    throw std::invalid_argument("fused convolutions support zero padding only");
  }
  Plain prototype(options_);
  auto w = prototype->weight.sizes().vec();
  w[0] *= models;
  weight = register_parameter("weight", at::empty(w, tensor_options));
  if (options_.bias()) {
    bias = register_parameter("bias", at::empty({models * prototype->bias.size(0)}, tensor_options));
  }
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, Plain(options_));
}

// The named convolution ops, not the generic one: autocast lists them
// (conv1d, conv2d, conv_transpose1d/2d), so under mixed precision an array's
// convolutions run in the half type, as the plain modules' do.
template <std::size_t D, bool T>
at::Tensor convolve(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::IntArrayRef stride,
                    at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding,
                    std::int64_t groups) {
  static_assert(D == 1 || D == 2, "1-D and 2-D convolutions");
  if constexpr (T && D == 1) return at::conv_transpose1d(x, w, b, stride, padding, output_padding, groups, dilation);
  if constexpr (T && D == 2) return at::conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation);
  if constexpr (!T && D == 1) return at::conv1d(x, w, b, stride, padding, dilation, groups);
  if constexpr (!T && D == 2) return at::conv2d(x, w, b, stride, padding, dilation, groups);
}

template <std::size_t D, bool T>
std::int64_t FusedConvImpl<D, T>::rows_per_model() const {
  return weight.size(0) / models_;
}

template <std::size_t D, bool T>
ConvGeometry FusedConvImpl<D, T>::geometry() const {
  return {vec(options_.stride()), explicit_padding<D>(options_), vec(options_.dilation()), options_.groups()};
}

template <std::size_t D, bool T>
typename FusedConvImpl<D, T>::Path FusedConvImpl<D, T>::path(const at::Tensor& x) const {
  if constexpr (T) {
    // oneDNN's deconvolution model by model, in place (dnnl_conv.h).
    const bool dnnl = dnnl_conv_transpose_applies(x, weight, geometry(), vec(options_.output_padding()));
    return dnnl ? Path::kModelByModel : Path::kGeneric;
  } else {
    const ConvGeometry g = geometry();
    const bool unit = [&] {
      for (std::size_t d = 0; d < D; ++d) {
        if ((*options_.kernel_size())[d] != 1 || g.stride[d] != 1 || g.padding[d] != 0) return false;
      }
      return true;
    }();
    // 1x1 on small maps (MobileNetV3's late layers, squeeze-and-excitation's
    // one pixel): products per model. From 64 pixels an image (PointNet's 128
    // points) oneDNN's 1x1 kernel, in place below: the products' transposes of
    // every pixel into rows and back left PointNet at 0.62x-0.71x of the
    // serial loop, oneDNN at 1.17x-1.21x; MobileNetV3 alike either way.
    std::int64_t pixels = 1;
    for (std::int64_t d = 2; d < x.dim(); ++d) pixels *= x.size(d);
    const bool small_map = pixels < 64 || !dnnl_conv_applies(x, weight, g);
    if (unit && options_.groups() == 1 && small_map && pointwise_applies(x)) return Path::kPointwise;
    // One group: oneDNN's own kernels model by model, in place (dnnl_conv.h).
    // For LeNet's 6 input channels 1.0x-1.1x of the per-model loop at every B,
    // where channels-last fell to 0.77x at B = 64 (fused_ops_bench).
    if (options_.groups() == 1 && dnnl_conv_applies(x, weight, g)) return Path::kModelByModel;
    if (D == 2 && channels_last_applies(x, options_.in_channels() / options_.groups(), options_.groups())) {
      return direct_depthwise(x, weight, g, models_) ? Path::kDirectDepthwise : Path::kChannelsLast;
    }
    // oneDNN's blocked NCHW kernels (input channels in 8s) sum a model's
    // channels in another order grouped than alone (fused_conv_test.cpp), so on
    // CPU those convolutions run model by model, as alike at any B.
    if (x.is_cpu() && x.scalar_type() == at::kFloat) return Path::kModelByModel;
    return Path::kGeneric;
  }
}

template <std::size_t D, bool T>
at::Tensor FusedConvImpl<D, T>::forward(const at::Tensor& x) {
  if (take_tune_request() && models_ > 1) tune(x);
  std::vector<std::int64_t> output_padding(D, 0);
  if constexpr (T) output_padding = vec(options_.output_padding());
  const ConvGeometry g = geometry();
  const Path p = path(x);
  if (p == Path::kPointwise) return pointwise_conv(x, weight, bias, models_);
  if (p == Path::kChannelsLast || p == Path::kDirectDepthwise) {
    return channels_last_conv2d(x, weight, bias, g, models_, grouped(strategy_));
  }
  // Model by model, in place by oneDNN (dnnl_conv.h): at any B, an array of
  // one included, so that a model computes alike in every array.
  if constexpr (T) {
    if (p == Path::kModelByModel) return dnnl_conv_transpose(x, weight, bias, g, output_padding, models_);
  } else if (p == Path::kModelByModel && dnnl_conv_applies(x, weight, g)) {
    return dnnl_conv(x, weight, bias, g, models_);
  }
  if ((p == Path::kGeneric && grouped(strategy_)) || models_ == 1) {
    return convolve<D, T>(x, weight, bias, g.stride, g.padding, g.dilation, output_padding, g.groups * models_);
  }
  // Model by model on its own channels, copied out; the outputs side by side again.
  const auto xs = x.chunk(models_, 1);
  const auto ws = weight.chunk(models_, 0);
  const auto bs = bias.defined() ? bias.chunk(models_, 0) : std::vector<at::Tensor>(models_);
  std::vector<at::Tensor> ys;
  for (std::int64_t b = 0; b < models_; ++b) {
    ys.push_back(convolve<D, T>(xs[b], ws[b], bs[b], g.stride, g.padding, g.dilation, output_padding, g.groups));
  }
  return at::cat(ys, 1);
}

template <std::size_t D, bool T>
at::Tensor FusedConvImpl<D, T>::forward_shared(const at::Tensor& x) {
  if (T || options_.groups() != 1) {
    std::vector<std::int64_t> repeats(static_cast<std::size_t>(x.dim()), 1);
    repeats[1] = models_;
    return forward(models_ == 1 ? x : x.repeat(repeats));
  }
  // Every model reads the same channels: one ordinary convolution per model
  // on the shared input, in the conv layout. Not one with all B models'
  // filters as its output channels: oneDNN splits that weight gradient's sums
  // by the channel count, so a model's first layer learned differently in
  // arrays of eight than alone.
  const ConvGeometry g = geometry();
  if (!x.requires_grad() && dnnl_conv_applies(x, weight, g)) return dnnl_conv(x, weight, bias, g, models_, true);
  const std::vector<std::int64_t> no_output_padding(D, 0);
  if (models_ == 1) return convolve<D, false>(x, weight, bias, g.stride, g.padding, g.dilation, no_output_padding, 1);
  const std::int64_t rows = rows_per_model();
  std::vector<at::Tensor> ys;
  for (std::int64_t b = 0; b < models_; ++b) {
    ys.push_back(convolve<D, false>(x, weight.narrow(0, b * rows, rows), bias.defined() ? bias.narrow(0, b * rows, rows) : bias,
                                    g.stride, g.padding, g.dilation, no_output_padding, 1));
  }
  return at::cat(ys, 1);
}

template <std::size_t D, bool T>
StrategyChoice FusedConvImpl<D, T>::tune(const at::Tensor& example) {
  const Path p = path(example);
  if (models_ == 1 || (p != Path::kGeneric && p != Path::kChannelsLast)) {
    return {strategy_, {}};  // one way to compute it: nothing to measure
  }
  return tune_strategy(*this, example, [this](const at::Tensor& x) { return forward(x); },
                       [this](Strategy s) { strategy_ = s; });
}

template <std::size_t D, bool T>
void FusedConvImpl<D, T>::load_slot(std::int64_t slot, const Plain& plain) {
  torch::NoGradGuard no_grad;
  const std::int64_t rows = rows_per_model();
  weight.narrow(0, slot * rows, rows).copy_(plain->weight);
  if (options_.bias()) {
    const std::int64_t out = bias.size(0) / models_;
    bias.narrow(0, slot * out, out).copy_(plain->bias);
  }
}

template <std::size_t D, bool T>
typename FusedConvImpl<D, T>::Plain FusedConvImpl<D, T>::extract_slot(std::int64_t slot) const {
  Plain plain(options_);
  plain->to(weight.device(), weight.scalar_type());
  torch::NoGradGuard no_grad;
  const std::int64_t rows = rows_per_model();
  plain->weight.copy_(weight.narrow(0, slot * rows, rows));
  if (options_.bias()) {
    const std::int64_t out = bias.size(0) / models_;
    plain->bias.copy_(bias.narrow(0, slot * out, out));
  }
  return plain;
}

template <std::size_t D, bool T>
void FusedConvImpl<D, T>::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<Plain>(seed, options_));
}

template class FusedConvImpl<1, false>;
template class FusedConvImpl<2, false>;
template class FusedConvImpl<2, true>;

}  // namespace hfta::fusion
