// What a GAN's evaluation compares against, made once per trainer. Private to trainers/.
#pragma once

#include <algorithm>
#include <memory>

#include <ATen/ATen.h>

#include "hfta/trainers/classification_data.h"
#include "hfta/trainers/frechet_distance.h"

namespace hfta::trainers {

struct GanEvaluation {
  static constexpr std::int64_t kSamples = 2000;  ///< samples per model, and validation images judged
  static constexpr std::uint64_t kNoiseSeed = 0x6a09e667f3bcc908ULL;

  GanEvaluation(const ClassificationData& data, std::int64_t nz, const at::TensorOptions& options)
      : features(ImageFeatures::of(data.train)),
        reference(feature_statistics((*features)(data.validation.images))),
        real(data.validation.images.narrow(0, 0, std::min(kSamples, data.validation.size())).to(options)) {
    // The same fixed noise for every model: trials are compared on the same latent points.
    auto generator = at::make_generator<at::CPUGeneratorImpl>(kNoiseSeed);
    noise = at::randn({real.size(0), nz}, generator, at::TensorOptions().dtype(at::kFloat)).to(options);
  }

  std::shared_ptr<const ImageFeatures> features;
  FeatureStatistics reference;  ///< of every validation image
  at::Tensor real;              ///< the validation images the discriminator is judged on
  at::Tensor noise;             ///< [kSamples, nz]
};

}  // namespace hfta::trainers
