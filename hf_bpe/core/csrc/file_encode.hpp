// Documents of a UTF-8 file (or a window of one) for encoding in place: where each document starts and ends, found
// by memchr (a one-byte separator such as "\n") or memmem, then turned into code-point positions of the str the
// window was decoded to, so that each document is a TextRef slice of that str (no str per document).
// Separators are matched leftmost first, without overlap (as str.split does), from the window's start: a window
// always starts right after a separator (or at the file's start), so the matches are those of the whole file.
// UTF-8 is self-synchronising: a separator's bytes found at a byte offset start at a character of the str.
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

// The documents of buf[0..size), which ends at a document's end (after a separator, or at the end of the file):
// the text between separators, the separators left out; the piece after the last separator is a document only if
// it is not empty (a file ending in its separator has no empty last document, as a file ending in "\n" has no
// empty last line). bounds gets [start, end) pairs in code points of the decoded text (`ascii`: byte = code point),
// empty documents left out when `skip_empty`. Returns the code points of the whole buffer (the caller checks it
// against the str's length). O(size).
inline int64_t document_bounds(const char* buf, size_t size, const char* sep, size_t sep_len, bool ascii,
                               bool skip_empty, std::vector<int64_t>& bounds) {
    bounds.clear();
    size_t byte = 0;    // where counting code points has got to
    int64_t chars = 0;  // code points in buf[0..byte)
    auto to_chars = [&](size_t to) {
        if (ascii) return (int64_t)to;
        for (; byte < to; ++byte) chars += ((unsigned char)buf[byte] & 0xC0) != 0x80;  // not a continuation byte
        return chars;
    };
    size_t start = 0;
    while (start < size) {
        size_t hit = find_separator(buf, size, start, sep, sep_len);
        int64_t a = to_chars(start), b = to_chars(hit);
        if (b > a || !skip_empty) {
            bounds.push_back(a);
            bounds.push_back(b);
        }
        if (hit == size) break;
        start = hit + sep_len;  // advances: sep_len >= 1
        if (start == size) break;  // ends in a separator: no empty last document
    }
    return to_chars(size);
}

}  // namespace hfbpe
