#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "key_index.hpp"
#include "large_alloc.hpp"
#include "pair_map.hpp"

namespace hfbpe {

// ---------------------------------------------------------------------------------------------------------
// Training: tokenizers' BpeTrainer::do_train (phases 3-5), see hf_bpe/core/_reference.py for the spec.
//
// Cost model. A merge step visits every word of its heap entry and applies about four count changes per
// merged occurrence; on long pre-tokens (1M Chinese words, 17M symbols) the first 1000 steps merge ~10M
// occurrences. Hashing each change into a table of millions of pairs (a cache miss each) used to dominate.
// But every change of a step names a pair with one side fixed by the step: (prev, left), (right, next)
// (the -1s) and (prev, new), (new, next) (the +1s). So a step sums its changes in four arrays indexed by the
// other id (small and cache-resident), and only the distinct pairs it touched reach the hash table, once.
// The word lists of heap entries live in large blocks (no allocation per list, no copying as they grow;
// compacted when mostly dead): on 1M words, 2.6M entries hold 37M listed words, two thirds never read.
// ---------------------------------------------------------------------------------------------------------

// A heap entry: the count it was pushed with, its pair, a push sequence number (our tie rule: equal
// (count, pair) pop in push order) and its word list in the pool: list[0] words, list[1 .. list[0]].
struct Entry {
    uint64_t count;
    uint64_t pair;
    uint64_t seq;
    int32_t* list;
};
struct EntryLess {  // the heap pops the greatest: highest count, then smallest pair, then oldest push
    bool operator()(const Entry& x, const Entry& y) const {
        if (x.count != y.count) return x.count < y.count;
        if (x.pair != y.pair) return x.pair > y.pair;
        return x.seq > y.seq;
    }
};

// Storage for word lists: carved from blocks of at least BLOCK ints that never move, so a list's address
// is stable until the whole pool is replaced (compaction).
class ListPool {
public:
    static constexpr size_t BLOCK = (size_t)1 << 20;
    uint64_t live = 0;   // ints in lists still referenced
    uint64_t waste = 0;  // ints in lists no longer referenced

    // Room for n ints (uninitialised).
    int32_t* allocate(size_t n) {
        if (n > room) {
            const size_t size = std::max(BLOCK, n);
            blocks.emplace_back(size);
            next = blocks.back().get();
            room = size;
        }
        int32_t* list = next;
        next += n;
        room -= n;
        live += n;
        return list;
    }
    void release(const int32_t* list) {
        live -= (uint64_t)list[0] + 1;
        waste += (uint64_t)list[0] + 1;
    }
    void swap(ListPool& other) {
        blocks.swap(other.blocks);
        std::swap(next, other.next);
        std::swap(room, other.room);
        std::swap(live, other.live);
        std::swap(waste, other.waste);
    }

private:
    std::vector<LargeArray<int32_t>> blocks;
    int32_t* next = nullptr;
    size_t room = 0;
};

// The first r in [from, n - 1) with s[r] == left and s[r + 1] == right, or n. Four positions per step
// with SSE2 (x86-64 baseline): merge scans are most of the work on long words.
static inline int32_t find_pair(const int32_t* s, int32_t from, int32_t n, int32_t left, int32_t right) {
    int32_t r = from;
#if defined(__SSE2__)
    const __m128i l4 = _mm_set1_epi32(left), r4 = _mm_set1_epi32(right);
    for (; r + 4 < n; r += 4) {  // reads s[r .. r + 4]
        const __m128i a = _mm_loadu_si128((const __m128i*)(s + r));
        const __m128i b = _mm_loadu_si128((const __m128i*)(s + r + 1));
        const int hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_and_si128(_mm_cmpeq_epi32(a, l4),
                                                                        _mm_cmpeq_epi32(b, r4))));
        if (hits) return r + __builtin_ctz((unsigned)hits);
    }
