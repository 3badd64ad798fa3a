// BPE's merges of one short word by scanning its pairs for the lowest key: what encoder.hpp's merge_all (the
// heap merge, tokenizers' Word::merge_all) gives, for words of at most SCAN_MAX bytes, when the encoder has proved
// the scan exact for its merges (Encoder::scan_is_exact: every real vocabulary). tiktoken's reasoning: for short
// words a scan beats a heap; tiktoken scans up to 500 bytes; 64 covers the Han runs of Chinese text (13-21
// characters of 3 bytes) and Llama 3's misses.
//
// Symbols stay at their first byte's position (linked by next/prev; an absorbed one's key is INT32_MAX), so a merge
// moves nothing. The lowest key is found by a branching scan that keeps its first position up to 32 symbols
// (predicted well: faster than a branch-free min then a search, measured on words of 1-40 bytes), by the
// branch-free min over the fixed array and a search above. O(n^2) on the stack. Pair keys come from the grid for
// small ids (rank_grid.hpp), else from the pair table (8 MB for Llama 3: a lookup is a cache miss); every first
// pair is prefetched before any is read, and the two pairs a merge makes before the list is relinked, so that
// those misses overlap.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.hpp"
#include "pair_map.hpp"
#include "rank_grid.hpp"

namespace hfbpe {

// What the pair table holds for a pair: the rank of its (last) merge and the id that merge makes.
struct RankValue {
    int32_t rank = 0;
    int32_t new_id = 0;
};

// One merge, (left, right) -> new_id, at the rank of its index in the merge list.
struct Merge {
    uint32_t left, right;
    int32_t new_id;
};

static constexpr size_t SCAN_MAX = 64;  // the longest word merge_by_scan takes, in bytes

// Whether the new ids rise with the ranks over every merge (GPT-2's 256 + rank, tiktoken's rank = id; not Llama
// 3's several pairs per id): then over the ones the pair table holds too, and a pair's new id orders it as its
// rank does. O(merges).
inline bool new_ids_rise(const std::vector<Merge>& merges) {
    int64_t last = -1;
    for (const Merge& m : merges) {
        if (m.new_id <= last || m.new_id == INT32_MAX) return false;
        last = m.new_id;
    }
    return true;
}

// ById (new_ids_rise): a pair's key is the id it makes and the lowest key is the merge's new id; else a pair's key
// is its rank, and the id it makes is kept beside it (the grid's pairs read it from their merge, `merges[rank]`).
// The grid's keys are of the same kind (RankGrid::build). bytes[0..size), 1 <= size <= SCAN_MAX.
template <bool ById>
inline void merge_by_scan_keyed(const PairMap<RankValue>& map, const RankGrid& grid, const Merge* merges,
                                const int32_t* byte_ids, const unsigned char* bytes, size_t size,
                                std::vector<int32_t>& out) {
    // keys[i], made[i]: the pair at i (symbol i, next): its key, and (ranks) the id it makes, read when the key is,
    // so that a merge reads it from the stack (reading the merge of the lowest rank then was a dependent cache miss
    // on the chain: Llama 3 has 280,000 merges).
    int32_t ids[SCAN_MAX], keys[SCAN_MAX], made[ById ? 1 : SCAN_MAX];
    uint8_t next[SCAN_MAX], prev[SCAN_MAX];
    const size_t n = size;
    auto set_pair = [&](size_t i, int32_t left, int32_t right) {
        if (grid.inside(left, right)) {
            keys[i] = grid.key(left, right);
            if (!ById) made[i] = keys[i] != INT32_MAX ? merges[keys[i]].new_id : 0;
            return;
        }
        const RankValue* found = map.find(pair_key(left, right));
        keys[i] = found ? (ById ? found->new_id : found->rank) : INT32_MAX;
        if (!ById) made[i] = found ? found->new_id : 0;
    };
    auto prefetch = [&](int32_t left, int32_t right) {
        if (grid.inside(left, right)) {
            HFBPE_PREFETCH(grid.address(left, right));
        } else {
            map.prefetch(pair_key(left, right));
        }
    };
    for (size_t i = 0; i < n; ++i) {
        ids[i] = byte_ids[bytes[i]];
        next[i] = (uint8_t)(i + 1);
        prev[i] = (uint8_t)(i - 1);  // prev[0] unused
    }
    for (size_t i = 0; i + 1 < n; ++i) prefetch(ids[i], ids[i + 1]);
    for (size_t i = 0; i + 1 < n; ++i) set_pair(i, ids[i], ids[i + 1]);
    keys[n - 1] = INT32_MAX;
    for (;;) {
        int32_t lowest = INT32_MAX;
        size_t best = 0;
        if (n <= 32) {
            for (size_t i = 0; i + 1 < n; ++i) {
                if (keys[i] < lowest) {
                    lowest = keys[i];
                    best = i;
                }
            }
            if (lowest == INT32_MAX) break;
        } else {
            for (size_t i = 0; i < n; ++i) lowest = keys[i] < lowest ? keys[i] : lowest;
            if (lowest == INT32_MAX) break;
            while (keys[best] != lowest) ++best;
        }
        const size_t right = next[best], after = next[right];
        const int32_t id = ById ? lowest : made[best];
        if (after < n) prefetch(id, ids[after]);
        if (best > 0) prefetch(ids[prev[best]], id);
        ids[best] = id;
        keys[right] = INT32_MAX;  // absorbed
        next[best] = (uint8_t)after;
        if (after < n) {
            prev[after] = (uint8_t)best;
            set_pair(best, id, ids[after]);
        } else {
            keys[best] = INT32_MAX;
        }
        if (best > 0) set_pair(prev[best], ids[prev[best]], id);
    }
    for (size_t i = 0; i < n; i = next[i]) out.push_back(ids[i]);
}

// The ids of bytes[0..size) appended to out (1 <= size <= SCAN_MAX), keyed by new id when `ids_ranked`.
inline void merge_by_scan(bool ids_ranked, const PairMap<RankValue>& map, const RankGrid& grid, const Merge* merges,
                          const int32_t* byte_ids, const unsigned char* bytes, size_t size,
                          std::vector<int32_t>& out) {
    if (ids_ranked) {
        merge_by_scan_keyed<true>(map, grid, merges, byte_ids, bytes, size, out);
    } else {
        merge_by_scan_keyed<false>(map, grid, merges, byte_ids, bytes, size, out);
    }
}

}  // namespace hfbpe
