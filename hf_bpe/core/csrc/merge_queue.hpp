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
// Sorted runs: a bucket to be emptied whose keys are already in ascending order (appends keep their order, and a
// rank's entries are pushed left to right: the first pairs of a word, a run of one character) is moved whole into
// `run` (reversed: its lowest key at the back) instead of being split, when `run` is empty; last becomes its lowest
// key, as when a bucket is split. No key is pushed into `run`; pop() compares its back with the other two parts'
// lowest keys (each bucket's lowest key is kept as entries arrive), and empties a radix bucket only when the radix
// part holds the lowest key: last never passes the lowest key left, so few keys fall below it.
// Entries with equal keys leave in any order (merge_all's outcome does not depend on it: see there).
template <typename Item>
struct MergeQueue {
    static constexpr int BUCKETS = 65;
    std::vector<Item> buckets[BUCKETS];
    std::vector<Item> below;
    std::vector<Item> run;  // keys in descending order
    uint64_t lowest[BUCKETS];  // lowest[i]: the lowest key in bucket i (when not empty)
    uint64_t occupied = 0;     // bit i - 1: bucket i >= 1 not empty
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
        run.clear();
        occupied = 0;
        last = 0;
        radix_count = 0;
    }
    bool empty() const { return radix_count == 0 && below.empty() && run.empty(); }
    void push(const Item& item) {
        if (item.key < last) {
            below.push_back(item);
            std::push_heap(below.begin(), below.end(), After());
            return;
        }
        put(item);
        ++radix_count;
    }
    // The entry with the lowest key. Precondition: !empty().
    Item pop() {
        const uint64_t none = ~0ULL;
        // The radix part's lowest key: last if bucket 0 holds any, else the lowest of the first non-empty bucket.
        uint64_t from_radix = none;
        if (!buckets[0].empty()) {
            from_radix = last;
        } else if (occupied != 0) {
            from_radix = lowest[__builtin_ctzll(occupied) + 1];
        }
        const uint64_t from_run = run.empty() ? none : run.back().key;
        const uint64_t from_below = below.empty() ? none : below.front().key;
        if (from_below < from_run && from_below < from_radix) {
            std::pop_heap(below.begin(), below.end(), After());
            const Item top = below.back();
            below.pop_back();
            return top;
        }
        if (from_run <= from_radix) {  // not none: the queue is not empty
            const Item top = run.back();
            run.pop_back();
            return top;
        }
        if (buckets[0].empty()) {
            refill();
            if (buckets[0].empty()) return pop();  // the bucket became `run` (whose back is its lowest key)
        }
        const Item top = buckets[0].back();
        buckets[0].pop_back();
        --radix_count;
        return top;
    }

private:
    void put(const Item& item) {  // into its radix bucket (key >= last)
        const int i = bucket_of(item.key, last);
        if (i == 0) {
            buckets[0].push_back(item);
            return;
        }
        const uint64_t bit = 1ULL << (i - 1);
        if (!(occupied & bit) || item.key < lowest[i]) lowest[i] = item.key;
        occupied |= bit;
        buckets[i].push_back(item);
    }
    // Precondition: bucket 0 empty, some bucket i >= 1 not (occupied != 0).
    void refill() {
        const int i = __builtin_ctzll(occupied) + 1;
        occupied &= occupied - 1;
        std::vector<Item>& from = buckets[i];
        last = lowest[i];  // the buckets above i keep their meaning; those below are empty
        bool ascending = true;
        for (size_t k = 1; k < from.size(); ++k) ascending &= from[k - 1].key <= from[k].key;
        if (ascending && run.empty()) {  // a sorted run: taken as it is
            radix_count -= from.size();
            run.assign(from.rbegin(), from.rend());
            from.clear();
            return;
        }
        for (const Item& item : from) put(item);  // each to a bucket < i
        from.clear();
    }
};

}  // namespace hfbpe
