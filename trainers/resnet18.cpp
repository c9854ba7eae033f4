#include "hfta/trainers/resnet18.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
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

Conv2dOptions conv_options(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride) {
  return Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false);
}

// torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)).
class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1(register_module("conv1", Conv2d(conv_options(in, out, 3, stride)))),
        bn1(register_module("bn1", BatchNorm2d(out))),
        conv2(register_module("conv2", Conv2d(conv_options(out, out, 3, 1)))),
        bn2(register_module("bn2", BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      downsample = register_module("downsample", torch::nn::Sequential(Conv2d(conv_options(in, out, 1, stride)),
                                                                      BatchNorm2d(out)));
    }
  }
  at::Tensor forward(const at::Tensor& x) {
    const at::Tensor y = bn2(conv2(at::relu(bn1(conv1(x)))));
    return at::relu(y + (downsample ? downsample->forward(x) : x));
  }
  Conv2d conv1;
  BatchNorm2d bn1;
  Conv2d conv2;
  BatchNorm2d bn2;
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

// The stages: (channels multiplier, stride of the first block).
constexpr std::int64_t kStages[4][2] = {{1, 1}, {2, 2}, {4, 2}, {8, 2}};

}  // namespace

FusedResNet18::FusedResNet18(std::int64_t models, std::int64_t width, bool small_input, std::int64_t classes,
                             const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), width_(width), classes_(classes), small_input_(small_input),
      options_(tensor_options) {
  // The same order as the plain model's modules(): stem, then each block's
  // conv1, conv2 and downsample.
  add_conv(1, width, small_input ? 3 : 7, small_input ? 1 : 2);
  std::int64_t in = width;
  for (const auto& stage : kStages) {
    for (std::int64_t b = 0; b < 2; ++b) {
      const std::int64_t out = width * stage[0], stride = b == 0 ? stage[1] : 1;
      Block block{};
      block.conv1 = add_conv(in, out, 3, stride);
      block.conv2 = add_conv(out, out, 3, 1);
      block.shortcut = stride != 1 || in != out ? add_conv(in, out, 1, stride) : -1;
      blocks_.push_back(block);
      in = out;
    }
  }
  fc_ = register_module("fc", fusion::FusedLinear(models, in, classes, true, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

std::int64_t FusedResNet18::add_conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride) {
  const auto i = static_cast<std::int64_t>(convs_.size());
  convs_.push_back(register_module("conv" + std::to_string(i),
                                   fusion::FusedConv2d(models_, conv_options(in, out, kernel, stride), options_)));
  bns_.push_back(register_module("bn" + std::to_string(i),
                                 fusion::FusedBatchNorm2d(models_, torch::nn::BatchNormOptions(out), options_)));
  return i;
}

at::Tensor FusedResNet18::conv_bn(std::int64_t i, const at::Tensor& x) {
  return bns_[static_cast<std::size_t>(i)]->forward(convs_[static_cast<std::size_t>(i)]->forward(x));
}

at::Tensor FusedResNet18::forward(const at::Tensor& images) {
  // The stem reads the batch every model shares, once.
  at::Tensor x = at::relu(bns_[0]->forward(convs_[0]->forward_shared(images)));
  if (!small_input_) x = at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
  for (const auto& b : blocks_) {
    const at::Tensor y = conv_bn(b.conv2, at::relu(conv_bn(b.conv1, x)));
    x = at::relu(y + (b.shortcut >= 0 ? conv_bn(b.shortcut, x) : x));
  }
  x = fusion::conv_to_matmul(at::adaptive_avg_pool2d(x, {1, 1}), models_);
  return fc_->forward(x);
}

torch::nn::Sequential FusedResNet18::make_plain() const {
  torch::nn::Sequential net(Conv2d(conv_options(1, width_, small_input_ ? 3 : 7, small_input_ ? 1 : 2)),
                            BatchNorm2d(width_), torch::nn::ReLU());
  if (!small_input_) net->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
  std::int64_t in = width_;
  for (const auto& stage : kStages) {
    for (std::int64_t b = 0; b < 2; ++b) {
      net->push_back(BasicBlock(in, width_ * stage[0], b == 0 ? stage[1] : 1));
      in = width_ * stage[0];
    }
  }
  net->push_back(torch::nn::AdaptiveAvgPool2d(1));
  net->push_back(torch::nn::Flatten());
  net->push_back(torch::nn::Linear(in, classes_));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedResNet18::resized(std::int64_t models) const {
  return std::make_shared<FusedResNet18>(models, width_, small_input_, classes_, options_);
}

void FusedResNet18::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<Conv2d>(convs_, plain, slot);
  load_layers<BatchNorm2d>(bns_, plain, slot);
  load_layers<torch::nn::Linear>(std::vector{fc_}, plain, slot);
}

torch::nn::Sequential FusedResNet18::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<Conv2d>(convs_, plain, slot);
  extract_layers<BatchNorm2d>(bns_, plain, slot);
  extract_layers<torch::nn::Linear>(std::vector{fc_}, plain, slot);
  return plain;
}

}  // namespace hfta::trainers
