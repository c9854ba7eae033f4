#include "hfta/trainers/array_classifier.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "hfta/fusion/layout.h"
#include "hfta/fusion/max_pool.h"
#include "hfta/fusion/module_cast.h"
#include "hfta/fusion/slot_init.h"
#include "plain_layers.h"

namespace hfta::trainers {

// The plain module of an activation, for the plain form of a model.
torch::nn::AnyModule plain_activation(const std::string& name) {
  if (name == "relu") return torch::nn::AnyModule(torch::nn::ReLU());
  if (name == "leaky_relu") return torch::nn::AnyModule(torch::nn::LeakyReLU());
  if (name == "gelu") return torch::nn::AnyModule(torch::nn::GELU());
  if (name == "silu") return torch::nn::AnyModule(torch::nn::SiLU());
  if (name == "tanh") return torch::nn::AnyModule(torch::nn::Tanh());
  if (name == "sigmoid") return torch::nn::AnyModule(torch::nn::Sigmoid());
  activation_from_name(name);  // throws for unknown names
  return torch::nn::AnyModule(torch::nn::Functional([](const at::Tensor& x) { return at::hardswish(x); }));
}

at::Tensor activate(const std::string& name, const at::Tensor& x) {
  return fusion::FusedActivation(activation_from_name(name))->forward(x);
}

void ArrayClassifier::init_slot(std::int64_t slot, std::uint64_t seed) {
  torch::nn::Sequential plain{nullptr};
  {
    fusion::ScopedSeed scoped(seed);
    plain = make_plain();
  }
  load_slot(slot, plain);
}

namespace {

std::vector<std::shared_ptr<fusion::StrategicOp>> strategic_ops(const torch::nn::Module& model) {
  std::vector<std::shared_ptr<fusion::StrategicOp>> out;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (auto op = std::dynamic_pointer_cast<fusion::StrategicOp>(m)) out.push_back(op);
  }
  return out;
}

}  // namespace

std::vector<fusion::Strategy> ArrayClassifier::strategies() const {
  std::vector<fusion::Strategy> out;
  for (const auto& op : strategic_ops(*this)) out.push_back(op->strategy());
  return out;
}

void ArrayClassifier::set_strategies(const std::vector<fusion::Strategy>& strategies) {
  const auto ops = strategic_ops(*this);
  if (ops.size() != strategies.size()) {
    throw std::invalid_argument("the model has " + std::to_string(ops.size()) + " ops with a strategy, given " +
                                std::to_string(strategies.size()));
  }
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i]->set_strategy(strategies[i]);
}

void ArrayClassifier::tune_strategies(const at::Tensor& example) {
  // Each op tunes on its input during one forward pass; that pass's own
  // batch-norm statistics updates are then undone.
  std::vector<at::Tensor> saved;
  for (const auto& b : buffers()) saved.push_back(b.clone());
  for (const auto& op : strategic_ops(*this)) op->tune_on_next_forward();
  forward(input(example));
  for (const auto& op : strategic_ops(*this)) op->cancel_tune_request();
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& b : buffers()) b.copy_(saved[i++]);
}

const std::vector<std::shared_ptr<fusion::FusedDropoutImpl>>& ArrayClassifier::dropout_layers() {
  if (!dropout_layers_) {
    dropout_layers_.emplace();
    for (const auto& m : modules(/*include_self=*/false)) {
      if (auto d = std::dynamic_pointer_cast<fusion::FusedDropoutImpl>(m)) dropout_layers_->push_back(d);
    }
  }
  return *dropout_layers_;
}

void ArrayClassifier::seed_dropout(std::int64_t slot, std::uint64_t seed) {
  std::uint64_t layer = 0;
  for (const auto& d : dropout_layers()) {
    ++layer;
    const auto& p = d->p();
    if (std::any_of(p.begin(), p.end(), [](double q) { return q > 0; })) d->seed_slot(slot, seed * 1000003ULL + layer);
  }
}

// ---- MLP --------------------------------------------------------------------

FusedMlp::FusedMlp(std::int64_t models, std::int64_t inputs, std::int64_t depth, std::int64_t width,
                   std::string activation, double dropout, std::int64_t classes,
                   const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), inputs_(inputs), depth_(depth), width_(width), classes_(classes),
      activation_(std::move(activation)), dropout_(dropout), options_(tensor_options) {
  std::int64_t in = inputs;
  for (std::int64_t d = 0; d <= depth; ++d) {
    const std::int64_t out = d == depth ? classes : width;
    layers_.push_back(register_module("linear" + std::to_string(d),
                                      fusion::FusedLinear(models, in, out, true, tensor_options)));
    if (d < depth) {
      dropouts_.push_back(register_module(
          "dropout" + std::to_string(d),
          fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul)));
    }
    in = out;
  }
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedMlp::forward(const at::Tensor& images) {
  at::Tensor x = fusion::broadcast_to_models(images.reshape({images.size(0), -1}), models_);
  for (std::int64_t d = 0; d <= depth_; ++d) {
    x = layers_[d]->forward(x);
    if (d < depth_) x = dropouts_[d]->forward(activate(activation_, x));
  }
  return x;
}

