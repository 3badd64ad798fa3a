// The encoder's memo cache: word bytes -> token ids, in one open-addressing table over two arenas. A lookup costs
// one probe of a 16-byte slot plus one compare of the key (std::unordered_map<std::string, ...> chased two or
// three pointers per lookup and was 28% of a batch encode). Bounded: when it holds `capacity` words it grows (as
// the short-piece table does, up to 16 times that or PIECE_GROW_LIMIT words), then it is cleared when full: 6.4 MB
// of Chinese holds ~190K distinct pieces over 15 bytes, and a table cleared at 65,536 re-merged half of them on
// every pass (measured with o200k: 187K misses and 3 wipes per warm pass).
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "hash.hpp"
#include "piece_cache.hpp"

namespace hfbpe {

class WordCache {
public:
    // Keys up to this many bytes are cached (longer words are rare and cost more to compare than to merge).
    static constexpr size_t MAX_KEY = 255;

    void set_capacity(size_t words) {
        capacity_ = limit_ = words;
        clear();
    }
    size_t capacity() const { return capacity_; }
    uint64_t wipes() const { return wipes_; }
    void clear() {
        slots_.clear();
        keys_.clear();
        ids_.clear();
        used_ = 0;
        mask_ = 0;
    }

    // Ask for the home slot of `hash` a while before get() reads it (encode_pieces: a block ahead).
    void prefetch(uint64_t hash) const {
        if (mask_ != 0) HFBPE_PREFETCH(&slots_[hash & mask_]);
    }
    // The cached ids of word[0..n) appended to out: true, or false when the word is not cached.
    bool get(const char* word, size_t n, uint64_t hash, std::vector<int32_t>& out) const {
        if (mask_ == 0) return false;
        const uint32_t tag = (uint32_t)(hash >> 32);
        for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.key_len == EMPTY) return false;
            if (slot.tag == tag && slot.key_len == n && std::memcmp(keys_.data() + slot.key_at, word, n) == 0) {
                out.insert(out.end(), ids_.begin() + slot.ids_at, ids_.begin() + slot.ids_at + slot.ids_len);
                return true;
            }
        }
    }
    // Remember word[0..n) -> ids[0..count) (the caller checked it is absent and n <= MAX_KEY).
    void put(const char* word, size_t n, uint64_t hash, const int32_t* ids, size_t count) {
        if (capacity_ == 0 || count > 0xFFFF) return;
        if (used_ >= limit_ && !grow()) {  // bounded: drop everything when full at the budget
            clear();
            ++wipes_;
        }
        if (mask_ == 0) allocate();
        uint64_t i = hash & mask_;
        while (slots_[i].key_len != EMPTY) i = (i + 1) & mask_;
        slots_[i] = Slot{(uint32_t)(hash >> 32), (uint32_t)keys_.size(), (uint32_t)ids_.size(), (uint16_t)n,
                         (uint16_t)count};
        keys_.append(word, n);
        ids_.insert(ids_.end(), ids, ids + count);
        ++used_;
    }

private:
    static constexpr uint16_t EMPTY = 0xFFFF;  // key_len of a free slot (keys are at most MAX_KEY bytes)
    struct Slot {
        uint32_t tag;     // high half of the hash: most mismatches end here without touching the key
        uint32_t key_at;  // offsets into keys_ / ids_ (arenas stay under 4 GB: capacity * MAX_KEY is far below)
        uint32_t ids_at;
        uint16_t key_len;
        uint16_t ids_len;
    };
    std::vector<Slot> slots_;
    std::string keys_;
    std::vector<int32_t> ids_;
    size_t capacity_ = 0, limit_ = 0, used_ = 0;  // limit_: words before the next grow() or clear()
    uint64_t wipes_ = 0;
    uint64_t mask_ = 0;

    void allocate() {  // load <= 1/2 at the limit: short probes
        size_t size = 16;
        while (size < 2 * limit_) size <<= 1;
        slots_.assign(size, Slot{0, 0, 0, EMPTY, 0});
        mask_ = size - 1;
    }
    // Room for twice the words (within the budget), keeping them (the arenas stay; each key is hashed again);
    // false, changing nothing, at the budget or before the first word.
    bool grow() {
        const size_t budget = std::max(capacity_, std::min(PIECE_GROW_LIMIT, 16 * capacity_));
        if (limit_ >= budget || mask_ == 0) return false;
        limit_ = std::min(2 * limit_, budget);
        std::vector<Slot> old;
        old.swap(slots_);
        allocate();
        for (const Slot& slot : old) {
            if (slot.key_len == EMPTY) continue;
            uint64_t i = hash_bytes(keys_.data() + slot.key_at, slot.key_len) & mask_;
            while (slots_[i].key_len != EMPTY) i = (i + 1) & mask_;
            slots_[i] = slot;
        }
        return true;
    }
};

}  // namespace hfbpe
