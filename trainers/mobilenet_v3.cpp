#include "hfta/trainers/mobilenet_v3.h"

#include <algorithm>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "hfta/fusion/layout.h"
#include "hfta/fusion/module_cast.h"
#include "plain_layers.h"

namespace hfta::trainers {
namespace {

using torch::nn::BatchNorm2d;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;

// torchvision's mobilenet_v3_small: input, kernel, expanded, output channels,
// squeeze-and-excitation, hardswish (else ReLU), stride.
struct BlockSpec {
  std::int64_t in, kernel, expanded, out;
  bool se, hardswish;
  std::int64_t stride;
};
constexpr BlockSpec kBlocks[] = {
    {16, 3, 16, 16, true, false, 2},  {16, 3, 72, 24, false, false, 2}, {24, 3, 88, 24, false, false, 1},
    {24, 5, 96, 40, true, true, 2},   {40, 5, 240, 40, true, true, 1},  {40, 5, 240, 40, true, true, 1},
    {40, 5, 120, 48, true, true, 1},  {48, 5, 144, 48, true, true, 1},  {48, 5, 288, 96, true, true, 2},
    {96, 5, 576, 96, true, true, 1},  {96, 5, 576, 96, true, true, 1}};
constexpr std::int64_t kStem = 16, kLastChannel = 1024;

// torchvision's _make_divisible: the nearest multiple of 8, never 10% below v.
std::int64_t divisible(double v) {
  std::int64_t n = std::max<std::int64_t>(8, static_cast<std::int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(n) < 0.9 * v) n += 8;
  return n;
}

// LibTorch's default batch norms: torchvision's momentum of 0.01 leaves the
// running statistics near their start after the short rungs of a sweep.
torch::nn::BatchNormOptions bn_options(std::int64_t channels) { return torch::nn::BatchNormOptions(channels); }

Conv2dOptions conv_options(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                           std::int64_t groups, bool bias) {
  return Conv2dOptions(in, out, kernel).stride(stride).padding((kernel - 1) / 2).groups(groups).bias(bias);
}

torch::nn::Sequential plain_conv_bn(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                    std::int64_t groups) {
  return torch::nn::Sequential(Conv2d(conv_options(in, out, kernel, stride, groups, false)),
                               BatchNorm2d(bn_options(out)));
}

at::Tensor act(bool hardswish, const at::Tensor& x) { return hardswish ? at::hardswish(x) : at::relu(x); }

// One inverted-residual block, plain.
class InvertedResidualImpl : public torch::nn::Module {
 public:
  InvertedResidualImpl(const BlockSpec& s, double width_mult)
      : spec_(s), in_(divisible(s.in * width_mult)), exp_(divisible(s.expanded * width_mult)),
        out_(divisible(s.out * width_mult)) {
    if (exp_ != in_) expand = register_module("expand", plain_conv_bn(in_, exp_, 1, 1, 1));
    depthwise = register_module("depthwise", plain_conv_bn(exp_, exp_, s.kernel, s.stride, exp_));
    if (s.se) {
      const std::int64_t squeeze = divisible(static_cast<double>(exp_ / 4));
      se_fc1 = register_module("se_fc1", Conv2d(conv_options(exp_, squeeze, 1, 1, 1, true)));
      se_fc2 = register_module("se_fc2", Conv2d(conv_options(squeeze, exp_, 1, 1, 1, true)));
    }
    project = register_module("project", plain_conv_bn(exp_, out_, 1, 1, 1));
  }
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor y = expand ? act(spec_.hardswish, expand->forward(x)) : x;
    y = act(spec_.hardswish, depthwise->forward(y));
    if (se_fc1) {
      const at::Tensor s = at::hardsigmoid(se_fc2(at::relu(se_fc1(at::adaptive_avg_pool2d(y, {1, 1})))));
      y = y * s;
    }
    y = project->forward(y);
    return spec_.stride == 1 && in_ == out_ ? y + x : y;
  }
  torch::nn::Sequential expand{nullptr}, depthwise{nullptr}, project{nullptr};
  Conv2d se_fc1{nullptr}, se_fc2{nullptr};

 private:
  BlockSpec spec_;
  std::int64_t in_, exp_, out_;
};
TORCH_MODULE(InvertedResidual);

torch::nn::AnyModule hardswish_module() {
  return torch::nn::AnyModule(torch::nn::Functional([](const at::Tensor& x) { return at::hardswish(x); }));
}

}  // namespace

