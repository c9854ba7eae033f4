#include "hfta/fusion/fused_optimizer.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "hfta/fusion/optimizer_kernels.h"

namespace hfta::fusion {

namespace {

bool any_nonzero(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return x != 0; });
}

// L2 weight decay folded into the gradient, as torch::optim does: grad + wd * p.
at::Tensor with_weight_decay(const RowBatch& r, const at::Tensor& grad, const std::vector<double>& wd) {
  return any_nonzero(wd) ? grad + r.column(wd) * r.param : grad;
}

// 1 - v for each model.
std::vector<double> one_minus(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(1 - x);
  return out;
}

std::vector<double> negated(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(-x);
  return out;
}

}  // namespace

void PerModel::set(std::int64_t model, double value, std::int64_t models) {
  if (values_.size() == 1) values_.assign(static_cast<std::size_t>(models), values_[0]);
  values_.at(static_cast<std::size_t>(model)) = value;
}

at::Tensor RowBatch::column(const std::vector<double>& per_row) const {
  // Host doubles, rounded once to the parameter's dtype, as LibTorch rounds its scalars.
  return at::tensor(per_row, at::TensorOptions().dtype(at::kDouble))
      .to(param.options())
      .view({-1, 1});
}

FusedOptimizer::FusedOptimizer(std::vector<at::Tensor> params, std::int64_t models)
    : params_(std::move(params)), models_(models),
      frozen_(static_cast<std::size_t>(models), false),
      steps_(static_cast<std::size_t>(models), 0), state_(params_.size()) {
  for (const auto& p : params_) {
    if (p.numel() % models != 0 || !p.is_contiguous()) {
      throw std::invalid_argument("a fused parameter must be contiguous with B rows of equal size");
    }
  }
}

std::vector<double> FusedOptimizer::of(const PerModel& h, const RowBatch& rows) {
  std::vector<double> out;
  for (std::int64_t m : rows.models) out.push_back(h[m]);
  return out;
}

std::map<std::string, at::Tensor>& FusedOptimizer::state_of(std::size_t i) {
  auto& st = state_[i];
  if (st.empty()) {
    for (const auto& name : state_names()) {
      at::Tensor t = at::zeros({models_, params_[i].numel() / models_}, params_[i].options());
      for (std::int64_t b = 0; b < models_; ++b) {
        const double v = initial_value(name, b);
        if (v != 0) t[b].fill_(v);
      }
      st[name] = t;
    }
  }
  return st;
}

void FusedOptimizer::step() {
  at::NoGradGuard no_grad;
  std::vector<std::int64_t> active;
  for (std::int64_t b = 0; b < models_; ++b) {
    if (!frozen_[static_cast<std::size_t>(b)]) active.push_back(b);
  }
  if (active.empty()) return;
  std::vector<std::int64_t> steps;
  for (std::int64_t b : active) steps.push_back(++steps_[static_cast<std::size_t>(b)]);
  const bool all = static_cast<std::int64_t>(active.size()) == models_;

  for (std::size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    const at::Tensor view = p.view({models_, -1});
    const at::Tensor grad = p.grad().reshape({models_, -1});
    auto& state = state_of(i);
    if (all) {
      RowBatch rows{view, grad, state, active, steps};
      update(rows);
      continue;
    }
    // Frozen models: update only the active rows, then put them back.
    const at::Tensor index = at::tensor(active, at::TensorOptions().dtype(at::kLong)).to(p.device());
    std::map<std::string, at::Tensor> sub;
    for (const auto& [name, t] : state) sub[name] = t.index_select(0, index);
    RowBatch rows{view.index_select(0, index), grad.index_select(0, index), sub, active, steps};
    update(rows);
    view.index_copy_(0, index, rows.param);
    for (auto& [name, t] : state) t.index_copy_(0, index, sub[name]);
  }
}

