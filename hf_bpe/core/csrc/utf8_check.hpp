// Strict UTF-8 as Python's "utf-8" codec (errors="strict") accepts it, and its code points counted: what a file's
// block of lines is checked with before it is counted as bytes (no str made: hf_bpe/training/corpus.py).
// Accepted: the shortest form of every code point up to U+10FFFF except the surrogates U+D800-DFFF (RFC 3629,
// Unicode's table 3-7). Refused: overlong forms (C0, C1, E0 80-9F, F0 80-8F), surrogates (ED A0-BF), above U+10FFFF
// (F4 90-BF, F5-FF), stray continuation bytes (80-BF as a first byte) and a sequence cut short (also at the end).
// O(n): ASCII 8 bytes at a time, the rest one sequence at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hfbpe {

// The code points of s[0..n) if it is strict UTF-8, else -1 with the offset of the first bad sequence's first
// byte in *bad (where Python's decoder reports its error start).
inline int64_t utf8_code_points(const char* data, size_t n, size_t* bad) {
    const uint8_t* s = reinterpret_cast<const uint8_t*>(data);
    size_t i = 0;
    int64_t continuation = 0;  // bytes that are not a code point's first: code points = n - continuation
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, s + i, 8);
            if ((w & 0x8080808080808080ULL) == 0) {
                i += 8;
                continue;
            }
        }
        const uint8_t c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t size;
        uint8_t low = 0x80, high = 0xBF;  // the second byte's range (narrower after E0, ED, F0, F4)
        if (c >= 0xC2 && c <= 0xDF) {
            size = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            size = 3;
            if (c == 0xE0) low = 0xA0;   // overlong below U+0800
            if (c == 0xED) high = 0x9F;  // the surrogates U+D800-DFFF
        } else if (c >= 0xF0 && c <= 0xF4) {
            size = 4;
            if (c == 0xF0) low = 0x90;   // overlong below U+10000
            if (c == 0xF4) high = 0x8F;  // above U+10FFFF
        } else {
            *bad = i;
            return -1;
        }
        if (i + 1 >= n || s[i + 1] < low || s[i + 1] > high) {
            *bad = i;
            return -1;
        }
        for (size_t k = 2; k < size; ++k) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) {
                *bad = i;
                return -1;
            }
        }
        continuation += (int64_t)size - 1;
        i += size;
    }
    return (int64_t)n - continuation;
}

// Whether s[0..n) is all ASCII (8 bytes at a time).
inline bool all_ascii(const char* data, size_t n) {
    const uint8_t* s = reinterpret_cast<const uint8_t*>(data);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ULL) return false;
    }
    for (; i < n; ++i) {
        if (s[i] >= 0x80) return false;
    }
    return true;
}

}  // namespace hfbpe
