// The scanner's piece counter: count the UTF-8 pieces of many texts in first-seen order, without a Python object
// per piece. Hashes with hf_bpe's one hash (hash.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hash.hpp"
#include "large_alloc.hpp"

namespace hfbpe {


// Count byte strings, each with the position of its first occurrence. Open addressing (linear probing, load
// <= 1/2) over 8-byte slots (32-bit hash tag | entry index + 1; 0 = empty), so probing a missing key touches one
// small slot; `entries` (in insertion order) hold the full hash, a 64-bit fingerprint `word` of the key (the packed
// key itself when it has <= 8 bytes: most pieces), the key's place in `arena`, the count and `first`, the smallest
// position it was added at. Positions: `stamp`, set by the caller before each text to the text's place in the
// whole stream (in characters) and advanced by one per piece, so that positions follow the order of a
// single-threaded scan whatever thread counted what: order() gives the keys in that order. Amortised O(1) a piece.
struct alignas(64) HfbpePieceCounter {  // aligned: the threads' counters sit side by side in a vector
    struct Entry { uint64_t hash; uint64_t word; size_t off; size_t len; int64_t count; uint64_t first; };
    big_vector<uint64_t> slots;
    big_vector<Entry> entries;
    big_string arena;
    size_t mask;
    uint64_t stamp = 0;  // the position of the next piece add() counts
    HfbpePieceCounter() : slots(1 << 12, 0), mask((1 << 12) - 1) {}

    static inline uint64_t slot_of(uint64_t h, size_t k) { return (h & 0xFFFFFFFF00000000ULL) | (uint64_t)(k + 1); }
    void grow() {
        big_vector<uint64_t> bigger(slots.size() * 2, 0);
        size_t m = bigger.size() - 1;
        for (size_t k = 0; k < entries.size(); ++k) {
            size_t i = entries[k].hash & m;
            while (bigger[i]) i = (i + 1) & m;
            bigger[i] = slot_of(entries[k].hash, k);
        }
        slots.swap(bigger);
        mask = m;
    }
    void add(const char* p, size_t len) { add_n(p, len, 1, stamp++); }
    // Add n occurrences first seen at position `first` (merging another counter): the earliest position stays.
    void add_n(const char* p, size_t len, int64_t n, uint64_t first) {
        uint64_t w = fingerprint(p, len);
        uint64_t h = hash_bytes(p, len, w);
        uint64_t tag = h & 0xFFFFFFFF00000000ULL;
        size_t i = h & mask;
        for (;;) {
            uint64_t s = slots[i];
            if (!s) break;
            if ((s & 0xFFFFFFFF00000000ULL) == tag) {
                Entry& e = entries[(s & 0xFFFFFFFFULL) - 1];
                if (e.word == w && e.len == len && (len <= 8 || std::memcmp(arena.data() + e.off, p, len) == 0)) {
                    e.count += n;
                    if (first < e.first) e.first = first;
                    return;
                }
            }
            i = (i + 1) & mask;
        }
        if (entries.size() >= 0xFFFFFFF0u) throw std::length_error("more than 4e9 distinct pieces");
        slots[i] = slot_of(h, entries.size());
        entries.push_back(Entry{h, w, arena.size(), len, n, first});
        arena.append(p, len);
        if (entries.size() * 2 > slots.size()) grow();
    }
    size_t size() const { return entries.size(); }
    const char* key_data(size_t k) const { return arena.data() + entries[k].off; }
    size_t key_size(size_t k) const { return entries[k].len; }
    int64_t value(size_t k) const { return entries[k].count; }

    // Add every key of `other` (counts summed, earliest positions kept), then empty it. O(other's keys).
    void absorb(HfbpePieceCounter& other) {
        for (const Entry& e : other.entries) add_n(other.arena.data() + e.off, e.len, e.count, e.first);
        other = HfbpePieceCounter();
    }
    // The entry indices in order of first position: the first-seen order of a single-threaded scan. O(n) when
    // the entries are in that order already (one thread counted everything), O(n log n) otherwise.
    std::vector<size_t> order() const {
        std::vector<size_t> idx(entries.size());
        for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
        bool sorted = true;
        for (size_t k = 1; k < entries.size() && sorted; ++k) sorted = entries[k - 1].first < entries[k].first;
        if (!sorted) {
            std::sort(idx.begin(), idx.end(),
                      [this](size_t a, size_t b) { return entries[a].first < entries[b].first; });
        }
        return idx;
    }
};

}  // namespace hfbpe
