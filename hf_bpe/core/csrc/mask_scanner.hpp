// The AVX2 mask scanner: where a text's bytes are ASCII, 64 of them at a time are classified into one bit mask per
// class (letter, digit, whitespace, ...), and the positions where a piece of the named pattern starts are derived
// from the masks with shifts and adds, then popped one bit each (no branch per piece that the text decides: the
// scalar scanners' per-piece dispatch mispredicts about once a piece). gigatoken's pre-tokenizer does the same
// (design note: docs/design/encoder-plan.md, P4); this is our own derivation, rule by rule, below.
// Built on scalar_scanner.hpp (it calls the scalar scanners for the bytes it leaves alone); scanner.hpp combines both.
//
// A block is the 64 bytes at p, where a piece is known to start. Its starts are exact only where they depend on
// nothing past the block and no non-ASCII byte: a start at j depends on the classes of j - 1, j, j + 1 (and, at an
// apostrophe, the next two characters, read by the scalar contraction test on the text itself), and on where the
// runs before it end. So starts are kept only before `limit`, the first position of the last class run that ends
// before the block's end and before the first non-ASCII byte (that run's end, or its class, may depend on what
// follows). The caller emits the kept starts, then starts the next block at the last of them (its piece's end is
// not known yet); a block with no kept start takes one scalar piece. The scalar scanner is the spec: the tests
// hold both equal (and equal to `regex`) on text mixing every class around 32- and 64-byte boundaries.
//
// The rules, ASCII only (classes: L letter, D digit, W whitespace = SP ' ' | NL [\r\n] | WO [\t\v\f]; O the rest;
// x<<1 is "the character before is x"):
// gpt2:    a non-W run starts a piece unless a space is before it (` ?X+`); a W run starts a piece and so does its
//          last character if the run has two or more (`\s+(?!\S)`); an apostrophe that starts a piece followed by
//          s|t|m|d|re|ve|ll is a piece of its own.
// cl100k:  (gpt4, llama3, qwen2) a letter run starts a piece unless the character before it is a non-NL W, or an
//          O that starts a piece and is no contraction (`[^\r\n\p{L}\p{N}]?\p{L}+`); a digit run starts a piece
//          every kMaxDigits; an O run starts a piece unless a space is before it, and takes the NL run after it
//          (`[\r\n]*`); what is left of a W run starts a piece, as does the character after its last NL
//          (`\s*[\r\n]+`) and its last character when that is no NL (`\s+(?!\S)`, a single `\s`).
// o200k:   as cl100k, plus a piece starts at an upper-case letter after a lower-case one ([UP]*[LO]+ | [UP]+[LO]*),
//          a contraction after a letter run belongs to it (`C?`), and a `/` after an O run's NL run is taken too
//          ([\r\n/]*: such a block is cut before it and left to the scalar scanner).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "piece_ends.hpp"
#include "scalar_scanner.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HFBPE_MASK_SCANNER 1
#else
#define HFBPE_MASK_SCANNER 0
#endif

namespace hfbpe {
namespace scanner {

// One bit per byte of a 64-byte block, bit j for byte j.
struct BlockMasks {
    uint64_t L, UP, D, SP, NL, W, A, SL, X;  // letter, upper-case letter, digit, ' ', [\r\n], \s, ', /, non-ASCII
};

// Whether T's classes of ASCII are the ones the masks compute (else the mask scanner stays off).
inline bool ascii_classes_match(const uint8_t* t) {
    for (int c = 0; c < 128; ++c) {
        const bool up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
        const bool space = c == ' ' || (c >= 9 && c <= 13), nl = c == '\n' || c == '\r';
        uint8_t want = (up || lo ? F_L : 0) | (digit ? F_N : 0) | (space ? F_S : 0) | (up ? F_UP : 0) |
                       (lo ? F_LO : 0) | (nl ? F_NL : 0);
        if ((t[c] & (F_L | F_N | F_S | F_UP | F_LO | F_NL)) != want) return false;
    }
    return true;
}

#if HFBPE_MASK_SCANNER
inline bool cpu_has_avx2() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("popcnt");
}

// Bytes x with (unsigned)(x - lo) < len, as 0xFF lanes (the unsigned test as a signed compare, both sides - 128).
__attribute__((target("avx2"))) static inline __m256i in_range(__m256i x, unsigned char lo, unsigned char len) {
    const __m256i v = _mm256_add_epi8(x, _mm256_set1_epi8((char)(unsigned char)(0x80 - lo)));
    return _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(unsigned char)(len - 128)), v);
}

