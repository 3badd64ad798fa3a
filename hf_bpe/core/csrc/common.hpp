// What every header of the merge loop and the encoder shares: standard headers, portability macros, pair keys.
#pragma once

#include <algorithm>
#include <memory>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define HFBPE_INLINE inline __attribute__((always_inline))
#define HFBPE_PREFETCH(address) __builtin_prefetch(address)
#else
#define HFBPE_INLINE inline
#define HFBPE_PREFETCH(address) ((void)0)
#endif

namespace hfbpe {

// A pair of ids (left, right) as one key; comparing keys compares pairs lexicographically.
static inline uint64_t pair_key(uint32_t left, uint32_t right) { return ((uint64_t)left << 32) | right; }

}  // namespace hfbpe
