// ResNet-18 as a fused array of B models (conv layout throughout, the classifier
// in the matmul layout).
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

/// ResNet-18 for single-channel images: four stages of two basic blocks with
/// width, 2, 4 and 8 x width channels (torchvision's at width 64).
/// small_input: a 3x3 stride-1 stem without max-pool (32x32 inputs, as for
/// CIFAR); otherwise torchvision's 7x7 stride-2 stem and 3x3 max-pool.
/// Plain form (names as an nn.Sequential in PyTorch): 0 Conv2d (no bias),
/// 1 BatchNorm2d, 2 ReLU, [3 MaxPool2d], then eight BasicBlock modules with
/// conv1, bn1, conv2, bn2 and, where the shape changes, downsample.0 (1x1
/// Conv2d) and downsample.1 (BatchNorm2d), then AdaptiveAvgPool2d(1), Flatten,
/// Linear(8 x width, classes).
class FusedResNet18 : public ArrayClassifier {
 public:
  FusedResNet18(std::int64_t models, std::int64_t width, bool small_input, std::int64_t classes = 10,
                const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& images) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t, double) override {}  // ResNet-18 has no dropout

 private:
  struct Block {
    std::int64_t conv1, conv2, shortcut;  ///< indices into convs_ and bns_; shortcut -1: identity
  };
  std::int64_t add_conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride);
  at::Tensor conv_bn(std::int64_t i, const at::Tensor& x);

  std::int64_t width_, classes_;
  bool small_input_;
  std::vector<fusion::FusedConv2d> convs_;       ///< in the plain model's order
  std::vector<fusion::FusedBatchNorm2d> bns_;    ///< bns_[i] follows convs_[i]
  std::vector<Block> blocks_;
  fusion::FusedLinear fc_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
