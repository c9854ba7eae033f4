// MobileNetV3-Small as a fused array of B models (conv layout, the classifier in
// the matmul layout).
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/trainers/array_classifier.h"
#include "hfta/trainers/footprint.h"

namespace hfta::trainers {

/// torchvision's mobilenet_v3_small for single-channel images: a 3x3 stride-2
/// stem, eleven inverted-residual blocks (1x1 expansion, depthwise 3x3 or 5x5,
/// squeeze-and-excitation where the paper has it, 1x1 projection; ReLU or
/// hardswish), a 1x1 convolution to 6x the last width, global average pooling,
/// then Linear, hardswish, dropout, Linear. Channels scale with width_mult
/// (rounded to multiples of 8, as torchvision does). Batch norms and
/// initialisation are LibTorch's defaults (torchvision's batch-norm momentum of
/// 0.01 leaves the running statistics near their start after a sweep's short
/// first rungs, so every model evaluates at chance there).
/// Plain form (names as an nn.Sequential in PyTorch): 0 Conv2d, 1 BatchNorm2d,
/// 2 hardswish, 3-13 InvertedResidual modules ([expand.0 Conv2d, expand.1
/// BatchNorm2d], depthwise.0 Conv2d, depthwise.1 BatchNorm2d, [se_fc1, se_fc2
/// Conv2d with bias], project.0 Conv2d, project.1 BatchNorm2d), 14 Conv2d,
/// 15 BatchNorm2d, 16 hardswish, 17 AdaptiveAvgPool2d(1), 18 Flatten,
/// 19 Linear, 20 hardswish, 21 Dropout, 22 Linear.
/// The parameter, activation and multiply-accumulate counts of one model on
/// 32x32 inputs (footprint.h), from the same block table the model is built from.
Footprint mobilenet_v3_small_footprint(double width_mult, std::int64_t classes = 10);

class FusedMobileNetV3Small : public ArrayClassifier {
 public:
  FusedMobileNetV3Small(std::int64_t models, double width_mult, double dropout, std::int64_t classes = 10,
                        const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& images) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  struct Block {
    std::int64_t expand = -1;            ///< conv and bn index of the 1x1 expansion; -1: none
    std::int64_t depthwise = 0, project = 0;  ///< conv and bn indices
    std::int64_t se = -1;                ///< conv index of the squeeze (excite follows); -1: none
    bool hardswish = false, residual = false;
  };
  std::int64_t conv(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                    std::int64_t groups, bool bias);
  void conv_bn(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride, std::int64_t groups);

  double width_mult_, dropout_;
  std::int64_t classes_;
  std::vector<fusion::FusedConv2d> convs_;     ///< in the plain model's order
  std::vector<fusion::FusedBatchNorm2d> bns_;  ///< in the plain model's order
  std::vector<std::int64_t> bn_of_conv_;       ///< the batch norm after each convolution; -1: none (SE)
  std::vector<Block> blocks_;
  fusion::FusedLinear fc1_{nullptr}, fc2_{nullptr};
  fusion::FusedDropout drop_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
