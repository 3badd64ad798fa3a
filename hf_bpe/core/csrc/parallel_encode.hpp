// Encode a batch of texts on several threads, without the GIL, while the caller turns finished parts into Python
// lists: the batch is cut into chunks (contiguous, of about equal length); worker threads take the chunks in order,
// split each text into pre-tokens (the scanner's PiecesFn, handed over from the _scanner extension) and encode them
// with an Encoder copy of their own (scratch buffers per thread; the merge table and the memo cache are shared:
// shared_word_cache.hpp).
// The caller is one of the threads: it waits for chunk 0, converts it (holding the GIL), waits for chunk 1, ...: the
// conversion, which must be serial, overlaps the encoding of later chunks. While it waits, the caller encodes an
// unclaimed chunk only when it has time to spare: when its own remaining work (converting every chunk not yet
// converted, plus that chunk) still ends before the workers would finish the unclaimed chunks without it. Helping
// greedily instead (whenever the next chunk is not ready) has the caller encode about half of the chunks and then
// convert a backlog alone while the workers idle: 1.5x with 2 threads where the balanced split gives ~1.7x.
// Ids do not depend on the threads, the chunks or the caches: an Encoder's output is a function of the word.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "encoder.hpp"
#include "id_pool.hpp"
#include "parallel_count.hpp"
#include "piece_ends.hpp"

namespace hfbpe {

// One text's pre-tokens: the end offset of each piece in *ends (cleared first), in the text's own bytes when it
// returns 1 (an ASCII text, or one read as UTF-8: `ref->data`, not copied), in its UTF-8 written to *utf8 when it
// returns 0; -1 when the text cannot be encoded to UTF-8 (a lone surrogate). piece_bytes() says which.
typedef int (*PiecesFn)(const TextRef* ref, int pid, std::string* utf8, PieceEnds* ends);

// The bytes a PiecesFn's ends index, given what it returned (>= 0).
inline const char* piece_bytes(const TextRef* ref, const std::string& utf8, int found) {
    return found == 1 ? (const char*)ref->data : utf8.data();
}

// A chunk's output: the ids of its texts end to end; ends[k] is where its k-th text's ids end.
struct EncodedRange {
    std::vector<int32_t> ids;
    std::vector<size_t> ends;
};

enum EncodeFailure { ENCODE_OK = 0, ENCODE_BAD_TEXT = 1, ENCODE_NO_MEMORY = 2, ENCODE_PENDING = 3 };

// Encode refs[begin..end) into `out` with `encoder`; on a bad text, its index in *failed_at. The ids grow in a
// local vector, moved into `out` at the end: the chunks' EncodedRange headers sit side by side in one array, and
// growing `out` in place would write a cache line another thread's chunk is writing too (false sharing on every id).
inline int encode_range(const TextRef* refs, size_t begin, size_t end, int pid, PiecesFn pieces, Encoder& encoder,
                        EncodedRange& out, Py_ssize_t* failed_at, SharedWordCache* shared = nullptr,
                        EntryArena* arena = nullptr) {
    std::string utf8;
    PieceEnds ends;
    EncodedRange local;
    try {
        size_t chars = 0;
        for (size_t i = begin; i < end; ++i) chars += (size_t)refs[i].length;
        local.ends.reserve(end - begin);
        // English runs ~4.5 bytes per token: one allocation, no regrowth (a long text: the kept buffer, id_pool.hpp).
        IdBufferPool::global().take(local.ids, chars / 3 + 16);
        for (size_t i = begin; i < end; ++i) {
            const int found = pieces(&refs[i], pid, &utf8, &ends);
            if (found < 0) {
                *failed_at = (Py_ssize_t)i;
                return ENCODE_BAD_TEXT;
            }
            encoder.encode_pieces(piece_bytes(&refs[i], utf8, found), ends.data(), ends.size(), local.ids, shared,
                                  arena);
            local.ends.push_back(local.ids.size());
        }
    } catch (...) {
        return ENCODE_NO_MEMORY;
    }
    out = std::move(local);
    return ENCODE_OK;
}

class EncodeJob {
public:
    // `chunks` ranges of refs[0..n) by length; `threads` threads: the caller (in wait(), with encoders[0]) and
    // threads - 1 workers (worker t with encoders[t]), all with `shared` as their memo cache when it is not null
    // (prepared for `threads`). Nothing runs before start().
    EncodeJob(const TextRef* refs, size_t n, int pid, PiecesFn pieces, Encoder* const* encoders, int threads,
              int chunks, SharedWordCache* shared)
        : refs_(refs), pid_(pid), pieces_(pieces), encoders_(encoders), threads_(threads < 1 ? 1 : threads),
          shared_(shared), bounds_(split_ranges(refs, n, chunks < 1 ? 1 : chunks)), out_(bounds_.size() - 1),
          status_(bounds_.size() - 1, ENCODE_PENDING), where_(bounds_.size() - 1, -1) {}
    ~EncodeJob() { join(); }

