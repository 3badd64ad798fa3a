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
// key, as when a bucket is split. No key is pushed into `run`; pop() compares its back with the other two parts,
// and empties a radix bucket only when bucket 0 is empty and `run`'s back is above last (a lower bound of every
// radix key), so that otherwise `run`'s back is the lowest of both.
// Entries with equal keys leave in any order (merge_all's outcome does not depend on it: see there).
template <typename Item>
struct MergeQueue {
    static constexpr int BUCKETS = 65;
    std::vector<Item> buckets[BUCKETS];
    std::vector<Item> below;
    std::vector<Item> run;  // keys in descending order
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
        buckets[bucket_of(item.key, last)].push_back(item);
        ++radix_count;
    }
    // The entry with the lowest key. Precondition: !empty().
    Item pop() {
        while (radix_count != 0 && buckets[0].empty() && (run.empty() || run.back().key > last)) refill();
        // Now bucket 0 holds the radix part's lowest keys (== last), or that part is empty, or run's back is at most
        // last (so at most every radix key). below's keys are all below last.
        const uint64_t none = ~0ULL;
        const uint64_t from_run = run.empty() ? none : run.back().key;
        const uint64_t from_below = below.empty() ? none : below.front().key;
        const bool radix_first = radix_count != 0 && !buckets[0].empty() && last < from_run && last <= from_below;
        if (!radix_first && !below.empty() && from_below < from_run) {
            std::pop_heap(below.begin(), below.end(), After());
            const Item top = below.back();
            below.pop_back();
            return top;
        }
        if (!radix_first && !run.empty()) {
            const Item top = run.back();
            run.pop_back();
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
        uint64_t lowest = from[0].key, previous = from[0].key;
        bool ascending = true;
        for (const Item& item : from) {
            lowest = item.key < lowest ? item.key : lowest;
            ascending &= previous <= item.key;
            previous = item.key;
        }
        last = lowest;  // the buckets above i keep their meaning; those below are empty
        if (ascending && run.empty()) {  // a sorted run: taken as it is
            radix_count -= from.size();
            run.assign(from.rbegin(), from.rend());
            from.clear();
            return;
        }
        for (const Item& item : from) buckets[bucket_of(item.key, last)].push_back(item);  // each to a bucket < i
        from.clear();
    }
};

}  // namespace hfbpe
