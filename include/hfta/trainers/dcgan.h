// DCGAN (Radford et al. 2016) as a fused array of B generator/discriminator pairs.
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/fusion/fused_conv.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

/// The sizes of a DCGAN for 32x32 single-channel images (Fashion-MNIST padded).
struct DcganShape {
  std::int64_t nz = 100;  ///< latent size
  std::int64_t ngf = 64;  ///< generator features (the last hidden layer's channels)
  std::int64_t ndf = 64;  ///< discriminator features (the first layer's channels)
};

/// B DCGANs, as PyTorch's examples/dcgan builds them, at 32x32:
/// generator z [nz, 1, 1] -> ConvT(nz, 4g, 4, 1, 0) 4x4 -> ConvT(4g, 2g, 4, 2, 1) 8x8
/// -> ConvT(2g, g, 4, 2, 1) 16x16 (each followed by BatchNorm2d and ReLU)
/// -> ConvT(g, 1, 4, 2, 1) 32x32 -> Tanh; discriminator Conv(1, d, 4, 2, 1) LeakyReLU(0.2)
/// -> Conv(d, 2d, 4, 2, 1) -> Conv(2d, 4d, 4, 2, 1) (each followed by BatchNorm2d and
/// LeakyReLU(0.2)) -> Conv(4d, 1, 4, 1, 0) -> Flatten: one real/fake logit. No
/// convolution has a bias; weights start as DCGAN's weights_init draws them
/// (convolutions N(0, 0.02), batch-norm weights N(1, 0.02), biases 0).
/// Plain form: Sequential(generator, discriminator), each a Sequential (so the
/// state dict's names are "0.<i>.weight" for generator layer i, "1.<i>.weight"),
/// whose forward of z [N, nz, 1, 1] is the discriminator's logit of G(z), [N, 1].
/// Each model has two optimizers (optimizer_groups: discriminator, then generator).
class FusedDcgan : public ArrayClassifier {
 public:
  FusedDcgan(std::int64_t models, DcganShape shape, const at::TensorOptions& tensor_options = {});

  /// Noise [B, N, nz], one latent batch per model -> images in the conv layout [N, B, 32, 32].
  at::Tensor generate(const at::Tensor& noise);
  /// Real/fake logits [B, N] of images in the conv layout [N, B, 32, 32], or of
  /// images every model shares [N, 1, 32, 32] (`shared`).
  at::Tensor discriminate(const at::Tensor& images, bool shared);
  /// One pass of both networks on shared images (the discriminator's logits
  /// [B, N, 1]) and on samples from fixed noise: what strategy tuning times.
  at::Tensor forward(const at::Tensor& images) override;

  std::vector<std::vector<at::Tensor>> optimizer_groups() override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t /*slot*/, double /*p*/) override {}  // DCGAN has no dropout

  const DcganShape& shape() const { return shape_; }

 private:
  DcganShape shape_;
  std::vector<fusion::FusedConvTranspose2d> generator_;
  std::vector<fusion::FusedConv2d> discriminator_;
  std::vector<fusion::FusedBatchNorm2d> bns_;  ///< the generator's 3, then the discriminator's 2
  at::TensorOptions options_;
};

/// Latent noise [B, N, nz] for the models of an array at a training step: row b
/// is drawn from (seeds[b], step) alone, so a trial sees the same noise in any
/// slot of any array, and alone.
at::Tensor gan_noise(const std::vector<std::uint64_t>& seeds, std::int64_t step, std::int64_t n, std::int64_t nz,
                     const at::TensorOptions& options);

/// Per-model mean binary cross-entropy of logits [B, N] against one target (1 real, 0 fake): [B].
at::Tensor per_model_bce(const at::Tensor& logits, double target);

}  // namespace hfta::trainers
