// The pre-tokenizer scanners of the named patterns (gpt2, gpt4, llama3, qwen2, o200k), exact for all of Unicode.
// For a start p < n, next_*() returns the end of the piece that `regex.findall(PATTERN, text)` returns there (the
// regexes cover every character, so the pieces tile the text). They read PEP 393 code units in place (Ch = uint8_t,
// uint16_t or uint32_t) and classify each code point by one flag byte of `g.T` (1.1 MB, built by _scanner.pyx from
// the installed `regex` module, which also checks the invariants the scanners rely on: L, N, \s disjoint; space,
// \r, \n are \s; the apostrophe and '/' are in none of L, N, \s).
// Written as always-inlined templates so that each pattern's loop (pieces()) holds its scanner whole: no call and no
// pattern dispatch per piece (with the scanners in Cython, GCC kept one out-of-line call per piece).
// One- and two-byte text reads letter runs 8 bytes at a time (letters()), where the table's ASCII letters are exactly
// A-Z a-z (else T alone is read); ASCII is transcoded to UTF-8 8 bytes at a time (utf8_of()).
// The same templates read valid UTF-8 (Ch = char, positions are byte offsets): every step goes through the cursor
// functions at() (the code point at i), nx() (the position after it) and pv() (the one before), which are s[i],
// i + 1 and i - 1 on PEP 393 data; a unit compared with an ASCII character (unit()) needs no decoding, as in UTF-8
// a byte below 0x80 is always that character. A long str is scanned in CPython's cached UTF-8 form this way, with
// no transcoding per piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define HFBPE_SCAN_INLINE inline __attribute__((always_inline))
#else
#define HFBPE_SCAN_INLINE inline
#endif

namespace hfbpe {
namespace scanner {

typedef ptrdiff_t Idx;  // Py_ssize_t

enum : uint8_t {
    F_L = 1,    // \p{L}
    F_N = 2,    // \p{N}
    F_S = 4,    // \s
    F_UP = 8,   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]   (o200k "upper" run)
    F_LO = 16,  // [\p{Ll}\p{Lm}\p{Lo}\p{M}]         (o200k "lower" run)
    F_NL = 32,  // [\r\n]
    F_LNS = F_L | F_N | F_S,
};
enum { PID_GPT2 = 0, PID_GPT4 = 1, PID_LLAMA3 = 2, PID_QWEN2 = 3, PID_O200K = 4 };
enum { MAX_FOLD_EXTRA = 32 };

// The classes, filled once by _scanner._build_tables (with the GIL, before any scanner runs).
struct Classes {
    const uint8_t* T = nullptr;  // one flag byte per code point 0..0x10FFFF
    // (?i:...) contraction letters: code point -> ASCII lower letter of "strevmld", 0 for none.
    uint8_t fold_ascii[128] = {};
    uint32_t fold_extra_cp[MAX_FOLD_EXTRA] = {};
    uint8_t fold_extra_letter[MAX_FOLD_EXTRA] = {};
    int n_fold_extra = 0;
    // T's \p{L} on 0..127 is exactly A-Z a-z and the machine is little-endian: letters() may use SWAR.
    bool swar = false;
    // The CPU has AVX2 and T's ASCII classes are the masks' (mask_scanner.hpp): ASCII/UTF-8 read 64 bytes a block.
    bool mask = false;
};
inline Classes g;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__GNUC__) || defined(__clang__))
constexpr bool kLittleEndian = true;
#else
constexpr bool kLittleEndian = false;
#endif

// Whether the byte-wise arithmetic letter test of non_letters() equals T's \p{L} on 0..127.
inline bool ascii_letters_match(const uint8_t* t) {
    for (int c = 0; c < 128; ++c) {
        bool arithmetic = (unsigned)((c | 0x20) - 'a') < 26u;
        if (arithmetic != ((t[c] & F_L) != 0)) return false;
    }
    return true;
}

// Bit 7 of each byte lane set where the byte is not an ASCII letter (non-ASCII bytes included). On 7-bit lanes
// x = lane | 0x20 (A-Z folded onto a-z) no sum below leaves its lane: x + 0x1F has bit 7 iff x >= 'a' (0x61),
// x + 0x05 iff x >= '{' (0x7B).
HFBPE_SCAN_INLINE uint64_t non_letters(uint64_t w) {
    uint64_t x = (w & 0x7F7F7F7F7F7F7F7FULL) | 0x2020202020202020ULL;
    uint64_t letter = (x + 0x1F1F1F1F1F1F1F1FULL) & ~(x + 0x0505050505050505ULL);
    return (~letter | w) & 0x8080808080808080ULL;
}

