// Count the pieces of a batch of texts on several threads, without the GIL: each thread scans a contiguous
// range of the batch into its own HfbpePieceCounter, then the counters are merged in thread order. Merging
// range t after ranges 0..t-1 keeps the first-seen order of a single-threaded scan (a piece first seen in range
// t is new only if no earlier range has it), so the output is the same for any thread count.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "piece_counter.hpp"
#include "py_unicode.hpp"

namespace hfbpe {

// One text as the scanner reads it: PEP 393 data (read only; the caller keeps the str alive and holds no GIL
// while threads run, so no Python object may be touched).
struct TextRef {
    const void* data;
    Py_ssize_t length;
    int kind;   // 1, 2 or 4 bytes per code point
    int ascii;
};

// Point `ref` at a str's PEP 393 data (the caller checked it is a str and keeps it alive); -1 with a Python
// error set if it cannot be made ready.
static inline int hfbpe_text_ref(PyObject* text, TextRef* ref) {
    if (hfbpe_unicode_ready(text) < 0) return -1;
    ref->data = PyUnicode_DATA(text);
    ref->length = PyUnicode_GET_LENGTH(text);
    ref->kind = (int)PyUnicode_KIND(text);
    ref->ascii = PyUnicode_IS_ASCII(text);
    return 0;
}

// Bounds of `threads` contiguous ranges of refs[0..n) of about equal total length (characters, a fair proxy of
// the work per text): range t is [bounds[t], bounds[t + 1]). O(n).
inline std::vector<size_t> split_ranges(const TextRef* refs, size_t n, int threads) {
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) total += refs[i].length;
    std::vector<size_t> bounds((size_t)threads + 1, n);
    bounds[0] = 0;
    int64_t seen = 0;
    size_t k = 1;
    for (size_t i = 0; i < n && k < (size_t)threads; ++i) {
        seen += refs[i].length;
        while (k < (size_t)threads && seen * threads >= total * (int64_t)k) bounds[k++] = i + 1;
    }
    return bounds;
}

// Scan one text into a counter; returns 0, or -1 when the text cannot be encoded (a lone surrogate).
typedef int (*ScanFn)(const TextRef* ref, int pid, HfbpePieceCounter* counter, std::string* buf);

enum CountFailure { COUNT_OK = 0, COUNT_BAD_TEXT = 1, COUNT_NO_MEMORY = 2 };

// Count refs[0..n) into `into`: with one thread directly; with more, split the texts into `threads` ranges
// of about equal total length, scan them in parallel into counters of their own, and merge those into `into`
// in range order. Returns COUNT_OK, or the failure of the first failing range (its text index in *failed_at);
// `into` is then incomplete. O(total length / threads) wall time for the scan; the merge is O(distinct pieces
// of the batch).
inline int count_parallel(const TextRef* refs, size_t n, int pid, int threads, ScanFn scan,
                          HfbpePieceCounter& into, Py_ssize_t* failed_at) {
    if (threads < 1) threads = 1;
    if (threads == 1) {
        std::string buf;
        try {
            for (size_t i = 0; i < n; ++i) {
                if (scan(&refs[i], pid, &into, &buf) < 0) {
                    *failed_at = (Py_ssize_t)i;
                    return COUNT_BAD_TEXT;
                }
            }
        } catch (...) {
            return COUNT_NO_MEMORY;
        }
        return COUNT_OK;
    }
    // Range 0 is scanned straight into `into` (its new pieces come first in a single-threaded scan too); ranges
    // 1.. into counters of their own, merged after it. Half the merging of a counter per range, with two threads.
    std::vector<HfbpePieceCounter> counters((size_t)threads);
    // 1. Contiguous ranges by cumulative length (characters, a fair proxy of scanning work).
    const std::vector<size_t> bounds = split_ranges(refs, n, threads);
    // 2. Scan: thread t owns its counter (thread 0: `into`) and its own buffer; nothing is shared but the
    //    read-only texts.
    std::vector<int> failure((size_t)threads, COUNT_OK);
    std::vector<Py_ssize_t> where((size_t)threads, -1);
    auto work = [&](int t) {
        std::string buf;
        HfbpePieceCounter* counter = t == 0 ? &into : &counters[t];
        try {
            for (size_t i = bounds[t]; i < bounds[t + 1]; ++i) {
                if (scan(&refs[i], pid, counter, &buf) < 0) {
                    failure[t] = COUNT_BAD_TEXT;
                    where[t] = (Py_ssize_t)i;
                    return;
                }
            }
        } catch (...) {  // bad_alloc, or more distinct pieces than the counter indexes
            failure[t] = COUNT_NO_MEMORY;
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& thread : pool) thread.join();
    for (int t = 0; t < threads; ++t) {
        if (failure[t] != COUNT_OK) {
            *failed_at = where[t];
            return failure[t];
        }
    }
    // 3. Merge in thread order (see the header comment for why the order is the single-threaded one).
    try {
        for (int t = 1; t < threads; ++t) {
            const HfbpePieceCounter& part = counters[t];
            for (size_t j = 0; j < part.size(); ++j) into.add_n(part.key_data(j), part.key_size(j), part.value(j));
            counters[t] = HfbpePieceCounter();  // free as we go
        }
    } catch (...) {
        return COUNT_NO_MEMORY;
    }
    return COUNT_OK;
}

}  // namespace hfbpe
