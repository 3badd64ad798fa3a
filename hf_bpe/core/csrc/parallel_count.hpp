// Count the pieces of batches of texts on a pool of threads, without the GIL (CountJob): each batch is cut into
// chunks (contiguous, of about equal length, ~16 per thread) that the threads claim in turn, each counting into a
// HfbpePieceCounter of its own that lives as long as the caller's tally (no merge per batch). Every piece is
// stamped with its position in the stream, so the counters' union, ordered by first position, is the first-seen
// order of a single-threaded scan: the output is the same for any thread count and any schedule.
// Why claimed chunks rather than one fixed range per thread: while a batch is counted, the caller's own thread
// reads the next one; with fixed ranges the thread that shared its core with the reader finished last on every
// batch while the other idled (on 165 MB of English, 2 threads took 0.98 s where 0.6 s was the work).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
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

// Counting on a pool of threads that lives as long as the tally: start() hands a batch to the pool and returns at
// once, so that the caller (holding the GIL) reads the next batch meanwhile and the counting threads never wait
// for the GIL (a Python thread that counts must take it back between batches, and waited out the reader's 5 ms
// switch interval: reading and counting ran in turn). Thread t always counts into counters[t] (kept warm in its
// core's caches: a fresh thread per batch, landing on either core, ran ~25% slower). Chunks are claimed in turn,
// so that a thread sharing its core with the reader holds up at most one small chunk.
class CountJob {
public:
    CountJob() = default;
    CountJob(const CountJob&) = delete;
    CountJob& operator=(const CountJob&) = delete;
    ~CountJob() {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [this] { return remaining_ == 0; });
            quit_ = true;
        }
        wake_.notify_all();
        for (auto& thread : pool_) thread.join();
    }

    // Count `refs` on `threads` pool threads into counters[0..threads), text i stamped from base + (characters
    // of texts 0..i-1); the caller keeps the texts alive and leaves `counters` alone until finish().
    void start(std::vector<TextRef>& refs, int pid, int threads, ScanFn scan, HfbpePieceCounter* counters,
               uint64_t base) {
        wait_idle();
        if (threads < 1) threads = 1;
        while ((int)pool_.size() < threads) {
            try {
                int t = (int)pool_.size();
                pool_.emplace_back([this, t] { serve(t); });
            } catch (...) {
                if (pool_.empty()) throw;  // not one thread: the caller reports it
                threads = (int)pool_.size();
            }
        }
        prepare(refs, pid, threads, scan, counters, base);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            active_ = threads;
            remaining_ = threads;
            ++round_;
        }
        wake_.notify_all();
    }
    // Count `refs` as start() with one thread would, on the calling thread (without the GIL), and return as
    // finish() does: no hand-over, and counters[0] stays in this thread's caches (a pool thread on the other core
    // read it cold: one thread counted ~10% slower through the pool).
    int run_here(std::vector<TextRef>& refs, int pid, ScanFn scan, HfbpePieceCounter* counters, uint64_t base,
                 Py_ssize_t* failed_at) {
        wait_idle();
        try {
            prepare(refs, pid, 1, scan, counters, base);
        } catch (...) {
            *failed_at = -1;
            return COUNT_NO_MEMORY;
        }
        count_chunks(0);
        return finish(failed_at);
    }
    // Wait for the batch start() gave; its status (COUNT_OK when none), the lowest failing text in *failed_at.
    int finish(Py_ssize_t* failed_at) {
        wait_idle();
        *failed_at = -1;
        for (int k = 0; k < chunks_; ++k) {
            if (failure_[k] != COUNT_OK) {
                *failed_at = where_[k];
                int status = failure_[k];
                failure_.assign(failure_.size(), COUNT_OK);
                return status;
            }
        }
        return COUNT_OK;
    }

private:
    std::vector<std::thread> pool_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    uint64_t round_ = 0;
    int active_ = 0, remaining_ = 0;
    bool quit_ = false;
    // The batch (written by start() while no thread counts, read by the threads of the round).
    std::vector<TextRef> refs_;
    std::vector<uint64_t> starts_;
    std::vector<size_t> bounds_;
    std::vector<int> failure_;
    std::vector<Py_ssize_t> where_;
    int chunks_ = 0, pid_ = 0;
    ScanFn scan_ = nullptr;
    HfbpePieceCounter* counters_ = nullptr;
    std::atomic<int> next_{0};

    void wait_idle() {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return remaining_ == 0; });
    }
    // The batch state for a round (no thread counts while it is written).
    void prepare(std::vector<TextRef>& refs, int pid, int threads, ScanFn scan, HfbpePieceCounter* counters,
                 uint64_t base) {
        refs_.swap(refs);
        const size_t n = refs_.size();
        starts_.assign(n + 1, base);
        for (size_t i = 0; i < n; ++i) starts_[i + 1] = starts_[i] + (uint64_t)refs_[i].length;
        const int64_t total = (int64_t)(starts_[n] - base);
        // Chunks of >= 16K characters, ~16 per thread.
        chunks_ = threads == 1 ? 1 : (int)std::max<int64_t>(threads, std::min<int64_t>(16 * threads, total >> 14));
        bounds_ = split_ranges(refs_.data(), n, chunks_);
        failure_.assign((size_t)chunks_, COUNT_OK);
        where_.assign((size_t)chunks_, -1);
        next_.store(0);
        pid_ = pid;
        scan_ = scan;
        counters_ = counters;
    }
    // Claim chunks of the current batch and count them into counters_[t] until none is left.
    void count_chunks(int t) {
        std::string buf;
        HfbpePieceCounter& counter = counters_[t];
        for (int k = next_.fetch_add(1); k < chunks_; k = next_.fetch_add(1)) {
            try {
                for (size_t i = bounds_[k]; i < bounds_[k + 1]; ++i) {
                    counter.stamp = starts_[i];
                    if (scan_(&refs_[i], pid_, &counter, &buf) < 0) {
                        failure_[k] = COUNT_BAD_TEXT;
                        where_[k] = (Py_ssize_t)i;
                        break;
                    }
                }
            } catch (...) {  // bad_alloc, or more distinct pieces than the counter indexes
                failure_[k] = COUNT_NO_MEMORY;
            }
        }
    }
    void serve(int t) {
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return quit_ || round_ != seen; });
                if (quit_) return;
                seen = round_;
                if (t >= active_) continue;  // not needed this round
            }
            count_chunks(t);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (--remaining_ == 0) done_.notify_all();
            }
        }
    }
};

}  // namespace hfbpe