void FusedOptimizer::zero_grad() {
  // Dropped rather than zeroed (PyTorch 2's zero_grad(set_to_none=True)): the
  // next backward then hands its gradient over instead of adding it to zeros,
  // two passes over every parameter's size saved per step. That was 6% of an
  // array of 8 MLPs 784-64-64-10's step here and 20% at 16, whose gradients no
  // longer fit in cache.
  for (auto& p : params_) p.mutable_grad().reset();
}

SlotState FusedOptimizer::export_slot(std::int64_t model) const {
  SlotState out;
  out.step = steps_.at(static_cast<std::size_t>(model));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::map<std::string, at::Tensor> rows;
    for (const auto& [name, t] : state_[i]) rows[name] = t[model].clone();
    out.buffers.push_back(std::move(rows));
  }
  return out;
}

void FusedOptimizer::import_slot(std::int64_t model, const SlotState& state) {
  if (!state.buffers.empty() && state.buffers.size() != params_.size()) {
    throw std::invalid_argument("slot state holds " + std::to_string(state.buffers.size()) +
                                " parameters, the optimizer " + std::to_string(params_.size()));
  }
  at::NoGradGuard no_grad;
  steps_.at(static_cast<std::size_t>(model)) = state.step;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& mine = state_of(i);
    // Start from a fresh slot, so nothing of the previous occupant remains.
    for (auto& [name, t] : mine) t[model].fill_(initial_value(name, model));
    if (i < state.buffers.size()) {
      for (const auto& [name, row] : state.buffers[i]) mine.at(name)[model].copy_(row);
    }
  }
}

// ---- SGD ------------------------------------------------------------------

FusedSgd::FusedSgd(std::vector<at::Tensor> params, std::int64_t models, FusedSgdOptions options)
    : FusedOptimizer(std::move(params), models), options_(std::move(options)) {
  lr_ = options_.lr;
}

void FusedSgd::update(RowBatch& r) {
  const auto momentum = of(options_.momentum, r), dampening = of(options_.dampening, r),
             weight_decay = of(options_.weight_decay, r), nesterov = of(options_.nesterov, r);
  if (cpu_kernel_applies({r.param, r.grad, r.state.at("momentum_buffer")})) {
    const auto lr = of(lr_, r);
    std::vector<SgdRow> rows;
    for (std::size_t k = 0; k < lr.size(); ++k) {
      rows.push_back({lr[k], momentum[k], dampening[k], weight_decay[k], nesterov[k] != 0, r.steps[k] == 1});
    }
    sgd_rows(r.param, r.grad, r.state.at("momentum_buffer"), rows);
    return;
  }
  at::Tensor d_p = with_weight_decay(r, r.grad, weight_decay);
  if (any_nonzero(momentum)) {
    at::Tensor& buf = r.state.at("momentum_buffer");
    std::vector<double> first, one_minus_dampening, uses, nest;
    for (std::size_t k = 0; k < momentum.size(); ++k) {
      first.push_back(r.steps[k] == 1);  // LibTorch starts the buffer as d_p itself
      one_minus_dampening.push_back(1 - dampening[k]);
      uses.push_back(momentum[k] != 0);
      nest.push_back(nesterov[k] != 0);
    }
    const at::Tensor m = r.column(momentum);
    const at::Tensor next = buf * m + r.column(one_minus_dampening) * d_p;
    buf.copy_(at::where(r.column(first) != 0, d_p, next));
    const at::Tensor with_momentum = at::where(r.column(nest) != 0, d_p + m * buf, buf);
    d_p = at::where(r.column(uses) != 0, with_momentum, d_p);
  }
  r.param.add_(d_p * r.column(negated(of(lr_, r))));
}

// ---- Adam / AdamW -----------------------------------------------------------

FusedAdam::FusedAdam(std::vector<at::Tensor> params, std::int64_t models, FusedAdamOptions options)
    : FusedOptimizer(std::move(params), models), options_(std::move(options)) {
  lr_ = options_.lr;
}