    size_t chunks() const { return out_.size(); }
    size_t chunk_begin(size_t k) const { return bounds_[k]; }
    EncodedRange& chunk(size_t k) { return out_[k]; }

    // Start the workers (a failure to start one leaves the chunks to the others and the caller).
    void start() {
        for (int t = 1; t < threads_; ++t) {
            try {
                pool_.emplace_back([this, t] {
                    while (!stop_.load() && run_one(t)) {
                    }
                });
            } catch (...) {
                break;
            }
        }
    }
    // Until chunk k is done, encode unclaimed chunks; then block until it is. Return its status (its bad text's
    // index in *failed_at). Call without the GIL.
    int wait(size_t k, Py_ssize_t* failed_at) {
        int64_t entered = now_ns();
        if (k > 0) {  // the time since the last wait() returned went to converting chunk k - 1
            convert_ns_ += entered - left_ns_;
            ++converted_;
        }
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (status_[k] != ENCODE_PENDING) break;
            }
            if (!should_help(k) || !run_one(0)) break;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return status_[k] != ENCODE_PENDING; });
        *failed_at = where_[k];
        left_ns_ = now_ns();
        return status_[k];
    }
    // Stop handing out chunks and wait for the workers (idempotent).
    void join() {
        stop_.store(true);
        for (auto& thread : pool_) thread.join();
        pool_.clear();
    }

private:
    const TextRef* refs_;
    int pid_;
    PiecesFn pieces_;
    Encoder* const* encoders_;
    int threads_;
    SharedWordCache* shared_;
    std::vector<size_t> bounds_;
    std::vector<EncodedRange> out_;
    std::vector<int> status_;
    std::vector<Py_ssize_t> where_;
    std::vector<std::thread> pool_;
    std::atomic<size_t> next_{0};
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::condition_variable done_;
    // Timing, for should_help: encoding (every thread, per chunk) and converting (the caller, per chunk).
    std::atomic<int64_t> encode_ns_{0};
    std::atomic<int64_t> encoded_{0};
    int64_t convert_ns_ = 0;
    int64_t converted_ = 0;
    int64_t left_ns_ = 0;

    static int64_t now_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    // Whether the caller, waiting for chunk k, should encode an unclaimed chunk. Until a chunk of each kind has
    // been timed it helps (nothing else to do at the start). Then, with e and c the mean times to encode and to
    // convert one chunk: help iff e + (chunks k.. still to convert) * c <= (unclaimed - 1) * e / workers, i.e. the
    // caller's own remaining work, with the extra chunk, ends before the workers finish the others. The ids do not
    // depend on this choice, only the wall time does.
    bool should_help(size_t k) {
        size_t next = next_.load();
        if (next >= out_.size()) return false;
        int64_t encoded = encoded_.load();
        if (pool_.empty() || encoded == 0 || converted_ == 0) return true;  // no worker started: all is ours
        double e = (double)encode_ns_.load() / (double)encoded;
        double c = (double)convert_ns_ / (double)converted_;
        double unclaimed = (double)(out_.size() - next);
        double to_convert = (double)(out_.size() - k);
        return e + to_convert * c <= (unclaimed - 1.0) * e / (double)pool_.size();
    }

    // Claim the next unclaimed chunk and encode it with encoders[t]: false when none is left.
    bool run_one(int t) {
        size_t k = next_.fetch_add(1);
        if (k >= out_.size()) return false;
        Py_ssize_t failed_at = -1;
        int64_t began = now_ns();
        int status = encode_range(refs_, bounds_[k], bounds_[k + 1], pid_, pieces_, *encoders_[t], out_[k],
                                  &failed_at, shared_, shared_ ? &shared_->arena(t) : nullptr);
        encode_ns_.fetch_add(now_ns() - began);
        encoded_.fetch_add(1);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            status_[k] = status;
            where_[k] = failed_at;
        }
        done_.notify_all();
        return true;
    }
};

}  // namespace hfbpe
