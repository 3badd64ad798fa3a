#pragma once

// Parity-aware BPE's pair counts, kept merge by merge: the compiled back end of
// hf_bpe/training/parity/trainer.py's _Incremental (same steps; the spec is hf_bpe/training/parity/reference.py).
// Per language (training and dev corpora alike): the words end to end (merged in place), their counts, the pair
// counts (64-bit), for every pair the words where it may occur, and for training corpora a max-heap of
// (count, left, right) checked lazily against the counts. Ties go to the largest (left spelling, right spelling):
// spellings are the tokens' byte-level strings in UTF-16-BE, whose byte order is the code points' order.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "pair_map.hpp"

namespace hfbpe_parity {

using hfbpe::PairMap;

inline uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
inline int32_t key_left(uint64_t key) { return int32_t(key >> 32); }
inline int32_t key_right(uint64_t key) { return int32_t(key & 0xffffffffULL); }

struct Entry {
    int64_t count;
    int32_t left;
    int32_t right;
};

// x < y when x comes out of the heap after y: a lower count, or equal counts and smaller spellings.
struct EntryLess {
    const std::vector<std::string>* spell;
    bool operator()(const Entry& x, const Entry& y) const {
        if (x.count != y.count) return x.count < y.count;
        int c = (*spell)[x.left].compare((*spell)[y.left]);
        if (c != 0) return c < 0;
        return (*spell)[x.right].compare((*spell)[y.right]) < 0;
    }
};

class Heap {
   public:
    explicit Heap(const std::vector<std::string>* spell) : less_{spell} {}
    void push(Entry e) {
        items_.push_back(e);
        std::push_heap(items_.begin(), items_.end(), less_);
    }
    bool empty() const { return items_.empty(); }
    const Entry& top() const { return items_.front(); }
    Entry pop() {
        std::pop_heap(items_.begin(), items_.end(), less_);
        Entry e = items_.back();
        items_.pop_back();
        return e;
    }
    void clear() { std::vector<Entry>().swap(items_); }

   private:
    EntryLess less_;
    std::vector<Entry> items_;
};

inline int64_t count_of(const PairMap<int64_t>& map, uint64_t key) {
    const int64_t* found = map.find(key);
    return found == nullptr ? 0 : *found;
}

// The pairs whose counts rose, each pushed once at its current count. A pair whose count fell keeps its higher
// entry, fixed when it surfaces (pop_best): every pair keeps an entry at or above its count, so the first entry
// popped at its current count is the true maximum, as tokenizers (which also pushes the falls) finds it.
inline void push_changed(Heap& heap, const PairMap<int64_t>& counts, std::vector<uint64_t>& changed) {
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (uint64_t key : changed) {
        int64_t current = count_of(counts, key);
        if (current > 0) heap.push(Entry{current, key_left(key), key_right(key)});
    }
}

struct Corpus {
    std::vector<int32_t> ids;     // every word's ids end to end; a word shrinks in place as it is merged
    std::vector<int64_t> starts;  // word i begins at ids[starts[i]]
    std::vector<int32_t> lens;
    std::vector<int64_t> counts;
    PairMap<int64_t> pairs;
    PairMap<int32_t> where_slot;  // pair -> index into where
    std::vector<std::vector<int32_t>> where;
    Heap heap;
    int64_t length = 0;

    explicit Corpus(const std::vector<std::string>* spell) : heap(spell) {}

    void add_pair(uint64_t key, int64_t delta, PairMap<int64_t>* total) {
        pairs.get_or_insert(key, 0) += delta;
        if (total != nullptr) total->get_or_insert(key, 0) += delta;
    }
    void add_spot(uint64_t key, int32_t word) {
        int32_t& slot = where_slot.get_or_insert(key, -1);
        if (slot < 0) {
            slot = int32_t(where.size());
            where.emplace_back();
        }
        std::vector<int32_t>& spots = where[size_t(slot)];
        if (spots.empty() || spots.back() != word) spots.push_back(word);
    }

