// A procedural, seeded point-cloud classification set for PointNet: points on the
// surface of eight 3-D shapes, each scaled, rotated and jittered at random.
// Every cloud is a pure function of (seed, index), so any run regenerates the
// same data without files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

/// The classes, in label order.
const std::vector<std::string>& point_cloud_classes();

struct PointCloudOptions {
  std::int64_t points = 1024;  ///< points per cloud
  std::int64_t train_size = 8000, validation_size = 2000, test_size = 2000;
  std::uint64_t seed = 0;      ///< the dataset's seed (not the sweep's): same data for every sweep
  double noise = 0.02;         ///< standard deviation of the per-point jitter
};

/// Clouds [N, 3, points] (PyTorch PointNet's layout) and labels [N], classes
/// balanced (label = index mod 8). Throws std::invalid_argument on bad options.
ClassificationData make_point_clouds(const PointCloudOptions& options = {});

}  // namespace hfta::trainers