// The same for 4 two-byte lanes: bit 15 of each lane set where it is not an ASCII letter. A lane at or above U+0080
// may carry into the lane above it, which is later in the text: the lowest set bit, the only one read, is exact.
HFBPE_SCAN_INLINE uint64_t non_letters16(uint64_t w) {
    uint64_t hi = w & 0xFF80FF80FF80FF80ULL;
    uint64_t non_ascii = hi | (hi + 0x7F807F807F807F80ULL);  // bit 15: lane >= 0x80
    uint64_t x = w | 0x0020002000200020ULL;
    uint64_t letter = (x + 0x7F9F7F9F7F9F7F9FULL) & ~(x + 0x7F857F857F857F85ULL);
    return (~letter | non_ascii) & 0x8000800080008000ULL;
}

// Cursor over PEP 393 code units: one code point per unit.
template <class Ch>
HFBPE_SCAN_INLINE uint32_t at(const Ch* s, Idx i) {
    return s[i];
}
template <class Ch>
HFBPE_SCAN_INLINE Idx nx(const Ch*, Idx i) {
    return i + 1;
}
template <class Ch>
HFBPE_SCAN_INLINE Idx pv(const Ch*, Idx i) {
    return i - 1;
}
// The unit at i, for comparing with an ASCII character only.
template <class Ch>
HFBPE_SCAN_INLINE uint32_t unit(const Ch* s, Idx i) {
    return s[i];
}

// Cursor over valid UTF-8 (CPython's own encoding of a str: never truncated, overlong or a surrogate).
HFBPE_SCAN_INLINE uint32_t at(const char* s, Idx i) {
    const unsigned char* u = (const unsigned char*)s + i;
    uint32_t b = u[0];
    if (b < 0x80) return b;
    if (b < 0xE0) return ((b & 0x1F) << 6) | (u[1] & 0x3F);
    if (b < 0xF0) return ((b & 0x0F) << 12) | ((u[1] & 0x3F) << 6) | (u[2] & 0x3F);
    return ((b & 0x07) << 18) | ((u[1] & 0x3F) << 12) | ((u[2] & 0x3F) << 6) | (u[3] & 0x3F);
}
HFBPE_SCAN_INLINE Idx nx(const char* s, Idx i) {
    uint32_t b = (unsigned char)s[i];
    return i + (b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4);
}
HFBPE_SCAN_INLINE Idx pv(const char* s, Idx i) {
    do --i;
    while (((unsigned char)s[i] & 0xC0) == 0x80);
    return i;
}
HFBPE_SCAN_INLINE uint32_t unit(const char* s, Idx i) {
    return (unsigned char)s[i];
}

