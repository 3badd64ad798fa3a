#pragma once

#include <string>
#include <vector>

#include "common.hpp"
#include "hash.hpp"
#include "large_alloc.hpp"

namespace hfbpe {

// The id of each token key (tokenizers' word_to_id) as an index into the trainer's own `keys`: a slot is the key's
// 32-bit hash and its id (8 bytes), where std::unordered_map<std::string, int32_t> kept a node with a second copy of
// the key (~72 bytes an id: 1.5 MB of a 1 MB corpus's 20,000 merges). Open addressing, linear probing, load <= 3/4,
// no deletion; growing rehashes from the stored hashes alone. Keys are compared in full on equal hashes, so results
// never depend on the hash.
class KeyIndex {
public:
    static constexpr int32_t NONE = -1;

    KeyIndex() { allocate(16); }

    // The id whose key is p[0 .. n), or NONE.
    int32_t find(const std::vector<std::string>& keys, const char* p, size_t n) const {
        const uint32_t h = hash32(p, n);
        for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.id == NONE) return NONE;
            if (slot.hash == h && keys[(size_t)slot.id].size() == n &&
                (n == 0 || std::memcmp(keys[(size_t)slot.id].data(), p, n) == 0)) {
                return slot.id;
            }
        }
    }
    // Give keys[id] the id `id` unless its key already has one (the first id of a key stays, as in tokenizers).
    void insert_if_absent(const std::vector<std::string>& keys, int32_t id) {
        const std::string& key = keys[(size_t)id];
        if (find(keys, key.data(), key.size()) == NONE) insert_new(keys, id);
    }
    // Give keys[id] the id `id`; its key has none (find() just said so).
    void insert_new(const std::vector<std::string>& keys, int32_t id) {
        const std::string& key = keys[(size_t)id];
        if ((used_ + 1) * 4 > slots_.size() * 3) grow();
        place(Slot{hash32(key.data(), key.size()), id});
        ++used_;
    }
    void clear() {
        big_vector<Slot>().swap(slots_);
        allocate(16);
    }

private:
    struct Slot {
        uint32_t hash;
        int32_t id;  // NONE: empty
    };
    big_vector<Slot> slots_;
    uint64_t mask_ = 0;
    size_t used_ = 0;

    static uint32_t hash32(const char* p, size_t n) { return (uint32_t)(hash_bytes(p, n) >> 32); }
    void allocate(size_t cap) {  // cap: a power of two
        slots_.assign(cap, Slot{0, NONE});
        mask_ = cap - 1;
        used_ = 0;
    }
    void place(const Slot& slot) {
        uint64_t i = slot.hash & mask_;
        while (slots_[i].id != NONE) i = (i + 1) & mask_;
        slots_[i] = slot;
    }
    void grow() {
        big_vector<Slot> old;
        old.swap(slots_);
        const size_t used = used_;
        allocate(old.size() * 2);
        for (const Slot& slot : old) {
            if (slot.id != NONE) place(slot);
        }
        used_ = used;
    }
};

}  // namespace hfbpe