#endif
    for (; r + 1 < n; ++r) {
        if (s[r] == left && s[r + 1] == right) return r;
    }
    return n;
}

// Copy s[r .. q) to s[o ..] (o <= r) and return the new o. Segments are short (a few symbols): an inline
// forward copy beats a call to memmove. Forward copying is safe as o <= r.
static inline int32_t move_down(int32_t* s, int32_t o, int32_t r, int32_t q) {
    if (o == r) return q;
#if defined(__SSE2__)
    for (; r + 4 <= q; r += 4, o += 4) {  // each block is read before the next block's bytes are written
        _mm_storeu_si128((__m128i*)(s + o), _mm_loadu_si128((const __m128i*)(s + r)));
    }
#endif
    while (r < q) s[o++] = s[r++];
    return o;
}

class Trainer {
public:
    // Inputs, filled by the Python wrapper before init().
    std::vector<std::string> keys;                      // byte-level key (raw bytes) of each id
    std::vector<int32_t> token_len;                     // len(key) of each id, in bytes (= byte-level chars)
    KeyIndex key_to_id;                                 // tokenizers' word_to_id, minus unspellable specials
    int32_t byte_ids[256];
    int64_t vocab_size = 0;
    uint64_t min_frequency = 0;
    uint64_t max_len = ~0ULL;                           // usize::MAX when there is no max_token_length
    // SuperBPE's stage-2 rules (the authors' fork of BpeTrainer): a popped pair whose token would span more
    // than max_words space-separated words (0: no limit) or contain `forbidden` (empty: none) is dropped.
    uint64_t max_words = 0;
    std::string forbidden;
    bool bits32 = false;
    // Output.
    std::vector<int32_t> merges;                        // flat (left, right, new) triples
    bool finished = false;

    // Whether the stage-2 rules let a merge build `key`: its words (maximal runs without a space, the fork's
    // split on "Ġ" with empty parts left out) number at most max_words, and it does not contain `forbidden`.
    bool superword_allowed(const std::string& key) const {
        if (!forbidden.empty() && key.find(forbidden) != std::string::npos) return false;
        if (max_words == 0) return true;
        uint64_t words_seen = 0;
        bool in_word = false;
        for (const char c : key) {
            const bool space = c == ' ';
            if (!space && !in_word) ++words_seen;
            in_word = !space;
        }
        return words_seen <= max_words;
    }
    void add_id(const char* key, size_t size, bool spellable) {
        keys.emplace_back(key, size);
        token_len.push_back((int32_t)size);
        if (spellable) key_to_id.insert_if_absent(keys, (int32_t)(keys.size() - 1));
    }
    // Words are stored flat: word w is sym[words[w].offset ..][.. words[w].length], compacted in place by
    // merges (and the whole array is repacked when it is mostly holes, for memory locality).
    void reserve_words(size_t count, size_t symbols) {  // saves the copies and page faults of growth
        words.reserve(count);
        word_hashes.reserve(count);
        sym.reserve(symbols);
    }
    void add_word(const unsigned char* bytes, int64_t size, int64_t count) {
        words.push_back(WordInfo{(int64_t)sym.size(), count, (int32_t)size});
        live += size;
        sym.resize(sym.size() + (size_t)size);
        int32_t* s = sym.data() + sym.size() - (size_t)size;
        for (int64_t i = 0; i < size; ++i) s[i] = byte_ids[bytes[i]];
        word_hashes.push_back(hash_bytes(reinterpret_cast<const char*>(bytes), (size_t)size));
    }
    // True when no two words are equal (the reference rejects repeated words: tokenizers counts words in
    // a map). Open addressing on the words' hashes, comparing symbols on equal hashes (byte_ids is
    // one-to-one); O(words) expected, with the table probes prefetched as they are independent misses.
    bool distinct_words() {
        struct Slot {
            uint64_t hash;
            int64_t word;  // -1: empty
        };
        const size_t n = words.size();
        size_t cap = 16;
        while (cap < 2 * n) cap <<= 1;
        const uint64_t mask = cap - 1;
        big_vector<Slot> table(cap, Slot{0, -1});
        const size_t AHEAD = 16;
        bool distinct = true;
        for (size_t w = 0; w < n && distinct; ++w) {
            if (w + AHEAD < n) HFBPE_PREFETCH(&table[word_hashes[w + AHEAD] & mask]);
            const uint64_t hash = word_hashes[w];
            size_t i = hash & mask;
            for (; table[i].word >= 0; i = (i + 1) & mask) {
                const WordInfo& other = words[(size_t)table[i].word];
                if (table[i].hash == hash && other.length == words[w].length &&
                    std::equal(sym.data() + other.offset, sym.data() + other.offset + other.length,
                               sym.data() + words[w].offset)) {
                    distinct = false;
                    break;
                }
            }
            table[i] = Slot{hash, (int64_t)w};
        }
        big_vector<uint64_t>().swap(word_hashes);
        return distinct;
    }