Footprint mobilenet_v3_small_footprint(double width_mult, std::int64_t classes) {
  Footprint f;
  f.input_per_sample = 32 * 32;
  double side = 32;
  // A convolution (groups: depthwise), with its batch norm and activation: three maps kept.
  auto conv = [&](double in, double out, double kernel, double stride, double groups, bool bn) {
    side /= stride;
    f.parameters += in / groups * out * kernel * kernel + (bn ? 2 * out : out);
    f.activations_per_sample += (bn ? 3 : 2) * out * side * side;
    f.macs_per_sample += in / groups * out * kernel * kernel * side * side;
  };
  conv(1, static_cast<double>(divisible(kStem * width_mult)), 3, 2, 1, true);
  for (const auto& s : kBlocks) {
    const auto in = static_cast<double>(divisible(s.in * width_mult));
    const auto exp = static_cast<double>(divisible(s.expanded * width_mult));
    const auto out = static_cast<double>(divisible(s.out * width_mult));
    if (exp != in) conv(in, exp, 1, 1, 1, true);
    conv(exp, exp, static_cast<double>(s.kernel), static_cast<double>(s.stride), exp, true);
    if (s.se) {
      const auto squeeze = static_cast<double>(divisible(exp / 4));
      const double kept = side;
      side = 1;  // on the pooled channels
      conv(exp, squeeze, 1, 1, 1, false);
      conv(squeeze, exp, 1, 1, 1, false);
      side = kept;
      f.activations_per_sample += exp * side * side;  // the rescaled maps
    }
    conv(exp, out, 1, 1, 1, true);
  }
  const auto last_in = static_cast<double>(divisible(kBlocks[10].out * width_mult));
  conv(last_in, 6 * last_in, 1, 1, 1, true);
  const auto hidden = static_cast<double>(divisible(kLastChannel * width_mult));
  const auto c = static_cast<double>(classes);
  f.parameters += 6 * last_in * hidden + hidden + hidden * c + c;
  f.activations_per_sample += 6 * last_in + 3 * hidden + 2 * c;
  f.macs_per_sample += 6 * last_in * hidden + hidden * c;
  return f;
}

FusedMobileNetV3Small::FusedMobileNetV3Small(std::int64_t models, double width_mult, double dropout,
                                             std::int64_t classes, const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), width_mult_(width_mult), dropout_(dropout), classes_(classes),
      options_(tensor_options) {
  // The plain model's order: stem, then each block's expansion, depthwise,
  // squeeze-and-excitation and projection, then the last convolution.
  conv_bn(1, divisible(kStem * width_mult), 3, 2, 1);
  for (const auto& s : kBlocks) {
    const std::int64_t in = divisible(s.in * width_mult), exp = divisible(s.expanded * width_mult),
                       out = divisible(s.out * width_mult);
    Block b;
    b.hardswish = s.hardswish;
    b.residual = s.stride == 1 && in == out;
    if (exp != in) {
      b.expand = static_cast<std::int64_t>(convs_.size());
      conv_bn(in, exp, 1, 1, 1);
    }
    b.depthwise = static_cast<std::int64_t>(convs_.size());
    conv_bn(exp, exp, s.kernel, s.stride, exp);
    if (s.se) {
      const std::int64_t squeeze = divisible(static_cast<double>(exp / 4));
      b.se = conv(exp, squeeze, 1, 1, 1, true);
      conv(squeeze, exp, 1, 1, 1, true);
    }
    b.project = static_cast<std::int64_t>(convs_.size());
    conv_bn(exp, out, 1, 1, 1);
    blocks_.push_back(b);
  }
  const std::int64_t last_in = divisible(kBlocks[10].out * width_mult), last_conv = 6 * last_in;
  conv_bn(last_in, last_conv, 1, 1, 1);
  const std::int64_t hidden = divisible(kLastChannel * width_mult);
  fc1_ = register_module("fc1", fusion::FusedLinear(models, last_conv, hidden, true, tensor_options));
  fc2_ = register_module("fc2", fusion::FusedLinear(models, hidden, classes, true, tensor_options));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

std::int64_t FusedMobileNetV3Small::conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                         std::int64_t groups, bool bias) {
  const auto i = static_cast<std::int64_t>(convs_.size());
  convs_.push_back(register_module("conv" + std::to_string(i),
                                   fusion::FusedConv2d(models_, conv_options(in, out, kernel, stride, groups, bias),
                                                       options_)));
  bn_of_conv_.push_back(-1);
  return i;
}

