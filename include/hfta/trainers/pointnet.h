// PointNet classification as a fused array of B models.
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

/// PointNet (Qi et al. 2017) without the input and feature transforms: a shared
/// per-point MLP 3-64-128-1024 (batch norm after each layer, ReLU after the
/// first two), max over the points, then 1024-512-256-classes with batch norm,
/// ReLU and dropout before the second batch norm, as pointnet.pytorch does.
/// Input: clouds [N, 3, P], the same for every model. The per-point layers are
/// 1x1 convolutions in the conv layout [N, B*C, P] (the first reads the shared
/// clouds once); after the max over points, the classifier runs in the matmul layout.
/// Plain form (names as an nn.Sequential in PyTorch): 0 Conv1d(3, 64, 1),
/// 1 BatchNorm1d, 2 ReLU, 3 Conv1d(64, 128, 1), 4 BatchNorm1d, 5 ReLU,
/// 6 Conv1d(128, 1024, 1), 7 BatchNorm1d, 8 max over points, 9 Linear(1024, 512),
/// 10 BatchNorm1d, 11 ReLU, 12 Linear(512, 256), 13 Dropout, 14 BatchNorm1d,
/// 15 ReLU, 16 Linear(256, classes).
class FusedPointNet : public ArrayClassifier {
 public:
  FusedPointNet(std::int64_t models, double dropout, std::int64_t classes = 8,
                const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& clouds) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  std::int64_t classes_;
  double dropout_;
  std::vector<fusion::FusedConv1d> convs_;         ///< the per-point layers
  std::vector<fusion::FusedLinear> linears_;       ///< the classifier
  std::vector<fusion::FusedBatchNorm1d> bns_;      ///< 3 in the conv layout, then 2 in the matmul layout
  fusion::FusedDropout drop_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