    // Phase 4 (count_pairs): pair counts and, per pair, the words holding it; one entry per pair with a
    // count > 0. Words start as byte symbols and byte_ids is one-to-one, so each initial pair is a cell of
    // a 256 x 256 table indexed by byte values: two passes over sym and no hashing, O(symbols + 65536).
    void init() {
        big_vector<uint64_t>().swap(word_hashes);  // only distinct_words() needs them
        const size_t CELLS = 1u << 16;
        struct Cell {
            uint64_t sum = 0;     // wrapping sum of the counts: exact unless bits32, then wrapped below
            int32_t last = -1;    // the last word seen: a word enters a list once
            uint32_t size = 0;    // distinct words
            int32_t* fill = nullptr;  // where the next word of the list goes (null: no entry)
        };
        big_vector<Cell> cells(CELLS);
        big_vector<uint32_t> byte_of(keys.size(), 0);
        for (int b = 0; b < 256; ++b) byte_of[byte_ids[b]] = (uint32_t)b;
        // 1. Counts and list sizes.
        for (size_t w = 0; w < words.size(); ++w) {
            const int32_t* s = sym.data() + words[w].offset;
            const uint64_t count = (uint64_t)words[w].count;
            for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                Cell& cell = cells[(byte_of[s[j]] << 8) | byte_of[s[j + 1]]];
                cell.sum += count;
                if (cell.last != (int32_t)w) {
                    cell.last = (int32_t)w;
                    ++cell.size;
                }
            }
        }
        // 2. Counts into the table; a list and an entry for each pair whose count is > 0. The table is sized for
        // the pairs seen, not for all 65,536 cells (2 MB where a 1 MB corpus has ~5,000 pairs): it grows with the
        // pairs the merges make.
        size_t seen = 0;
        for (size_t c = 0; c < CELLS; ++c) seen += cells[c].last >= 0;
        counts.reset(seen);
        for (size_t c = 0; c < CELLS; ++c) {
            Cell& cell = cells[c];
            if (cell.last < 0) continue;
            const uint64_t key = pair_key(byte_ids[c >> 8], byte_ids[c & 255]);
            const int64_t count = wrap((int64_t)cell.sum);
            counts.get_or_insert(key, 0) = count;
            if (count > 0) {
                int32_t* list = pool.allocate((size_t)cell.size + 1);
                list[0] = (int32_t)cell.size;
                cell.fill = list + 1;
                heap.push_back(Entry{(uint64_t)count, key, seq++, list});
            }
            cell.last = -1;
        }
        std::make_heap(heap.begin(), heap.end(), EntryLess());
        if (!heap.empty()) threshold = heap.front().count / LOW_FACTOR;
        // 3. The words, in word order.
        for (size_t w = 0; w < words.size(); ++w) {
            const int32_t* s = sym.data() + words[w].offset;
            for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                Cell& cell = cells[(byte_of[s[j]] << 8) | byte_of[s[j + 1]]];
                if (cell.fill != nullptr && cell.last != (int32_t)w) {
                    cell.last = (int32_t)w;
                    *cell.fill++ = (int32_t)w;
                }
            }
        }
    }

    // A seeded start (continue_merges): a word given as ids of an existing vocabulary (keys and token_len hold
    // every id). Checked by the caller: ids in range, each with a key.
    void add_symbols(const int32_t* ids, int32_t size, int64_t count) {
        words.push_back(WordInfo{(int64_t)sym.size(), count, size});
        live += size;
        sym.insert(sym.end(), ids, ids + size);
    }
    // Phase 4 from seeded words: the pairs the loop would count (byte pairs always, longer ones under max_len:
    // _reference.countable), each with one entry listing every word holding it. The pairs are arbitrary ids, so
    // a hash map from pair to a cell replaces init()'s 256 x 256 table; O(symbols) expected.
    void init_seeded() {
        big_vector<uint64_t>().swap(word_hashes);
        struct Cell {
            uint64_t key;
            uint64_t sum = 0;
            int32_t last = -1;
            uint32_t size = 0;
            int32_t* fill = nullptr;
        };
        big_vector<Cell> cells;
        PairMap<uint32_t> index;
        index.reset(1u << 16);
        auto countable = [this](int32_t a, int32_t b) {
            const uint64_t la = (uint64_t)token_len[a], lb = (uint64_t)token_len[b];
            return (la == 1 && lb == 1) || la + lb < max_len;
        };
        // 1. The countable pairs' keys in word order (sequential), then each key's cell: the lookups are
        // independent misses in a table of millions of pairs, so the slot AHEAD keys on is prefetched. The
        // cell of each occurrence is kept, so that step 3 lists the words without looking the pairs up again.
        big_vector<uint64_t> keys_seen;
        for (size_t w = 0; w < words.size(); ++w) {
            const int32_t* s = sym.data() + words[w].offset;
            for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                if (countable(s[j], s[j + 1])) keys_seen.push_back(pair_key(s[j], s[j + 1]));
            }
        }
        big_vector<uint32_t> cell_of(keys_seen.size());
        const size_t AHEAD = 8;
        for (size_t k = 0; k < keys_seen.size(); ++k) {
            if (k + AHEAD < keys_seen.size()) index.prefetch(keys_seen[k + AHEAD]);
            uint32_t& slot = index.get_or_insert(keys_seen[k], UINT32_MAX);
            if (slot == UINT32_MAX) {
                slot = (uint32_t)cells.size();
                cells.push_back(Cell{keys_seen[k]});
            }
            cell_of[k] = slot;
        }
        big_vector<uint64_t>().swap(keys_seen);
        big_vector<PairMap<uint32_t>::Slot>().swap(index.slots);  // freed: cell_of replaces it
        size_t k = 0;
        for (size_t w = 0; w < words.size(); ++w) {  // sums and list sizes, in word order as in init()
            const int32_t* s = sym.data() + words[w].offset;
            const uint64_t count = (uint64_t)words[w].count;
            for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                if (!countable(s[j], s[j + 1])) continue;
                Cell& cell = cells[cell_of[k++]];
                cell.sum += count;
                if (cell.last != (int32_t)w) {
                    cell.last = (int32_t)w;
                    ++cell.size;
                }
            }
        }
        // 2. Counts into the table; a list and an entry for each pair whose count is > 0.
        counts.reset(cells.size());
        for (Cell& cell : cells) {
            const int64_t count = wrap((int64_t)cell.sum);
            counts.get_or_insert(cell.key, 0) = count;
            if (count > 0) {
                int32_t* list = pool.allocate((size_t)cell.size + 1);
                list[0] = (int32_t)cell.size;
                cell.fill = list + 1;
                heap.push_back(Entry{(uint64_t)count, cell.key, seq++, list});
            }
            cell.last = -1;
        }
        std::make_heap(heap.begin(), heap.end(), EntryLess());
        if (!heap.empty()) threshold = heap.front().count / LOW_FACTOR;
        // 3. The words, in word order.
        k = 0;
        for (size_t w = 0; w < words.size(); ++w) {
            const int32_t* s = sym.data() + words[w].offset;
            for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                if (!countable(s[j], s[j + 1])) continue;
                Cell& cell = cells[cell_of[k++]];
                if (cell.fill != nullptr && cell.last != (int32_t)w) {
                    cell.last = (int32_t)w;
                    *cell.fill++ = (int32_t)w;
                }
            }
        }
    }

    // Phase 5: run the loop until `limit` merges are recorded or a stop rule fires (then finished = true).
    // A step costs O(total length of the entry's words) for the scan, O(1) per merged occurrence (array
    // updates), O(distinct pairs touched) hash updates, and O(1) per new entry (O(log heap) above the
    // threshold); compaction and repacking are amortised O(1) per released list word and removed symbol.
    int64_t run(int64_t limit) {
        int64_t done = 0;
        while (done < limit) {
            if (heap.empty() || heap.front().count < threshold) refill();
            if ((int64_t)keys.size() >= vocab_size || heap.empty()) {
                finished = true;
                break;
            }
            std::pop_heap(heap.begin(), heap.end(), EntryLess());
            Entry top = heap.back();
            heap.pop_back();
            uint64_t current = (uint64_t)*counts.find(top.pair);  // i32 -> u64 sign-extends (bits32)
            if (top.count != current) {  // stale entry: back with the current count, as a new push
                top.count = current;
                top.seq = seq++;
                push(top);
                continue;
            }
            if (current < 1 || min_frequency > current) {
                finished = true;
                break;
            }
            int32_t left = (int32_t)(top.pair >> 32), right = (int32_t)(top.pair & 0xffffffffULL);
            std::string new_key = keys[left] + keys[right];
            if (!superword_allowed(new_key)) {  // dropped; a later step's new entry is dropped again
                pool.release(top.list);
                continue;
            }
            int32_t new_id = key_to_id.find(keys, new_key.data(), new_key.size());
            if (new_id == KeyIndex::NONE) {  // a new token; else the existing id is reused
                new_id = (int32_t)keys.size();
                token_len.push_back((int32_t)new_key.size());
                keys.push_back(std::move(new_key));
                key_to_id.insert_new(keys, new_id);
            }
            merges.push_back(left);
            merges.push_back(right);
            merges.push_back(new_id);
            ++done;

            // Merge only in this entry's words (its list stays put until compact_pool()). Every pair with a
            // +1 change gets one new entry carrying only this step's words (tokenizers' where_to_update).
            if (lefts.size() < keys.size()) grow_steps(keys.size());
            ++step;
            const int32_t* where = top.list + 1;
            merge_words(where, (uint64_t)top.list[0], left, right, new_id);
            pool.release(top.list);
            flush(left, right, new_id);
            if (pool.waste > std::max<uint64_t>(pool.live, 1u << 16)) compact_pool();
            if (live * 2 < (int64_t)sym.size() && sym.size() > (1u << 16)) repack();
        }
        return done;
    }

    // After the loop: free everything but the results (keys, merges), so that the caller's Python lists of
    // them are not built on top of the words, pair counts, queue and lists (~5 MB of a 10 MB corpus's peak).
    void release_work() {
        big_vector<WordInfo>().swap(words);
        big_vector<int32_t>().swap(sym);
        big_vector<uint64_t>().swap(word_hashes);
        big_vector<PairMap<int64_t>::Slot>().swap(counts.slots);  // the loop is over: no lookups follow
        big_vector<Entry>().swap(heap);
        std::deque<Entry>().swap(low);
        ListPool().swap(pool);
        lefts.release();
        rights.release();
        big_vector<int32_t>().swap(touched_left);
        big_vector<int32_t>().swap(touched_right);
        big_vector<Listed>().swap(listed);
        key_to_id.clear();
        std::vector<int32_t>().swap(token_len);
    }

