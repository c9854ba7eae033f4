#include "hfta/trainers/pointnet.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <ATen/ATen.h>

#include "hfta/fusion/layout.h"
#include "hfta/fusion/module_cast.h"
#include "plain_layers.h"

namespace hfta::trainers {
namespace {

constexpr std::int64_t kWidths[] = {3, 64, 128, 1024, 512, 256};
constexpr std::size_t kPointLayers = 3;

at::Tensor max_over_points(const at::Tensor& x) { return std::get<0>(x.max(2)); }

}  // namespace

// ---- T-Net ------------------------------------------------------------------

FusedPointTransformImpl::FusedPointTransformImpl(std::int64_t models, std::int64_t k,
                                                 const at::TensorOptions& tensor_options)
    : k(k) {
  const std::int64_t widths[] = {k, 64, 128, 1024, 512, 256};
  for (std::size_t i = 0; i < 5; ++i) {
    const std::int64_t in = widths[i], out = widths[i + 1];
    if (i < kPointLayers) {
      convs.push_back(register_module("conv" + std::to_string(i),
                                      fusion::FusedConv1d(models, torch::nn::Conv1dOptions(in, out, 1), tensor_options)));
    } else {
      linears.push_back(register_module("linear" + std::to_string(i),
                                        fusion::FusedLinear(models, in, out, true, tensor_options)));
    }
    const auto layout = i < kPointLayers ? fusion::Layout::kConv : fusion::Layout::kMatmul;
    bns.push_back(register_module("bn" + std::to_string(i), fusion::FusedBatchNorm1d(
                                                              models, torch::nn::BatchNormOptions(out), tensor_options, layout)));
  }
  linears.push_back(register_module("linear5", fusion::FusedLinear(models, 256, k * k, true, tensor_options)));
}

at::Tensor FusedPointTransformImpl::forward(const at::Tensor& points, bool shared) {
  at::Tensor x = at::relu(bns[0]->forward(shared ? convs[0]->forward_shared(points) : convs[0]->forward(points)));
  for (std::size_t i = 1; i < kPointLayers; ++i) x = at::relu(bns[i]->forward(convs[i]->forward(x)));
  const std::int64_t models = convs[0]->models(), n = points.size(0);
  x = fusion::conv_to_matmul(max_over_points(x), models);  // [B, N, 1024]
  x = at::relu(bns[3]->forward(linears[0]->forward(x)));
  x = at::relu(bns[4]->forward(linears[1]->forward(x)));
  return linears[2]->forward(x).view({models, n, k, k}) + at::eye(k, x.options());
}

at::Tensor FusedPointTransformImpl::apply(const at::Tensor& points, const at::Tensor& transforms, bool shared) {
  const std::int64_t models = transforms.size(0), n = transforms.size(1), k = transforms.size(2);
  const std::int64_t p = points.size(2);
  const at::Tensor x = shared ? points.unsqueeze(1) : points.view({n, models, k, p});  // [N, B or 1, k, P]
  // bmm(x^T, T)^T = T^T x for every model and cloud.
  return at::matmul(transforms.transpose(0, 1).transpose(-1, -2), x).reshape({n, models * k, p});
}

PointTransformImpl::PointTransformImpl(std::int64_t k, bool regularized) : k(k), regularized(regularized) {
  using namespace torch::nn;
  net = register_module(
      "net", Sequential(Conv1d(Conv1dOptions(k, 64, 1)), BatchNorm1d(64), ReLU(), Conv1d(Conv1dOptions(64, 128, 1)),
                        BatchNorm1d(128), ReLU(), Conv1d(Conv1dOptions(128, 1024, 1)), BatchNorm1d(1024), ReLU(),
                        Functional(max_over_points), Linear(1024, 512), BatchNorm1d(512), ReLU(), Linear(512, 256),
                        BatchNorm1d(256), ReLU(), Linear(256, k * k)));
}

at::Tensor PointTransformImpl::forward(const at::Tensor& x) {
  last = net->forward(x).view({-1, k, k}) + at::eye(k, x.options());
  return at::bmm(x.transpose(1, 2), last).transpose(1, 2);
}

at::Tensor transform_regularizer(const at::Tensor& transforms) {
  const std::int64_t k = transforms.size(-1);
  const at::Tensor gram = at::matmul(transforms, transforms.transpose(-1, -2)) - at::eye(k, transforms.options());
  return gram.pow(2).sum({-2, -1}).sqrt().mean(-1);
}

at::Tensor plain_regularization(const torch::nn::Sequential& plain) {
  for (const auto& m : plain->modules(/*include_self=*/false)) {
    if (auto t = std::dynamic_pointer_cast<PointTransformImpl>(m); t && t->regularized && t->last.defined()) {
      return kFeatureTransformWeight * transform_regularizer(t->last);
    }
  }
  return at::zeros({}, plain->parameters().front().options());
}

// ---- PointNet ---------------------------------------------------------------

FusedPointNet::FusedPointNet(std::int64_t models, double dropout, std::int64_t classes,
                             const at::TensorOptions& tensor_options, bool input_transform, bool feature_transform)
    : ArrayClassifier(models), classes_(classes), dropout_(dropout), options_(tensor_options) {
  if (input_transform) {
    input_transform_ = register_module("input_transform", FusedPointTransform(models, 3, tensor_options));
  }
  for (std::size_t i = 0; i < 5; ++i) {
    const std::int64_t in = kWidths[i], out = kWidths[i + 1];
    if (i < kPointLayers) {
      convs_.push_back(register_module("conv" + std::to_string(i),
                                       fusion::FusedConv1d(models, torch::nn::Conv1dOptions(in, out, 1), tensor_options)));
    } else {
      linears_.push_back(register_module("linear" + std::to_string(i),
                                         fusion::FusedLinear(models, in, out, true, tensor_options)));
    }
    const auto layout = i < kPointLayers ? fusion::Layout::kConv : fusion::Layout::kMatmul;
    bns_.push_back(register_module("bn" + std::to_string(i), fusion::FusedBatchNorm1d(
                                                                 models, torch::nn::BatchNormOptions(out), tensor_options, layout)));
    if (i == 0 && feature_transform) {
      feature_transform_ = register_module("feature_transform", FusedPointTransform(models, 64, tensor_options));
    }
  }
  linears_.push_back(register_module("linear5", fusion::FusedLinear(models, kWidths[5], classes, true, tensor_options)));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedPointNet::forward(const at::Tensor& clouds) {
  regularization_ = at::Tensor();
  at::Tensor x;
  if (input_transform_) {
    const at::Tensor transforms = input_transform_->forward(clouds, /*shared=*/true);
    x = convs_[0]->forward(FusedPointTransformImpl::apply(clouds, transforms, /*shared=*/true));
  } else {
    x = convs_[0]->forward_shared(clouds);  // [N, B*64, P]
  }
  x = at::relu(bns_[0]->forward(x));
  if (feature_transform_) {
    const at::Tensor transforms = feature_transform_->forward(x);
    x = FusedPointTransformImpl::apply(x, transforms);
    if (is_training()) regularization_ = kFeatureTransformWeight * transform_regularizer(transforms);
  }
  x = at::relu(bns_[1]->forward(convs_[1]->forward(x)));
  x = bns_[2]->forward(convs_[2]->forward(x));
  x = fusion::conv_to_matmul(max_over_points(x), models_);  // [N, B*1024] -> [B, N, 1024]
  x = at::relu(bns_[3]->forward(linears_[0]->forward(x)));
  x = at::relu(bns_[4]->forward(drop_->forward(linears_[1]->forward(x))));
  return linears_[2]->forward(x);
}

torch::nn::Sequential FusedPointNet::make_plain() const {
  using namespace torch::nn;
  Sequential net;
  if (input_transform_) net->push_back(PointTransform(3, false));
  for (std::size_t i = 0; i < kPointLayers; ++i) {
    net->push_back(Conv1d(Conv1dOptions(kWidths[i], kWidths[i + 1], 1)));
    net->push_back(BatchNorm1d(kWidths[i + 1]));
    if (i + 1 < kPointLayers) net->push_back(ReLU());
    if (i == 0 && feature_transform_) net->push_back(PointTransform(64, true));
  }
  net->push_back(Functional(max_over_points));
  net->push_back(Linear(1024, 512));
  net->push_back(BatchNorm1d(512));
  net->push_back(ReLU());
  net->push_back(Linear(512, 256));
  net->push_back(Dropout(dropout_));
  net->push_back(BatchNorm1d(256));
  net->push_back(ReLU());
  net->push_back(Linear(256, classes_));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedPointNet::resized(std::int64_t models) const {
  return std::make_shared<FusedPointNet>(models, dropout_, classes_, options_, static_cast<bool>(input_transform_),
                                         static_cast<bool>(feature_transform_));
}

// The plain form's module order: the input transform's layers, the first
// per-point layer, the feature transform's layers, then the rest.
std::vector<fusion::FusedConv1d> FusedPointNet::all_convs() const {
  std::vector<fusion::FusedConv1d> out;
  if (input_transform_) out = input_transform_->convs;
  out.push_back(convs_[0]);
  if (feature_transform_) out.insert(out.end(), feature_transform_->convs.begin(), feature_transform_->convs.end());
  out.insert(out.end(), convs_.begin() + 1, convs_.end());
  return out;
}

std::vector<fusion::FusedLinear> FusedPointNet::all_linears() const {
  std::vector<fusion::FusedLinear> out;
  for (const auto& t : {input_transform_, feature_transform_}) {
    if (t) out.insert(out.end(), t->linears.begin(), t->linears.end());
  }
  out.insert(out.end(), linears_.begin(), linears_.end());
  return out;
}

std::vector<fusion::FusedBatchNorm1d> FusedPointNet::all_bns() const {
  std::vector<fusion::FusedBatchNorm1d> out;
  if (input_transform_) out = input_transform_->bns;
  out.push_back(bns_[0]);
  if (feature_transform_) out.insert(out.end(), feature_transform_->bns.begin(), feature_transform_->bns.end());
  out.insert(out.end(), bns_.begin() + 1, bns_.end());
  return out;
}

void FusedPointNet::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<torch::nn::Conv1d>(all_convs(), plain, slot);
  load_layers<torch::nn::Linear>(all_linears(), plain, slot);
  load_layers<torch::nn::BatchNorm1d>(all_bns(), plain, slot);
}

torch::nn::Sequential FusedPointNet::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<torch::nn::Conv1d>(all_convs(), plain, slot);
  extract_layers<torch::nn::Linear>(all_linears(), plain, slot);
  extract_layers<torch::nn::BatchNorm1d>(all_bns(), plain, slot);
  return plain;
}

void FusedPointNet::set_dropout(std::int64_t slot, double p) { drop_->set_p(slot, p); }

}  // namespace hfta::trainers
