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
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
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
    // 1: `data` is `length` bytes of valid UTF-8 (a str's cached UTF-8 form), scanned as such (kind, ascii unused).
    int utf8 = 0;
};

// Point `ref` at a str's PEP 393 data (the caller checked it is a str and keeps it alive); -1 with a Python
// error set if it cannot be made ready.
static inline int hfbpe_text_ref(PyObject* text, TextRef* ref) {
    if (hfbpe_unicode_ready(text) < 0) return -1;
    ref->data = PyUnicode_DATA(text);
    ref->length = PyUnicode_GET_LENGTH(text);
    ref->kind = (int)PyUnicode_KIND(text);
    ref->ascii = PyUnicode_IS_ASCII(text);
    ref->utf8 = 0;
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
// switch interval: reading and counting ran in turn). Up to two batches wait or run at a time: the reader can be a
// batch ahead, so that a slow block to read does not leave the counting threads idle (with one batch at a time they
// idled ~0.1 s each on 165 MB). The caller is counting thread 0: while two batches wait (nothing to read ahead
// into) and in finish(), it counts their chunks instead of sleeping, so `threads` threads run on `threads` cores
// (a pool of `threads` besides the reader put three busy threads on two cores: ~10% more CPU for the same work).
// Thread t always counts into counters[t] (kept warm in its core's caches: a fresh thread per batch, landing on
// either core, ran ~25% slower). Chunks are claimed in turn, so that the reader, counting between two blocks,
// holds up at most one small chunk.
class CountJob {
public:
    CountJob() = default;
    CountJob(const CountJob&) = delete;
    CountJob& operator=(const CountJob&) = delete;
    ~CountJob() {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            help_while(lock, [this] { return !batches_.empty(); });
            quit_ = true;
        }
        wake_.notify_all();
        for (auto& thread : pool_) thread.join();
    }

    // Queue `refs` for `threads` counting threads (this one and threads - 1 of the pool), counted into
    // counters[0..threads), text i stamped from base + (characters of texts 0..i-1); while two batches are queued,
    // counts their chunks here. The caller keeps each batch's texts alive until completed() passes its number
    // (start() returns it; batches complete in order) and does not move `counters` until finish(). Returns the
    // batch's number.
    uint64_t start(std::vector<TextRef>& refs, int pid, int threads, ScanFn scan, HfbpePieceCounter* counters,
                   uint64_t base) {
        if (threads < 1) threads = 1;
        while ((int)pool_.size() < threads - 1) {
            try {
                int t = (int)pool_.size() + 1;
                pool_.emplace_back([this, t] { serve(t); });
            } catch (...) {  // fewer threads than asked: this one counts the rest
                threads = (int)pool_.size() + 1;
                break;
            }
        }
        std::unique_ptr<Batch> batch(new Batch());
        prepare(*batch, refs, pid, threads, scan, counters, base);
        uint64_t number;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            help_while(lock, [this] { return batches_.size() >= 2; });
            number = batch->number = submitted_++;
            batches_.push_back(std::move(batch));
        }
        wake_.notify_all();
        return number;
    }
    // Count `refs` as start() with one thread would, on the calling thread (without the GIL), after the queued
    // batches, and return as finish() does: counters[0] stays in this thread's caches (a pool thread on the other
    // core read it cold: one thread counted ~10% slower through the pool).
    int run_here(std::vector<TextRef>& refs, int pid, ScanFn scan, HfbpePieceCounter* counters, uint64_t base,
                 Py_ssize_t* failed_at, uint64_t* failed_batch) {
        int status = finish(failed_at, failed_batch);
        if (status != COUNT_OK) return status;
        Batch batch;
        try {
            prepare(batch, refs, pid, 1, scan, counters, base);
        } catch (...) {
            return COUNT_NO_MEMORY;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            batch.number = submitted_++;
        }
        count_chunks(batch, 0);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            completed_ = submitted_;
        }
        note_failures(batch);
        return finish(failed_at, failed_batch);
    }
    // Wait for every queued batch; the status of the first that failed (COUNT_OK when none), its lowest failing
    // text in *failed_at and its number in *failed_batch. The failure is then forgotten.
    int finish(Py_ssize_t* failed_at, uint64_t* failed_batch) {
        std::unique_lock<std::mutex> lock(mutex_);
        help_while(lock, [this] { return !batches_.empty(); });
        int status = fail_status_;
        *failed_at = fail_at_;
        *failed_batch = fail_batch_;
        fail_status_ = COUNT_OK;
        fail_at_ = -1;
        fail_batch_ = 0;
        return status;
    }
    // How many batches are complete (numbers 0..completed() - 1; in order), and whether one of them failed.
    uint64_t completed() {
        std::lock_guard<std::mutex> lock(mutex_);
        return completed_;
    }
    bool failed() {
        std::lock_guard<std::mutex> lock(mutex_);
        return fail_status_ != COUNT_OK;
    }

