// The one hash of hf_bpe's compiled code: both extensions (the merge loop's tables and the scanner's piece
// counter) hash byte strings and integer keys with these functions. They only place keys in open-addressing tables:
// results never depend on them (keys are compared in full on equal hashes, and outputs are ordered by the data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hfbpe {

// splitmix64's finaliser: every input bit reaches every output bit (spreads sequential ids over a table).
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t load64(const char* p) { uint64_t w; std::memcpy(&w, p, 8); return w; }
static inline uint64_t load32(const char* p) { uint32_t w; std::memcpy(&w, p, 4); return w; }

// A value that, together with n, determines the first min(n, 8) bytes; for n <= 8 the whole key (so equal
// fingerprints and lengths mean equal keys). Overlapping fixed-size loads (never past p + n): no byte loop.
static inline uint64_t fingerprint(const char* p, size_t n) {
    if (n >= 8) return load64(p);
    if (n >= 4) return load32(p) | (load32(p + n - 4) << 32);
    if (n == 0) return 0;
    return (uint64_t)(unsigned char)p[0] | ((uint64_t)(unsigned char)p[n >> 1] << 8)
           | ((uint64_t)(unsigned char)p[n - 1] << 16);
}

// A 64-bit hash of p[0 .. n) given its fingerprint w (callers that compare keys compute w anyway):
// multiply-xorshift over the 8-byte blocks after the first, then the finaliser. O(n / 8).
static inline uint64_t hash_bytes(const char* p, size_t n, uint64_t w) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xD6E8FEB86659FD93ULL) ^ w;
    if (n > 8) {
        for (size_t i = 8; i + 8 <= n; i += 8) {
            h = (h ^ load64(p + i)) * 0x9FB21C651E98DF25ULL;
            h ^= h >> 29;
        }
        h = (h ^ load64(p + n - 8)) * 0x9FB21C651E98DF25ULL;
    }
    return mix64(h);
}

static inline uint64_t hash_bytes(const char* p, size_t n) { return hash_bytes(p, n, fingerprint(p, n)); }

}  // namespace hfbpe