torch::nn::Sequential FusedMlp::make_plain() const {
  torch::nn::Sequential net;
  net->push_back(torch::nn::Flatten());
  std::int64_t in = inputs_;
  for (std::int64_t d = 0; d < depth_; ++d) {
    net->push_back(torch::nn::Linear(in, width_));
    net->push_back(plain_activation(activation_));
    net->push_back(torch::nn::Dropout(dropout_));
    in = width_;
  }
  net->push_back(torch::nn::Linear(in, classes_));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedMlp::resized(std::int64_t models) const {
  return std::make_shared<FusedMlp>(models, inputs_, depth_, width_, activation_, dropout_, classes_, options_);
}

void FusedMlp::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<torch::nn::Linear>(layers_, plain, slot);
}

torch::nn::Sequential FusedMlp::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<torch::nn::Linear>(layers_, plain, slot);
  return plain;
}

void FusedMlp::set_dropout(std::int64_t slot, double p) {
  for (auto& d : dropouts_) d->set_p(slot, p);
}

// ---- CNN --------------------------------------------------------------------

FusedCnn::FusedCnn(std::int64_t models, std::int64_t width, std::string activation, double dropout,
                   std::int64_t classes, const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), width_(width), classes_(classes), activation_(std::move(activation)),
      dropout_(dropout), options_(tensor_options) {
  const auto& t = tensor_options;
  conv1_ = register_module("conv1", fusion::FusedConv2d(models, torch::nn::Conv2dOptions(1, 6 * width, 5).padding(2), t));
  conv2_ = register_module("conv2", fusion::FusedConv2d(models, torch::nn::Conv2dOptions(6 * width, 16 * width, 5), t));
  fc1_ = register_module("fc1", fusion::FusedLinear(models, 16 * width * 25, 120, true, t));
  fc2_ = register_module("fc2", fusion::FusedLinear(models, 120, 84, true, t));
  fc3_ = register_module("fc3", fusion::FusedLinear(models, 84, classes, true, t));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedCnn::forward(const at::Tensor& images) {
  // The first convolution reads the batch every model shares, once.
  at::Tensor x = activate_and_pool(conv1_->forward_shared(images));
  x = activate_and_pool(conv2_->forward(x));
  x = fusion::conv_to_matmul(x, models_);
  x = drop_->forward(activate(activation_, fc1_->forward(x)));
  x = activate(activation_, fc2_->forward(x));
  return fc3_->forward(x);
}

at::Tensor FusedCnn::activate_and_pool(const at::Tensor& x) const {
  // ReLU commutes with max pooling, values and gradients alike (the window's
  // first maximum is the same; a window with no positive value passes no
  // gradient either way), so the array applies it to a quarter of the values,
  // inside the pooling's own pass.
  if (activation_ == "relu") return fusion::relu_max_pool2d(x, 2);
  return fusion::max_pool2d(activate(activation_, x), 2);
}

torch::nn::Sequential FusedCnn::make_plain() const {
  torch::nn::Sequential net(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6 * width_, 5).padding(2)), plain_activation(activation_),
      torch::nn::MaxPool2d(2), torch::nn::Conv2d(torch::nn::Conv2dOptions(6 * width_, 16 * width_, 5)),
      plain_activation(activation_), torch::nn::MaxPool2d(2), torch::nn::Flatten(),
      torch::nn::Linear(16 * width_ * 25, 120), plain_activation(activation_), torch::nn::Dropout(dropout_),
      torch::nn::Linear(120, 84), plain_activation(activation_), torch::nn::Linear(84, classes_));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedCnn::resized(std::int64_t models) const {
  return std::make_shared<FusedCnn>(models, width_, activation_, dropout_, classes_, options_);
}

void FusedCnn::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<torch::nn::Conv2d>(std::vector{conv1_, conv2_}, plain, slot);
  load_layers<torch::nn::Linear>(std::vector{fc1_, fc2_, fc3_}, plain, slot);
}

torch::nn::Sequential FusedCnn::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<torch::nn::Conv2d>(std::vector{conv1_, conv2_}, plain, slot);
  extract_layers<torch::nn::Linear>(std::vector{fc1_, fc2_, fc3_}, plain, slot);
  return plain;
}

void FusedCnn::set_dropout(std::int64_t slot, double p) { drop_->set_p(slot, p); }

}  // namespace hfta::trainers
