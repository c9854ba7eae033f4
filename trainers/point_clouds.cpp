#include "hfta/trainers/point_clouds.h"

#include <array>
#include <cmath>
#include <random>
#include <stdexcept>

#include <ATen/ATen.h>

namespace hfta::trainers {
namespace {

using Point = std::array<double, 3>;
constexpr double kPi = 3.14159265358979323846;

// Draws from raw 64-bit outputs, so the data is the same with every standard library.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * kPi * v);
  }

 private:
  std::mt19937_64 engine_;
};

Point on_sphere(Draw& d) {
  const double z = d.uniform(-1, 1), phi = d.uniform(0, 2 * kPi), r = std::sqrt(1 - z * z);
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// Uniform on the triangle a, b, c.
Point on_triangle(Draw& d, const Point& a, const Point& b, const Point& c) {
  const double s = std::sqrt(d.uniform()), t = d.uniform();
  Point p;
  for (int i = 0; i < 3; ++i) p[i] = (1 - s) * a[i] + s * (1 - t) * b[i] + s * t * c[i];
  return p;
}

Point on_disc(Draw& d, double z) {
  const double r = std::sqrt(d.uniform()), phi = d.uniform(0, 2 * kPi);
  return {r * std::cos(phi), r * std::sin(phi), z};
}

Point on_shape(int shape, Draw& d) {
  switch (shape) {
    case 0: return on_sphere(d);
    case 1: {  // cube: a face, then a point on it
      const int face = static_cast<int>(d.uniform() * 6);
      Point p{d.uniform(-1, 1), d.uniform(-1, 1), d.uniform(-1, 1)};
      p[face / 2] = face % 2 ? 1.0 : -1.0;
      return p;
    }
    case 2: {  // cylinder, radius 1, height 2: side 2/3 of the area, caps 1/3
      if (d.uniform() < 2.0 / 3.0) {
        const double phi = d.uniform(0, 2 * kPi);
        return {std::cos(phi), std::sin(phi), d.uniform(-1, 1)};
      }
      return on_disc(d, d.uniform() < 0.5 ? -1.0 : 1.0);
    }
    case 3: {  // cone, apex (0, 0, 1), base radius 1 at z = -1; base 1/(1+sqrt 5) of the area
      if (d.uniform() < 1.0 / (1.0 + std::sqrt(5.0))) return on_disc(d, -1.0);
      const double r = std::sqrt(d.uniform()), phi = d.uniform(0, 2 * kPi);
      return {r * std::cos(phi), r * std::sin(phi), 1 - 2 * r};
    }
    case 4: {  // torus, radii 0.7 and 0.3
      const double theta = d.uniform(0, 2 * kPi), phi = d.uniform(0, 2 * kPi);
      return {(0.7 + 0.3 * std::cos(phi)) * std::cos(theta), (0.7 + 0.3 * std::cos(phi)) * std::sin(theta),
              0.3 * std::sin(phi)};
    }
    case 5: {  // square pyramid: base [-1, 1]^2 at z = -1, apex (0, 0, 1)
      const int face = static_cast<int>(d.uniform() * 5);
      if (face == 4) return {d.uniform(-1, 1), d.uniform(-1, 1), -1.0};
      const Point corners[4] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}};
      return on_triangle(d, {0, 0, 1}, corners[face], corners[(face + 1) % 4]);
    }
    case 6: {  // ellipsoid with semi-axes 1, 0.6, 0.35
      const Point p = on_sphere(d);
      return {p[0], 0.6 * p[1], 0.35 * p[2]};
    }
    default: {  // octahedron: one of the eight faces
      const double sx = d.uniform() < 0.5 ? -1 : 1, sy = d.uniform() < 0.5 ? -1 : 1, sz = d.uniform() < 0.5 ? -1 : 1;
      return on_triangle(d, {sx, 0, 0}, {0, sy, 0}, {0, 0, sz});
    }
  }
}

// A uniformly random rotation, from a uniformly random unit quaternion.
std::array<Point, 3> rotation(Draw& d) {
  double q[4];
  double norm = 0;
  for (double& v : q) norm += (v = d.normal()) * v;
  norm = std::sqrt(norm);
  for (double& v : q) v /= norm;
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
           {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
           {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

Split make_split(const PointCloudOptions& o, std::int64_t first, std::int64_t count) {
  const std::int64_t classes = static_cast<std::int64_t>(point_cloud_classes().size());
  at::Tensor clouds = at::empty({count, 3, o.points}, at::kFloat);
  at::Tensor labels = at::empty({count}, at::kLong);
  float* out = clouds.data_ptr<float>();
  std::int64_t* label = labels.data_ptr<std::int64_t>();
  for (std::int64_t n = 0; n < count; ++n) {
    const std::int64_t index = first + n;
    Draw d(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index));
    const int shape = static_cast<int>(index % classes);
    const auto r = rotation(d);
    const double scale = d.uniform(0.7, 1.3);
    label[n] = shape;
    float* cloud = out + n * 3 * o.points;
    for (std::int64_t i = 0; i < o.points; ++i) {
      const Point p = on_shape(shape, d);
      for (int k = 0; k < 3; ++k) {
        const double v = scale * (r[k][0] * p[0] + r[k][1] * p[1] + r[k][2] * p[2]) + o.noise * d.normal();
        cloud[k * o.points + i] = static_cast<float>(v);
      }
    }
  }
  return {clouds, labels};
}

}  // namespace

const std::vector<std::string>& point_cloud_classes() {
  static const std::vector<std::string> names = {"sphere", "cube", "cylinder", "cone",
                                                 "torus", "pyramid", "ellipsoid", "octahedron"};
  return names;
}

ClassificationData make_point_clouds(const PointCloudOptions& o) {
  if (o.points < 1) throw std::invalid_argument("point clouds need at least one point");
  if (o.train_size < 1 || o.validation_size < 1 || o.test_size < 0) {
    throw std::invalid_argument("point clouds need training and validation clouds");
  }
  ClassificationData data;
  data.classes = static_cast<std::int64_t>(point_cloud_classes().size());
  // Splits take consecutive index ranges, so they never share a cloud.
  data.train = make_split(o, 0, o.train_size);
  data.validation = make_split(o, o.train_size, o.validation_size);
  data.test = make_split(o, o.train_size + o.validation_size, o.test_size);
  return data;
}

}  // namespace hfta::trainers
