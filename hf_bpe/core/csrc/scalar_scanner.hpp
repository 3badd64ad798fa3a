// The pre-tokenizer scanners of the named patterns (gpt2, gpt4, llama3, qwen2, o200k), exact for all of Unicode.
// For a start p < n, next_*() returns the end of the piece that `regex.findall(PATTERN, text)` returns there (the
// regexes cover every character, so the pieces tile the text). They read PEP 393 code units in place (Ch = uint8_t,
// uint16_t or uint32_t) and classify each code point by one flag byte (cls(): ~96 KB of classes, built by
// _scanner.pyx from the installed `regex` module, which also checks the invariants the scanners rely on: L, N, \s
// disjoint; space, \r, \n are \s; the apostrophe and '/' are in none of L, N, \s). The BMP is one flat table `g.T`
// (64 KB), read with no test by 1- and 2-byte text (which cannot hold a code point past U+FFFF); the supplementary
// planes, in 4-byte text and 4-byte UTF-8 sequences only, are two-level (a block index per 256 code points, into
// the ~85 distinct 256-byte blocks), behind one predictable compare.
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
    const uint8_t* T = nullptr;    // one flag byte per code point of the BMP, 0..0xFFFF (kBmp bytes)
    const uint16_t* S1 = nullptr;  // U+10000..U+10FFFF: the stage-2 block of each 256 code points (kSuppBlocks)
    const uint8_t* S2 = nullptr;   // the distinct 256-byte blocks of flags (every S1 entry indexes one)
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

constexpr uint32_t kBmp = 0x10000;
constexpr int kBlockShift = 8;  // 256 code points a block: 85 distinct blocks under Unicode 15-16 (~22 KB)
constexpr uint32_t kSuppBlocks = (0x110000 - kBmp) >> kBlockShift;

// The flags of a code point past the BMP (c <= 0x10FFFF): two levels.
HFBPE_SCAN_INLINE uint8_t supp_cls(uint32_t c) {
    return g.S2[((size_t)g.S1[(c - kBmp) >> kBlockShift] << kBlockShift) | (c & ((1u << kBlockShift) - 1))];
}

// The flags of code point c read from text of unit Ch, with T = g.T (hoisted by the caller). 1- and 2-byte PEP 393
// text holds only BMP code points: the flat table alone, no test. 4-byte text and UTF-8 (char) pay one compare.
template <class Ch>
HFBPE_SCAN_INLINE uint8_t cls(const uint8_t* T, uint32_t c) {
    if constexpr (std::is_same<Ch, uint8_t>::value || std::is_same<Ch, uint16_t>::value) {
        return T[c];
    } else {
        if (__builtin_expect(c < kBmp, 1)) return T[c];
        return supp_cls(c);
    }
}

// The flags of any code point 0..0x10FFFF (Python's class_flags, the table checks).
inline uint8_t flags_of(uint32_t c) {
    return cls<uint32_t>(g.T, c);
}

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
    while (i < n && (cls<Ch>(T, at(s, i)) & flag)) i = nx(s, i);
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
                if (c < 128 || !(cls<Ch>(T, c) & F_L)) return i;
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
    while (i < n && !(cls<Ch>(T, at(s, i)) & F_LNS)) i = nx(s, i);
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
        uint8_t f = cls<Ch>(T, at(s, e));
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
    for (Idx k = 1; k < kMax && q < n && (cls<Ch>(T, at(s, q)) & F_N); ++k) q = nx(s, q);
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
        uint8_t f1 = cls<Ch>(T, at(s, p + 1));
        Idx q = nx(s, p + 1);
        if (f1 & F_L) return letters(s, q, n);
        if (f1 & F_N) return run(s, q, n, F_N);
        if (!(f1 & F_S)) return run_other(s, q, n);
    }
    uint8_t f = cls<Ch>(T, c);
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
    uint8_t f = cls<Ch>(T, c);
    Idx q = nx(s, p);
    // 1. [^\r\n\p{L}\p{N}]?\p{L}+ when s[p] is a letter (the contraction needs an apostrophe).
    if (f & F_L) return letters(s, q, n);
    // 2. (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if (c == '\'') {
        Idx e = contraction_ci(s, n, p);
        if (e != p) return e;
    }
    // 3. [^\r\n\p{L}\p{N}]\p{L}+
    if (!(f & (F_N | F_NL)) && q < n && (cls<Ch>(T, at(s, q)) & F_L)) return letters(s, nx(s, q), n);
    // 4. \p{N}{1,3} (or \p{N})
    if (f & F_N) return digits<kMaxDigits>(s, n, q);
    // 5. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if (c == ' ' && q < n && !(cls<Ch>(T, at(s, q)) & F_LNS)) return run_nl(s, run_other(s, nx(s, q), n), n);
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
    if (u < n && (cls<Ch>(T, at(s, u)) & F_LO)) return run(s, nx(s, u), n, F_LO);
    for (Idx k = u; k > q;) {  // the characters of [q, u), last first
        k = pv(s, k);
        if (cls<Ch>(T, at(s, k)) & F_LO) return nx(s, k);
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
    uint8_t f = cls<Ch>(T, c);
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
    if (c == ' ' && q < n && !(cls<Ch>(T, at(s, q)) & F_LNS))
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