private:
    struct Batch {
        std::vector<TextRef> refs;
        std::vector<uint64_t> starts;
        std::vector<size_t> bounds;
        std::vector<int> failure;
        std::vector<Py_ssize_t> where;
        int chunks = 0, threads = 1, pid = 0;
        int next = 0, done = 0;  // chunks claimed, chunks counted (under mutex_)
        ScanFn scan = nullptr;
        HfbpePieceCounter* counters = nullptr;
        uint64_t number = 0;
    };
    std::vector<std::thread> pool_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::deque<std::unique_ptr<Batch>> batches_;  // queued or running, in order; the front leaves when complete
    uint64_t submitted_ = 0, completed_ = 0;
    int fail_status_ = COUNT_OK;
    Py_ssize_t fail_at_ = -1;
    uint64_t fail_batch_ = 0;
    bool quit_ = false;
    std::string caller_buf_;  // the caller's scratch buffer (one caller at a time: the tally's owner)

    // A batch's chunks (its own storage: no thread reads it before it is queued).
    static void prepare(Batch& batch, std::vector<TextRef>& refs, int pid, int threads, ScanFn scan,
                        HfbpePieceCounter* counters, uint64_t base) {
        batch.refs.swap(refs);
        const size_t n = batch.refs.size();
        batch.starts.assign(n + 1, base);
        for (size_t i = 0; i < n; ++i) batch.starts[i + 1] = batch.starts[i] + (uint64_t)batch.refs[i].length;
        const int64_t total = (int64_t)(batch.starts[n] - base);
        // Chunks of >= 16K characters, ~16 per thread.
        batch.chunks = threads == 1 ? 1
                                    : (int)std::max<int64_t>(threads, std::min<int64_t>(16 * threads, total >> 14));
        batch.bounds = split_ranges(batch.refs.data(), n, batch.chunks);
        batch.failure.assign((size_t)batch.chunks, COUNT_OK);
        batch.where.assign((size_t)batch.chunks, -1);
        batch.threads = threads;
        batch.pid = pid;
        batch.scan = scan;
        batch.counters = counters;
    }
    // Count chunk k of `batch` into its counters[t].
    static void count_chunk(Batch& batch, int k, int t, std::string& buf) {
        HfbpePieceCounter& counter = batch.counters[t];
        try {
            for (size_t i = batch.bounds[k]; i < batch.bounds[k + 1]; ++i) {
                counter.stamp = batch.starts[i];
                if (batch.scan(&batch.refs[i], batch.pid, &counter, &buf) < 0) {
                    batch.failure[k] = COUNT_BAD_TEXT;
                    batch.where[k] = (Py_ssize_t)i;
                    return;
                }
            }
        } catch (...) {  // bad_alloc, or more distinct pieces than the counter indexes
            batch.failure[k] = COUNT_NO_MEMORY;
        }
    }
    static void count_chunks(Batch& batch, int t) {
        std::string buf;
        for (int k = 0; k < batch.chunks; ++k) count_chunk(batch, k, t, buf);
    }
    // Keep the first failure (lowest batch, then lowest chunk). Call with mutex_ held or no thread running.
    void note_failures(const Batch& batch) {
        if (fail_status_ != COUNT_OK) return;
        for (int k = 0; k < batch.chunks; ++k) {
            if (batch.failure[k] != COUNT_OK) {
                fail_status_ = batch.failure[k];
                fail_at_ = batch.where[k];
                fail_batch_ = batch.number;
                return;
            }
        }
    }
    // The first queued batch with an unclaimed chunk that thread t may count, or null.
    Batch* claimable(int t) {
        for (auto& batch : batches_) {
            if (batch->next < batch->chunks && t < batch->threads) return batch.get();
        }
        return nullptr;
    }
    // Claim the next chunk of `batch` and count it as thread t (mutex_ held on entry and on return, not while
    // counting); the thread that counts a batch's last chunk retires the complete batches at the front.
    void count_next(std::unique_lock<std::mutex>& lock, Batch* batch, int t, std::string& buf) {
        int k = batch->next++;
        lock.unlock();
        count_chunk(*batch, k, t, buf);
        lock.lock();
        if (++batch->done == batch->chunks) {
            // Batches leave in order: the front, and any complete ones behind it.
            while (!batches_.empty() && batches_.front()->done == batches_.front()->chunks) {
                note_failures(*batches_.front());
                batches_.pop_front();
                ++completed_;
            }
            done_.notify_all();
        }
    }
    // The caller (thread 0), while `busy()`: count a chunk when one is unclaimed, else sleep until a batch
    // completes (a chunk only appears when the caller itself queues a batch). mutex_ held throughout.
    template <class Busy>
    void help_while(std::unique_lock<std::mutex>& lock, Busy busy) {
        while (busy()) {
            Batch* batch = claimable(0);
            if (batch != nullptr) {
                count_next(lock, batch, 0, caller_buf_);
            } else {
                done_.wait(lock);
            }
        }
    }
    void serve(int t) {
        std::string buf;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            Batch* batch = nullptr;
            wake_.wait(lock, [&] { return quit_ || (batch = claimable(t)) != nullptr; });
            if (quit_) return;
            count_next(lock, batch, t, buf);
        }
    }
};

}  // namespace hfbpe
