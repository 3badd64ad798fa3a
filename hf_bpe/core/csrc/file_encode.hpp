// Documents of a UTF-8 file (or a window of one) for encoding in place: where each document starts and ends, found
// by memchr (a one-byte separator such as "\n") or memmem, and whether it is all ASCII or other valid UTF-8 (then
// its bytes are encoded where they lie, as a one-byte or a UTF-8 TextRef: no str per document; a document that is
// not UTF-8 is decoded by Python, which raises the error).
// Separators are matched leftmost first, without overlap (as str.split does), from the window's start: a window
// always starts right after a separator (or at the file's start), so the matches are those of the whole file.
// UTF-8 is self-synchronising: a separator's bytes found at a byte offset start a character.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace hfbpe {

// The first match of sep[0..sep_len) in buf[from..size), or size when none (sep_len >= 1).
inline size_t find_separator(const char* buf, size_t size, size_t from, const char* sep, size_t sep_len) {
    if (from >= size || size - from < sep_len) return size;
    const void* hit = sep_len == 1 ? std::memchr(buf + from, sep[0], size - from)
                                   : memmem(buf + from, size - from, sep, sep_len);
    return hit ? (size_t)((const char*)hit - buf) : size;
}

// Where the last whole document of buf[0..size) ends: the end of the last separator match, or -1 when there is
// none (the window holds part of one document only). O(size); every step advances past a match.
inline int64_t last_document_end(const char* buf, size_t size, const char* sep, size_t sep_len) {
    int64_t last = -1;
    size_t at = 0;
    for (;;) {
        size_t hit = find_separator(buf, size, at, sep, sep_len);
        if (hit == size) return last;
        at = hit + sep_len;  // > the previous `at`: the loop advances
        last = (int64_t)at;
    }
}

// The form of a document's bytes: ASCII (its own one-byte PEP 393 text), other valid UTF-8, or neither.
enum DocumentForm : uint8_t { DOC_INVALID = 0, DOC_ASCII = 1, DOC_UTF8 = 2 };

// The form of buf[0..n) in one pass: valid UTF-8 is what Python's strict decoder accepts (no stray or missing
// continuation byte, no overlong form, no surrogate ED A0..BF, nothing above U+10FFFF: F4 90.., F5..FF); ASCII runs
// are read 8 bytes at a time. A valid document is scanned in place (no str, no transcoding per piece); anything
// else is decoded by Python, which raises the error (a stricter test here would only cost speed, never ids). O(n).
inline DocumentForm document_form(const char* buf, size_t n) {
    const unsigned char* s = (const unsigned char*)buf;
    bool ascii = true;
    size_t i = 0;
    while (i < n) {
        const unsigned c = s[i];
        if (c < 0x80) {
            uint64_t word;
            if (i + 8 <= n && (std::memcpy(&word, s + i, 8), !(word & 0x8080808080808080ULL)))
                i += 8;
            else
                ++i;
            continue;
        }
        ascii = false;
        auto cont = [&](size_t k) { return (s[i + k] & 0xC0) == 0x80; };
        if (c < 0xC2) return DOC_INVALID;  // a continuation byte, or an overlong two-byte form
        if (c < 0xE0) {
            if (i + 1 >= n || !cont(1)) return DOC_INVALID;
            i += 2;
        } else if (c < 0xF0) {
            if (i + 2 >= n || !cont(1) || !cont(2)) return DOC_INVALID;
            // overlong, surrogate
            if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0)) return DOC_INVALID;
            i += 3;
        } else if (c < 0xF5) {
            if (i + 3 >= n || !cont(1) || !cont(2) || !cont(3)) return DOC_INVALID;
            // overlong, above U+10FFFF
            if ((c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90)) return DOC_INVALID;
            i += 4;
        } else {
            return DOC_INVALID;
        }
    }
    return ascii ? DOC_ASCII : DOC_UTF8;
}

// The documents of buf[0..size), which ends at a document's end (after a separator, or at the end of the file):
// the text between separators, the separators left out; the piece after the last separator is a document only if
// it is not empty (a file ending in its separator has no empty last document, as a file ending in "\n" has no
// empty last line). bounds gets [start, end) byte pairs, forms one DocumentForm per document; empty documents
// are left out when `skip_empty`. O(size); every step advances past a separator.
inline void document_bounds(const char* buf, size_t size, const char* sep, size_t sep_len, bool skip_empty,
                            std::vector<int64_t>& bounds, std::vector<uint8_t>& forms) {
    bounds.clear();
    forms.clear();
    size_t start = 0;
    while (start < size) {
        size_t hit = find_separator(buf, size, start, sep, sep_len);
        if (hit > start || !skip_empty) {
            bounds.push_back((int64_t)start);
            bounds.push_back((int64_t)hit);
            forms.push_back(document_form(buf + start, hit - start));
        }
        if (hit == size) break;
        start = hit + sep_len;  // advances: sep_len >= 1
        if (start == size) break;  // ends in a separator: no empty last document
    }
}

// The last place p in buf[1..size) where a document may be cut without changing its pieces under every named
// pattern (core/fragment.py's rule A, restricted to ASCII): buf[p] == ' ' after an ASCII letter or digit; -1 if
// none. A document longer than a window is encoded in parts cut there (the ids are those of the whole: the piece
// before a cut ends at the letter or digit, and no named pattern looks behind), so memory stays flat. O(size).
inline int64_t last_safe_cut(const char* buf, size_t size) {
    for (size_t p = size; p-- > 1;) {
        if (buf[p] != ' ') continue;
        unsigned char c = (unsigned char)buf[p - 1];
        if ((unsigned char)((c | 0x20) - 'a') < 26 || (unsigned char)(c - '0') < 10) return (int64_t)p;
    }
    return -1;
}

// A window's ids as tokens.bin holds them: little-endian unsigned integers of `width` bytes (2 or 4), into
// out[0 .. n * width); low and high get the smallest and largest id (the caller refuses an id that does not fit;
// unchanged when n == 0). Bytes are written one by one, so any host writes little-endian; compilers make the
// loop a vector one (no branch per id). O(n).
inline void pack_token_ids(const int32_t* ids, size_t n, int width, unsigned char* out, int32_t& low,
                           int32_t& high) {
    int32_t lo = low, hi = high;
    if (width == 2) {
        for (size_t i = 0; i < n; ++i) {
            int32_t v = ids[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            out[2 * i] = (unsigned char)v;
            out[2 * i + 1] = (unsigned char)((uint32_t)v >> 8);
        }
    } else {
        for (size_t i = 0; i < n; ++i) {
            int32_t v = ids[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            for (int k = 0; k < 4; ++k) out[4 * i + k] = (unsigned char)((uint32_t)v >> (8 * k));
        }
    }
    low = lo;
    high = hi;
}

// offsets.bin's entries for a window: values[i] + base as little-endian int64, into out[0 .. n * 8). O(n).
inline void pack_offsets(const int64_t* values, size_t n, int64_t base, unsigned char* out) {
    for (size_t i = 0; i < n; ++i) {
        uint64_t v = (uint64_t)values[i] + (uint64_t)base;
        for (int k = 0; k < 8; ++k) out[8 * i + k] = (unsigned char)(v >> (8 * k));
    }
}

}  // namespace hfbpe
