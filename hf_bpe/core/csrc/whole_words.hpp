#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "large_alloc.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hfbpe {

// The whole words of an ignore_merges vocabulary (a piece that is one of them is its id, merged or not): their
// bytes end to end in one arena, and an open-addressing index of 16-byte slots (linear probing, at most half
// full) holding a word's hash tag, place in the arena and id. A lookup that misses costs one slot load in most
// cases (the tag differs or the slot is empty), a hit one more for the bytes. It replaced a std::unordered_map of
// string views into a deque of strings: per lookup a hash, a division, a bucket, a node and the key's bytes
// (several dependent cache misses, Llama 3's 128K words), and a string allocation per word at load.
class WholeWords {
public:
    bool empty() const { return used_ == 0; }
    size_t size() const { return used_; }
    // Add a word, or give a present one the new id (the last wins, as dict order does).
    void assign(const char* word, size_t size, int32_t id) {
        if ((used_ + 1) * 2 > slots_.size()) grow();
        const uint64_t hash = hash_bytes(word, size);
        Slot* slot = &slots_[probe(word, size, hash)];
        if (slot->offset != EMPTY) {
            slot->id = id;
            return;
        }
        if (size >= EMPTY || bytes_.size() + size >= EMPTY) throw std::length_error("whole words over 4 GB");
        *slot = Slot{(uint32_t)(hash >> 32), (uint32_t)bytes_.size(), (uint32_t)size, id};
        bytes_.append(word, size);
        ++used_;
    }
    // The word's id, or null.
    const int32_t* find(const char* word, size_t size) const {
        if (used_ == 0) return nullptr;
        const Slot& slot = slots_[probe(word, size, hash_bytes(word, size))];
        return slot.offset != EMPTY ? &slot.id : nullptr;
    }
    // Call f(word) for every word.
    template <typename F>
    void each(F f) const {
        for (const Slot& slot : slots_) {
            if (slot.offset != EMPTY) f(std::string_view(bytes_.data() + slot.offset, slot.size));
        }
    }

private:
    static constexpr uint32_t EMPTY = 0xFFFFFFFFu;
    struct Slot {
        uint32_t tag, offset, size;  // offset EMPTY: a free slot
        int32_t id;
    };
    // The index of the word's slot, or of the free slot where it would go (never full: at most half). Linear
    // probing over at most half the slots: the walk ends at a free slot.
    size_t probe(const char* word, size_t size, uint64_t hash) const {
        const uint32_t tag = (uint32_t)(hash >> 32);
        for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.offset == EMPTY) return i;
            if (slot.tag == tag && slot.size == size && std::memcmp(bytes_.data() + slot.offset, word, size) == 0)
                return i;
        }
    }
    void grow() {
        big_vector<Slot> old;
        old.swap(slots_);
        const size_t capacity = old.empty() ? 16 : old.size() * 2;
        slots_.assign(capacity, Slot{0, EMPTY, 0, 0});
        mask_ = capacity - 1;
        for (const Slot& slot : old) {
            if (slot.offset == EMPTY) continue;
            const uint64_t hash = hash_bytes(bytes_.data() + slot.offset, slot.size);
            size_t i = hash & mask_;
            while (slots_[i].offset != EMPTY) i = (i + 1) & mask_;
            slots_[i] = slot;
        }
    }
    big_vector<Slot> slots_;
    std::string bytes_;
    size_t mask_ = 0, used_ = 0;
};

}  // namespace hfbpe