    void count_all() {
        for (size_t i = 0; i < lens.size(); ++i) {
            const int32_t* w = ids.data() + starts[i];
            length += int64_t(lens[i]) * counts[i];
            for (int32_t j = 0; j + 1 < lens[i]; ++j) {
                uint64_t key = pair_key(w[j], w[j + 1]);
                add_pair(key, counts[i], nullptr);
                add_spot(key, int32_t(i));
            }
        }
    }

    void fill_heap() {
        for (const auto& slot : pairs.slots) {
            if (slot.key != PairMap<int64_t>::EMPTY && slot.val > 0)
                heap.push(Entry{slot.val, key_left(slot.key), key_right(slot.key)});
        }
    }

    // tokenizers' pop_best_pair: the top entry whose count is current; false when none is left.
    bool pop_best(Entry& out) {
        while (!heap.empty()) {
            Entry top = heap.pop();
            int64_t current = count_of(pairs, pair_key(top.left, top.right));
            if (current <= 0) continue;
            if (top.count != current) {
                heap.push(Entry{current, top.left, top.right});
                continue;
            }
            out = top;
            return true;
        }
        return false;
    }

    // Merge (a, b) into c wherever it occurs, with Word::merge's changes; `changed` gets the pairs that rose.
    void merge(int32_t a, int32_t b, int32_t c, PairMap<int64_t>* total, std::vector<uint64_t>& changed) {
        uint64_t key = pair_key(a, b);
        int32_t* slot = where_slot.find(key);
        if (slot == nullptr || *slot < 0) return;
        std::vector<int32_t> spots;
        spots.swap(where[size_t(*slot)]);
        for (int32_t i : spots) {
            int32_t* w = ids.data() + starts[size_t(i)];
            const int32_t n = lens[size_t(i)];
            const int64_t count = counts[size_t(i)];
            int32_t out = 0;
            int32_t j = 0;
            while (j < n) {  // each step writes one id and advances j by 1 or 2; out <= j
                if (w[j] == a && j + 1 < n && w[j + 1] == b) {
                    if (out > 0) {
                        int32_t prev = w[out - 1];
                        add_pair(pair_key(prev, a), -count, total);
                        add_pair(pair_key(prev, c), count, total);
                        add_spot(pair_key(prev, c), i);
                        changed.push_back(pair_key(prev, c));
                    }
                    if (j + 2 < n) {
                        int32_t next = w[j + 2];
                        add_pair(pair_key(b, next), -count, total);
                        add_pair(pair_key(c, next), count, total);
                        add_spot(pair_key(c, next), i);
                        changed.push_back(pair_key(c, next));
                    }
                    w[out++] = c;
                    j += 2;
                } else {
                    w[out++] = w[j++];
                }
            }
            length -= int64_t(n - out) * count;
            lens[size_t(i)] = out;
        }
        int64_t& own = pairs.get_or_insert(key, 0);
        if (total != nullptr) total->get_or_insert(key, 0) -= own;
        own = 0;
    }
};

class ParityCounts {
   public:
    // spellings: every token's byte-level string in UTF-16-BE, by id; byte_ids: the id of each byte (-1: none).
    ParityCounts(std::vector<std::string> spellings, std::vector<int32_t> byte_ids)
        : spell_(std::move(spellings)), byte_ids_(std::move(byte_ids)), total_heap_(&spell_) {
        if (byte_ids_.size() != 256) throw std::invalid_argument("byte_ids must hold 256 entries");
        for (int32_t id : byte_ids_)
            if (id < -1 || id >= int32_t(spell_.size())) throw std::invalid_argument("byte id out of range");
    }