__attribute__((target("avx2"))) static inline uint64_t bits(__m256i lo, __m256i hi) {
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(lo) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32);
}

// The masks of the 64 bytes at s, inlined into mask_pieces (compiled for AVX2 as a whole: see there).
__attribute__((target("avx2,bmi2"), always_inline)) inline void classify64(const unsigned char* s, BlockMasks* m) {
    const __m256i a = _mm256_loadu_si256((const __m256i*)s), b = _mm256_loadu_si256((const __m256i*)(s + 32));
    const __m256i k20 = _mm256_set1_epi8(0x20);
    const __m256i la = in_range(_mm256_or_si256(a, k20), 'a', 26), lb = in_range(_mm256_or_si256(b, k20), 'a', 26);
    m->L = bits(la, lb);
    m->UP = bits(in_range(a, 'A', 26), in_range(b, 'A', 26));
    m->D = bits(in_range(a, '0', 10), in_range(b, '0', 10));
    const __m256i sp = _mm256_set1_epi8(' '), nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    const __m256i spa = _mm256_cmpeq_epi8(a, sp), spb = _mm256_cmpeq_epi8(b, sp);
    m->SP = bits(spa, spb);
    m->NL = bits(_mm256_or_si256(_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(a, cr)),
                 _mm256_or_si256(_mm256_cmpeq_epi8(b, nl), _mm256_cmpeq_epi8(b, cr)));
    m->W = bits(_mm256_or_si256(spa, in_range(a, 9, 5)), _mm256_or_si256(spb, in_range(b, 9, 5)));
    const __m256i ap = _mm256_set1_epi8('\''), sl = _mm256_set1_epi8('/');
    m->A = bits(_mm256_cmpeq_epi8(a, ap), _mm256_cmpeq_epi8(b, ap));
    m->SL = bits(_mm256_cmpeq_epi8(a, sl), _mm256_cmpeq_epi8(b, sl));
    m->X = bits(a, b);
}
#else
inline bool cpu_has_avx2() {
    return false;
}
inline void classify64(const unsigned char*, BlockMasks*) {}
#endif

// mask_pieces runs only where cpu_has_avx2() (AVX2, BMI1, BMI2, POPCNT): it is compiled for them as a whole, so
// that classify64 is inlined into it (its 9 masks stay in registers: out of line, they went through memory once
// a block), a block's count is one popcnt (not a libgcc call), and its bits are popped with tzcnt and blsr. The
// scalar scanners it calls inline into it too.
#if HFBPE_MASK_SCANNER
#define HFBPE_MASK_TARGET __attribute__((target("avx2,bmi,bmi2,popcnt")))
#define HFBPE_LOW_BIT(x) ((int)_tzcnt_u64(x))  // 64 for 0
#else
#define HFBPE_MASK_TARGET
#define HFBPE_LOW_BIT(x) ((x) ? __builtin_ctzll(x) : 64)
#endif

// Appends ends through a raw cursor: room is made ahead (zero-filled once by resize), so the pieces of a block are
// written with no capacity test each; finish() cuts the vector to what was written. The room made is about what
// the text needs (a batch's short lines each start here: room for 4,096 ends was a 32 KB fill per line, 25 % of a
// one-thread batch of English lines), then at most ROOM entries at a time.
class EndsWriter {
public:
    // For a text of `bytes` bytes (English has ~4.5 bytes a piece; room grows past the guess when needed).
    EndsWriter(PieceEnds* ends, size_t bytes) : v_(ends) {
        make_room(std::min(ROOM, bytes / 4 + 64));
    }
    // At least `need` (<= ROOM) entries writable at out.
    void room(size_t need) {
        if ((size_t)(lim_ - out) < need) make_room(std::max(need, std::min(ROOM, v_->size())));
    }
    void push(size_t end) {
        room(1);
        *out++ = end;
    }
    void finish() { v_->resize((size_t)(out - v_->data())); }
    size_t* out = nullptr;
    static constexpr size_t ROOM = 4096;

private:
    void make_room(size_t more) {  // `more` entries past the cursor (the vector's end moves there)
        const size_t used = out == nullptr ? v_->size() : (size_t)(out - v_->data());
        v_->resize(used + more);
        out = v_->data() + used;
        lim_ = v_->data() + v_->size();
    }
    PieceEnds* v_;
    size_t* lim_;
};

HFBPE_SCAN_INLINE int top_bit(uint64_t x) {
    return 63 - __builtin_clzll(x);
}