void FusedMobileNetV3Small::conv_bn(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                    std::int64_t groups) {
  const std::int64_t i = conv(in, out, kernel, stride, groups, false);
  bn_of_conv_[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(bns_.size());
  bns_.push_back(register_module("bn" + std::to_string(bns_.size()),
                                 fusion::FusedBatchNorm2d(models_, bn_options(out), options_)));
}

at::Tensor FusedMobileNetV3Small::forward(const at::Tensor& images) {
  auto bn = [this](std::int64_t conv, const at::Tensor& x) {
    return bns_[static_cast<std::size_t>(bn_of_conv_[static_cast<std::size_t>(conv)])]->forward(x);
  };
  auto conv = [this](std::int64_t i, const at::Tensor& x) { return convs_[static_cast<std::size_t>(i)]->forward(x); };
  // The stem reads the batch every model shares, once.
  at::Tensor x = at::hardswish(bn(0, convs_[0]->forward_shared(images)));
  for (const auto& b : blocks_) {
    at::Tensor y = b.expand >= 0 ? act(b.hardswish, bn(b.expand, conv(b.expand, x))) : x;
    y = act(b.hardswish, bn(b.depthwise, conv(b.depthwise, y)));
    if (b.se >= 0) {
      // Per model and channel: the conv layout keeps models apart in pooling and 1x1 convolutions.
      const at::Tensor s = at::adaptive_avg_pool2d(y, {1, 1});
      y = y * at::hardsigmoid(conv(b.se + 1, at::relu(conv(b.se, s))));
    }
    y = bn(b.project, conv(b.project, y));
    x = b.residual ? y + x : y;
  }
  const auto last = static_cast<std::int64_t>(convs_.size()) - 1;
  x = at::hardswish(bn(last, conv(last, x)));
  x = fusion::conv_to_matmul(at::adaptive_avg_pool2d(x, {1, 1}), models_);
  x = drop_->forward(at::hardswish(fc1_->forward(x)));
  return fc2_->forward(x);
}

torch::nn::Sequential FusedMobileNetV3Small::make_plain() const {
  const std::int64_t stem = divisible(kStem * width_mult_);
  torch::nn::Sequential net(Conv2d(conv_options(1, stem, 3, 2, 1, false)), BatchNorm2d(bn_options(stem)));
  net->push_back(hardswish_module());
  for (const auto& s : kBlocks) net->push_back(InvertedResidual(s, width_mult_));
  const std::int64_t last_in = divisible(kBlocks[10].out * width_mult_), last_conv = 6 * last_in;
  const std::int64_t hidden = divisible(kLastChannel * width_mult_);
  net->push_back(Conv2d(conv_options(last_in, last_conv, 1, 1, 1, false)));
  net->push_back(BatchNorm2d(bn_options(last_conv)));
  net->push_back(hardswish_module());
  net->push_back(torch::nn::AdaptiveAvgPool2d(1));
  net->push_back(torch::nn::Flatten());
  net->push_back(torch::nn::Linear(last_conv, hidden));
  net->push_back(hardswish_module());
  net->push_back(torch::nn::Dropout(dropout_));
  net->push_back(torch::nn::Linear(hidden, classes_));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedMobileNetV3Small::resized(std::int64_t models) const {
  return std::make_shared<FusedMobileNetV3Small>(models, width_mult_, dropout_, classes_, options_);
}

void FusedMobileNetV3Small::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<Conv2d>(convs_, plain, slot);
  load_layers<BatchNorm2d>(bns_, plain, slot);
  load_layers<torch::nn::Linear>(std::vector{fc1_, fc2_}, plain, slot);
}

torch::nn::Sequential FusedMobileNetV3Small::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<Conv2d>(convs_, plain, slot);
  extract_layers<BatchNorm2d>(bns_, plain, slot);
  extract_layers<torch::nn::Linear>(std::vector{fc1_, fc2_}, plain, slot);
  return plain;
}

void FusedMobileNetV3Small::set_dropout(std::int64_t slot, double p) { drop_->set_p(slot, p); }

}  // namespace hfta::trainers
