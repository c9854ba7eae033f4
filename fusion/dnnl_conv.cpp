#include "hfta/fusion/dnnl_conv.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "hfta/fusion/mixed_precision.h"

#ifdef HFTA_HAVE_DNNL
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace hfta::fusion {

#ifdef HFTA_HAVE_DNNL
namespace {

using dnnl::memory;
using dims = memory::dims;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dims dense_strides(const dims& d) {
  dims s(d.size());
  std::int64_t step = 1;
  for (std::size_t i = d.size(); i-- > 0;) {
    s[i] = step;
    step *= d[i];
  }
  return s;
}

memory::desc f32(const dims& d, const dims& strides) { return memory::desc(d, memory::data_type::f32, strides); }
memory::desc f32(const dims& d) { return f32(d, dense_strides(d)); }
memory::desc any(const dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); }

/// Each primitive gets its scratchpad from the caller, so two workers' arrays
/// may run one cached primitive at once.
dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

/// A primitive and the scratchpad it asks for.
struct Step {
  dnnl::primitive run;
  memory::desc scratchpad;
};

/// A copy between a tensor's own layout and the one a primitive chose; none
/// where they are the same.
struct Move {
  memory::desc from, to;
  std::optional<Step> reorder;
  Move(const memory::desc& f, const memory::desc& t) : from(f), to(t) {
    if (f != t) {
      const dnnl::reorder::primitive_desc pd(engine(), f, engine(), t, user_scratchpad());
      reorder = Step{dnnl::reorder(pd), pd.scratchpad_desc()};
    }
  }
};

/// One model's convolution of a given shape, and the copies around it.
struct Plan {
  dims x_dims, w_dims, y_dims;
  bool x_partial = false;  ///< the convolution reads not all of the input: the rest's gradient is zero
  std::int64_t x_step = 0, w_step = 0, y_step = 0, b_step = 0;  ///< elements from one model's slice to the next
  std::vector<std::int64_t> y_sizes;                         ///< the whole output, conv layout
  memory::desc bias_md;                                      ///< zero: no bias
  dnnl::primitive_desc fwd, data, weights;  ///< a convolution's or a deconvolution's
  Step fwd_run, data_run, weights_run;
  std::optional<Move> x_fwd, w_fwd, fwd_y, gy_data, w_data, data_gx, x_weights, gy_weights, weights_gw;
  bool gy_same = false;  ///< both backward primitives read the output gradient in one layout: copied once
  /// The forward's blocked copies of the input are kept for the weight
  /// gradient, which reads the same layout: one pass over the input saved.
  bool keep_x = false;
};

/// The one-model slices of a call: buffers for blocked copies, reused model after model.
class Call {
 public:
  dnnl::stream stream{engine()};

  /// The primitive's copy of a tensor slice at p (or the slice itself). A
  /// buffer that holds that copy already is not copied into again: a shared
  /// input, read by every model.
  memory in(const Move& m, const float* p, int buffer) {
    memory user(m.from, engine(), const_cast<float*>(p));
    if (!m.reorder) return user;
    void* at = bytes(buffer, m.to.get_size());
    memory copy(m.to, engine(), at);
    if (held_[buffer].move == &m && held_[buffer].from == p) return copy;
    run(*m.reorder, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, copy}});
    held_[buffer] = {&m, p};
    return copy;
  }

  /// The primitive's copy of a tensor slice at p, written at `at` (which holds it after).
  memory into(const Move& m, const float* p, void* at) {
    memory copy(m.to, engine(), at);
    run(*m.reorder, {{DNNL_ARG_FROM, memory(m.from, engine(), const_cast<float*>(p))}, {DNNL_ARG_TO, copy}});
    return copy;
  }

  /// Where a primitive writes an output that ends at p: p itself, or a buffer `done` copies to p.
  memory out(const Move& m, float* p, int buffer) {
    if (!m.reorder) return memory(m.to, engine(), p);
    held_[buffer] = {};
    return memory(m.from, engine(), bytes(buffer, m.from.get_size()));
  }
  void done(const Move& m, const memory& written, float* p) {
    if (m.reorder) run(*m.reorder, {{DNNL_ARG_FROM, written}, {DNNL_ARG_TO, memory(m.to, engine(), p)}});
  }

  void run(const Step& s, std::unordered_map<int, memory> args) {
    if (s.scratchpad.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, engine(), bytes(kScratchpad, s.scratchpad.get_size())));
    }
    s.run.execute(stream, args);
    stream.wait();
  }

 private:
  static constexpr int kScratchpad = 0, kBuffers = 5;
  void* bytes(int buffer, std::size_t size) {
    at::Tensor& b = buffers_[buffer];
    if (!b.defined() || static_cast<std::size_t>(b.numel()) < size) {
      b = at::empty({static_cast<std::int64_t>(size)}, at::kByte);
      held_[buffer] = {};
    }
    return b.data_ptr();
  }
  /// Which copy a buffer holds.
  struct Held {
    const Move* move = nullptr;
    const float* from = nullptr;
  };
  std::array<at::Tensor, kBuffers> buffers_;
  std::array<Held, kBuffers> held_;
};