void FusedAdam::update(RowBatch& r) {
  const auto lr = of(lr_, r), beta1 = of(options_.beta1, r), beta2 = of(options_.beta2, r),
             eps = of(options_.eps, r), weight_decay = of(options_.weight_decay, r),
             amsgrad = of(options_.amsgrad, r);
  // Bias corrections and step sizes in double, per model, as LibTorch computes them.
  std::vector<double> sqrt_bc2, neg_step_size, one_minus_b1, one_minus_b2, decay;
  for (std::size_t k = 0; k < lr.size(); ++k) {
    const double t = static_cast<double>(r.steps[k]);
    const double bc1 = 1 - std::pow(beta1[k], t), bc2 = 1 - std::pow(beta2[k], t);
    sqrt_bc2.push_back(std::sqrt(bc2));
    neg_step_size.push_back(-(lr[k] / bc1));
    one_minus_b1.push_back(1 - beta1[k]);
    one_minus_b2.push_back(1 - beta2[k]);
    decay.push_back(1 - lr[k] * weight_decay[k]);
  }
  if (cpu_kernel_applies({r.param, r.grad, r.state.at("exp_avg"), r.state.at("exp_avg_sq"),
                          r.state.at("max_exp_avg_sq")})) {
    const bool decoupled = options_.decoupled_weight_decay;
    std::vector<AdamRow> rows;
    for (std::size_t k = 0; k < lr.size(); ++k) {
      rows.push_back({beta1[k], beta2[k], eps[k], decoupled ? 0.0 : weight_decay[k], decoupled ? decay[k] : 1.0,
                      -neg_step_size[k], sqrt_bc2[k], amsgrad[k] != 0});
    }
    adam_rows(r.param, r.grad, r.state.at("exp_avg"), r.state.at("exp_avg_sq"), r.state.at("max_exp_avg_sq"), rows);
    return;
  }
  at::Tensor grad = r.grad;
  if (options_.decoupled_weight_decay) {
    if (any_nonzero(weight_decay)) r.param.mul_(r.column(decay));
  } else {
    grad = with_weight_decay(r, grad, weight_decay);
  }
  at::Tensor& exp_avg = r.state.at("exp_avg");
  at::Tensor& exp_avg_sq = r.state.at("exp_avg_sq");
  exp_avg.mul_(r.column(beta1)).add_(grad * r.column(one_minus_b1));
  exp_avg_sq.mul_(r.column(beta2)).addcmul_(grad, grad * r.column(one_minus_b2));
  at::Tensor second = exp_avg_sq;
  if (any_nonzero(amsgrad)) {
    at::Tensor& max_sq = r.state.at("max_exp_avg_sq");
    max_sq.copy_(at::where(r.column(amsgrad) != 0, at::maximum(max_sq, exp_avg_sq), max_sq));
    second = at::where(r.column(amsgrad) != 0, max_sq, exp_avg_sq);
  }
  const at::Tensor denom = (second.sqrt() / r.column(sqrt_bc2)).add_(r.column(eps));
  r.param.add_(exp_avg.div(denom).mul_(r.column(neg_step_size)));
}

// ---- RMSprop ----------------------------------------------------------------

FusedRmsprop::FusedRmsprop(std::vector<at::Tensor> params, std::int64_t models,
                           FusedRmspropOptions options)
    : FusedOptimizer(std::move(params), models), options_(std::move(options)) {
  lr_ = options_.lr;
}

