#include "hfta/fusion/channels_last_conv.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "hfta/fusion/depthwise.h"
#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Conv {
  const ConvGeometry& g;
  std::int64_t models;
  bool direct;  ///< a depthwise convolution the direct NCHW kernels compute (direct_depthwise)
  at::MemoryFormat format() const { return direct ? at::MemoryFormat::Contiguous : at::MemoryFormat::ChannelsLast; }

  /// Model b's channels [b*size, (b+1)*size) of a conv-layout tensor, as its
  /// own tensor in the layout (what one model's convolution would be given).
  at::Tensor slot(const at::Tensor& t, std::int64_t b, std::int64_t size) const {
    return t.narrow(1, b * size, size).contiguous(format());
  }

  at::Tensor forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, bool grouped) const {
    if (direct) {
      at::Tensor y = at::empty({x.size(0), x.size(1), x.size(2) + 2 * g.padding[0] - g.dilation[0] * (w.size(2) - 1),
                                x.size(3) + 2 * g.padding[1] - g.dilation[1] * (w.size(3) - 1)},
                               x.options());
      depthwise_correlate_cpu(x, w, bias, geometry(g.padding[0], g.padding[1]), false, y);
      return y;
    }
    if (grouped) return at::conv2d(x, w, bias, g.stride, g.padding, g.dilation, g.groups * models);
    const std::int64_t in = x.size(1) / models, out = w.size(0) / models;
    std::vector<at::Tensor> ys;
    for (std::int64_t b = 0; b < models; ++b) {
      ys.push_back(at::conv2d(slot(x, b, in), w.narrow(0, b * out, out), bias.defined() ? bias.narrow(0, b * out, out) : bias,
                              g.stride, g.padding, g.dilation, g.groups));
    }
    return at::cat(ys, 1);
  }

  /// The input gradient of all models as one grouped convolution.
  at::Tensor grouped_input_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w) const {
    return std::get<0>(backward(gy, x, w, g.groups * models, {true, false, false}));
  }

  DepthwiseGeometry geometry(std::int64_t pad_h, std::int64_t pad_w) const {
    return {g.stride[0], g.stride[1], pad_h, pad_w, g.dilation[0], g.dilation[1]};
  }
  at::Tensor correlated_input_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w) const {
    at::Tensor gx = at::empty(x.sizes(), x.options());
    depthwise_correlate_cpu(gy, w, {},
                            geometry(g.dilation[0] * (w.size(2) - 1) - g.padding[0],
                                     g.dilation[1] * (w.size(3) - 1) - g.padding[1]),
                            true, gx);
    return gx;
  }

  /// Weight and bias gradients of all models at once from the direct kernel,
  /// which sums each channel alike at any B without copying a model's slice out.
  std::pair<at::Tensor, at::Tensor> depthwise_grads(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                                    bool with_bias) const {
    at::Tensor gw = at::empty(w.sizes(), w.options());
    at::Tensor gb = with_bias ? at::empty({w.size(0)}, w.options()) : at::Tensor();
    depthwise_weight_grad_cpu(x, gy, geometry(g.padding[0], g.padding[1]), gw, gb);
    return {gw, gb};
  }

  /// Model by model: the weight and bias gradients always (the grouped kernel
  /// sums them in another order), and the input gradient when asked for, in
  /// the same call, as the plain module makes it: asked for apart, oneDNN
  /// reorders the gradient and the input twice (MobileNetV3-Small's array of
  /// one trained 16% faster in one call, alternating runs on the Xeon).
  std::tuple<at::Tensor, at::Tensor, at::Tensor> per_model_grads(const at::Tensor& gy, const at::Tensor& x,
                                                                 const at::Tensor& w, bool input_grad,
                                                                 bool with_bias) const {
    const std::int64_t in = x.size(1) / models, out = w.size(0) / models;
    std::vector<at::Tensor> gxs, gws, gbs;
    for (std::int64_t b = 0; b < models; ++b) {
      auto [gx, gw, gb] = backward(slot(gy, b, out), slot(x, b, in), w.narrow(0, b * out, out), g.groups,
                                   {input_grad, true, with_bias}, with_bias ? out : -1);
      if (input_grad) gxs.push_back(gx);
      gws.push_back(gw.contiguous());
      if (with_bias) gbs.push_back(gb);
    }
    auto joined = [this](const std::vector<at::Tensor>& parts, std::int64_t dim) {
      return parts.empty() ? at::Tensor() : models == 1 ? parts.front() : at::cat(parts, dim);
    };
    return {joined(gxs, 1), joined(gws, 0), joined(gbs, 0)};
  }

  std::tuple<at::Tensor, at::Tensor, at::Tensor> backward(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                                          std::int64_t groups, std::array<bool, 3> mask,
                                                          std::int64_t bias_size = -1) const {
    std::vector<std::int64_t> bias_sizes{bias_size};
    return at::convolution_backward(gy, x, w, bias_size < 0 ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(bias_sizes),
                                    g.stride, g.padding, g.dilation, /*transposed=*/false, {0, 0}, groups, mask);
  }
};

