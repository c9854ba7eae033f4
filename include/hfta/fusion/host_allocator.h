// Keeps large host allocations in the process between training steps.
//
// glibc's malloc serves blocks above its mmap threshold with fresh mmap()s and
// returns freed memory at the top of the heap to the kernel, so every large
// fused tensor pays page faults on first touch, every step. Measured on the
// 2-core development machine (MLP 64-h-h-10, B=16, batch 128, SGD; fused array
// against the same models one after another), the array ran at 1.37x (h=32),
// 0.93x (h=128) and 0.90x (h=512) of serial with the default allocator; with
// this configuration at 1.95x, 1.18x and 0.91x; jemalloc (LD_PRELOAD) gave 1.93x,
// 1.21x and 0.70x; tcmalloc 1.86x, 1.19x and 0.92x. So the engine configures
// glibc in-process instead of depending on another allocator.
#pragma once

namespace hfta::fusion {

/// Raises glibc's mmap threshold to its maximum (32 MiB: larger blocks are still
/// mapped, smaller ones are reused from the heap) and keeps up to 1 GiB of freed
/// heap instead of trimming it. Idempotent; returns false if glibc refused.
bool configure_host_allocator();

}  // namespace hfta::fusion
