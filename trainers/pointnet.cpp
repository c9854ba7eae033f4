#include "hfta/trainers/pointnet.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "hfta/fusion/layout.h"
#include "plain_layers.h"

namespace hfta::trainers {
namespace {

constexpr std::int64_t kWidths[] = {3, 64, 128, 1024, 512, 256};
constexpr std::size_t kPointLayers = 3;

}  // namespace

FusedPointNet::FusedPointNet(std::int64_t models, double dropout, std::int64_t classes,
                             const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), classes_(classes), dropout_(dropout), options_(tensor_options) {
  for (std::size_t i = 0; i < 6; ++i) {
    const std::int64_t in = kWidths[i], out = i == 5 ? classes : kWidths[i + 1];
    layers_.push_back(register_module("linear" + std::to_string(i),
                                      fusion::FusedLinear(models, in, out, true, tensor_options)));
    if (i < 5) {
      bns_.push_back(register_module("bn" + std::to_string(i),
                                     fusion::FusedBatchNorm1d(models, torch::nn::BatchNormOptions(out), tensor_options)));
    }
  }
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedPointNet::forward(const at::Tensor& clouds) {
  const std::int64_t n = clouds.size(0), points = clouds.size(2);
  // Every point a row: [N, 3, P] -> [B, N*P, 3].
  at::Tensor x = fusion::broadcast_to_models(clouds.transpose(1, 2).reshape({n * points, 3}), models_);
  x = at::relu(bns_[0]->forward(layers_[0]->forward(x)));
  x = at::relu(bns_[1]->forward(layers_[1]->forward(x)));
  x = bns_[2]->forward(layers_[2]->forward(x));
  x = std::get<0>(x.reshape({models_, n, points, kWidths[3]}).max(2));  // [B, N, 1024]
  x = at::relu(bns_[3]->forward(layers_[3]->forward(x)));
  x = at::relu(bns_[4]->forward(drop_->forward(layers_[4]->forward(x))));
  return layers_[5]->forward(x);
}

torch::nn::Sequential FusedPointNet::make_plain() const {
  using namespace torch::nn;
  Sequential net;
  for (std::size_t i = 0; i < kPointLayers; ++i) {
    net->push_back(Conv1d(Conv1dOptions(kWidths[i], kWidths[i + 1], 1)));
    net->push_back(BatchNorm1d(kWidths[i + 1]));
    if (i + 1 < kPointLayers) net->push_back(ReLU());
  }
  net->push_back(Functional([](const at::Tensor& x) { return std::get<0>(x.max(2)); }));
  net->push_back(Linear(1024, 512));
  net->push_back(BatchNorm1d(512));
  net->push_back(ReLU());
  net->push_back(Linear(512, 256));
  net->push_back(Dropout(dropout_));
  net->push_back(BatchNorm1d(256));
  net->push_back(ReLU());
  net->push_back(Linear(256, classes_));
  net->to(options_.dtype().toScalarType());
  return net;
}

void FusedPointNet::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  const auto convs = layers_of<torch::nn::Conv1dImpl>(plain);
  const auto linears = layers_of<torch::nn::LinearImpl>(plain);
  const auto bns = layers_of<torch::nn::BatchNorm1dImpl>(plain);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (i < kPointLayers) {
      layers_[i]->load_slot(slot, convs.at(i)->weight.squeeze(-1), convs.at(i)->bias);
    } else {
      layers_[i]->load_slot(slot, torch::nn::Linear(linears.at(i - kPointLayers)));
    }
  }
  for (std::size_t i = 0; i < bns_.size(); ++i) bns_[i]->load_slot(slot, torch::nn::BatchNorm1d(bns.at(i)));
}

torch::nn::Sequential FusedPointNet::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  const auto convs = layers_of<torch::nn::Conv1dImpl>(plain);
  const auto linears = layers_of<torch::nn::LinearImpl>(plain);
  const auto bns = layers_of<torch::nn::BatchNorm1dImpl>(plain);
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (i < kPointLayers) {
      const auto [weight, bias] = layers_[i]->slot_tensors(slot);
      convs[i]->weight.copy_(weight.unsqueeze(-1));
      convs[i]->bias.copy_(bias);
    } else {
      copy_out(layers_[i], slot, *linears[i - kPointLayers]);
    }
  }
  for (std::size_t i = 0; i < bns_.size(); ++i) copy_out_batch_norm(bns_[i], slot, *bns[i]);
  return plain;
}

void FusedPointNet::set_dropout(std::int64_t slot, double p) { drop_->set_p(slot, p); }

}  // namespace hfta::trainers