std::int64_t product(const dims& d, std::size_t from) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < d.size(); ++i) p *= d[i];
  return p;
}

/// What a call convolves: the layer, ordinary or transposed, and its array.
struct Layer {
  ConvGeometry g;
  bool transposed = false;
  std::vector<std::int64_t> output_padding;  ///< transposed only
  std::int64_t models = 1;
  bool shared = false;  ///< one input [N, C, ...] every model reads
};

/// Torch's output size and oneDNN's right padding, dimension by dimension.
struct Spatial {
  dims out, stride, dilate, pad_l, pad_r;
  dims read;  ///< the input pixels some window reads: the last ones of a strided convolution may be left
};
Spatial spatial(const at::Tensor& x, const at::Tensor& w, const Layer& l) {
  Spatial s;
  const ConvGeometry& g = l.g;
  for (std::size_t d = 0; d + 2 < static_cast<std::size_t>(x.dim()); ++d) {
    const std::int64_t in = x.size(d + 2), k = w.size(d + 2), reach = g.dilation[d] * (k - 1) + 1;
    s.stride.push_back(g.stride[d]);
    s.dilate.push_back(g.dilation[d] - 1);
    s.pad_l.push_back(g.padding[d]);
    if (l.transposed) {  // oneDNN: out = (in - 1) * stride - pad_l - pad_r + reach
      s.out.push_back((in - 1) * g.stride[d] - 2 * g.padding[d] + reach + l.output_padding[d]);
      s.pad_r.push_back(g.padding[d] - l.output_padding[d]);
      s.read.push_back(in);
    } else {
      const std::int64_t out = (in + 2 * g.padding[d] - reach) / g.stride[d] + 1;
      // oneDNN takes no negative right padding: the pixels past the last
      // window's reach are left out of the input it sees instead.
      const std::int64_t pad_r = (out - 1) * g.stride[d] + reach - in - g.padding[d];
      s.out.push_back(out);
      s.pad_r.push_back(std::max<std::int64_t>(pad_r, 0));
      s.read.push_back(in + std::min<std::int64_t>(pad_r, 0));
    }
  }
  return s;
}

/// The three primitives of a convolution or a deconvolution, on the plan's shapes.
template <typename Forward, typename Data, typename Weights>
void make_primitives(Plan& p, dnnl::algorithm algo, const Spatial& s) {
  const auto attr = user_scratchpad();
  const typename Forward::primitive_desc fwd(
      typename Forward::desc(dnnl::prop_kind::forward_training, algo, any(p.x_dims), any(p.w_dims), p.bias_md,
                             any(p.y_dims), s.stride, s.dilate, s.pad_l, s.pad_r),
      attr, engine());
  const typename Data::primitive_desc data(
      typename Data::desc(algo, any(p.x_dims), any(p.w_dims), any(p.y_dims), s.stride, s.dilate, s.pad_l, s.pad_r),
      attr, engine(), fwd);
  const typename Weights::primitive_desc weights(
      typename Weights::desc(algo, any(p.x_dims), any(p.w_dims), p.bias_md, any(p.y_dims), s.stride, s.dilate,
                             s.pad_l, s.pad_r),
      attr, engine(), fwd);
  p.fwd = fwd;
  p.data = data;
  p.weights = weights;
  p.fwd_run = {Forward(fwd), fwd.scratchpad_desc()};
  p.data_run = {Data(data), data.scratchpad_desc()};
  p.weights_run = {Weights(weights), weights.scratchpad_desc()};
}