void FusedRmsprop::update(RowBatch& r) {
  const auto lr = of(lr_, r), alpha = of(options_.alpha, r), eps = of(options_.eps, r),
             weight_decay = of(options_.weight_decay, r), momentum = of(options_.momentum, r),
             centered = of(options_.centered, r);
  const auto one_minus_alpha = one_minus(alpha), neg_lr = negated(lr);
  const at::Tensor grad = with_weight_decay(r, r.grad, weight_decay);
  at::Tensor& square_avg = r.state.at("square_avg");
  square_avg.mul_(r.column(alpha)).addcmul_(grad, grad * r.column(one_minus_alpha));
  at::Tensor avg = square_avg.sqrt().add_(r.column(eps));
  if (any_nonzero(centered)) {
    at::Tensor& grad_avg = r.state.at("grad_avg");
    const at::Tensor is_centered = r.column(centered) != 0;
    grad_avg.copy_(at::where(is_centered, grad_avg * r.column(alpha) + grad * r.column(one_minus_alpha),
                             grad_avg));
    const at::Tensor centered_avg =
        square_avg.addcmul(grad_avg, grad_avg, -1).sqrt_().add_(r.column(eps));
    avg = at::where(is_centered, centered_avg, avg);
  }
  if (std::any_of(momentum.begin(), momentum.end(), [](double m) { return m > 0; })) {
    at::Tensor& buf = r.state.at("momentum_buffer");
    std::vector<double> uses;
    for (double m : momentum) uses.push_back(m > 0);
    const at::Tensor has = r.column(uses) != 0;
    buf.copy_(at::where(has, buf * r.column(momentum) + grad / avg, buf));
    r.param.add_(at::where(has, buf, grad / avg) * r.column(neg_lr));
  } else {
    r.param.add_(grad.div(avg).mul_(r.column(neg_lr)));
  }
}

// ---- Adagrad ----------------------------------------------------------------

FusedAdagrad::FusedAdagrad(std::vector<at::Tensor> params, std::int64_t models,
                           FusedAdagradOptions options)
    : FusedOptimizer(std::move(params), models), options_(std::move(options)) {
  lr_ = options_.lr;
}

double FusedAdagrad::initial_value(const std::string& name, std::int64_t model) const {
  return name == "sum" ? options_.initial_accumulator_value[model] : 0.0;
}

void FusedAdagrad::update(RowBatch& r) {
  const auto lr = of(lr_, r), lr_decay = of(options_.lr_decay, r), eps = of(options_.eps, r),
             weight_decay = of(options_.weight_decay, r);
  std::vector<double> neg_clr;
  for (std::size_t k = 0; k < lr.size(); ++k) {
    neg_clr.push_back(-(lr[k] / (1 + static_cast<double>(r.steps[k] - 1) * lr_decay[k])));
  }
  const at::Tensor grad = with_weight_decay(r, r.grad, weight_decay);
  at::Tensor& sum = r.state.at("sum");
  sum.addcmul_(grad, grad);
  const at::Tensor std_dev = sum.sqrt().add_(r.column(eps));
  r.param.add_(grad.div(std_dev).mul_(r.column(neg_clr)));
}

// ---- Adadelta ---------------------------------------------------------------

FusedAdadelta::FusedAdadelta(std::vector<at::Tensor> params, std::int64_t models,
                             FusedAdadeltaOptions options)
    : FusedOptimizer(std::move(params), models), options_(std::move(options)) {
  lr_ = options_.lr;
}

void FusedAdadelta::update(RowBatch& r) {
  const auto lr = of(lr_, r), rho = of(options_.rho, r), eps = of(options_.eps, r),
             weight_decay = of(options_.weight_decay, r);
  const auto one_minus_rho = one_minus(rho), neg_lr = negated(lr);
  const at::Tensor grad = with_weight_decay(r, r.grad, weight_decay);
  at::Tensor& square_avg = r.state.at("square_avg");
  at::Tensor& acc_delta = r.state.at("acc_delta");
  square_avg.mul_(r.column(rho)).addcmul_(grad, grad * r.column(one_minus_rho));
  const at::Tensor std_dev = square_avg.add(r.column(eps)).sqrt_();
  const at::Tensor delta = acc_delta.add(r.column(eps)).sqrt_().div_(std_dev).mul_(grad);
  acc_delta.mul_(r.column(rho)).addcmul_(delta, delta * r.column(one_minus_rho));
  r.param.add_(delta * r.column(neg_lr));
}

}  // namespace hfta::fusion
