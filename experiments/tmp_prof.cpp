#include <chrono>
#include <iostream>
#include <ATen/ATen.h>
#include <torch/torch.h>
#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/fusion/fused_conv.h"
#include "hfta/fusion/host_allocator.h"
#include "hfta/trainers/resnet18.h"
using Clock = std::chrono::steady_clock;
template <class F> double us(F f, int n = 10) { for (int i=0;i<2;++i) f(); auto s = Clock::now(); for (int i=0;i<n;++i) f(); return std::chrono::duration<double, std::micro>(Clock::now()-s).count()/n; }
int main() {
  hfta::fusion::configure_host_allocator();
  auto x = at::randn({32, 1, 32, 32});
  for (int64_t B : {1LL, 4LL}) {
    hfta::trainers::FusedResNet18 net(B, 8, true);
    auto plain = net.make_plain();
    std::cout << "B=" << B << " plain x B fwd+bwd " << B * us([&]{ plain->forward(x).sum().backward(); }) << " us\n";
    for (auto s : {hfta::fusion::Strategy::kFused, hfta::fusion::Strategy::kPerModel}) {
      for (auto& m : net.modules(false)) {
        if (auto c = std::dynamic_pointer_cast<hfta::fusion::FusedConv2dImpl>(m)) c->set_strategy(s);
        if (auto c = std::dynamic_pointer_cast<hfta::fusion::FusedBatchNorm2dImpl>(m)) c->set_strategy(s);
      }
      std::cout << "B=" << B << " fused " << hfta::fusion::to_string(s) << " fwd+bwd " << us([&]{ net.forward(x).sum().backward(); }) << " us\n";
    }
    for (auto s : {hfta::fusion::Strategy::kFused, hfta::fusion::Strategy::kPerModel}) {
      for (auto& m : net.modules(false)) {
        if (auto c = std::dynamic_pointer_cast<hfta::fusion::FusedConv2dImpl>(m)) c->set_strategy(s);
        if (auto c = std::dynamic_pointer_cast<hfta::fusion::FusedBatchNorm2dImpl>(m)) c->set_strategy(hfta::fusion::Strategy::kFused);
      }
      std::cout << "B=" << B << " conv " << hfta::fusion::to_string(s) << " bn fused fwd+bwd " << us([&]{ net.forward(x).sum().backward(); }) << " us\n";
    }
  }
}
