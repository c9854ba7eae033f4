#include "hfta/trainers/frechet_distance.h"

#include <map>
#include <mutex>
#include <tuple>

#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "hfta/fusion/slot_init.h"

namespace hfta::trainers {
namespace {

constexpr std::uint64_t kFeatureSeed = 20170626;  // fixed: every process trains the same network
constexpr std::int64_t kBatch = 100;

// sqrt of a symmetric positive semi-definite matrix (negative rounding clipped).
at::Tensor symmetric_sqrt(const at::Tensor& m) {
  auto [values, vectors] = at::linalg_eigh(m);
  return at::matmul(vectors * values.clamp_min(0).sqrt().unsqueeze(0), vectors.t());
}

}  // namespace

FeatureStatistics feature_statistics(const at::Tensor& features) {
  const at::Tensor f = features.to(at::kDouble);
  const at::Tensor mean = f.mean(0);
  const at::Tensor centred = f - mean;
  return {mean, at::matmul(centred.t(), centred) / static_cast<double>(f.size(0) - 1)};
}

double frechet_distance(const FeatureStatistics& a, const FeatureStatistics& b) {
  const at::Tensor root_a = symmetric_sqrt(a.covariance);
  // Tr((S_a^1/2 S_b S_a^1/2)^1/2) = Tr((S_a S_b)^1/2), through a symmetric matrix.
  const at::Tensor cross = std::get<0>(at::linalg_eigh(at::matmul(at::matmul(root_a, b.covariance), root_a)));
  const at::Tensor trace_root = cross.clamp_min(0).sqrt().sum();
  return ((a.mean - b.mean).pow(2).sum() + a.covariance.trace() + b.covariance.trace() - 2 * trace_root)
      .item<double>();
}

std::shared_ptr<const ImageFeatures> ImageFeatures::of(const Split& train) {
  // Keyed by the data's content, not its address: a process may load other data there later.
  static std::mutex mutex;
  static std::map<std::tuple<std::int64_t, double, double>, std::shared_ptr<const ImageFeatures>> trained;
  const at::Tensor x = train.images.to(at::kDouble);
  const auto key = std::make_tuple(train.images.numel(), x.sum().item<double>(), x.pow(2).sum().item<double>());
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = trained[key];
  if (!slot) slot = std::shared_ptr<const ImageFeatures>(new ImageFeatures(train));
  return slot;
}

ImageFeatures::ImageFeatures(const Split& train) {
  torch::AutoGradMode grad(true);  // evaluations, which first need it, run without gradients
  const at::Tensor images = train.images.to(at::kCPU, at::kFloat).flatten(1);
  const at::Tensor labels = train.labels.to(at::kCPU);
  torch::nn::Linear l1{nullptr}, l2{nullptr}, head{nullptr};
  {
    fusion::ScopedSeed seed(kFeatureSeed);
    l1 = torch::nn::Linear(images.size(1), 128);
    l2 = torch::nn::Linear(128, 64);
    head = torch::nn::Linear(64, labels.max().item<std::int64_t>() + 1);
  }
  torch::nn::Sequential net(l1, torch::nn::ReLU(), l2, torch::nn::ReLU(), head);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const at::Tensor order = epoch_order(images.size(0), kFeatureSeed, 0);
  for (std::int64_t start = 0; start + kBatch <= images.size(0); start += kBatch) {
    const at::Tensor index = order.narrow(0, start, kBatch);
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(images.index_select(0, index)), labels.index_select(0, index))
        .backward();
    sgd.step();
  }
  w1_ = l1->weight.detach().to(at::kDouble), b1_ = l1->bias.detach().to(at::kDouble);
  w2_ = l2->weight.detach().to(at::kDouble), b2_ = l2->bias.detach().to(at::kDouble);
}

at::Tensor ImageFeatures::operator()(const at::Tensor& images) const {
  const at::Tensor x = images.to(at::kCPU, at::kDouble).flatten(1);
  return at::relu(at::linear(at::relu(at::linear(x, w1_, b1_)), w2_, b2_));
}

}  // namespace hfta::trainers