std::shared_ptr<const Plan> make_plan(const at::Tensor& x, const at::Tensor& w, bool with_bias, const Layer& l) {
  auto p = std::make_shared<Plan>();
  const Spatial s = spatial(x, w, l);
  const std::int64_t models = l.models, groups = l.g.groups;
  const std::int64_t n = x.size(0), in = l.shared ? x.size(1) : x.size(1) / models;
  const std::int64_t out = l.transposed ? w.size(1) * groups : w.size(0) / models;
  const dims x_whole(x.sizes().begin(), x.sizes().end());
  p->x_dims = {n, in};
  p->y_dims = {n, out};
  p->x_dims.insert(p->x_dims.end(), s.read.begin(), s.read.end());
  p->x_partial = !std::equal(s.read.begin(), s.read.end(), x_whole.begin() + 2);
  p->y_dims.insert(p->y_dims.end(), s.out.begin(), s.out.end());
  // One model's weights as oneDNN names them, [O, I/g, k...] or [g, O/g, I/g, k...]
  // grouped, over PyTorch's rows: [O, I/g, k...], or [I, O/g, k...] transposed.
  const std::int64_t o = out / groups, i = in / groups;
  std::int64_t kernel = 1;
  for (std::int64_t d = 2; d < w.dim(); ++d) kernel *= w.size(d);
  p->w_dims = {o, i};
  dims w_strides = l.transposed ? dims{kernel, o * kernel} : dims{i * kernel, kernel};
  for (std::int64_t d = 2; d < w.dim(); ++d) p->w_dims.push_back(w.size(d));
  const dims kernel_strides = dense_strides(dims(p->w_dims.begin() + 2, p->w_dims.end()));
  w_strides.insert(w_strides.end(), kernel_strides.begin(), kernel_strides.end());
  if (groups > 1) {
    p->w_dims.insert(p->w_dims.begin(), groups);
    w_strides.insert(w_strides.begin(), o * i * kernel);
  }
  // One model's slice of the conv layout: its channels of every image.
  auto slice = [models](const dims& d, bool whole) {
    dims strides = dense_strides(d);
    if (!whole) strides[0] *= models;
    return strides;
  };
  dims x_one = x_whole;  // one model's input, as it lies
  x_one[1] = in;
  const memory::desc x_md = f32(p->x_dims, slice(x_one, l.shared));
  const memory::desc y_md = f32(p->y_dims, slice(p->y_dims, false));
  const memory::desc w_md = f32(p->w_dims, w_strides);
  p->x_step = l.shared ? 0 : product(x_one, 1);
  p->y_step = product(p->y_dims, 1);
  p->w_step = groups * o * i * kernel;
  p->b_step = out;
  p->y_sizes = {n, models * out};
  p->y_sizes.insert(p->y_sizes.end(), s.out.begin(), s.out.end());
  if (with_bias) p->bias_md = f32({out});

  if (l.transposed) {
    make_primitives<dnnl::deconvolution_forward, dnnl::deconvolution_backward_data,
                    dnnl::deconvolution_backward_weights>(*p, dnnl::algorithm::deconvolution_direct, s);
  } else {
    make_primitives<dnnl::convolution_forward, dnnl::convolution_backward_data, dnnl::convolution_backward_weights>(
        *p, dnnl::algorithm::convolution_direct, s);
  }
  p->x_fwd.emplace(x_md, p->fwd.src_desc());
  p->w_fwd.emplace(w_md, p->fwd.weights_desc());
  p->fwd_y.emplace(p->fwd.dst_desc(), y_md);
  p->gy_data.emplace(y_md, p->data.diff_dst_desc());
  p->w_data.emplace(w_md, p->data.weights_desc());
  p->data_gx.emplace(p->data.diff_src_desc(), x_md);
  p->x_weights.emplace(x_md, p->weights.src_desc());
  p->gy_weights.emplace(y_md, p->weights.diff_dst_desc());
  p->weights_gw.emplace(p->weights.diff_weights_desc(), w_md);
  p->gy_same = p->data.diff_dst_desc() == p->weights.diff_dst_desc();
  p->keep_x = !l.shared && p->x_fwd->reorder && p->weights.src_desc() == p->fwd.src_desc();
  return p;
}

