// B convolutions as one grouped convolution (conv layout [N, B*C, ...]).
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/channels_last_conv.h"
#include "hfta/fusion/strategy.h"

namespace hfta::fusion {

/// The plain LibTorch module a fused convolution of each kind mirrors.
template <std::size_t D, bool Transposed>
struct PlainConv;
template <> struct PlainConv<1, false> { using Module = torch::nn::Conv1d; using Options = torch::nn::Conv1dOptions; };
template <> struct PlainConv<2, false> { using Module = torch::nn::Conv2d; using Options = torch::nn::Conv2dOptions; };
template <> struct PlainConv<2, true> { using Module = torch::nn::ConvTranspose2d; using Options = torch::nn::ConvTranspose2dOptions; };

/// Layout: [N, B*C_in, ...spatial] -> [N, B*C_out, ...spatial'] (conv layout).
/// Parameters: weight [B*C_out, C_in/groups, ...kernel] (transposed convolution:
/// [B*C_in, C_out/groups, ...kernel]); slot b owns the b-th block of rows. bias [B*C_out].
/// One convolution with B*groups groups computes every model. Zero padding only.
template <std::size_t D, bool Transposed>
class FusedConvImpl : public torch::nn::Module, public StrategicOp {
 public:
  using Plain = typename PlainConv<D, Transposed>::Module;
  using Options = typename PlainConv<D, Transposed>::Options;

  FusedConvImpl(std::int64_t models, Options options, const at::TensorOptions& tensor_options = {});

  at::Tensor forward(const at::Tensor& x);
  /// The same for an input every model shares, [N, C_in, ...] (not repeated B
  /// times): one ungrouped convolution per model when the plain one has one group.
  at::Tensor forward_shared(const at::Tensor& x);

  void load_slot(std::int64_t slot, const Plain& plain);
  Plain extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);

  std::int64_t models() const { return models_; }
  const Options& plain_options() const { return options_; }

  /// Measures one grouped convolution against B separate ones on `example`
  /// (an input of the array's shape) and keeps the faster, where the path
  /// offers both (channels-last, generic) and B > 1.
  StrategyChoice tune(const at::Tensor& example);

  at::Tensor weight;
  at::Tensor bias;

 private:
  std::int64_t rows_per_model() const;
  /// How input x is computed, from the layer's and the input's shape alone
  /// (never from B), so that a model computes alike in an array of any size.
  enum class Path {
    kPointwise,        ///< a 1x1 convolution as products per model (pointwise_conv.h)
    kChannelsLast,     ///< grouped or per model, channels-last (channels_last_conv.h)
    kDirectDepthwise,  ///< the direct NCHW depthwise kernels, all B at once
    kModelByModel,     ///< oneDNN's kernels, one call per model (in place: dnnl_conv.h)
    kGeneric,          ///< LibTorch's kernel, grouped or per model (other devices, transposed)
  };
  Path path(const at::Tensor& x) const;
  ConvGeometry geometry() const;
  std::int64_t models_;
  Options options_;
};

using FusedConv1dImpl = FusedConvImpl<1, false>;
using FusedConv2dImpl = FusedConvImpl<2, false>;
using FusedConvTranspose2dImpl = FusedConvImpl<2, true>;
TORCH_MODULE(FusedConv1d);
TORCH_MODULE(FusedConv2d);
TORCH_MODULE(FusedConvTranspose2d);

}  // namespace hfta::fusion
