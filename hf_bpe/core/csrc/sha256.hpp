// SHA-256 (FIPS 180-4) without the GIL and without OpenSSL. Two uses: the order-free ("multiset") corpus fingerprint
// hashes every line on its own and adds the digests (hashlib's per-call cost, ~1 us a line from Python, made that
// ~1.3 s of every 165 MB counted); and Sha256Stream, the streaming hash of the corpus fingerprint, the files a save
// writes and the disk cache's entries, so that training never imports hashlib (OpenSSL's libcrypto: 3.6 MiB of
// resident memory and ~12M instructions at start-up, a third of a 1 MB run's memory above the interpreter's).
// Blocks go through the CPU's SHA extensions (SHA-NI, x86-64) when it has them, as OpenSSL does, else through plain
// portable code. Held equal to hashlib by tests/test_csrc.py and tests/test_manifest.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HFBPE_SHA_NI 1
#endif

namespace hfbpe {

namespace sha256_detail {

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into the state. The rounds are unrolled with the eight working variables renamed instead of
// moved, Ch and Maj in their 3- and 4-operation forms: ~40% fewer instructions than the textbook loop (what runs
// where the CPU has no SHA extensions, and under valgrind, which hides them).
#define HFBPE_SHA_ROUND(a, b, c, d, e, f, g, h, i)                                                        \
    do {                                                                                                 \
        const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (g ^ (e & (f ^ g))) + K[i] + w[i]; \
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) | (c & (a | b)));       \
        d += t1;                                                                                         \
        h = t1 + t2;                                                                                     \
    } while (0)

static inline void compress(uint32_t state[8], const uint8_t* block) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
        w[i] = ((uint32_t)block[4 * i] << 24) | ((uint32_t)block[4 * i + 1] << 16) |
               ((uint32_t)block[4 * i + 2] << 8) | (uint32_t)block[4 * i + 3];
    }
    for (int i = 16; i < 64; ++i) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; i += 8) {
        HFBPE_SHA_ROUND(a, b, c, d, e, f, g, h, i);
        HFBPE_SHA_ROUND(h, a, b, c, d, e, f, g, i + 1);
        HFBPE_SHA_ROUND(g, h, a, b, c, d, e, f, i + 2);
        HFBPE_SHA_ROUND(f, g, h, a, b, c, d, e, i + 3);
        HFBPE_SHA_ROUND(e, f, g, h, a, b, c, d, i + 4);
        HFBPE_SHA_ROUND(d, e, f, g, h, a, b, c, i + 5);
        HFBPE_SHA_ROUND(c, d, e, f, g, h, a, b, i + 6);
        HFBPE_SHA_ROUND(b, c, d, e, f, g, h, a, i + 7);
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}
#undef HFBPE_SHA_ROUND

#if defined(HFBPE_SHA_NI)
// `blocks` 64-byte blocks with the SHA extensions (Intel's SHA-NI round and message-schedule instructions). The
// state is kept as ABEF / CDGH lanes, the layout sha256rnds2 works on; each group of four rounds adds four
// message words plus their round constants, and the schedule's next four words come from msg1/msg2.
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_ni(uint32_t state[8], const uint8_t* data,
                                                                    size_t blocks) {
    const __m128i shuffle = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);  // big-endian words
    __m128i tmp = _mm_loadu_si128((const __m128i*)&state[0]);     // DCBA
    __m128i state1 = _mm_loadu_si128((const __m128i*)&state[4]);  // HGFE
    tmp = _mm_shuffle_epi32(tmp, 0xB1);                          // CDAB
    state1 = _mm_shuffle_epi32(state1, 0x1B);                    // EFGH
    __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);            // ABEF
    state1 = _mm_blend_epi16(state1, tmp, 0xF0);                 // CDGH
    for (; blocks > 0; --blocks, data += 64) {
        const __m128i save0 = state0, save1 = state1;
        __m128i w[4];
        for (int g = 0; g < 16; ++g) {
            __m128i m;
            if (g < 4) {
                m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(data + 16 * g)), shuffle);
            } else {
                // W[t..t+3] from W[t-16..t-13] (w[g % 4]), W[t-12..t-9], W[t-8..t-1].
                m = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
                m = _mm_add_epi32(m, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                m = _mm_sha256msg2_epu32(m, w[(g + 3) & 3]);
            }
            w[g & 3] = m;
            __m128i k = _mm_add_epi32(m, _mm_loadu_si128((const __m128i*)&K[4 * g]));
            state1 = _mm_sha256rnds2_epu32(state1, state0, k);
            k = _mm_shuffle_epi32(k, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, k);
        }
        state0 = _mm_add_epi32(state0, save0);
        state1 = _mm_add_epi32(state1, save1);
    }
    tmp = _mm_shuffle_epi32(state0, 0x1B);           // FEBA
    state1 = _mm_shuffle_epi32(state1, 0xB1);        // DCHG
    state0 = _mm_blend_epi16(tmp, state1, 0xF0);     // DCBA
    state1 = _mm_alignr_epi8(state1, tmp, 8);        // HGFE
    _mm_storeu_si128((__m128i*)&state[0], state0);
    _mm_storeu_si128((__m128i*)&state[4], state1);
}

