#include "hfta/fusion/plain_optimizer_state.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <ATen/ATen.h>
#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

namespace hfta::fusion {
namespace {

// The key torch::optim keeps a parameter's state under: its TensorImpl's address,
// printed into a string in LibTorch 1.x, the pointer itself in later versions.
using StateKey = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <typename Key>
Key key_as(const at::Tensor& p) {  // a template, so that only the branch of this LibTorch compiles
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream address;
    address << p.unsafeGetTensorImpl();
    return address.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

StateKey key_of(const at::Tensor& p) { return key_as<StateKey>(p); }

const std::vector<at::Tensor>& plain_params(torch::optim::Optimizer& plain) {
  if (plain.param_groups().size() != 1) throw std::invalid_argument("the plain optimizer needs one parameter group");
  return plain.param_groups()[0].params();
}

}  // namespace

SlotLayout same_layout(const std::vector<at::Tensor>& plain_params) {
  return {[plain_params](std::size_t i, const at::Tensor& row) { return row.reshape(plain_params.at(i).sizes()).clone(); },
          [](std::size_t, const at::Tensor& plain) { return plain.reshape({-1}); }};
}

SlotLayout linear_layout(const std::vector<at::Tensor>& plain_params) {
  // Weight rows are [in, out] flattened; the plain weight is [out, in].
  return {[plain_params](std::size_t i, const at::Tensor& row) {
            const auto& p = plain_params.at(i);
            return i == 0 ? row.view({p.size(1), p.size(0)}).t().contiguous() : row.view(p.sizes()).clone();
          },
          [](std::size_t i, const at::Tensor& plain) {
            return i == 0 ? plain.t().contiguous().view({-1}) : plain.reshape({-1});
          }};
}

void export_to_plain(const FusedOptimizer& fused, std::int64_t model, torch::optim::Optimizer& plain,
                     const SlotLayout& layout) {
  const SlotState s = fused.export_slot(model);
  const auto& params = plain_params(plain);
  for (std::size_t i = 0; i < params.size() && i < s.buffers.size(); ++i) {
    const auto& rows = s.buffers[i];
    if (rows.empty()) continue;  // never stepped
    auto as_plain = [&](const char* name) { return layout.to_plain(i, rows.at(name)); };
    std::unique_ptr<torch::optim::OptimizerParamState> state;
    if (dynamic_cast<const FusedSgd*>(&fused)) {
      state = std::make_unique<torch::optim::SGDParamState>(
          torch::optim::SGDParamState().momentum_buffer(as_plain("momentum_buffer")));
    } else if (const auto* adam = dynamic_cast<const FusedAdam*>(&fused)) {
      const bool ams = const_cast<FusedAdam*>(adam)->options().amsgrad[model] != 0;
      if (const_cast<FusedAdam*>(adam)->options().decoupled_weight_decay) {
        auto st = torch::optim::AdamWParamState().step(s.step).exp_avg(as_plain("exp_avg")).exp_avg_sq(as_plain("exp_avg_sq"));
        if (ams) st.max_exp_avg_sq(as_plain("max_exp_avg_sq"));
        state = std::make_unique<torch::optim::AdamWParamState>(st);
      } else {
        auto st = torch::optim::AdamParamState().step(s.step).exp_avg(as_plain("exp_avg")).exp_avg_sq(as_plain("exp_avg_sq"));
        if (ams) st.max_exp_avg_sq(as_plain("max_exp_avg_sq"));
        state = std::make_unique<torch::optim::AdamParamState>(st);
      }
    } else if (dynamic_cast<const FusedRmsprop*>(&fused)) {
      state = std::make_unique<torch::optim::RMSpropParamState>(
          torch::optim::RMSpropParamState().step(s.step).square_avg(as_plain("square_avg"))
              .momentum_buffer(as_plain("momentum_buffer")).grad_avg(as_plain("grad_avg")));
    } else if (dynamic_cast<const FusedAdagrad*>(&fused)) {
      state = std::make_unique<torch::optim::AdagradParamState>(
          torch::optim::AdagradParamState().step(s.step).sum(as_plain("sum")));
    } else {
      throw std::invalid_argument("this optimizer has no LibTorch counterpart");
    }
    plain.state()[key_of(params[i])] = std::move(state);
  }
}

void import_from_plain(FusedOptimizer& fused, std::int64_t model, torch::optim::Optimizer& plain,
                       const SlotLayout& layout) {
  const auto& params = plain_params(plain);
  SlotState s;
  // Start from the slot's own rows, so buffers the plain state lacks stay as they are.
  const SlotState current = fused.export_slot(model);
  s.buffers = current.buffers;
  s.buffers.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto it = plain.state().find(key_of(params[i]));
    if (it == plain.state().end()) continue;
    auto& rows = s.buffers[i];
    auto put = [&](const char* name, const at::Tensor& t) {
      if (t.defined()) rows[name] = layout.to_row(i, t);
    };
    auto* st = it->second.get();
    if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(st)) {
      put("momentum_buffer", sgd->momentum_buffer());
      // LibTorch's SGD keeps no step count; a buffer means it has stepped.
      if (sgd->momentum_buffer().defined()) s.step = std::max<std::int64_t>(s.step, 1);
    } else if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(st)) {
      s.step = adam->step();
      put("exp_avg", adam->exp_avg()), put("exp_avg_sq", adam->exp_avg_sq()), put("max_exp_avg_sq", adam->max_exp_avg_sq());
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(st)) {
      s.step = adamw->step();
      put("exp_avg", adamw->exp_avg()), put("exp_avg_sq", adamw->exp_avg_sq()), put("max_exp_avg_sq", adamw->max_exp_avg_sq());
    } else if (auto* rms = dynamic_cast<torch::optim::RMSpropParamState*>(st)) {
      s.step = rms->step();
      put("square_avg", rms->square_avg()), put("momentum_buffer", rms->momentum_buffer()), put("grad_avg", rms->grad_avg());
    } else if (auto* ada = dynamic_cast<torch::optim::AdagradParamState*>(st)) {
      s.step = ada->step();
      put("sum", ada->sum());
    }
  }
  fused.import_slot(model, s);
}

}  // namespace hfta::fusion