// Which pattern a block follows.
enum { FAM_GPT2 = 0, FAM_CL100K = 1, FAM_O200K = 2 };

// The piece starts in (0, limit) of the block at p (s[p..p+64) in the text s[0..n), masks m), as bits.
template <int kFam, Idx kMaxDigits, class Ch>
HFBPE_SCAN_INLINE uint64_t block_starts(const Ch* s, Idx n, Idx p, const BlockMasks& m) {
    const uint64_t L = m.L, D = m.D, W = m.W, X = m.X, SP = m.SP, NL = m.NL;
    const uint64_t O = ~(L | D | W | X);
    // 1. limit: the first position of the last run before the block's end and before the first non-ASCII byte
    //    (o200k: before a `/` right after an NL, where an O run's [\r\n/]* may reach).
    const uint64_t runs = ((L & ~(L << 1)) | (D & ~(D << 1)) | (W & ~(W << 1)) | (O & ~(O << 1)) | X) & ~1ULL;
    uint64_t stop = X;
    if (kFam == FAM_O200K) stop |= m.SL & (NL << 1);
    const uint64_t before = stop ? runs & ((stop & (0 - stop)) - 1) : runs;  // run starts before the first stop
    if (before == 0) return 0;
    // Without a stop the last run may go on past the block; with one, the run before it may go on past it.
    const int limit = top_bit(before);
    const uint64_t keep = ((1ULL << limit) - 1) & ~1ULL;
    uint64_t st;
    if (kFam == FAM_GPT2) {
        // 2a. Non-W runs (class changes) not after a space; W run starts and the last of a run of two or more.
        const uint64_t nonw = ((L & ~(L << 1)) | (D & ~(D << 1)) | (O & ~(O << 1))) & ~(SP << 1);
        st = nonw | (W & ~((W << 1) & (W >> 1)));
        // 3a. Contractions at an apostrophe that starts a piece (case-sensitive): its letters are its piece.
        for (uint64_t a = m.A & st & (keep | 1); a; a &= a - 1) {  // (p starts a piece)
            const int i = __builtin_ctzll(a);
            const Idx q = p + i;
            if (q + 1 >= n) continue;
            const uint32_t c1 = unit(s, q + 1);
            int len = 0;
            if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') len = 2;
            else if (q + 2 < n) {
                const uint32_t c2 = unit(s, q + 2);
                if ((c2 == 'e' && (c1 == 'r' || c1 == 'v')) || (c1 == 'l' && c2 == 'l')) len = 3;
            }
            if (len) {
                st &= ~(3ULL << (i + 1));  // (i + 1 <= 62: limit <= 63)
                if (i + len < 64) st |= 1ULL << (i + len);
            }
        }
        return st & keep;
    }
    const uint64_t WS = W & ~NL;  // \s but not [\r\n]: may be a letter run's prefix
    // 2b. An O run's piece takes the NL run right after it.
    const uint64_t seeds = NL & (O << 1);
    const uint64_t absorbed = NL & ~(NL + seeds);
    const uint64_t weff = W & ~absorbed;
    // 3b. O: a run start not after a space (which starts the piece instead).
    const uint64_t ostart = O & ~(O << 1) & ~(SP << 1);
    // 4b. Letters: a run start unless after a non-NL \s or a piece-starting O (its prefix); contractions below.
    st = L & ~(L << 1) & ~((WS | ostart) << 1);
    if (kFam == FAM_O200K) st |= m.UP & ((L & ~m.UP) << 1);  // upper after lower
    st |= ostart;
    // 5b. Digits: every kMaxDigits of a run.
    const uint64_t dstart = D & ~(D << 1);
    st |= dstart;
    if (kMaxDigits == 1) {
        st |= D;
    } else {
        for (uint64_t cur = dstart; cur;) {
            uint64_t c = cur;
            for (Idx k = 0; k < kMaxDigits && c; ++k) c = (c << 1) & D;
            st |= c;
            cur = c;
        }
    }
    // 6b. Whitespace: the start of what the O run left; after the last NL of a run (the next stop of the non-NL
    //     \s run after an NL is no NL); the last character of a run when it is no NL.
    st |= weff & ~(weff << 1);
    st |= WS & ~(W >> 1);
    for (uint64_t a = NL & (WS >> 1) & (keep | 1); a; a &= a - 1) {
        const int i = __builtin_ctzll(a);
        const uint64_t after = ~WS & (~0ULL << (i + 1));  // (i + 1 <= 63)
        if (after && !((NL >> __builtin_ctzll(after)) & 1)) st |= 1ULL << (i + 1);
    }
    // 7b. Contractions (case-insensitive): cl100k at an apostrophe that starts a piece, o200k after a letter.
    const uint64_t cands = kFam == FAM_O200K ? m.A & (L << 1) : m.A & ostart;
    uint64_t forced = 0;  // o200k: an apostrophe right after a contraction starts a piece (no letter piece before)
    for (uint64_t a = cands & (keep | 1); a; a &= a - 1) {
        const int i = __builtin_ctzll(a);
        if (kFam == FAM_O200K && ((forced >> i) & 1)) continue;
        const Idx q = p + i;
        const Idx e = contraction_ci(s, n, q);
        if (e == q) continue;
        const int len = (int)(e - q);  // 2 or 3 ASCII bytes here (a folded non-ASCII letter is a stop)
        if (len > 3 || ((X >> i) & (((1ULL << len) - 1)))) return 0;
        if (kFam == FAM_O200K) {
            st &= ~(1ULL << i);  // the letter run's piece goes on
        }
        if (i + 1 < 64) st &= ~(((1ULL << (len - 1)) - 1) << (i + 1));
        if (i + len < 64) {
            st |= 1ULL << (i + len);
            forced |= 1ULL << (i + len);
        }
    }
    return st & keep;
}

