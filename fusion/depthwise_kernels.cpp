// Loops of depthwise.h. Built without the torch header, at -O3 (CMakeLists.txt).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <ATen/Parallel.h>

#include "hfta/fusion/depthwise.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

struct Dims {
  std::int64_t n, c, h, w, out_c, oh, ow, kh, kw;
};

/// First and one-past-last output column whose input column ow * stride + offset lies in [0, w).
std::pair<std::int64_t, std::int64_t> valid_columns(std::int64_t offset, std::int64_t stride, std::int64_t w,
                                                    std::int64_t ow) {
  std::int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  std::int64_t hi = w - 1 - offset < 0 ? 0 : (w - 1 - offset) / stride + 1;
  return {std::min(lo, ow), std::min(hi, ow)};
}

// Stride 1: image by image (the array's channels of one image lie together,
// so the reads run in memory order; channel by channel, each image's plane sat
// a whole image of B models away from the next, and reading ran 3x slower),
// each channel's plane copied into zero-padded buffers of one row width (the
// input with its padding, the output gradient with zero columns past its width
// and zeros to a whole number of vectors), so that a tap's products over a
// plane are one loop at a fixed offset, eight positions at a time in
// registers. Each image's sums are then added, lane by lane, in double.
using Vec = float __attribute__((vector_size(32)));
constexpr std::int64_t kLanes = 8;

Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Padded {
  std::int64_t wp, span;              // buffer row width; positions summed (whole vectors)
  std::vector<std::int64_t> offsets;  // of each tap in the input buffer
  std::vector<float> x, gy;           // one plane each
};

Padded padded(const Dims& d, const DepthwiseGeometry& g) {
  Padded p;
  p.wp = d.w + 2 * g.pad_w;
  const std::int64_t used = (d.oh - 1) * p.wp + d.ow;
  p.span = (used + kLanes - 1) / kLanes * kLanes;
  for (std::int64_t kh = 0; kh < d.kh; ++kh) {
    for (std::int64_t kw = 0; kw < d.kw; ++kw) p.offsets.push_back(kh * g.dilation_h * p.wp + kw * g.dilation_w);
  }
  // Slack past the padded image: the last vector's reads at the largest offset.
  p.x.assign(static_cast<std::size_t>((d.h + 2 * g.pad_h) * p.wp + (p.span - used)), 0.0F);
  p.gy.assign(static_cast<std::size_t>(p.span), 0.0F);
  return p;
}

// Taps known when compiled (3x3, 5x5), so that the sums are registers.
template <std::int64_t taps>
void channels_stride_1(const float* x, const float* gy, const Dims& d, const DepthwiseGeometry& g,
                       std::int64_t begin, std::int64_t end, float* gw, float* gb) {
  Padded p = padded(d, g);
  std::vector<double> total(static_cast<std::size_t>((end - begin) * (taps + 1)), 0.0);
  const std::int64_t* offsets = p.offsets.data();
  for (std::int64_t n = 0; n < d.n; ++n) {
    for (std::int64_t o = begin; o < end; ++o) {
      const float* xc = x + (n * d.c + o / (d.out_c / d.c)) * d.h * d.w;
      const float* gc = gy + (n * d.out_c + o) * d.oh * d.ow;
      // Rows of a few dozen floats: loops the compiler vectorises, not a library call per row.
      float* xb = p.x.data() + g.pad_h * p.wp + g.pad_w;
      for (std::int64_t r = 0; r < d.h; ++r) {
        for (std::int64_t c = 0; c < d.w; ++c) xb[r * p.wp + c] = xc[r * d.w + c];
      }
      for (std::int64_t r = 0; r < d.oh; ++r) {
        for (std::int64_t c = 0; c < d.ow; ++c) p.gy[r * p.wp + c] = gc[r * d.ow + c];
      }
      Vec sums[taps + 1] = {};  // a vector per tap, and one for the bias
      for (std::int64_t j = 0; j < p.span; j += kLanes) {
        const Vec grad = load(p.gy.data() + j);
        const float* xs = p.x.data() + j;
        for (std::int64_t t = 0; t < taps; ++t) sums[t] += grad * load(xs + offsets[t]);
        sums[taps] += grad;
      }
      double* out = total.data() + (o - begin) * (taps + 1);
      for (std::int64_t t = 0; t <= taps; ++t) {
        for (std::int64_t k = 0; k < kLanes; ++k) out[t] += sums[t][k];
      }
    }
  }
  for (std::int64_t o = begin; o < end; ++o) {
    const double* sum = total.data() + (o - begin) * (taps + 1);
    for (std::int64_t t = 0; t < taps; ++t) gw[o * taps + t] = static_cast<float>(sum[t]);
    if (gb != nullptr) gb[o] = static_cast<float>(sum[taps]);
  }
}