struct ChannelsLastConv2d : torch::autograd::Function<ChannelsLastConv2d> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& given_bias, ConvGeometry geometry, std::int64_t models, bool grouped) {
    const at::Tensor bias = given_bias.numel() > 0 ? given_bias : at::Tensor();
    const Conv conv{geometry, models, direct_depthwise(x, weight, geometry, models)};
    const at::Tensor xc = x.contiguous(conv.format());
    at::Tensor y = conv.forward(xc, weight, bias, grouped);
    ctx->save_for_backward({xc, weight});
    ctx->saved_data["stride"] = geometry.stride;
    ctx->saved_data["padding"] = geometry.padding;
    ctx->saved_data["dilation"] = geometry.dilation;
    ctx->saved_data["groups"] = geometry.groups;
    ctx->saved_data["models"] = models;
    ctx->saved_data["grouped"] = grouped;
    ctx->saved_data["direct"] = conv.direct;
    ctx->saved_data["bias"] = bias.defined();
    return y.contiguous();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& w = saved[1];
    ConvGeometry g{ctx->saved_data["stride"].toIntVector(), ctx->saved_data["padding"].toIntVector(),
                   ctx->saved_data["dilation"].toIntVector(), ctx->saved_data["groups"].toInt()};
    const Conv conv{g, ctx->saved_data["models"].toInt(), ctx->saved_data["direct"].toBool()};
    const bool grouped = ctx->saved_data["grouped"].toBool();
    const at::Tensor gy = grads[0].contiguous(conv.format());
    const bool with_bias = ctx->saved_data["bias"].toBool(), input_grad = ctx->needs_input_grad(0);
    at::Tensor gx, gw, gb;
    if (conv.direct) {
      std::tie(gw, gb) = conv.depthwise_grads(gy, x, w, with_bias);
      if (input_grad) gx = conv.correlated_input_grad(gy, x, w);
    } else {
      // The input gradient grouped only where that groups something: at B = 1, one call.
      const bool grouped_input = grouped && conv.models > 1 && input_grad;
      std::tie(gx, gw, gb) = conv.per_model_grads(gy, x, w, input_grad && !grouped_input, with_bias);
      if (grouped_input) gx = conv.grouped_input_grad(gy, x, w);
    }
    if (gx.defined()) gx = gx.contiguous();
    return {gx, gw, gb, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool direct_depthwise(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& g, std::int64_t models) {
  const std::int64_t taps = weight.size(2) * weight.size(3);
  return x.size(1) / models == g.groups && weight.size(0) == x.size(1) && g.stride[0] == 1 && g.stride[1] == 1 &&
         (taps == 9 || taps == 25) && g.dilation[0] * (weight.size(2) - 1) >= g.padding[0] &&
         g.dilation[1] * (weight.size(3) - 1) >= g.padding[1];
}

bool channels_last_applies(const at::Tensor& x, std::int64_t in_per_group, std::int64_t groups) {
  // One input channel and one group (an image's first layer, DCGAN's
  // discriminator): oneDNN has a fast NCHW kernel, 1.3x-1.9x of channels-last.
  const bool first_layer = in_per_group == 1 && groups == 1;
  return x.is_cpu() && x.dim() == 4 && x.scalar_type() == at::kFloat && in_per_group % 8 != 0 && !first_layer &&
         !autocast_enabled(c10::DeviceType::CPU);
}

at::Tensor channels_last_conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                const ConvGeometry& geometry, std::int64_t models, bool grouped) {
  // Autograd takes no undefined tensor for an input: no bias is an empty one.
  const at::Tensor b = bias.defined() ? bias : at::empty({0}, weight.options());
  return ChannelsLastConv2d::apply(x, weight, b, geometry, models, grouped || models == 1);
}

}  // namespace hfta::fusion