/// Plans by shape, kept for the process: building one costs oneDNN's kernel generation.
std::shared_ptr<const Plan> plan_for(const at::Tensor& x, const at::Tensor& w, bool with_bias, const Layer& l) {
  std::vector<std::int64_t> key{l.models, l.shared, l.transposed, with_bias, l.g.groups};
  for (const auto* v : {&l.g.stride, &l.g.padding, &l.g.dilation, &l.output_padding}) {
    key.insert(key.end(), v->begin(), v->end());
  }
  key.insert(key.end(), x.sizes().begin(), x.sizes().end());
  key.insert(key.end(), w.sizes().begin(), w.sizes().end());
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::shared_ptr<const Plan>> plans;
  std::lock_guard<std::mutex> lock(mutex);
  auto& plan = plans[key];
  if (!plan) plan = make_plan(x, w, with_bias, l);
  return plan;
}

// A call's buffers for blocked copies (0 is the scratchpad's; Call::kBuffers in all).
enum Buffer { kX = 1, kW = 2, kY = 3, kGy = 4 };

struct DnnlConv : torch::autograd::Function<DnnlConv> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_given, const at::Tensor& w_given,
                            const at::Tensor& bias, const Layer& layer) {
    const at::Tensor x = x_given.contiguous(), w = w_given.contiguous();
    const bool with_bias = bias.numel() > 0;
    const auto plan = plan_for(x, w, with_bias, layer);
    const std::int64_t models = layer.models;
    at::Tensor y = at::empty(plan->y_sizes, x.options());
    const std::size_t kept_size = plan->fwd.src_desc().get_size();
    const at::Tensor kept = plan->keep_x ? at::empty({models * static_cast<std::int64_t>(kept_size)}, at::kByte)
                                         : at::empty({0}, at::kByte);
    Call call;
    for (std::int64_t b = 0; b < models; ++b) {
      const float* x_at = x.data_ptr<float>() + b * plan->x_step;
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, plan->keep_x ? call.into(*plan->x_fwd, x_at, kept.data_ptr<std::uint8_t>() + b * kept_size)
                                      : call.in(*plan->x_fwd, x_at, kX)},
          {DNNL_ARG_WEIGHTS, call.in(*plan->w_fwd, w.data_ptr<float>() + b * plan->w_step, kW)}};
      float* y_at = y.data_ptr<float>() + b * plan->y_step;
      const memory dst = call.out(*plan->fwd_y, y_at, kY);
      args.emplace(DNNL_ARG_DST, dst);
      if (with_bias) {
        args.emplace(DNNL_ARG_BIAS, memory(plan->bias_md, engine(), bias.data_ptr<float>() + b * plan->b_step));
      }
      call.run(plan->fwd_run, args);
      call.done(*plan->fwd_y, dst, y_at);
    }
    ctx->save_for_backward({x, w, kept});
    ctx->saved_data["stride"] = layer.g.stride;
    ctx->saved_data["padding"] = layer.g.padding;
    ctx->saved_data["dilation"] = layer.g.dilation;
    ctx->saved_data["groups"] = layer.g.groups;
    ctx->saved_data["transposed"] = layer.transposed;
    ctx->saved_data["output_padding"] = layer.output_padding;
    ctx->saved_data["models"] = models;
    ctx->saved_data["shared"] = layer.shared;
    ctx->saved_data["bias"] = with_bias;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &kept = saved[2];
    const auto& d = ctx->saved_data;
    const Layer layer{{d.at("stride").toIntVector(), d.at("padding").toIntVector(), d.at("dilation").toIntVector(),
                       d.at("groups").toInt()},
                      d.at("transposed").toBool(), d.at("output_padding").toIntVector(), d.at("models").toInt(),
                      d.at("shared").toBool()};
    const std::int64_t models = layer.models;
    const bool shared = layer.shared, with_bias = d.at("bias").toBool();
    const auto plan = plan_for(x, w, with_bias, layer);
    const at::Tensor gy = grads[0].contiguous();
    at::Tensor gx;
    if (ctx->needs_input_grad(0)) gx = plan->x_partial ? at::zeros(x.sizes(), x.options()) : at::empty(x.sizes(), x.options());
    at::Tensor gw = at::empty(w.sizes(), w.options());
    at::Tensor gb = with_bias ? at::empty({models * plan->b_step}, w.options()) : at::Tensor();
    if (gx.defined() && shared) throw std::logic_error("dnnl_conv: a shared input takes no gradient");
    Call call;
    for (std::int64_t b = 0; b < models; ++b) {
      const float* gy_at = gy.data_ptr<float>() + b * plan->y_step;
      if (gx.defined()) {
        float* gx_at = gx.data_ptr<float>() + b * plan->x_step;
        const memory diff_src = call.out(*plan->data_gx, gx_at, kX);
        call.run(plan->data_run, {{DNNL_ARG_DIFF_DST, call.in(*plan->gy_data, gy_at, kGy)},
                                  {DNNL_ARG_WEIGHTS, call.in(*plan->w_data, w.data_ptr<float>() + b * plan->w_step, kW)},
                                  {DNNL_ARG_DIFF_SRC, diff_src}});
        call.done(*plan->data_gx, diff_src, gx_at);
      }
      float* gw_at = gw.data_ptr<float>() + b * plan->w_step;
      const memory diff_weights = call.out(*plan->weights_gw, gw_at, kW);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, plan->keep_x ? memory(plan->weights.src_desc(), engine(),
                                               kept.data_ptr<std::uint8_t>() + b * plan->fwd.src_desc().get_size())
                                      : call.in(*plan->x_weights, x.data_ptr<float>() + b * plan->x_step, kX)},
          {DNNL_ARG_DIFF_DST, call.in(plan->gy_same ? *plan->gy_data : *plan->gy_weights, gy_at, kGy)},
          {DNNL_ARG_DIFF_WEIGHTS, diff_weights}};
      if (with_bias) {
        args.emplace(DNNL_ARG_DIFF_BIAS, memory(plan->bias_md, engine(), gb.data_ptr<float>() + b * plan->b_step));
      }
      call.run(plan->weights_run, args);
      call.done(*plan->weights_gw, diff_weights, gw_at);
    }
    return {gx, gw, gb, at::Tensor()};
  }
};

