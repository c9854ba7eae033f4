// The array training loop's GAN steps and evaluation (array_trainer.h).
#include <ATen/ATen.h>
#include <torch/utils.h>

#include "gan_evaluation.h"
#include "hfta/trainers/array_trainer.h"

namespace hfta::trainers {

// One step of PyTorch's DCGAN example, for every model: the discriminator
// learns real images as real and the generator's samples (detached) as fake;
// then the generator learns to make the updated discriminator call its samples real.
at::Tensor ArrayTrainer::gan_step(const Split& b) {
  std::vector<std::uint64_t> seeds;
  for (const auto& t : trials_) seeds.push_back(t.seed);
  const auto groups = model_->optimizer_groups();
  const at::Tensor noise = gan_noise(seeds, step_, b.size(), gan_->shape().nz, groups.front().front().options());
  // Stopped models are left out of both losses, as in classifier_step.
  auto running = [this](const at::Tensor& per_model) {
    return frozen_.empty() ? per_model : at::where(running_mask(), per_model, at::zeros_like(per_model));
  };
  optimizer_->zero_grad();
  const at::Tensor fake = gan_->generate(noise);
  // In sequence (not both sides of one +, whose order C++ leaves open): each
  // pass moves the batch norms' running statistics, real images first.
  const at::Tensor real_loss = per_model_bce(gan_->discriminate(model_->input(b.images), /*shared=*/true), 1.0);
  const at::Tensor d_loss = real_loss + per_model_bce(gan_->discriminate(fake.detach(), /*shared=*/false), 0.0);
  running(d_loss).sum().backward();
  clip_gradients(groups[0]);
  optimizer_->step();

  generator_optimizer_->zero_grad();
  const at::Tensor g_loss = per_model_bce(gan_->discriminate(fake, /*shared=*/false), 1.0);
  running(g_loss).sum().backward();
  clip_gradients(groups[1]);
  generator_optimizer_->step();
  d_loss_sum_ += d_loss.detach().to(at::kDouble);
  return g_loss;
}

// Each model's samples from the fixed noise against the validation images:
// their Fréchet distance, and the discriminator's loss and accuracy telling
// the first validation images (real) from the samples (fake).
std::vector<SlotMetrics> ArrayTrainer::gan_metrics() {
  torch::NoGradGuard no_grad;
  const std::int64_t models = model_->models();
  if (!gan_evaluation_) {
    gan_evaluation_ = std::make_unique<GanEvaluation>(data_, gan_->shape().nz, model_->parameters().front().options());
  }
  const GanEvaluation& e = *gan_evaluation_;
  model_->eval();
  const std::int64_t chunk = std::min<std::int64_t>(1000, 4 * options_.batch_size), n = e.real.size(0);
  const auto on_device = at::TensorOptions().dtype(at::kDouble).device(device_);
  at::Tensor loss_sum = at::zeros({models}, on_device), correct = at::zeros({models}, on_device);
  std::vector<at::Tensor> samples;  // [count, B, 32, 32] each, on the CPU
  for (std::int64_t start = 0; start < n; start += chunk) {
    const std::int64_t count = std::min(chunk, n - start);
    const at::Tensor fake = gan_->generate(e.noise.narrow(0, start, count).unsqueeze(0).expand({models, count, -1}));
    const at::Tensor fake_logits = gan_->discriminate(fake, /*shared=*/false);
    const at::Tensor real_logits = gan_->discriminate(e.real.narrow(0, start, count), /*shared=*/true);
    loss_sum += (per_model_bce(real_logits, 1.0) + per_model_bce(fake_logits, 0.0)).to(at::kDouble) *
                static_cast<double>(count);
    correct += ((real_logits > 0).sum(1) + (fake_logits < 0).sum(1)).to(at::kDouble);
    samples.push_back(fake.cpu());
  }
  model_->train();
  const at::Tensor all = at::cat(samples);
  loss_sum = loss_sum.cpu(), correct = correct.cpu();
  std::vector<SlotMetrics> out(static_cast<std::size_t>(models));
  for (std::int64_t i = 0; i < models; ++i) {
    SlotMetrics& m = out[static_cast<std::size_t>(i)];
    m.val_loss = loss_sum[i].item<double>() / static_cast<double>(n);
    m.val_accuracy = correct[i].item<double>() / static_cast<double>(2 * n);
    m.val_perplexity = NAN;
    const at::Tensor images = all.select(1, i);
    const bool finite = at::isfinite(images).all().item<bool>();
    m.val_fid = finite ? frechet_distance(feature_statistics((*e.features)(images)), e.reference) : NAN;
  }
  return out;
}

}  // namespace hfta::trainers
