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
  }
  linears_.push_back(register_module("linear5", fusion::FusedLinear(models, kWidths[5], classes, true, tensor_options)));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedPointNet::forward(const at::Tensor& clouds) {
  at::Tensor x = at::relu(bns_[0]->forward(convs_[0]->forward_shared(clouds)));  // [N, B*64, P]
  x = at::relu(bns_[1]->forward(convs_[1]->forward(x)));
  x = bns_[2]->forward(convs_[2]->forward(x));
  x = fusion::conv_to_matmul(std::get<0>(x.max(2)), models_);  // [N, B*1024] -> [B, N, 1024]
  x = at::relu(bns_[3]->forward(linears_[0]->forward(x)));
  x = at::relu(bns_[4]->forward(drop_->forward(linears_[1]->forward(x))));
  return linears_[2]->forward(x);
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

std::shared_ptr<ArrayClassifier> FusedPointNet::resized(std::int64_t models) const {
  return std::make_shared<FusedPointNet>(models, dropout_, classes_, options_);
}

void FusedPointNet::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<torch::nn::Conv1d>(convs_, plain, slot);
  load_layers<torch::nn::Linear>(linears_, plain, slot);
  load_layers<torch::nn::BatchNorm1d>(bns_, plain, slot);
}

torch::nn::Sequential FusedPointNet::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<torch::nn::Conv1d>(convs_, plain, slot);
  extract_layers<torch::nn::Linear>(linears_, plain, slot);
  extract_layers<torch::nn::BatchNorm1d>(bns_, plain, slot);
  return plain;
}

void FusedPointNet::set_dropout(std::int64_t slot, double p) { drop_->set_p(slot, p); }

}  // namespace hfta::trainers