bool applies(const at::Tensor& x, const at::Tensor& weight, const Layer& l) {
  if (!x.is_cpu() || x.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat) return false;
  if ((x.dim() != 3 && x.dim() != 4) || autocast_enabled(c10::DeviceType::CPU)) return false;
  // A transposed convolution's output padding beyond its padding: oneDNN would
  // need a negative right padding (a convolution's leaves unread pixels out).
  for (const auto pad : spatial(x, weight, l).pad_r) {
    if (pad < 0) return false;
  }
  return true;
}

/// Autograd takes no undefined tensor for an input: no bias is an empty one.
at::Tensor apply(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const Layer& l) {
  return DnnlConv::apply(x, weight, bias.defined() ? bias : at::empty({0}, weight.options()), l);
}

}  // namespace

bool dnnl_conv_applies(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& g) {
  return applies(x, weight, {g});
}

bool dnnl_conv_transpose_applies(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& g,
                                 const std::vector<std::int64_t>& output_padding) {
  return applies(x, weight, {g, true, output_padding});
}

at::Tensor dnnl_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const ConvGeometry& g,
                     std::int64_t models, bool shared) {
  return apply(x, weight, bias, {g, false, {}, models, shared});
}

at::Tensor dnnl_conv_transpose(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                               const ConvGeometry& g, const std::vector<std::int64_t>& output_padding,
                               std::int64_t models) {
  return apply(x, weight, bias, {g, true, output_padding, models});
}

#else

bool dnnl_conv_applies(const at::Tensor&, const at::Tensor&, const ConvGeometry&) { return false; }

bool dnnl_conv_transpose_applies(const at::Tensor&, const at::Tensor&, const ConvGeometry&,
                                 const std::vector<std::int64_t>&) {
  return false;
}

at::Tensor dnnl_conv(const at::Tensor&, const at::Tensor&, const at::Tensor&, const ConvGeometry&, std::int64_t, bool) {
  throw std::logic_error("dnnl_conv: built without oneDNN");
}

at::Tensor dnnl_conv_transpose(const at::Tensor&, const at::Tensor&, const at::Tensor&, const ConvGeometry&,
                               const std::vector<std::int64_t>&, std::int64_t) {
  throw std::logic_error("dnnl_conv_transpose: built without oneDNN");
}

#endif

}  // namespace hfta::fusion