template <class Ch>
HFBPE_SCAN_INLINE Idx run(const Ch* s, Idx i, Idx n, uint8_t flag) {
    // End of the run of characters that have `flag`, starting at i.
    const uint8_t* T = g.T;
    while (i < n && (T[at(s, i)] & flag)) i = nx(s, i);
    return i;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx letters(const Ch* s, Idx i, Idx n) {
    // End of the \p{L} run starting at i. One- and two-byte text: 8 bytes (8 or 4 characters) at a time while they
    // are ASCII letters; the character that stops them is then classified by T (at a non-ASCII letter the table
    // reads the rest of the run).
    if constexpr (sizeof(Ch) <= 2 && kLittleEndian) {
        if (g.swar) {
            const uint8_t* T = g.T;
            constexpr Idx kStep = 8 / sizeof(Ch);
            while (i + kStep <= n) {
                uint64_t w;
                std::memcpy(&w, s + i, 8);
                uint64_t stop = sizeof(Ch) == 1 ? non_letters(w) : non_letters16(w);
                if (stop == 0) {
                    i += kStep;
                    continue;
                }
                i += __builtin_ctzll(stop) >> (sizeof(Ch) == 1 ? 3 : 4);
                uint32_t c = at(s, i);
                if (c < 128 || !(T[c] & F_L)) return i;
                // A non-ASCII letter: the rest of the run by the table (a CJK run would stop every step).
                return run(s, nx(s, i), n, F_L);
            }
        }
    }
    return run(s, i, n, F_L);
}

template <class Ch>
HFBPE_SCAN_INLINE Idx run_other(const Ch* s, Idx i, Idx n) {
    // End of the run of [^\s\p{L}\p{N}] starting at i.
    const uint8_t* T = g.T;
    while (i < n && !(T[at(s, i)] & F_LNS)) i = nx(s, i);
    return i;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx run_nl(const Ch* s, Idx i, Idx n) {
    // End of the run of [\r\n] starting at i.
    while (i < n && (unit(s, i) == 0x0A || unit(s, i) == 0x0D)) ++i;
    return i;
}

HFBPE_SCAN_INLINE uint8_t fold(uint32_t c) {
    // The letter of "strevmld" that `c` matches case-insensitively, or 0.
    if (c < 128) return g.fold_ascii[c];
    for (int i = 0; i < g.n_fold_extra; ++i)
        if (g.fold_extra_cp[i] == c) return g.fold_extra_letter[i];
    return 0;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx contraction_ci(const Ch* s, Idx n, Idx p) {
    // End of (?i:'s|'t|'re|'ve|'m|'ll|'d) at p, or p when it does not match.
    if (unit(s, p) != '\'' || p + 1 >= n) return p;
    uint8_t l1 = fold(at(s, p + 1));
    Idx q = nx(s, p + 1);  // a folded letter may take more than one UTF-8 byte (U+017F, U+212A)
    if (l1 == 's' || l1 == 't' || l1 == 'm' || l1 == 'd') return q;
    if (l1 != 0 && q < n) {
        uint8_t l2 = fold(at(s, q));
        if ((l2 == 'e' && (l1 == 'r' || l1 == 'v')) || (l1 == 'l' && l2 == 'l')) return nx(s, q);
    }
    return p;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx whitespace(const Ch* s, Idx n, Idx p, bool to_end_first) {
    // s[p] is \s. 1. The maximal \s run [p, e) and its last [\r\n] (one forward pass).
    const uint8_t* T = g.T;
    Idx e = p, last_nl = -1;
    while (e < n) {
        uint8_t f = T[at(s, e)];
        if (!(f & F_S)) break;
        if (f & F_NL) last_nl = e;
        e = nx(s, e);
    }
    // 2. tiktoken cl100k's `\s++$`: a run that reaches the end of the text is one piece.
    if (to_end_first && e == n) return n;
    // 3. `\s*[\r\n]+`: \s* backtracks to the last [\r\n] of the run, which [\r\n]+ then takes alone.
    if (last_nl >= 0) return last_nl + 1;
    // 4. `\s+(?!\S)`: the whole run at the end of the text, else all but its last character (if that leaves one).
    if (e == n) return n;
    Idx last = pv(s, e);
    if (last > p) return last;
    // 5. `\s+` (or tiktoken's `\s`): a single whitespace character before a non-space.
    return e;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx whitespace_gpt2(const Ch* s, Idx n, Idx p) {
    // `\s+(?!\S)|\s+` at a whitespace character p.
    Idx e = run(s, nx(s, p), n, F_S);
    if (e == n) return n;
    Idx last = pv(s, e);  // all but the last character of a run of two or more
    return last > p ? last : e;
}

// \p{N}{1,kMax} after a first digit that ends at q: the end of the run, at most kMax characters long in all.
template <Idx kMax, class Ch>
HFBPE_SCAN_INLINE Idx digits(const Ch* s, Idx n, Idx q) {
    const uint8_t* T = g.T;
    for (Idx k = 1; k < kMax && q < n && (T[at(s, q)] & F_N); ++k) q = nx(s, q);
    return q;
}

// gpt2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
template <class Ch>
HFBPE_SCAN_INLINE Idx next_gpt2(const Ch* s, Idx n, Idx p) {
    const uint8_t* T = g.T;
    uint32_t c = at(s, p);
    // 1. ' ?X+' for X in \p{L}, \p{N}, [^\s\p{L}\p{N}], with the space taken when the next character is X (first,
    //    as most English pieces are a space and a word).
    if (c == ' ' && p + 1 < n) {
        uint8_t f1 = T[at(s, p + 1)];
        Idx q = nx(s, p + 1);
        if (f1 & F_L) return letters(s, q, n);
        if (f1 & F_N) return run(s, q, n, F_N);
        if (!(f1 & F_S)) return run_other(s, q, n);
    }
    uint8_t f = T[c];
    if (f & F_L) return letters(s, nx(s, p), n);
    // 2. 's|'t|'re|'ve|'m|'ll|'d, case-sensitive (an apostrophe is none of L, N, \s). Units, not code points: a
    //    match is ASCII, and a UTF-8 continuation byte is no ASCII letter.
    if (c == '\'' && p + 1 < n) {
        uint32_t c1 = unit(s, p + 1);
        if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return p + 2;
        if (p + 2 < n) {
            uint32_t c2 = unit(s, p + 2);
            if ((c2 == 'e' && (c1 == 'r' || c1 == 'v')) || (c1 == 'l' && c2 == 'l')) return p + 3;
        }
    }
    if (f & F_N) return run(s, nx(s, p), n, F_N);
    if (!(f & F_S)) return run_other(s, nx(s, p), n);
    // 3. Whitespace.
    return whitespace_gpt2(s, n, p);
}

// gpt4 (kToEndFirst, kMaxDigits 3), llama3 (kMaxDigits 3), qwen2 (kMaxDigits 1).
template <Idx kMaxDigits, bool kToEndFirst, class Ch>
HFBPE_SCAN_INLINE Idx next_cl100k(const Ch* s, Idx n, Idx p) {
    const uint8_t* T = g.T;
    uint32_t c = at(s, p);
    uint8_t f = T[c];
    Idx q = nx(s, p);
    // 1. [^\r\n\p{L}\p{N}]?\p{L}+ when s[p] is a letter (the contraction needs an apostrophe).
    if (f & F_L) return letters(s, q, n);
    // 2. (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if (c == '\'') {
        Idx e = contraction_ci(s, n, p);
        if (e != p) return e;
    }
    // 3. [^\r\n\p{L}\p{N}]\p{L}+
    if (!(f & (F_N | F_NL)) && q < n && (T[at(s, q)] & F_L)) return letters(s, nx(s, q), n);
    // 4. \p{N}{1,3} (or \p{N})
    if (f & F_N) return digits<kMaxDigits>(s, n, q);
    // 5. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if (c == ' ' && q < n && !(T[at(s, q)] & F_LNS)) return run_nl(s, run_other(s, nx(s, q), n), n);
    if (!(f & F_LNS)) return run_nl(s, run_other(s, q, n), n);
    // 6. Whitespace.
    return whitespace(s, n, p, kToEndFirst);
}

template <class Ch>
HFBPE_SCAN_INLINE Idx o200k_lower_tail(const Ch* s, Idx n, Idx q) {
    // End of [UP]*[LO]+ at q, or -1. UP* is greedy, so the run of UP from q is taken first; LO+ then needs a LO
    // right after it (only an Ll can be there, as UP-and-LO chars would be in the run), else UP* gives back
    // characters until the last LO in the run, which LO+ takes alone (its neighbour is UP-only or the run end).
    const uint8_t* T = g.T;
    if (q >= n) return -1;
    Idx u = run(s, q, n, F_UP);
    if (u < n && (T[at(s, u)] & F_LO)) return run(s, nx(s, u), n, F_LO);
    for (Idx k = u; k > q;) {  // the characters of [q, u), last first
        k = pv(s, k);
        if (T[at(s, k)] & F_LO) return nx(s, k);
    }
    return -1;
}

template <class Ch>
HFBPE_SCAN_INLINE Idx o200k_upper_head(const Ch* s, Idx n, Idx q) {
    // End of [UP]+[LO]* at q, or -1 (both greedy; nothing after them can fail, so no backtracking).
    if (q >= n) return -1;
    Idx u = run(s, q, n, F_UP);
    if (u == q) return -1;
    return run(s, u, n, F_LO);
}

// o200k: case-aware letter runs with an optional contraction suffix (see _scanner.pyx's docstring).
template <class Ch>
HFBPE_SCAN_INLINE Idx next_o200k(const Ch* s, Idx n, Idx p) {
    const uint8_t* T = g.T;
    uint32_t c = at(s, p);
    uint8_t f = T[c];
    Idx q = nx(s, p);
    bool can_prefix = !(f & (F_L | F_N | F_NL));  // [^\r\n\p{L}\p{N}]
    Idx e = -1;
    // 1-2. P?[UP]*[LO]+C? | P?[UP]+[LO]*C?, tried in the regex's order: alternative 1 with the optional prefix P
    //      taken, then without; then alternative 2 likewise. C is the optional case-insensitive contraction.
    //      (A mark can be both the prefix and part of a run, hence both tries.)
    if (can_prefix) e = o200k_lower_tail(s, n, q);
    if (e < 0 && (f & (F_UP | F_LO))) e = o200k_lower_tail(s, n, p);
    if (e < 0 && can_prefix) e = o200k_upper_head(s, n, q);
    if (e < 0 && (f & F_UP)) e = o200k_upper_head(s, n, p);
    if (e >= 0) {
        if (e < n && unit(s, e) == '\'') return contraction_ci(s, n, e);
        return e;
    }
    // 3. \p{N}{1,3}
    if (f & F_N) return digits<3>(s, n, q);
    // 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if (c == ' ' && q < n && !(T[at(s, q)] & F_LNS))
        e = run_other(s, nx(s, q), n);
    else if (!(f & F_LNS))
        e = run_other(s, q, n);
    if (e >= 0) {
        while (e < n && (unit(s, e) == 0x0A || unit(s, e) == 0x0D || unit(s, e) == '/')) ++e;
        return e;
    }
    // 5. Whitespace: \s*[\r\n]+|\s+(?!\S)|\s+
    return whitespace(s, n, p, false);
}

// The piece at p for scanner `pid` (one dispatch per call: for callers that make an object per piece anyway).
template <class Ch>
inline Idx next_piece(const Ch* s, Idx n, Idx p, int pid) {
    switch (pid) {
        case PID_GPT2: return next_gpt2(s, n, p);
        case PID_GPT4: return next_cl100k<3, true>(s, n, p);
        case PID_LLAMA3: return next_cl100k<3, false>(s, n, p);
        case PID_QWEN2: return next_cl100k<1, false>(s, n, p);
        default: return next_o200k(s, n, p);
    }
}

}  // namespace scanner
}  // namespace hfbpe

#include "mask_scanner.hpp"

namespace hfbpe {
namespace scanner {

// UTF-8 of s[a:b] into out (room for 4 bytes per code point); -1 on a lone surrogate (not encodable). ASCII is
// copied 8 bytes of code units at a time (8, 4 or 2 characters), the rest one code point at a time.
template <class Ch>
HFBPE_SCAN_INLINE Idx utf8_of(const Ch* s, Idx a, Idx b, char* out) {
    Idx j = 0, i = a;
    if constexpr (kLittleEndian) {
        constexpr Idx kStep = 8 / sizeof(Ch);
        while (i + kStep <= b) {
            uint64_t w;
            std::memcpy(&w, s + i, 8);
            if constexpr (sizeof(Ch) == 1) {
                if (w & 0x8080808080808080ULL) break;
                std::memcpy(out + j, &w, 8);
            } else if constexpr (sizeof(Ch) == 2) {
                if (w & 0xFF80FF80FF80FF80ULL) break;
                uint64_t t = (w | (w >> 8)) & 0x0000FFFF0000FFFFULL;  // lanes' low bytes side by side
                uint32_t packed = (uint32_t)(t | (t >> 16));
                std::memcpy(out + j, &packed, 4);
            } else {
                if (w & 0xFFFFFF80FFFFFF80ULL) break;
                uint16_t packed = (uint16_t)(w | (w >> 24));
                std::memcpy(out + j, &packed, 2);
            }
            i += kStep;
            j += kStep;
        }
    }
    for (; i < b; ++i) {
        uint32_t c = s[i];
        if (c < 0x80) {
            out[j++] = (char)c;
        } else if (c < 0x800) {
            out[j] = (char)(0xC0 | (c >> 6));
            out[j + 1] = (char)(0x80 | (c & 0x3F));
            j += 2;
        } else if (sizeof(Ch) == 1) {
            // unreachable: one-byte text is below U+0100
        } else if (c < 0x10000) {
            if (c >= 0xD800 && c < 0xE000) return -1;
            out[j] = (char)(0xE0 | (c >> 12));
            out[j + 1] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[j + 2] = (char)(0x80 | (c & 0x3F));
            j += 3;
        } else {
            out[j] = (char)(0xF0 | (c >> 18));
            out[j + 1] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[j + 2] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[j + 3] = (char)(0x80 | (c & 0x3F));
            j += 4;
        }
    }
    return j;
}

// A text's pieces' end offsets in *ends, and 1 when the text is its own UTF-8 (ASCII, or UTF-8 read in place: ends
// are offsets in `s`, *utf8 is left alone: no copy), 0 when its UTF-8 was written to *utf8 (ends are offsets in
// it), -1 for a lone surrogate. `Next` is one pattern's scanner, inlined into the loop. Other text's UTF-8 is
// written into room made once (the most bytes its characters can take) and cut to size at the end.
template <class Ch, Idx (*Next)(const Ch*, Idx, Idx), int kFam, Idx kMaxDigits>
inline int pieces_of(const Ch* s, Idx n, bool ascii, std::string* utf8, std::vector<size_t>* ends) {
    ends->clear();
    // A long text: room for English's ~4.5 bytes a piece at once, else its ends are regrown ~17 times (callgrind:
    // ~2 % of a long text's instructions). Short texts skip the call (the vector is kept from text to text).
    if (n > 4096) ends->reserve((size_t)n / 4);
    Idx p = 0;
    if (std::is_same<Ch, char>::value || ascii) {  // UTF-8 (positions are byte offsets), or ASCII: its own UTF-8
        if constexpr (sizeof(Ch) == 1) {
            if (g.mask && n >= 64) p = mask_pieces<kFam, kMaxDigits, Ch, Next>(s, n, ends);
        }
        while (p < n) {
            p = Next(s, n, p);
            ends->push_back((size_t)p);
        }
        return 1;
    }
    utf8->clear();
    if constexpr (!std::is_same<Ch, char>::value) {
        // UTF-8 bytes per code point at most: 2 below U+0100, 3 in the BMP (a surrogate fails), 4 beyond.
        utf8->resize((size_t)n * (sizeof(Ch) == 1 ? 2 : sizeof(Ch) == 2 ? 3 : 4));
        char* out = &(*utf8)[0];
        size_t used = 0;
        while (p < n) {
            Idx e = Next(s, n, p);
            Idx m = utf8_of(s, p, e, out + used);
            if (m < 0) return -1;
            used += (size_t)m;
            ends->push_back(used);
            p = e;
        }
        utf8->resize(used);
    }
    return 0;
}

template <class Ch>
inline int pieces(const Ch* s, Idx n, bool ascii, int pid, std::string* utf8, std::vector<size_t>* ends) {
    switch (pid) {
        case PID_GPT2: return pieces_of<Ch, next_gpt2<Ch>, FAM_GPT2, 0>(s, n, ascii, utf8, ends);
        case PID_GPT4: return pieces_of<Ch, next_cl100k<3, true, Ch>, FAM_CL100K, 3>(s, n, ascii, utf8, ends);
        case PID_LLAMA3: return pieces_of<Ch, next_cl100k<3, false, Ch>, FAM_CL100K, 3>(s, n, ascii, utf8, ends);
        case PID_QWEN2: return pieces_of<Ch, next_cl100k<1, false, Ch>, FAM_CL100K, 1>(s, n, ascii, utf8, ends);
        default: return pieces_of<Ch, next_o200k<Ch>, FAM_O200K, 3>(s, n, ascii, utf8, ends);
    }
}

// The first p in [from, to) where UTF-8 text s[0..n) may be cut for every named pattern (core/fragment.py's rule):
// s[p] is a space and the character before it a letter or digit; -1 if none. A 0x20 byte is always a space in
// UTF-8, and the character before it is found by stepping back over continuation bytes: the positions are those
// of the rule on code points, as byte offsets. O(to - from).
inline Idx next_safe_cut_utf8(const char* s, Idx from, Idx to) {
    const uint8_t* T = g.T;
    for (Idx p = from < 1 ? 1 : from; p < to; ++p) {
        const void* hit = std::memchr(s + p, ' ', (size_t)(to - p));
        if (hit == nullptr) return -1;
        p = (const char*)hit - s;
        if (p >= 1 && (T[at(s, pv(s, p))] & (F_L | F_N))) return p;
    }
    return -1;
}

// Cut UTF-8 text s[0..n) for threads as Pretokenizer.encode_text cuts a str: near every `part` bytes, at the first
// safe cut within `window` bytes of the target; a stretch without one is left to the part before it. bounds gets
// 0, the cuts, n. O(n): the searched ranges do not overlap.
inline void safe_cuts_utf8(const char* s, Idx n, Idx part, Idx window, std::vector<Idx>* bounds) {
    bounds->clear();
    bounds->push_back(0);
    if (part < 1) part = 1;
    Idx target = part;
    while (target < n) {
        Idx end = n - target < window ? n : target + window;
        Idx cut = next_safe_cut_utf8(s, target, end);
        if (cut > 0) {  // cut >= target > the last cut
            bounds->push_back(cut);
            target = cut + part;
        } else {
            target += part > window ? part : window;
        }
    }
    bounds->push_back(n);
}

}  // namespace scanner
}  // namespace hfbpe
