#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hfbpe {

// The queue of merge_all (encoder.hpp): entries with a 64-bit key (rank << 32 | position), the lowest key first.
// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) for keys at or above the last key taken, with a binary heap
// beside it for the rare keys below (a merge whose rank is lower than the one just done: non-monotone merge lists
// such as Llama 3's).
//
// Radix part. `last` is the key taken last (0 at first). Bucket 0 holds keys equal to last; bucket i >= 1 holds
// keys whose highest bit differing from last is bit i - 1. Pushing is an append. When bucket 0 is empty, the first
// non-empty bucket i is emptied: its lowest key becomes last, and every key of it goes to a bucket below i (they
// all agree with the new last on the bits above i - 1, where they differ from the old one; the buckets above i keep
// their meaning, since the new last agrees with the old one there). So each key moves to a lower bucket, at most 64
// times, and every access is a sequential one: a binary heap of a million entries misses the caches at each level.
// Below part: a key pushed below last goes to `below` (std heap, lowest on top). pop() takes below's top when it
// is lower than last (every key of the radix part is >= last), else an entry of bucket 0 (keys == last).
// Entries with equal keys leave in any order (merge_all's outcome does not depend on it: see there).
template <typename Item>
struct MergeQueue {
    static constexpr int BUCKETS = 65;
    std::vector<Item> buckets[BUCKETS];
    std::vector<Item> below;
    uint64_t last = 0;
    size_t radix_count = 0;

    struct After {  // std heap functions keep the greatest on top: make it the lowest key
        bool operator()(const Item& x, const Item& y) const { return x.key > y.key; }
    };
    static int bucket_of(uint64_t key, uint64_t last) {
        const uint64_t x = key ^ last;
        return x == 0 ? 0 : 64 - __builtin_clzll(x);
    }
    void clear() {
        for (auto& b : buckets) b.clear();
        below.clear();
        last = 0;
        radix_count = 0;
    }
    bool empty() const { return radix_count == 0 && below.empty(); }
    void push(const Item& item) {
        if (item.key < last) {
            below.push_back(item);
            std::push_heap(below.begin(), below.end(), After());
            return;
        }
        buckets[bucket_of(item.key, last)].push_back(item);
        ++radix_count;
    }
    // The entry with the lowest key. Precondition: !empty().
    Item pop() {
        if (radix_count != 0 && buckets[0].empty()) refill();
        if (!below.empty() && (radix_count == 0 || below.front().key < last)) {
            std::pop_heap(below.begin(), below.end(), After());
            const Item top = below.back();
            below.pop_back();
            return top;
        }
        const Item top = buckets[0].back();
        buckets[0].pop_back();
        --radix_count;
        return top;
    }

private:
    // Precondition: radix_count != 0 and bucket 0 empty, so some bucket i >= 1 holds an entry (the loop ends).
    void refill() {
        int i = 1;
        while (buckets[i].empty()) ++i;
        std::vector<Item>& from = buckets[i];
        uint64_t lowest = from[0].key;
        for (const Item& item : from) lowest = item.key < lowest ? item.key : lowest;
        last = lowest;
        for (const Item& item : from) buckets[bucket_of(item.key, last)].push_back(item);  // each to a bucket < i
        from.clear();
    }
};

}  // namespace hfbpe