// Scan s[p..n) with the masks while 64 bytes are left, appending the ends of the pieces before the returned
// position (where a piece starts: the scalar scanner goes on from there).
template <int kFam, Idx kMaxDigits, class Ch, Idx (*Next)(const Ch*, Idx, Idx)>
HFBPE_MASK_TARGET inline Idx mask_pieces(const Ch* s, Idx n, PieceEnds* ends) {
    static_assert(sizeof(Ch) == 1, "bytes: ASCII or UTF-8");
    Idx p = 0;
    BlockMasks m;
    EndsWriter w(ends, (size_t)n);
    while (p + 64 <= n) {
        classify64((const unsigned char*)s + p, &m);
        if (kMaxDigits > 0 && m.D == ~0ULL && m.X == 0) {
            // 64 ASCII digits from p, a piece's start: whatever the pattern's other branches, a digit there starts
            // \p{N}{1,kMaxDigits}, which takes kMaxDigits of them while the run goes on, so the pieces inside the
            // block end every kMaxDigits bytes (issue 37's digit runs: ~21 scalar scans a block before).
            const Idx last = p + 64 - 64 % kMaxDigits;
            w.room(64);
            for (Idx q = p + kMaxDigits; q <= last; q += kMaxDigits) *w.out++ = (size_t)q;
            p = last;
            continue;
        }
        uint64_t st = block_starts<kFam, kMaxDigits>(s, n, p, m);
        if (st == 0) {
            // Nothing before the first non-ASCII byte, or one run longer than the block: the scalar scanner, past
            // the block's last non-ASCII byte (1 KB when half the block is not ASCII: CJK text is classified once
            // a KB, not once a piece, which doubled its scanning).
            // A block of one class (a run of digits, letters, spaces or punctuation longer than the block, issue
            // 37's worst cases) is scanned through to its end: its pieces (cl100k's and o200k's 3-digit groups)
            // were each classifying the block again, 2.6 us a piece.
            const bool one_class = m.X == 0 && (m.D == ~0ULL || m.L == ~0ULL || m.W == ~0ULL || (m.L | m.D | m.W) == 0);
            const Idx until = one_class                        ? p + 64
                              : m.X == 0                        ? p + 1
                              : __builtin_popcountll(m.X) >= 32 ? p + 1024
                                                                : p + top_bit(m.X) + 1;
            do {
                p = Next(s, n, p);
                w.push((size_t)p);
            } while (p < until && p < n);
            continue;
        }
        // The kept starts, 8 written per step whatever their number (no branch per piece, and the loop's exit,
        // mispredicted once a block when it was per piece, now only where a block's count crosses a multiple of
        // 8): past the last start, an empty mask writes p + 64, which the cursor does not keep.
        w.room(64);
        const int count = __builtin_popcountll(st);
        const Idx last = p + top_bit(st);
        size_t* out = w.out;
        for (int k = 0; k < count; k += 8, out += 8) {
            for (int u = 0; u < 8; ++u) {
                out[u] = (size_t)(p + HFBPE_LOW_BIT(st));
                st &= st - 1;
            }
        }
        w.out += count;
        p = last;
    }
    w.finish();
    return p;
}

}  // namespace scanner
}  // namespace hfbpe