// One plane of a correlation: the input plane copied into a zero-padded
// buffer, every output position of the span summed over the taps in order
// (eight at a time in registers), then the span's rows written out.
template <std::int64_t taps>
void correlate_plane(const float* in, const float* weights, float bias, const Dims& d, std::int64_t pad_h,
                     std::int64_t pad_w, Padded& p, float* out) {
  float* xb = p.x.data() + pad_h * p.wp + pad_w;
  for (std::int64_t r = 0; r < d.h; ++r) {
    for (std::int64_t c = 0; c < d.w; ++c) xb[r * p.wp + c] = in[r * d.w + c];
  }
  for (std::int64_t j = 0; j < p.span; j += kLanes) {
    Vec sum = Vec{} + bias;
    const float* xs = p.x.data() + j;
    for (std::int64_t t = 0; t < taps; ++t) sum += weights[t] * load(xs + p.offsets[t]);
    std::memcpy(p.gy.data() + j, &sum, sizeof sum);
  }
  for (std::int64_t r = 0; r < d.oh; ++r) {
    for (std::int64_t c = 0; c < d.ow; ++c) out[r * d.ow + c] = p.gy[r * p.wp + c];
  }
}

// Other strides and kernels: a lane per (tap, output column), summed over images and rows.
void channel_strided(const float* x, const float* gy, const Dims& d, const DepthwiseGeometry& g, std::int64_t o,
                     std::vector<double>& lanes, float* gw, float* gb) {
  const std::int64_t taps = d.kh * d.kw, in = o / (d.out_c / d.c);
  lanes.assign(static_cast<std::size_t>((taps + 1) * d.ow), 0.0);
  double* bias_lanes = lanes.data() + taps * d.ow;
  for (std::int64_t n = 0; n < d.n; ++n) {
    const float* xc = x + (n * d.c + in) * d.h * d.w;
    const float* gc = gy + (n * d.out_c + o) * d.oh * d.ow;
    for (std::int64_t oh = 0; oh < d.oh; ++oh) {
      const float* gr = gc + oh * d.ow;
      for (std::int64_t ow = 0; ow < d.ow; ++ow) bias_lanes[ow] += gr[ow];
      for (std::int64_t kh = 0; kh < d.kh; ++kh) {
        const std::int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
        if (ih < 0 || ih >= d.h) continue;
        for (std::int64_t kw = 0; kw < d.kw; ++kw) {
          const std::int64_t offset = kw * g.dilation_w - g.pad_w;
          const auto [lo, hi] = valid_columns(offset, g.stride_w, d.w, d.ow);
          double* lane = lanes.data() + (kh * d.kw + kw) * d.ow;
          const float* xs = xc + ih * d.w + offset;
          for (std::int64_t ow = lo; ow < hi; ++ow) lane[ow] += static_cast<double>(gr[ow] * xs[ow * g.stride_w]);
        }
      }
    }
  }
  for (std::int64_t t = 0; t <= taps; ++t) {
    double sum = 0;
    for (std::int64_t ow = 0; ow < d.ow; ++ow) sum += lanes[t * d.ow + ow];
    if (t < taps) {
      gw[o * taps + t] = static_cast<float>(sum);
    } else if (gb != nullptr) {
      gb[o] = static_cast<float>(sum);
    }
  }
}

void check(const at::Tensor& t, const char* what) {
  if (!t.is_cpu() || !t.is_contiguous() || t.scalar_type() != at::kFloat) {
    throw std::invalid_argument(std::string("depthwise gradient kernel: ") + what +
                                " must be a contiguous float CPU tensor");
  }
}

}  // namespace

