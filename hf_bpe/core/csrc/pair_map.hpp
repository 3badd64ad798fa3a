#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "large_alloc.hpp"

namespace hfbpe {

// Open-addressing hash map from a pair key to V (linear probing, load <= 3/4, no deletion). A slot holds its
// key and value side by side: one cache miss per lookup, which prefetch() can start early.
// Pair keys are < 2**63 (ids < 2**31), so ~0 is free to mark empty slots.
template <typename V>
struct PairMap {
    static constexpr uint64_t EMPTY = ~0ULL;
    struct Slot {
        uint64_t key;
        V val;
    };
    big_vector<Slot> slots;
    uint64_t mask = 0;
    size_t used = 0;

    PairMap() { reset(8); }
    void reset(size_t expected) {
        size_t cap = 16;
        while (cap * 3 < expected * 4) cap <<= 1;
        allocate(cap);
    }
    void allocate(size_t cap) {  // cap: a power of two
        slots.assign(cap, Slot{EMPTY, V()});
        mask = cap - 1;
        used = 0;
    }
    void prefetch(uint64_t key) const { HFBPE_PREFETCH(&slots[mix64(key) & mask]); }
    const V* find(uint64_t key) const {
        uint64_t i = mix64(key) & mask;
        for (;;) {
            if (slots[i].key == key) return &slots[i].val;
            if (slots[i].key == EMPTY) return nullptr;
            i = (i + 1) & mask;
        }
    }
    V* find(uint64_t key) { return const_cast<V*>(static_cast<const PairMap*>(this)->find(key)); }
    // The reference stays valid until the next insertion.
    V& get_or_insert(uint64_t key, const V& init) {
        if ((used + 1) * 4 > slots.size() * 3) grow();
        uint64_t i = mix64(key) & mask;
        for (;;) {
            if (slots[i].key == key) return slots[i].val;
            if (slots[i].key == EMPTY) {
                slots[i] = Slot{key, init};
                ++used;
                return slots[i].val;
            }
            i = (i + 1) & mask;
        }
    }
    void grow() {
        big_vector<Slot> old;
        old.swap(slots);
        allocate(old.size() * 2);
        for (const Slot& slot : old) {
            if (slot.key == EMPTY) continue;
            uint64_t i = mix64(slot.key) & mask;
            while (slots[i].key != EMPTY) i = (i + 1) & mask;
            slots[i] = slot;
            ++used;
        }
    }
};

}  // namespace hfbpe
