// The encoder's cache for short pieces (1..15 UTF-8 bytes: all but a few per mille of English pieces): the key
// lives in the slot (bytes 0-7 in k0, bytes 8-14 and the length in k1) and so do up to 4 ids, so a lookup is one
// 32-byte slot (two per cache line) and two 64-bit compares, where the arena cache (word_cache.hpp) compared a tag,
// then chased the key and the ids into two arenas (three dependent misses per piece).
//
// A table starts as a copy of an image (PieceImage) that the encoder seeds with every token spelling of <= 15 bytes
// mapped to what encoding that spelling gives (its merge result, never simply its own id: a token the merges do not
// reach, or a second token with the same bytes, encodes to something else), so a cold encoder mostly hits. When
// `limit` pieces were added beyond the image, the table is full: an owner wipes it back to the image (the seeded
// pieces survive); a table shared by the threads of a batch stops taking pieces until the next batch.
//
// Lock-free for the threads of a batch, insert-only: a writer claims an empty slot by CAS of k1 from 0 to BUSY,
// writes k0 and the ids, then publishes k1 with a release store; readers acquire-load k1 and look at the rest only
// when it is their key (a slot being written reads as BUSY: another key). Two threads may publish the same piece
// twice (two slots, same ids: harmless). Ids never depend on the table: a slot holds exactly what encoding its
// piece gives, and a miss computes it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "hash.hpp"
#include "entry_arena.hpp"

namespace hfbpe {

// k1 == 0: empty; k1 == PIECE_BUSY: being written (a key has its length, 1..15, in bits 56-59 of k1). A published
// slot's k1 also holds, in bits 60-62, how its ids are kept (piece_tag): 1..4, that many ids in v0 (ids 0 and 1)
// and v1 (ids 2 and 3), little-endian as encode_pieces writes them out, one 16-byte copy; 0, more than 4 ids,
// spilled (v0: their count, v1: where they are).
struct alignas(32) PieceSlot {
    uint64_t k0, k1;
    uint64_t v0, v1;
};

static constexpr size_t PIECE_MAX = 15;
static constexpr uint64_t PIECE_BUSY = 1;
static constexpr int PIECE_TAG_SHIFT = 60;

// How a published slot keeps its ids (see PieceSlot), from its k1.
static inline uint64_t piece_tag(uint64_t k1) { return k1 >> PIECE_TAG_SHIFT; }
// A slot's k1 without its tag: the key's k1 (bits 0-59: the bytes 8-14 and the length), what it is hashed with.
static inline uint64_t piece_untagged(uint64_t k1) { return k1 & ((1ULL << PIECE_TAG_SHIFT) - 1); }
// Whether a slot's k1 (tagged) holds the key k1.
static inline bool piece_same_key(uint64_t slot_k1, uint64_t k1) { return ((slot_k1 ^ k1) << 4) == 0; }

// k0, k1 for p[0..n), 1 <= n <= 15: equal pairs mean equal pieces. Overlapping loads, never past p + n.
static inline void piece_key(const char* p, size_t n, uint64_t& k0, uint64_t& k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 8) {
        k0 = load64(p);
        k1 = n == 8 ? 0 : load64(p + n - 8) >> (8 * (16 - n));
    } else if (n >= 4) {
        k0 = load32(p) | ((load32(p + n - 4) >> (8 * (8 - n))) << 32);
        k1 = 0;
    } else {
        k0 = (unsigned char)p[0];
        if (n > 1) k0 |= (uint64_t)(unsigned char)p[1] << 8;
        if (n > 2) k0 |= (uint64_t)(unsigned char)p[2] << 16;
        k1 = 0;
    }
#else
    k0 = k1 = 0;
    for (size_t i = 0; i < n; ++i) (i < 8 ? k0 : k1) |= (uint64_t)(unsigned char)p[i] << (8 * (i & 7));
#endif
    k1 |= (uint64_t)n << 56;
}

// piece_key of p[0..n), 1 <= n <= 15, when 16 bytes from p may be read (p + 16 <= end of the text): two loads
// masked to the piece's bytes, no branch on n (piece lengths are random to the branch predictor). Same k0, k1.
static const uint64_t PIECE_MASK0[16] = {0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL, 0xFFFFFFFFFFULL,
                                         0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL,
                                         ~0ULL, ~0ULL, ~0ULL};
static const uint64_t PIECE_MASK1[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL,
                                         0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL};
static inline void piece_key_wide(const char* p, size_t n, uint64_t& k0, uint64_t& k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    k0 = load64(p) & PIECE_MASK0[n];
    k1 = (load64(p + 8) & PIECE_MASK1[n]) | ((uint64_t)n << 56);
#else
    piece_key(p, n, k0, k1);
#endif
}

