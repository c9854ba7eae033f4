// Checks which BLAS LibTorch runs on and what it is worth: times the batched
// matmul that fused Linear layers reduce to (16 x 128x128 @ 128x128), with the
// BLAS LibTorch loaded, next to a naive loop of per-model matmuls, in one run.
//
// Debian's LibTorch links libblas.so.3, which Debian's alternatives point at the
// reference BLAS unless OpenBLAS is selected: scripts/install-deps.sh selects it.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace {

// The shared object that provides sgemm_ to this process: the BLAS LibTorch calls.
std::string loaded_blas() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

template <typename F>
double median_ms(F&& f, int repeats) {
  for (int i = 0; i < 3; ++i) f();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 50;
  at::manual_seed(0);
  const auto a = at::randn({16, 128, 128});
  const auto b = at::randn({16, 128, 128});
  at::Tensor c;
  const double bmm = median_ms([&] { c = at::bmm(a, b); }, repeats);
  const double loop = median_ms(
      [&] {
        for (int64_t i = 0; i < 16; ++i) c = at::mm(a[i], b[i]);
      },
      repeats);
  const double flops = 2.0 * 16 * 128 * 128 * 128;
  std::cout << "blas:           " << loaded_blas() << "\n"
            << "threads:        " << at::get_num_threads() << "\n"
            << "bmm 16x128^3:   " << bmm << " ms (" << flops / bmm / 1e6 << " GFLOP/s)\n"
            << "16 separate mm: " << loop << " ms\n"
            << "ratio separate/bmm: " << loop / bmm << "\n";
  return 0;
}
