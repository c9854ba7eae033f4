// Whether this test binary runs under AddressSanitizer (scripts/sanitize.sh):
// its allocator stands in for glibc's malloc, and it reserves terabytes of
// address space for its shadow memory, so tests of those two things skip there.
#pragma once

namespace hfta::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace hfta::test