// Two multiplies and a byte swap (mix64 costs four more operations, on every piece of a batch): a product's bit i
// depends on the input's bits 0..i only, so its top byte, the one that depends on all of k0 and k1, becomes the
// low byte that indexes the table (then the next ones: every table size indexes with the best-mixed bits).
static inline uint64_t piece_hash(uint64_t k0, uint64_t k1) {
    return __builtin_bswap64((k0 ^ (k1 * 0x9E3779B97F4A7C15ULL)) * 0xD6E8FEB86659FD93ULL);
}

// A full table grows (rehashed, keeping its pieces) up to this many pieces or 16 times the image's limit,
// whichever is less, before it is wiped: 6.4-24 MB of English has 40-100K distinct pieces; a cache of 65,536 wiped
// twice per 24 MB pass and never warmed up (measured: 130K misses in every round).
static constexpr size_t PIECE_GROW_LIMIT = 1 << 18;

// A seeded table to start from (immutable once built; its spilled ids live in `spill`). An image with no seeded
// piece keeps no slots (a table starts from zeros).
struct PieceImage {
    std::vector<PieceSlot> slots;
    uint64_t mask = 0;
    size_t limit = 0;   // pieces a table may add before it is full
    size_t seeded = 0;  // pieces in the image
    // Every single byte is a key of the image (a seeded one, of a vocabulary whose byte ids fit a slot): then
    // encode_pieces looks 1-byte pieces up as any other short piece, with no branch on the piece's length.
    bool bytes_keyed = false;
    size_t bytes = 0;  // of `seeded`, the single bytes added for that (not spellings of the vocabulary)
    EntryArena spill;
};

// Pack ids[0..count) into a slot's values (spilling more than 4 into `arena`) and tag the key k1 with how; false
// if they cannot be cached (an id 0 of 2**28 or more, kept from an earlier layout: a vocabulary far beyond any
// real one, and the placeholder ids of missing bytes, which must not be cached; such pieces are merged every time).
static inline bool pack_piece_ids(const int32_t* ids, size_t count, EntryArena& arena, uint64_t& k1, uint64_t& v0,
                                  uint64_t& v1) {
    if (count == 0 || count > PIECE_MAX || (uint32_t)ids[0] >= (1u << 28)) return false;
    if (count <= 4) {
        v0 = (uint64_t)(uint32_t)ids[0] | (count > 1 ? (uint64_t)(uint32_t)ids[1] << 32 : 0);
        v1 = (count > 2 ? (uint64_t)(uint32_t)ids[2] : 0) | (count > 3 ? (uint64_t)(uint32_t)ids[3] << 32 : 0);
        k1 |= (uint64_t)count << PIECE_TAG_SHIFT;
    } else {
        int32_t* spilled = (int32_t*)arena.allocate(count * sizeof(int32_t));
        std::memcpy(spilled, ids, count * sizeof(int32_t));
        v0 = count;
        v1 = (uint64_t)(uintptr_t)spilled;
    }
    return true;
}

// The ids of a published slot (its tagged k1, v0, v1) appended to out.
static inline void unpack_piece_ids(uint64_t k1, uint64_t v0, uint64_t v1, std::vector<int32_t>& out) {
    const size_t count = piece_tag(k1);
    if (count == 1) {  // most pieces are one token
        out.push_back((int32_t)(uint32_t)v0);
        return;
    }
    if (count == 0) {
        const int32_t* spilled = (const int32_t*)(uintptr_t)v1;
        out.insert(out.end(), spilled, spilled + v0);
        return;
    }
    const int32_t ids[4] = {(int32_t)(uint32_t)v0, (int32_t)(v0 >> 32), (int32_t)(uint32_t)v1, (int32_t)(v1 >> 32)};
    out.insert(out.end(), ids, ids + count);
}

// Insert into a table no other thread uses (image building): false if the key is there already.
static inline bool insert_piece_unshared(std::vector<PieceSlot>& slots, uint64_t mask, const PieceSlot& slot) {
    for (uint64_t i = piece_hash(slot.k0, piece_untagged(slot.k1)) & mask;; i = (i + 1) & mask) {
        if (slots[i].k1 == 0) {
            slots[i] = slot;
            return true;
        }
        if (piece_same_key(slots[i].k1, slot.k1) && slots[i].k0 == slot.k0) return false;
    }
}

class PieceCache {
public:
    PieceCache() = default;
    PieceCache(const PieceCache&) = delete;
    PieceCache& operator=(const PieceCache&) = delete;