    // A corpus: the words' bytes end to end, each word's end offset, each word's count.
    void add_corpus(bool dev, const char* blob, int64_t blob_len, const int64_t* ends, const int64_t* counts,
                    int64_t n) {
        std::vector<Corpus>& corpora = dev ? dev_ : train_;
        corpora.emplace_back(&spell_);
        Corpus& corpus = corpora.back();
        corpus.ids.reserve(size_t(blob_len));
        corpus.starts.reserve(size_t(n));
        corpus.lens.reserve(size_t(n));
        corpus.counts.assign(counts, counts + n);
        int64_t begin = 0;
        for (int64_t i = 0; i < n; ++i) {
            int64_t end = ends[i];
            if (end < begin || end > blob_len || end - begin > INT32_MAX)
                throw std::invalid_argument("word ends must rise within the blob");
            if (counts[i] < 0) throw std::invalid_argument("word counts must be >= 0");
            corpus.starts.push_back(int64_t(corpus.ids.size()));
            corpus.lens.push_back(int32_t(end - begin));
            for (int64_t k = begin; k < end; ++k) {
                int32_t id = byte_ids_[static_cast<unsigned char>(blob[k])];
                if (id < 0) throw std::invalid_argument("a word holds a byte without an id");
                corpus.ids.push_back(id);
            }
            begin = end;
        }
        corpus.count_all();
    }

    // Heaps for every training corpus, and the summed counts while `global_merges` last.
    void start(bool global) {
        for (Corpus& corpus : train_) corpus.fill_heap();
        global_ = global;
        if (!global_) return;
        for (Corpus& corpus : train_)
            for (const auto& slot : corpus.pairs.slots)
                if (slot.key != PairMap<int64_t>::EMPTY) total_.get_or_insert(slot.key, 0) += slot.val;
        for (const auto& slot : total_.slots)
            if (slot.key != PairMap<int64_t>::EMPTY && slot.val > 0)
                total_heap_.push(Entry{slot.val, key_left(slot.key), key_right(slot.key)});
    }

    bool best_pair(size_t lang, Entry& out) {
        if (global_) {  // the global phase is over
            global_ = false;
            total_ = PairMap<int64_t>();
            total_heap_.clear();
        }
        if (lang >= train_.size()) throw std::out_of_range("language index");
        return train_[lang].pop_best(out);
    }

    bool best_global_pair(Entry& out) {
        while (!total_heap_.empty()) {
            Entry top = total_heap_.top();
            int64_t current = count_of(total_, pair_key(top.left, top.right));
            if (current == top.count && current > 0) {
                out = top;  // left in the heap: its count drops to 0 when merged
                return true;
            }
            total_heap_.pop();
            if (current > 0) total_heap_.push(Entry{current, top.left, top.right});
        }
        return false;
    }

    void apply(int32_t a, int32_t b, int32_t c) {
        int32_t size = int32_t(spell_.size());
        if (a < 0 || a >= size || b < 0 || b >= size || c < 0 || c > size)
            throw std::out_of_range("merge ids out of range");
        if (c == size) spell_.push_back(spell_[size_t(a)] + spell_[size_t(b)]);
        PairMap<int64_t>* total = global_ ? &total_ : nullptr;
        std::vector<uint64_t> all_changed;
        for (Corpus& corpus : train_) {
            std::vector<uint64_t> changed;
            corpus.merge(a, b, c, total, changed);
            if (global_) all_changed.insert(all_changed.end(), changed.begin(), changed.end());
            push_changed(corpus.heap, corpus.pairs, changed);
        }
        for (Corpus& corpus : dev_) {
            std::vector<uint64_t> changed;
            corpus.merge(a, b, c, nullptr, changed);
        }
        if (global_) push_changed(total_heap_, total_, all_changed);
    }

    std::vector<int64_t> lengths(bool dev) const {
        std::vector<int64_t> out;
        for (const Corpus& corpus : dev ? dev_ : train_) out.push_back(corpus.length);
        return out;
    }

   private:
    std::vector<std::string> spell_;
    std::vector<int32_t> byte_ids_;
    std::vector<Corpus> train_;
    std::vector<Corpus> dev_;
    PairMap<int64_t> total_;
    Heap total_heap_;
    bool global_ = false;
};

}  // namespace hfbpe_parity
