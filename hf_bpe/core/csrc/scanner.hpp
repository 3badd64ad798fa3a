// The scanners' entry points: the scalar scanners (scalar_scanner.hpp, the spec) and the AVX2 mask scanner
// (mask_scanner.hpp) combined into one loop per pattern (pieces()), and the UTF-8 copy of a piece (utf8_of()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "piece_ends.hpp"
#include "scalar_scanner.hpp"
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

// UTF-8 of all of s[0..n) into out (room for 4 bytes per code point); -1 on a lone surrogate. As utf8_of, but
// back to 8 bytes of code units at a time after every non-ASCII stretch (utf8_of stops at the first): a text is
// mostly ASCII with a few other characters (English with curly quotes, code), or none ASCII (CJK: one failed test
// per 8 bytes). O(n), each unit read once or twice.
template <class Ch>
inline Idx utf8_all(const Ch* s, Idx n, char* out) {
    constexpr Idx kStep = 8 / sizeof(Ch);
    constexpr Idx kWide = 32;  // units per test of the wide loop (fixed-size loops the compiler vectorizes)
    Idx i = 0, j = 0;
    while (i < n) {
        while (n - i >= kWide) {
            uint32_t any = 0;
            for (Idx k = 0; k < kWide; ++k) any |= (uint32_t)s[i + k];
            if (any >= 0x80) break;
            for (Idx k = 0; k < kWide; ++k) out[j + k] = (char)s[i + k];
            i += kWide;
            j += kWide;
        }
        const Idx stop = n - i > kStep ? i + kStep : n;  // at least one unit: the loop advances
        const Idx m = utf8_of(s, i, stop, out + j);  // (a whole ASCII block: its 8-byte path)
        if (m < 0) return -1;
        j += m;
        i = stop;
    }
    return j;
}

// Texts of at least this many code points that are not ASCII are transcoded whole, then scanned as UTF-8 (the mask
// scanner, 64 bytes at a time), where shorter ones are scanned by code point, each piece copied as UTF-8. Measured
// (o200k, one thread): whole-text transcoding made batches of Chinese and Cyrillic lines 10-20 % slower, and the
// parts of a long text (32K code points and more) faster: 10 MB of English ~15 %, on two threads ~2x (the
// transcoding, serial in CPython's PyUnicode_AsUTF8AndSize before, runs in the parts' threads).
static constexpr Idx TRANSCODE_MIN = 1 << 14;

// A text's pieces' end offsets in *ends, and 1 when the text is its own UTF-8 (ASCII, or UTF-8 read in place: ends
// are offsets in `s`, *utf8 is left alone: no copy), 0 when its UTF-8 was written to *utf8 (ends are offsets in
// it), -1 for a lone surrogate. `Next` is one pattern's scanner, inlined into the loop. Other text's UTF-8 is
// written into room made once (the most bytes its characters can take) and cut to size at the end.
template <class Ch, Idx (*Next)(const Ch*, Idx, Idx), int kFam, Idx kMaxDigits>
inline int pieces_of(const Ch* s, Idx n, bool ascii, std::string* utf8, PieceEnds* ends) {
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
inline int pieces(const Ch* s, Idx n, bool ascii, int pid, std::string* utf8, PieceEnds* ends) {
    if constexpr (!std::is_same<Ch, char>::value) {
        if (!ascii && n >= TRANSCODE_MIN) {
            // The text's UTF-8 in *utf8, then its pieces as UTF-8's (the same pieces: the scanners read UTF-8 and
            // code points alike, held equal by tests/test_mask_scanner.py): 0, the ends index *utf8.
            // Room for the most bytes reserved (not touched), then written 64K units at a time: resize() zero-fills
            // what it adds, and zero-filling the most (3 bytes a unit of two-byte text) cost a tenth of a long
            // English text's time; this way it fills the bytes written and one step more.
            constexpr size_t kMost = sizeof(Ch) == 1 ? 2 : sizeof(Ch) == 2 ? 3 : 4;
            constexpr Idx kChunk = 1 << 16;
            utf8->clear();
            utf8->reserve((size_t)n * kMost);
            for (Idx i = 0; i < n;) {  // code units are whole code points (PEP 393): any cut is a character's
                const Idx e = n - i > kChunk ? i + kChunk : n;
                const size_t used = utf8->size();
                utf8->resize(used + (size_t)(e - i) * kMost);
                const Idx m = utf8_all(s + i, e - i, &(*utf8)[used]);
                if (m < 0) return -1;
                utf8->resize(used + (size_t)m);
                i = e;
            }
            pieces<char>(utf8->data(), (Idx)utf8->size(), true, pid, nullptr, ends);
            return 0;
        }
    }
    switch (pid) {
        case PID_GPT2: return pieces_of<Ch, next_gpt2<Ch>, FAM_GPT2, 0>(s, n, ascii, utf8, ends);
        case PID_GPT4: return pieces_of<Ch, next_cl100k<3, true, Ch>, FAM_CL100K, 3>(s, n, ascii, utf8, ends);
        case PID_LLAMA3: return pieces_of<Ch, next_cl100k<3, false, Ch>, FAM_CL100K, 3>(s, n, ascii, utf8, ends);
        case PID_QWEN2: return pieces_of<Ch, next_cl100k<1, false, Ch>, FAM_CL100K, 1>(s, n, ascii, utf8, ends);
        default: return pieces_of<Ch, next_o200k<Ch>, FAM_O200K, 3>(s, n, ascii, utf8, ends);
    }
}

}  // namespace scanner
}  // namespace hfbpe
