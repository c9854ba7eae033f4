// Direct kernels are compiled twice, for x86-64-v3 (AVX2 and FMA) and for the
// baseline, and the loader picks the one the CPU runs (GCC's function
// multiversioning). The project builds for the baseline, where LibTorch's own
// kernels dispatch to AVX2 at run time: at baseline width our row loops ran at
// 0.7x of LibTorch's layer norm. `flatten` inlines the templated loops into
// each clone, so they are vectorised for its width.
#pragma once

//
// HFTA_VECTOR_CLONES_EXACT leaves out FMA, so that every multiply and add
// rounds on its own, as LibTorch's elementwise tensor ops do: for loops that
// must match a chain of those ops bit for bit (the optimizers).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HFTA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#define HFTA_VECTOR_CLONES_EXACT __attribute__((target_clones("avx2", "default")))
#else
#define HFTA_VECTOR_CLONES
#define HFTA_VECTOR_CLONES_EXACT
#endif
