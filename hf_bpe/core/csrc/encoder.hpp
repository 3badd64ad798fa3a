#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "pair_map.hpp"
#include "shared_word_cache.hpp"
#include "word_cache.hpp"

#include <memory>

namespace hfbpe {

// ---------------------------------------------------------------------------------------------------------
// Encoding: tokenizers' Word::merge_all without dropout, plus a bounded memo cache.
// ---------------------------------------------------------------------------------------------------------

struct RankValue {
    int32_t rank = 0;
    int32_t new_id = 0;
};

class Encoder {
public:
    int32_t byte_ids[256];

    Encoder() = default;
    // A copy shares the tables (merges, whole words), which never change once built (add_merge/add_whole run
    // before any copy is made), and has its own cache and scratch buffers: a copy may be made while another thread
    // encodes with the original, and each thread of a batch gets one. Shared, not copied: two threads each with a
    // few-MB merge table of its own ran ~30% slower than over one (last-level cache pressure, measured).
    Encoder(const Encoder& other) : tables(other.tables) {
        std::copy(other.byte_ids, other.byte_ids + 256, byte_ids);
        cache.set_capacity(other.cache.capacity());
    }
    Encoder& operator=(const Encoder&) = delete;

    void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) {
        tables->ranks.get_or_insert(pair_key(left, right), RankValue()) = RankValue{rank, new_id};  // last wins
    }
    void add_whole(const char* word, size_t size, int32_t id) { tables->whole[std::string(word, size)] = id; }
    void set_cache_size(size_t words) { cache.set_capacity(words); }
    void clear_cache() { cache.clear(); }

    void encode(const char* word, size_t size, std::vector<int32_t>& out) { encode(word, size, out, nullptr, nullptr); }
    size_t cache_capacity() const { return cache.capacity(); }
    // encode() with `shared` (when not null) as the memo cache instead of this encoder's own, the words it merges
    // published there with entries in `arena` (this thread's): how the threads of a batch share their work.
    void encode(const char* word, size_t size, std::vector<int32_t>& out, SharedWordCache* shared,
                EntryArena* arena) {
        const unsigned char* bytes = (const unsigned char*)word;
        const auto& whole = tables->whole;
        if (!whole.empty()) {
            auto it = whole.find(std::string(word, size));
            if (it != whole.end()) {
                out.push_back(it->second);
                return;
            }
        }
        // Small-word fast paths (same result as merge_all: at most one pair).
        if (size <= 1) {
            if (size == 1) out.push_back(byte_ids[bytes[0]]);
            return;
        }
        if (size == 2) {
            int32_t a = byte_ids[bytes[0]], b = byte_ids[bytes[1]];
            RankValue* found = tables->ranks.find(pair_key(a, b));
            if (found) {
                out.push_back(found->new_id);
            } else {
                out.push_back(a);
                out.push_back(b);
            }
            return;
        }
        if (cache.capacity() == 0 || size > WordCache::MAX_KEY) {
            merge_all(bytes, size, out);
            return;
        }
        const uint64_t hash = hash_bytes(word, size);
        if (shared != nullptr) {
            if (shared->get(word, size, hash, out)) return;
            size_t start = out.size();
            merge_all(bytes, size, out);
            shared->put(word, size, hash, out.data() + start, out.size() - start, *arena);
            return;
        }
        if (cache.get(word, size, hash, out)) return;
        size_t start = out.size();
        merge_all(bytes, size, out);
        cache.put(word, size, hash, out.data() + start, out.size() - start);
    }

private:
    struct Symbol {
        int32_t c, prev, next, len;
    };
    struct Item {
        int32_t rank, pos, new_id;
    };
    struct ItemAfter {  // std heap functions keep the greatest on top: make it the lowest (rank, pos)
        bool operator()(const Item& x, const Item& y) const {
            return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
        }
    };
    struct Tables {
        PairMap<RankValue> ranks;
        std::unordered_map<std::string, int32_t> whole;
    };
    std::shared_ptr<Tables> tables = std::make_shared<Tables>();
    WordCache cache;
    std::vector<Symbol> symbols;
    std::vector<Item> heap;

    void push(const Item& item) {
        heap.push_back(item);
        std::push_heap(heap.begin(), heap.end(), ItemAfter());
    }
    // O(n log n) for a word of n bytes: each merge pops one entry and pushes at most two.
    void merge_all(const unsigned char* bytes, size_t size, std::vector<int32_t>& out) {
        const int32_t n = (int32_t)size;
        symbols.resize(size);
        heap.clear();
        for (int32_t i = 0; i < n; ++i) symbols[i] = Symbol{byte_ids[bytes[i]], i - 1, i + 1 < n ? i + 1 : -1, 1};
        for (int32_t i = 0; i + 1 < n; ++i) {
            RankValue* found = tables->ranks.find(pair_key(symbols[i].c, symbols[i + 1].c));
            if (found) heap.push_back(Item{found->rank, i, found->new_id});
        }
        std::make_heap(heap.begin(), heap.end(), ItemAfter());
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), ItemAfter());
            Item top = heap.back();
            heap.pop_back();
            Symbol& current = symbols[top.pos];
            if (current.len == 0 || current.next == -1) continue;  // absorbed, or last symbol
            const int32_t next_pos = current.next;
            const Symbol right = symbols[next_pos];
            RankValue* found = tables->ranks.find(pair_key(current.c, right.c));
            if (!found || found->new_id != top.new_id) continue;  // expired (tokenizers compares new ids)
            current.c = top.new_id;
            current.len += right.len;
            current.next = right.next;
            symbols[next_pos].len = 0;
            if (right.next > -1) symbols[right.next].prev = top.pos;
            if (current.prev >= 0) {
                found = tables->ranks.find(pair_key(symbols[current.prev].c, current.c));
                if (found) push(Item{found->rank, current.prev, found->new_id});
            }
            if (current.next > -1) {
                found = tables->ranks.find(pair_key(current.c, symbols[current.next].c));
                if (found) push(Item{found->rank, top.pos, found->new_id});
            }
        }
        for (int32_t i = 0; i < n; ++i) {
            if (symbols[i].len != 0) out.push_back(symbols[i].c);
        }
    }
};

}  // namespace hfbpe
