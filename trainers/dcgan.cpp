#include "hfta/trainers/dcgan.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "hfta/fusion/module_cast.h"
#include "plain_layers.h"

namespace hfta::trainers {
namespace {

using torch::nn::BatchNorm2d;
using torch::nn::Conv2d;
using torch::nn::Conv2dOptions;
using torch::nn::ConvTranspose2d;
using torch::nn::ConvTranspose2dOptions;

constexpr double kSlope = 0.2;  // LeakyReLU's negative slope

// Layer i of each network: (in, out, stride, padding); channels in units of ngf / ndf.
struct ConvSpec {
  std::int64_t in, out, stride, padding;
};

std::vector<ConvSpec> generator_specs(const DcganShape& s) {
  return {{s.nz, 4 * s.ngf, 1, 0}, {4 * s.ngf, 2 * s.ngf, 2, 1}, {2 * s.ngf, s.ngf, 2, 1}, {s.ngf, 1, 2, 1}};
}

std::vector<ConvSpec> discriminator_specs(const DcganShape& s) {
  return {{1, s.ndf, 2, 1}, {s.ndf, 2 * s.ndf, 2, 1}, {2 * s.ndf, 4 * s.ndf, 2, 1}, {4 * s.ndf, 1, 1, 0}};
}

ConvTranspose2dOptions transposed(const ConvSpec& c) {
  return ConvTranspose2dOptions(c.in, c.out, 4).stride(c.stride).padding(c.padding).bias(false);
}

Conv2dOptions convolution(const ConvSpec& c) {
  return Conv2dOptions(c.in, c.out, 4).stride(c.stride).padding(c.padding).bias(false);
}

// DCGAN's weights_init, drawn from the default generator (seeded by the caller).
void dcgan_init(torch::nn::Module& net) {
  torch::NoGradGuard no_grad;
  for (auto& m : net.modules(/*include_self=*/false)) {
    if (auto c = std::dynamic_pointer_cast<torch::nn::ConvTranspose2dImpl>(m)) {
      torch::nn::init::normal_(c->weight, 0.0, 0.02);
    } else if (auto d = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(m)) {
      torch::nn::init::normal_(d->weight, 0.0, 0.02);
    } else if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) {
      torch::nn::init::normal_(bn->weight, 1.0, 0.02);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

// A Sequential with a plain forward, which a Sequential can hold (a Sequential cannot).
struct NetworkImpl : torch::nn::SequentialImpl {
  at::Tensor forward(const at::Tensor& x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Network);

}  // namespace

FusedDcgan::FusedDcgan(std::int64_t models, DcganShape shape, const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), shape_(shape), options_(tensor_options) {
  const auto g = generator_specs(shape), d = discriminator_specs(shape);
  for (std::size_t i = 0; i < g.size(); ++i) {
    generator_.push_back(register_module("g_conv" + std::to_string(i),
                                         fusion::FusedConvTranspose2d(models, transposed(g[i]), tensor_options)));
    if (i + 1 < g.size()) {
      bns_.push_back(register_module("g_bn" + std::to_string(i),
                                     fusion::FusedBatchNorm2d(models, torch::nn::BatchNormOptions(g[i].out), tensor_options)));
    }
  }
  for (std::size_t i = 0; i < d.size(); ++i) {
    discriminator_.push_back(register_module("d_conv" + std::to_string(i),
                                             fusion::FusedConv2d(models, convolution(d[i]), tensor_options)));
    if (i > 0 && i + 1 < d.size()) {
      bns_.push_back(register_module("d_bn" + std::to_string(i),
                                     fusion::FusedBatchNorm2d(models, torch::nn::BatchNormOptions(d[i].out), tensor_options)));
    }
  }
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

at::Tensor FusedDcgan::generate(const at::Tensor& noise) {
  const std::int64_t n = noise.size(1);
  at::Tensor x = noise.permute({1, 0, 2}).reshape({n, models_ * shape_.nz, 1, 1});  // the conv layout
  for (std::size_t i = 0; i < generator_.size(); ++i) {
    x = generator_[i]->forward(x);
    x = i + 1 < generator_.size() ? at::relu(bns_[i]->forward(x)) : at::tanh(x);
  }
  return x;  // [N, B, 32, 32]
}

at::Tensor FusedDcgan::discriminate(const at::Tensor& images, bool shared) {
  at::Tensor x = shared ? discriminator_[0]->forward_shared(images) : discriminator_[0]->forward(images);
  x = at::leaky_relu(x, kSlope);
  for (std::size_t i = 1; i + 1 < discriminator_.size(); ++i) {
    x = at::leaky_relu(bns_[3 + i - 1]->forward(discriminator_[i]->forward(x)), kSlope);
  }
  x = discriminator_.back()->forward(x);           // [N, B, 1, 1]
  return x.reshape({x.size(0), models_}).t();  // [B, N]
}

at::Tensor FusedDcgan::forward(const at::Tensor& images) {
  // Constant noise: timing needs the shapes, and the default random stream stays untouched.
  const at::Tensor noise = at::ones({models_, images.size(0), shape_.nz}, images.options());
  discriminate(generate(noise), /*shared=*/false);
  return discriminate(images, /*shared=*/true).unsqueeze(-1);
}

std::vector<std::vector<at::Tensor>> FusedDcgan::optimizer_groups() {
  std::vector<at::Tensor> generator, discriminator;
  for (const auto& p : named_parameters()) {
    (p.key().rfind("g_", 0) == 0 ? generator : discriminator).push_back(p.value());
  }
  return {discriminator, generator};
}

torch::nn::Sequential FusedDcgan::make_plain() const {
  using namespace torch::nn;
  Network generator, discriminator;
  const auto g = generator_specs(shape_), d = discriminator_specs(shape_);
  for (std::size_t i = 0; i < g.size(); ++i) {
    generator->push_back(ConvTranspose2d(transposed(g[i])));
    if (i + 1 < g.size()) {
      generator->push_back(BatchNorm2d(g[i].out));
      generator->push_back(ReLU());
    }
  }
  generator->push_back(Tanh());
  for (std::size_t i = 0; i < d.size(); ++i) {
    discriminator->push_back(Conv2d(convolution(d[i])));
    if (i > 0 && i + 1 < d.size()) discriminator->push_back(BatchNorm2d(d[i].out));
    if (i + 1 < d.size()) discriminator->push_back(LeakyReLU(LeakyReLUOptions().negative_slope(kSlope)));
  }
  discriminator->push_back(Flatten());
  Sequential net(generator, discriminator);
  dcgan_init(*net);
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedDcgan::resized(std::int64_t models) const {
  return std::make_shared<FusedDcgan>(models, shape_, options_);
}

void FusedDcgan::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  load_layers<ConvTranspose2d>(generator_, plain, slot);
  load_layers<Conv2d>(discriminator_, plain, slot);
  load_layers<BatchNorm2d>(bns_, plain, slot);
}

torch::nn::Sequential FusedDcgan::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  extract_layers<ConvTranspose2d>(generator_, plain, slot);
  extract_layers<Conv2d>(discriminator_, plain, slot);
  extract_layers<BatchNorm2d>(bns_, plain, slot);
  return plain;
}

at::Tensor gan_noise(const std::vector<std::uint64_t>& seeds, std::int64_t step, std::int64_t n, std::int64_t nz,
                     const at::TensorOptions& options) {
  std::vector<at::Tensor> rows;
  for (std::uint64_t seed : seeds) {
    // Drawn on the CPU, so the noise is the same on every device.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(
        seed ^ (static_cast<std::uint64_t>(step + 1) * 0xbf58476d1ce4e5b9ULL));
    rows.push_back(at::randn({n, nz}, generator, at::TensorOptions().dtype(at::kFloat)));
  }
  return at::stack(rows).to(options);
}

at::Tensor per_model_bce(const at::Tensor& logits, double target) {
  // Each model's row contiguous: the discriminator's [B, N] logits are a
  // transposed view, whose mean over N ran across the models in vector lanes
  // and so summed in an order that changed with B (losses differing in the
  // last bits between packings; the gradients, 1/N each, never did).
  const at::Tensor rows = logits.contiguous();
  return at::binary_cross_entropy_with_logits(rows, at::full_like(rows, target), {}, {}, at::Reduction::None).mean(1);
}

}  // namespace hfta::trainers
