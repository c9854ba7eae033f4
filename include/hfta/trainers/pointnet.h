// PointNet classification as a fused array of B models.
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/fusion/fused_conv.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

/// B T-Nets (PointNet's transform networks) of size k: a per-point MLP
/// k-64-128-1024 (batch norm and ReLU after each), max over the points,
/// 1024-512-256 (batch norm, ReLU) and a linear layer to k*k, plus the identity.
/// Input: points in the conv layout [N, B*k, P] (or [N, k, P] shared by every
/// model) -> one k x k transform per model and cloud, [B, N, k, k].
class FusedPointTransformImpl : public torch::nn::Module {
 public:
  FusedPointTransformImpl(std::int64_t models, std::int64_t k, const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& points, bool shared = false);
  /// Points [N, B*k, P] (or shared [N, k, P]) moved by each model's transforms
  /// [B, N, k, k], as pointnet.pytorch's bmm(x^T, T)^T -> [N, B*k, P].
  static at::Tensor apply(const at::Tensor& points, const at::Tensor& transforms, bool shared = false);

  std::int64_t k;
  std::vector<fusion::FusedConv1d> convs;
  std::vector<fusion::FusedLinear> linears;
  std::vector<fusion::FusedBatchNorm1d> bns;  ///< 3 in the conv layout, then 2 in the matmul layout
};
TORCH_MODULE(FusedPointTransform);

/// The plain T-Net in a Sequential: forward(x [N, k, P]) = bmm(x^T, T(x))^T, and
/// it keeps T(x) of its last forward (for the regulariser).
class PointTransformImpl : public torch::nn::Module {
 public:
  PointTransformImpl(std::int64_t k, bool regularized);
  at::Tensor forward(const at::Tensor& x);
  std::int64_t k;
  bool regularized;  ///< the feature transform: its T enters the loss (plain_regularization)
  torch::nn::Sequential net{nullptr};  ///< x [N, k, P] -> [N, k*k], the identity not yet added
  at::Tensor last;                     ///< [N, k, k]
};
TORCH_MODULE(PointTransform);

/// pointnet.pytorch's feature_transform_regularizer: the mean over clouds of
/// ||T T^T - I||_F, for transforms [..., N, k, k] -> [...].
at::Tensor transform_regularizer(const at::Tensor& transforms);

/// The weight of the feature transform's regulariser in PointNet's training loss.
inline constexpr double kFeatureTransformWeight = 0.001;

/// The regulariser term of a plain PointNet's last forward (0 without a feature
/// transform), to add to its loss as the array does.
at::Tensor plain_regularization(const torch::nn::Sequential& plain);

/// PointNet (Qi et al. 2017) classification, as pointnet.pytorch builds it: an
/// optional input transform (3x3 T-Net), a shared per-point MLP 3-64-128-1024
/// (batch norm after each layer, ReLU after the first two) with an optional
/// feature transform (64x64 T-Net) after the first layer, max over the points, then
/// 1024-512-256-classes with batch norm, ReLU and dropout before the second batch
/// norm. With the feature transform, the training loss adds
/// kFeatureTransformWeight x transform_regularizer of its transforms (per model).
/// Input: clouds [N, 3, P], the same for every model. The per-point layers are
/// 1x1 convolutions in the conv layout [N, B*C, P] (the first reads the shared
/// clouds once); after the max over points, the classifier runs in the matmul layout.
/// Plain form (names as an nn.Sequential in PyTorch), without transforms: 0 Conv1d(3, 64, 1),
/// 1 BatchNorm1d, 2 ReLU, 3 Conv1d(64, 128, 1), 4 BatchNorm1d, 5 ReLU,
/// 6 Conv1d(128, 1024, 1), 7 BatchNorm1d, 8 max over points, 9 Linear(1024, 512),
/// 10 BatchNorm1d, 11 ReLU, 12 Linear(512, 256), 13 Dropout, 14 BatchNorm1d,
/// 15 ReLU, 16 Linear(256, classes). The input transform is a PointTransform
/// before layer 0, the feature transform one after the first ReLU (each shifts
/// the later indices by one); scripts/plain_models.py has the PyTorch form.
class FusedPointNet : public ArrayClassifier {
 public:
  FusedPointNet(std::int64_t models, double dropout, std::int64_t classes = 8,
                const at::TensorOptions& tensor_options = {}, bool input_transform = false,
                bool feature_transform = false);
  at::Tensor forward(const at::Tensor& clouds) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;
  at::Tensor regularization() const override { return regularization_; }

 private:
  // Each kind of layer in the plain form's module order (transforms' layers included).
  std::vector<fusion::FusedConv1d> all_convs() const;
  std::vector<fusion::FusedLinear> all_linears() const;
  std::vector<fusion::FusedBatchNorm1d> all_bns() const;

  std::int64_t classes_;
  double dropout_;
  std::vector<fusion::FusedConv1d> convs_;         ///< the per-point layers
  std::vector<fusion::FusedLinear> linears_;       ///< the classifier
  std::vector<fusion::FusedBatchNorm1d> bns_;      ///< 3 in the conv layout, then 2 in the matmul layout
  fusion::FusedDropout drop_{nullptr};
  FusedPointTransform input_transform_{nullptr}, feature_transform_{nullptr};
  at::Tensor regularization_;  ///< [B]: the last training forward's regulariser term
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
