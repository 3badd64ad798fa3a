// The scanner's piece counter: count the UTF-8 pieces of many texts in first-seen order, without a Python object
// per piece. Hashes with hf_bpe's one hash (hash.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hash.hpp"

namespace hfbpe {


// Count byte strings in first-seen order. Open addressing (linear probing, load <= 1/2) over 8-byte slots
// (32-bit hash tag | entry index + 1; 0 = empty), so probing a missing key touches one small slot; `entries`
// (first-seen order) hold the full hash, a 64-bit fingerprint `word` of the key (the packed key itself when
// it has <= 8 bytes: most pieces), the key's place in `arena` and the count. Amortised O(1) per piece.
struct HfbpePieceCounter {
    struct Entry { uint64_t hash; uint64_t word; size_t off; size_t len; int64_t count; };
    std::vector<uint64_t> slots;
    std::vector<Entry> entries;
    std::string arena;
    size_t mask;
    HfbpePieceCounter() : slots(1 << 12, 0), mask((1 << 12) - 1) {}

    static inline uint64_t slot_of(uint64_t h, size_t k) { return (h & 0xFFFFFFFF00000000ULL) | (uint64_t)(k + 1); }
    void grow() {
        std::vector<uint64_t> bigger(slots.size() * 2, 0);
        size_t m = bigger.size() - 1;
        for (size_t k = 0; k < entries.size(); ++k) {
            size_t i = entries[k].hash & m;
            while (bigger[i]) i = (i + 1) & m;
            bigger[i] = slot_of(entries[k].hash, k);
        }
        slots.swap(bigger);
        mask = m;
    }
    void add(const char* p, size_t len) { add_n(p, len, 1); }
    // Add n occurrences (merging another counter); the key keeps its first-seen place.
    void add_n(const char* p, size_t len, int64_t n) {
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
                    return;
                }
            }
            i = (i + 1) & mask;
        }
        if (entries.size() >= 0xFFFFFFF0u) throw std::length_error("more than 4e9 distinct pieces");
        slots[i] = slot_of(h, entries.size());
        entries.push_back(Entry{h, w, arena.size(), len, n});
        arena.append(p, len);
        if (entries.size() * 2 > slots.size()) grow();
    }
    size_t size() const { return entries.size(); }
    const char* key_data(size_t k) const { return arena.data() + entries[k].off; }
    size_t key_size(size_t k) const { return entries[k].len; }
    int64_t value(size_t k) const { return entries[k].count; }
};

}  // namespace hfbpe
