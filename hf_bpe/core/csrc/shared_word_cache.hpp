// The word cache of threaded batches: one table for every thread of a batch, so that a word one thread merged is
// a hit for the others, kept by the encoder from batch to batch. With a cache per thread instead, each thread
// merged every distinct word of its own share of the batch (on 5 MB of English with 2 threads: 55,000 merges where
// one thread makes 38,500) and kept a second copy of the words the other had merged: 2 threads used 20% more CPU
// than one for the same batch, and scaled 1.5x where one shared table gives ~1.7x.
//
// Lock-free and insert-only while a batch runs: a fixed table of atomic pointers to immutable entries, published by
// compare-and-swap (release) and read with acquire loads. Entries live in the arena of the thread that made them
// (blocks that never move). Bounded: when it holds `capacity` words it takes no more until the next batch, and
// prepare() (called between batches, no thread running) grows it (to 16 times `words` or PIECE_GROW_LIMIT,
// entries kept) or, at that budget, empties it then; every lookup terminates (at most half the
// slots are used). Results never depend on it: an entry holds exactly what merging its word gives.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common.hpp"
#include "entry_arena.hpp"
#include "piece_cache.hpp"

namespace hfbpe {

class SharedWordCache {
public:
    // Room for `words` words (load at most 1/2); the table is allocated by the first prepare().
    explicit SharedWordCache(size_t words) : capacity_(words), limit_(words) {}
    SharedWordCache(const SharedWordCache&) = delete;
    SharedWordCache& operator=(const SharedWordCache&) = delete;

    // Make ready for a batch on `threads` threads: call with no batch running. Empties a full cache.
    void prepare(int threads) {
        if (!slots_) {
            size_t size = 16;
            while (size < 2 * capacity_) size <<= 1;
            slots_.reset(new std::atomic<const Entry*>[size]);
            mask_ = size - 1;
            clear();
        } else if ((used_.load() >= limit_ && !grow()) || (pieces.ready() && pieces.full() && !pieces.grow())) {
            clear();  // a generation wipe of both tables (the pieces' spilled ids live in the arenas)
            ++wipes_;
        }
        if (arenas_.size() < (size_t)threads) arenas_.resize((size_t)threads);
    }
    uint64_t wipes() const { return wipes_; }
    // Make the pieces table start from `image` (call with no batch running; a no-op if it already does).
    void use_pieces(const std::shared_ptr<const PieceImage>& image) {
        if (image && pieces.image() != image.get()) pieces.reset(image);
    }
    // Pieces of <= 15 bytes (piece_cache.hpp), their spilled ids in the threads' arenas; not ready() until
    // use_pieces().
    PieceCache pieces;
    // Thread t's arena (t < the threads of the last prepare()).
    EntryArena& arena(int t) { return arenas_[(size_t)t]; }

    // Ask for the home slot of `hash` a while before get() reads it (encode_pieces: a block ahead).
    void prefetch(uint64_t hash) const { HFBPE_PREFETCH(&slots_[hash & mask_]); }
    // The ids of word[0..n) appended to out: true, or false when no thread has published the word.
    bool get(const char* word, size_t n, uint64_t hash, std::vector<int32_t>& out) const {
        for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
            const Entry* entry = slots_[i].load(std::memory_order_acquire);
            if (entry == nullptr) return false;
            if (entry->matches(word, n, hash)) {
                out.insert(out.end(), entry->ids(), entry->ids() + entry->ids_len);
                return true;
            }
        }
    }
    // Publish word[0..n) -> ids[0..count), the entry allocated in `arena` (the caller's own). A word another
    // thread published meanwhile is left as it is (both hold the same ids).
    void put(const char* word, size_t n, uint64_t hash, const int32_t* ids, size_t count, EntryArena& arena) {
        if (used_.load(std::memory_order_relaxed) >= limit_) return;
        Entry* entry = (Entry*)arena.allocate(sizeof(Entry) + count * sizeof(int32_t) + n);
        entry->hash = hash;
        entry->key_len = (uint32_t)n;
        entry->ids_len = (uint32_t)count;
        std::memcpy(entry->ids(), ids, count * sizeof(int32_t));
        std::memcpy(entry->key(), word, n);
        for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
            const Entry* seen = nullptr;
            if (slots_[i].compare_exchange_strong(seen, entry, std::memory_order_release,
                                                  std::memory_order_acquire)) {
                used_.fetch_add(1, std::memory_order_relaxed);
                return;
            }
            if (seen->matches(word, n, hash)) return;
        }
    }

private:
    void clear() {
        for (size_t i = 0; i <= mask_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
        used_.store(0);
        if (pieces.ready()) pieces.reset();
        for (auto& arena : arenas_) arena = EntryArena();
    }
    struct Entry {  // followed by ids_len int32 ids, then key_len key bytes
        uint64_t hash;
        uint32_t key_len, ids_len;
        int32_t* ids() { return (int32_t*)(this + 1); }
        const int32_t* ids() const { return (const int32_t*)(this + 1); }
        char* key() { return (char*)(ids() + ids_len); }
        const char* key() const { return (const char*)(ids() + ids_len); }
        bool matches(const char* word, size_t n, uint64_t h) const {
            return hash == h && key_len == n && std::memcmp(key(), word, n) == 0;
        }
    };
    // Room for the budget's words at once (it grows only between batches: doubling took the batches of a warm
    // run one by one), the entries kept: no batch may run.
    bool grow() {
        const size_t budget = std::max(capacity_, std::min(PIECE_GROW_LIMIT, 16 * capacity_));
        if (limit_ >= budget) return false;
        limit_ = budget;
        size_t size = 16;
        while (size < 2 * limit_) size <<= 1;
        std::unique_ptr<std::atomic<const Entry*>[]> old(new std::atomic<const Entry*>[size]);
        old.swap(slots_);
        const uint64_t old_mask = mask_;
        mask_ = size - 1;
        for (size_t i = 0; i <= mask_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
        for (size_t i = 0; i <= old_mask; ++i) {
            const Entry* entry = old[i].load(std::memory_order_relaxed);
            if (entry == nullptr) continue;
            uint64_t j = entry->hash & mask_;
            while (slots_[j].load(std::memory_order_relaxed) != nullptr) j = (j + 1) & mask_;
            slots_[j].store(entry, std::memory_order_relaxed);
        }
        return true;
    }
    std::unique_ptr<std::atomic<const Entry*>[]> slots_;
    uint64_t mask_ = 0;
    size_t capacity_, limit_;  // limit_: words until the next prepare() grows or empties the table
    std::atomic<size_t> used_{0};
    uint64_t wipes_ = 0;  // changed only by prepare(), with no batch running
    std::vector<EntryArena> arenas_;
};

}  // namespace hfbpe