// Whether this CPU runs compress_ni: SHA (CPUID leaf 7, EBX bit 29), SSE4.1 and SSSE3. Asked once.
static inline bool has_sha_ni() {
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
        const bool sse = (c & bit_SSE4_1) && (c & bit_SSSE3);
        if (__get_cpuid_max(0, nullptr) < 7) return false;
        __cpuid_count(7, 0, a, b, c, d);
        return sse && ((b >> 29) & 1);
    }();
    return has;
}
#endif

// Whether compress_blocks may use the SHA extensions (tests turn it off to run the portable code on any CPU).
inline bool& sha_extensions_allowed() {
    static bool allowed = true;
    return allowed;
}
inline bool set_sha_extensions(bool on) {  // returns the previous setting
    const bool previous = sha_extensions_allowed();
    sha_extensions_allowed() = on;
    return previous;
}

// Whether compress_blocks runs on the SHA extensions (else on the portable rounds).
inline bool sha_extensions_used() {
#if defined(HFBPE_SHA_NI)
    return sha_extensions_allowed() && has_sha_ni();
#else
    return false;
#endif
}

// `blocks` 64-byte blocks into the state, by the fastest code this CPU runs.
static inline void compress_blocks(uint32_t state[8], const uint8_t* data, size_t blocks) {
#if defined(HFBPE_SHA_NI)
    if (sha_extensions_allowed() && has_sha_ni()) {
        compress_ni(state, data, blocks);
        return;
    }
#endif
    for (size_t i = 0; i < blocks; ++i) compress(state, data + 64 * i);
}

}  // namespace sha256_detail

// Streaming SHA-256: update() any number of times, then digest() (which leaves the stream as it was, as
// hashlib's does).
class Sha256Stream {
public:
    void update(const uint8_t* data, size_t n) {
        total += n;
        if (fill > 0) {
            const size_t take = std::min(n, (size_t)64 - fill);
            std::memcpy(buffer + fill, data, take);
            fill += take;
            data += take;
            n -= take;
            if (fill < 64) return;
            sha256_detail::compress_blocks(state, buffer, 1);
            fill = 0;
        }
        const size_t blocks = n / 64;
        if (blocks > 0) sha256_detail::compress_blocks(state, data, blocks);
        data += 64 * blocks;
        n -= 64 * blocks;
        std::memcpy(buffer, data, n);
        fill = n;
    }
    // Each line of raw[0..n) (a line ends after each '\n'; a last line without one is a line too) as its length in
    // 8 little-endian bytes, then its bytes: the "sequence" fingerprint's framing, without a framed copy.
    // Returns the number of lines.
    size_t update_framed_lines(const char* raw, size_t n) {
        size_t lines = 0, start = 0;
        while (start < n) {
            const void* hit = std::memchr(raw + start, '\n', n - start);
            const size_t end = hit ? (size_t)((const char*)hit - raw) + 1 : n;
            uint8_t size[8];
            const uint64_t length = end - start;
            for (int i = 0; i < 8; ++i) size[i] = (uint8_t)(length >> (8 * i));
            update(size, 8);
            update((const uint8_t*)raw + start, end - start);
            start = end;
            ++lines;
        }
        return lines;
    }
    void digest(uint8_t out[32]) const {
        uint32_t s[8];
        std::memcpy(s, state, sizeof s);
        // The tail, the 0x80 byte, zeros, and the length in bits (big-endian) in one or two last blocks.
        uint8_t last[128];
        std::memcpy(last, buffer, fill);
        last[fill] = 0x80;
        const size_t blocks = fill + 9 <= 64 ? 1 : 2;
        std::memset(last + fill + 1, 0, 64 * blocks - fill - 1);
        const uint64_t bits = total * 8;
        for (int i = 0; i < 8; ++i) last[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
        sha256_detail::compress_blocks(s, last, blocks);
        for (int i = 0; i < 8; ++i) {
            out[4 * i] = (uint8_t)(s[i] >> 24);
            out[4 * i + 1] = (uint8_t)(s[i] >> 16);
            out[4 * i + 2] = (uint8_t)(s[i] >> 8);
            out[4 * i + 3] = (uint8_t)s[i];
        }
    }

private:
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t buffer[64];
    size_t fill = 0;
    uint64_t total = 0;
};

// The SHA-256 digest of data[0..n) into out[0..32).
inline void sha256(const uint8_t* data, size_t n, uint8_t out[32]) {
    Sha256Stream stream;
    stream.update(data, n);
    stream.digest(out);
}

// Add a 32-byte big-endian number to a 32-byte big-endian accumulator, modulo 2**256.
inline void add_256(uint8_t acc[32], const uint8_t x[32]) {
    unsigned carry = 0;
    for (int i = 31; i >= 0; --i) {
        unsigned s = (unsigned)acc[i] + x[i] + carry;
        acc[i] = (uint8_t)s;
        carry = s >> 8;
    }
}

}  // namespace hfbpe