    bool ready() const { return image_ != nullptr; }
    const PieceImage* image() const { return image_.get(); }
    bool full() const { return used_.load(std::memory_order_relaxed) >= limit_; }
    // Start over from `image`, room for its limit (no thread may use the table meanwhile).
    void reset(std::shared_ptr<const PieceImage> image) {
        image_ = std::move(image);
        reset_to(image_->limit);
    }
    // Start over from the image, keeping the room the table has grown to (a wipe).
    void reset() { reset_to(limit_); }
    // A full table: rehash it into room for twice its limit (within the budget), keeping its pieces (their
    // spilled ids stay where they are); false, changing nothing, when it is at its budget (then wipe it).
    bool grow() {
        const size_t budget = std::max(image_->limit, std::min(PIECE_GROW_LIMIT, 16 * image_->limit));
        if (limit_ >= budget) return false;
        const size_t limit = std::min(2 * limit_, budget);
        std::vector<PieceSlot> old;
        old.swap(slots_);
        allocate(limit);
        for (const PieceSlot& slot : old) {
            if (slot.k1 > PIECE_BUSY) insert_piece_unshared(slots_, mask_, slot);
        }
        return true;
    }
    // The slots and the index mask, for a loop that keeps them in registers (valid until the table grows or is
    // wiped: after put(), grow() or reset(), ask again).
    const PieceSlot* slots() const { return slots_.data(); }
    uint64_t mask() const { return mask_; }
    // The slot of (k0, k1) in `slots` (from slots(), with `mask`), or null: find() with the table in registers.
    // `tagged`: the slot's k1 as read (its piece_tag), when found.
    static const PieceSlot* find_in(const PieceSlot* slots, uint64_t mask, uint64_t k0, uint64_t k1, uint64_t hash,
                                    uint64_t& tagged) {
        for (uint64_t i = hash & mask;; i = (i + 1) & mask) {
            const PieceSlot& slot = slots[i];
            const uint64_t seen = __atomic_load_n(&slot.k1, __ATOMIC_ACQUIRE);
            if (piece_same_key(seen, k1) && slot.k0 == k0) {
                tagged = seen;
                return &slot;
            }
            if (seen == 0) return nullptr;
        }
    }
    static const PieceSlot* find_in(const PieceSlot* slots, uint64_t mask, uint64_t k0, uint64_t k1, uint64_t hash) {
        uint64_t tagged = 0;
        return find_in(slots, mask, k0, k1, hash, tagged);
    }

    // The slot of the piece (k0, k1), or null when the table does not hold it (its v0, v1 are published: read
    // them after this returns).
    const PieceSlot* find(uint64_t k0, uint64_t k1, uint64_t hash) const {
        return find_in(slots_.data(), mask_, k0, k1, hash);
    }
    // The ids of the piece (k0, k1) appended to out: true, or false when the table does not hold it.
    bool get(uint64_t k0, uint64_t k1, uint64_t hash, std::vector<int32_t>& out) const {
        const PieceSlot* slot = find(k0, k1, hash);
        if (slot == nullptr) return false;
        unpack_piece_ids(slot->k1, slot->v0, slot->v1, out);
        return true;
    }
    // Publish (k0, k1) -> ids[0..count), spilled ids in `arena` (the caller's own): false when the table is full
    // (nothing added). A piece already there (published by another thread meanwhile) is left as it is.
    bool put(uint64_t k0, uint64_t k1, uint64_t hash, const int32_t* ids, size_t count, EntryArena& arena) {
        if (used_.load(std::memory_order_relaxed) >= limit_) return false;
        uint64_t tagged = k1, v0, v1;
        if (!pack_piece_ids(ids, count, arena, tagged, v0, v1)) return true;
        // A slot is reserved before it is claimed: at most `limit` pieces are ever added to the image's seeded
        // ones, and the image has room for them at a load under 3/4, so an empty slot always ends a probe.
        if (used_.fetch_add(1, std::memory_order_relaxed) >= limit_) return false;
        for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
            PieceSlot& slot = slots_[i];
            uint64_t seen = __atomic_load_n(&slot.k1, __ATOMIC_ACQUIRE);
            if (seen == 0) {
                if (__atomic_compare_exchange_n(&slot.k1, &seen, PIECE_BUSY, false, __ATOMIC_ACQUIRE,
                                                __ATOMIC_ACQUIRE)) {
                    slot.k0 = k0;
                    slot.v0 = v0;
                    slot.v1 = v1;
                    __atomic_store_n(&slot.k1, tagged, __ATOMIC_RELEASE);
                    return true;
                }
            }
            if (piece_same_key(seen, k1) && slot.k0 == k0) return true;
        }
    }

private:
    void allocate(size_t limit) {  // an empty table for the image's pieces plus `limit`, load under 3/4
        size_t size = 16;
        while (size * 3 < (image_->seeded + limit + 1) * 4) size <<= 1;
        slots_.assign(size, PieceSlot{0, 0, 0, 0});
        mask_ = size - 1;
        limit_ = limit;
    }
    void reset_to(size_t limit) {
        if (image_->slots.size() != 0 && limit == image_->limit) {
            slots_ = image_->slots;
            mask_ = image_->mask;
            limit_ = limit;
        } else {
            allocate(limit);
            for (const PieceSlot& slot : image_->slots) {
                if (slot.k1 != 0) insert_piece_unshared(slots_, mask_, slot);
            }
        }
        used_.store(0, std::memory_order_relaxed);
    }
    std::shared_ptr<const PieceImage> image_;
    std::vector<PieceSlot> slots_;
    uint64_t mask_ = 0;
    size_t limit_ = 0;
    std::atomic<size_t> used_{0};
};

}  // namespace hfbpe