private:
    struct WordInfo {
        int64_t offset;  // into sym
        int64_t count;   // wrapped to i32 when bits32 (tokenizers' `count as i32`)
        int32_t length;  // current number of symbols
    };
    big_vector<WordInfo> words;
    big_vector<int32_t> sym;
    int64_t live = 0;  // sum of the words' current lengths
    big_vector<uint64_t> word_hashes;  // until distinct_words()

    // Pair counts (i32 values when bits32), read when an entry pops and written once per step per pair.
    PairMap<int64_t> counts;
    // The queue of tokenizers is heap + low: entries with a count below `threshold` wait unordered in `low`
    // (most never pop: 2.6M entries for 16k merges on 1M Chinese words), so the heap stays small. The top
    // of heap + low is the heap's top whenever that is >= threshold, since every low entry is below it.
    static constexpr uint64_t LOW_FACTOR = 8;
    big_vector<Entry> heap;  // std::*_heap with EntryLess
    std::deque<Entry> low;
    uint64_t threshold = 0;
    uint64_t seq = 0;
    ListPool pool;  // the entries' word lists

    // Per-step sums of the changes, indexed by the id the step does not fix: the left side of id holds the
    // changes of (id, left) (-1) and (id, new) (+1), the right side those of (right, id) (-1) and (new, id)
    // (+1); (new, new) is kept on the right side. A side belongs to the current step when its stamp equals
    // `step` (>= 1), so nothing is cleared between steps, and an all-zero side belongs to no step.
    struct Side {
        union {
            uint64_t dec;  // wrapping sum of the -count changes (exact as an int64 unless bits32)
            int32_t* fill; // once flush() applied dec: where the next listed word goes (null: no new entry)
        };
        uint64_t inc;      // wrapping sum of the +count changes
        uint32_t stamp;
        uint32_t has_dec;  // whether dec was changed (the right side of new can have only a +1 change)
        int32_t last;      // the last word listed: a word's changes are contiguous, so it lists once
        uint32_t size;     // words listed: > 0 exactly when inc was changed
    };
    struct Listed {  // one word listed for a side's +1 pair: side = 2 * id + (1 for the right side)
        uint32_t side;
        int32_t word;
    };
    uint32_t step = 0;  // merges < 2**31
    ZeroTable<Side> lefts, rights;
    big_vector<int32_t> touched_left, touched_right;
    big_vector<Listed> listed;

    void grow_steps(size_t size) {
        // Room for every id the run can make (vocab_size), zero and untouched until an id's side is: 64 bytes an
        // id used (the sides once grew by half again with two more tables of fill pointers, 80 bytes an id
        // allocated, and the old and new tables side by side at each growth).
        size = std::max(size, (size_t)std::max<int64_t>(vocab_size, 0));
        lefts.grow_zeroed(size);
        rights.grow_zeroed(size);
    }
    // Counts never overflow int64 before wrapping: |count| <= 3 * 2**61 (checked upstream), or i32 values.
    int64_t wrap(int64_t sum) const {
        return bits32 ? (int64_t)(int32_t)(uint32_t)(uint64_t)sum : sum;
    }
    void push(const Entry& entry) {
        if (entry.count < threshold) {
            low.push_back(entry);
        } else {
            heap.push_back(entry);
            std::push_heap(heap.begin(), heap.end(), EntryLess());
        }
    }
    // The heap's top is below the threshold (or the heap is empty): lower the threshold to a fraction of the
    // best count left and move the low entries that reach it to the heap. Each call divides the threshold
    // by LOW_FACTOR at least, so there are O(log max count) calls, each O(low entries).
    void refill() {
        while (!low.empty() && (heap.empty() || heap.front().count < threshold)) {
            uint64_t best = heap.empty() ? 0 : heap.front().count;
            if (heap.empty()) {
                for (const Entry& entry : low) best = std::max(best, entry.count);
            }
            threshold = best / LOW_FACTOR;
            std::deque<Entry> still;
            for (const Entry& entry : low) {
                if (entry.count >= threshold) {
                    heap.push_back(entry);
                    std::push_heap(heap.begin(), heap.end(), EntryLess());
                } else {
                    still.push_back(entry);
                }
            }
            low.swap(still);
        }
    }
    void repack() {  // O(live): copy every word to the front, in order
        int64_t to = 0;
        for (WordInfo& word : words) {
            std::memmove(sym.data() + to, sym.data() + word.offset, sizeof(int32_t) * (size_t)word.length);
            word.offset = to;
            to += word.length;
        }
        sym.resize(to);
        sym.shrink_to_fit();
    }
    void compact_pool() {  // O(live lists): copy the lists of the entries still queued to a fresh pool
        ListPool fresh;
        auto move = [&fresh](Entry& entry) {
            const size_t n = (size_t)entry.list[0] + 1;
            int32_t* list = fresh.allocate(n);
            std::memcpy(list, entry.list, sizeof(int32_t) * n);
            entry.list = list;
        };
        for (Entry& entry : heap) move(entry);
        for (Entry& entry : low) move(entry);
        pool.swap(fresh);
    }
    inline Side& side(ZeroTable<Side>& table, big_vector<int32_t>& touched, int32_t id) {
        Side& side = table[id];
        if (side.stamp != step) {
            side = Side{0, 0, step, 0, -1, 0};
            touched.push_back(id);
        }
        return side;
    }
    inline void list(Side& side, uint32_t code, uint64_t count, int32_t w) {
        side.inc += count;
        if (side.last != w) {
            side.last = w;
            ++side.size;
            listed.push_back(Listed{code, w});
        }
    }
    // The step's word visits are independent cache misses (a few words of a million, in increasing index
    // order): prefetching the word record 16 visits ahead and its symbols 8 ahead overlaps them.
    void merge_words(const int32_t* where, uint64_t size, int32_t left, int32_t right, int32_t new_id) {
        const uint64_t AHEAD = 8;
        for (uint64_t k = 0; k < size; ++k) {
            if (k + 2 * AHEAD < size) HFBPE_PREFETCH(&words[where[k + 2 * AHEAD]]);
            if (k + AHEAD < size) {
                const int32_t* s = sym.data() + words[where[k + AHEAD]].offset;
                HFBPE_PREFETCH(s);
                HFBPE_PREFETCH(s + 16);
            }
            merge_word(where[k], left, right, new_id);
        }
    }
    // Word::merge on word w, compacting in place (read index r, write index o); the changes go to the
    // step's sums (their total is order-free). The entry's words are a superset of the words holding the
    // pair (a pair can be broken after its entry was pushed), hence the read-only search first.
    HFBPE_INLINE void merge_word(int32_t w, int32_t left, int32_t right, int32_t new_id) {
        WordInfo& word = words[w];
        int32_t* s = sym.data() + word.offset;
        const int32_t n = word.length;
        int32_t r = find_pair(s, 0, n, left, right);
        if (r >= n) return;
        const uint64_t count = (uint64_t)word.count;
        const uint64_t new_len = (uint64_t)token_len[new_id];
        int32_t o = r;  // invariant: o <= r; s[0 .. o) is the merged prefix, s[r .. n) still to read
        for (;;) {
            if (o > 0) {
                const int32_t prev = s[o - 1];  // may be a symbol this scan already merged
                Side& a = side(lefts, touched_left, prev);
                a.dec -= count;
                a.has_dec = 1;
                if ((uint64_t)token_len[prev] + new_len < max_len) {
                    if (prev == new_id) {  // (new, new) is kept on the right side
                        list(side(rights, touched_right, new_id), 2 * (uint32_t)new_id + 1, count, w);
                    } else {
                        list(a, 2 * (uint32_t)prev, count, w);
                    }
                }
            }
            if (r + 2 < n) {
                const int32_t next = s[r + 2];
                Side& b = side(rights, touched_right, next);
                b.dec -= count;
                b.has_dec = 1;
                if ((uint64_t)token_len[next] + new_len < max_len) list(b, 2 * (uint32_t)next + 1, count, w);
            }
            s[o++] = new_id;
            r += 2;  // non-overlapping: the next match starts after this pair
            const int32_t q = find_pair(s, r, n, left, right);
            o = move_down(s, o, r, q);
            if (q >= n) break;
            r = q;
        }
        live -= n - o;
        word.length = o;
    }
    void add_count(uint64_t key, uint64_t delta) {
        int64_t& count = counts.get_or_insert(key, 0);
        count = wrap((int64_t)((uint64_t)count + delta));
    }
    // A +1 pair after all of the step's changes: a list and an entry if its count is > 0. Returns where
    // its words go.
    int32_t* settle(const Side& side, uint64_t key) {
        int64_t& count = counts.get_or_insert(key, 0);
        count = wrap((int64_t)((uint64_t)count + side.inc));
        if (count <= 0) return nullptr;
        int32_t* list = pool.allocate((size_t)side.size + 1);
        list[0] = (int32_t)side.size;
        push(Entry{(uint64_t)count, key, seq++, list});
        return list + 1;
    }
    // End of a step: apply its sums to the counts, then push the new entries (distinct pairs never tie, so
    // their order is free) and copy their words, in listing order, to their lists. Each loop prefetches
    // the table slot of the pair AHEAD iterations on: the pairs are scattered over a table of millions of
    // slots, and their lookups are independent. O(distinct pairs + listed words).
    void flush(int32_t left, int32_t right, int32_t new_id) {
        const size_t AHEAD = 8;
        const big_vector<int32_t>& tl = touched_left;
        const big_vector<int32_t>& tr = touched_right;
        // 1. The -1 sums. A pair can get both kinds of change in one step ((new, left) in "left right left
        // right"), so all -1 sums land before any entry is decided.
        for (size_t k = 0; k < tl.size(); ++k) {
            if (k + AHEAD < tl.size()) counts.prefetch(pair_key(tl[k + AHEAD], left));
            const Side& a = lefts[tl[k]];
            if (a.has_dec) add_count(pair_key(tl[k], left), a.dec);
        }
        for (size_t k = 0; k < tr.size(); ++k) {
            if (k + AHEAD < tr.size()) counts.prefetch(pair_key(right, tr[k + AHEAD]));
            const Side& b = rights[tr[k]];
            if (b.has_dec) add_count(pair_key(right, tr[k]), b.dec);
        }
        // 2. The +1 sums and the entries; each side's fill pointer takes the place of its dec, applied above.
        for (size_t k = 0; k < tl.size(); ++k) {
            if (k + AHEAD < tl.size()) counts.prefetch(pair_key(tl[k + AHEAD], new_id));
            Side& a = lefts[tl[k]];
            a.fill = a.size ? settle(a, pair_key(tl[k], new_id)) : nullptr;
        }
        for (size_t k = 0; k < tr.size(); ++k) {
            if (k + AHEAD < tr.size()) counts.prefetch(pair_key(new_id, tr[k + AHEAD]));
            Side& b = rights[tr[k]];
            b.fill = b.size ? settle(b, pair_key(new_id, tr[k])) : nullptr;
        }
        // 3. The words.
        for (const Listed& item : listed) {
            int32_t*& fill = (item.side & 1) ? rights[item.side >> 1].fill : lefts[item.side >> 1].fill;
            if (fill != nullptr) *fill++ = item.word;
        }
        touched_left.clear();
        touched_right.clear();
        listed.clear();
    }
};

}  // namespace hfbpe