HFTA_VECTOR_CLONES
void depthwise_weight_grad_cpu(const at::Tensor& x, const at::Tensor& grad_y, const DepthwiseGeometry& g,
                               at::Tensor& grad_w, at::Tensor& grad_b) {
  check(x, "input");
  check(grad_y, "output gradient");
  check(grad_w, "weight gradient");
  if (grad_b.defined()) check(grad_b, "bias gradient");
  if (x.dim() != 4 || grad_y.dim() != 4 || grad_w.dim() != 4 || grad_y.size(0) != x.size(0) ||
      grad_y.size(1) % x.size(1) != 0 || grad_w.size(0) != grad_y.size(1)) {
    throw std::invalid_argument("depthwise gradient kernel: shapes do not match");
  }
  const Dims d{x.size(0),      x.size(1),      x.size(2),      x.size(3),     grad_y.size(1),
               grad_y.size(2), grad_y.size(3), grad_w.size(2), grad_w.size(3)};
  const float* xp = x.data_ptr<float>();
  const float* gp = grad_y.data_ptr<float>();
  float* wp = grad_w.data_ptr<float>();
  float* bp = grad_b.defined() ? grad_b.data_ptr<float>() : nullptr;
  // Whole channels per task: a channel's sums never depend on how many threads share them.
  if (d.n == 0 || d.oh == 0 || d.ow == 0) {  // nothing to sum
    std::fill(wp, wp + grad_w.numel(), 0.0F);
    if (bp != nullptr) std::fill(bp, bp + d.out_c, 0.0F);
    return;
  }
  const std::int64_t taps = d.kh * d.kw;
  const bool stride_1 = g.stride_h == 1 && g.stride_w == 1 && (taps == 9 || taps == 25);
  at::parallel_for(0, d.out_c, 1, [&](std::int64_t begin, std::int64_t end) {
    if (stride_1 && taps == 9) {
      channels_stride_1<9>(xp, gp, d, g, begin, end, wp, bp);
    } else if (stride_1) {
      channels_stride_1<25>(xp, gp, d, g, begin, end, wp, bp);
    } else {
      std::vector<double> lanes;
      for (std::int64_t o = begin; o < end; ++o) channel_strided(xp, gp, d, g, o, lanes, wp, bp);
    }
  });
}

HFTA_VECTOR_CLONES
void depthwise_correlate_cpu(const at::Tensor& in, const at::Tensor& weight, const at::Tensor& bias,
                             const DepthwiseGeometry& g, bool flip, at::Tensor& out) {
  check(in, "input");
  check(weight, "weight");
  check(out, "output");
  if (bias.defined()) check(bias, "bias");
  const std::int64_t kh = weight.dim() == 4 ? weight.size(2) : 0, kw = weight.dim() == 4 ? weight.size(3) : 0;
  if (in.dim() != 4 || out.dim() != 4 || weight.dim() != 4 || weight.size(0) != in.size(1) ||
      out.size(1) != in.size(1) || out.size(0) != in.size(0) || g.stride_h != 1 || g.stride_w != 1 ||
      !(kh * kw == 9 || kh * kw == 25) || out.size(2) != in.size(2) + 2 * g.pad_h - g.dilation_h * (kh - 1) ||
      out.size(3) != in.size(3) + 2 * g.pad_w - g.dilation_w * (kw - 1)) {
    throw std::invalid_argument("depthwise correlation kernel: shapes or geometry it does not take");
  }
  const Dims d{in.size(0), in.size(1), in.size(2), in.size(3), in.size(1), out.size(2), out.size(3), kh, kw};
  if (out.numel() == 0) return;
  const float* ip = in.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  const float* bp = bias.defined() ? bias.data_ptr<float>() : nullptr;
  float* op = out.data_ptr<float>();
  const std::int64_t taps = kh * kw;
  at::parallel_for(0, d.c, 1, [&](std::int64_t begin, std::int64_t end) {
    Padded p = padded(d, g);
    std::vector<float> w(static_cast<std::size_t>(taps));
    for (std::int64_t n = 0; n < d.n; ++n) {  // image by image: in memory order
      for (std::int64_t c = begin; c < end; ++c) {
        for (std::int64_t t = 0; t < taps; ++t) w[t] = wp[c * taps + (flip ? taps - 1 - t : t)];
        const float* plane = ip + (n * d.c + c) * d.h * d.w;
        float* target = op + (n * d.c + c) * d.oh * d.ow;
        const float b = bp != nullptr ? bp[c] : 0.0F;
        if (taps == 9) {
          correlate_plane<9>(plane, w.data(), b, d, g.pad_h, g.pad_w, p, target);
        } else {
          correlate_plane<25>(plane, w.data(), b, d, g.pad_h, g.pad_w, p, target);
        }
      }
    }
  });
}

}  // namespace hfta::fusion
