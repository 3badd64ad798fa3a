#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "long_piece.hpp"
#include "merge_queue.hpp"
#include "merge_scan.hpp"
#include "pair_map.hpp"
#include "piece_cache.hpp"
#include "rank_grid.hpp"
#include "shared_word_cache.hpp"
#include "whole_words.hpp"
#include "word_cache.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

namespace hfbpe {

// ---------------------------------------------------------------------------------------------------------
// Encoding: tokenizers' Word::merge_all without dropout, plus a bounded memo cache.
// ---------------------------------------------------------------------------------------------------------

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

    // Room for `merges` merges (before the first add_merge): the pair table sized once, not doubled 15 times.
    void reserve_merges(size_t merges) {
        tables->ranks.reset(merges);
        tables->merges.reserve(merges);
    }
    void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) {
        Tables& t = *tables;
        if (rank != (int32_t)t.merges.size()) t.ranks_indexed = false;  // (both callers pass the merge's index)
        RankValue& value = t.ranks.get_or_insert(pair_key(left, right), RankValue{-1, 0});
        if (value.rank >= 0) t.overridden.push_back(value.rank);  // a repeated pair: the last wins
        value = RankValue{rank, new_id};
        t.merges.push_back(Merge{left, right, new_id});
    }
    void add_whole(const char* word, size_t size, int32_t id) { tables->whole.assign(word, size, id); }  // last wins
    void set_cache_size(size_t words) { cache.set_capacity(words); }
    void clear_cache() {
        cache.clear();
        if (own_pieces.ready()) own_pieces.reset(tables->image);
        own_arena = EntryArena();
    }

    void encode(const char* word, size_t size, std::vector<int32_t>& out) { encode(word, size, out, nullptr, nullptr); }
    // encode() of each piece text[ends[i - 1]..ends[i]) (the first from 0), in order, appended to out (the batch
    // and single-text hot loop). Two phases per block of up to BLOCK pieces (gigatoken's probe loop): (1) each short
    // piece's key and hash, and a prefetch of its slot in the pieces table (a warm lookup misses the L2 cache
    // about once per piece: the block's misses overlap instead of queueing); (2) each piece looked up, and on a hit
    // with at most 4 ids (the common case) all 4 id words stored at once at the end of out, which advances by their
    // count: no loop and no call per piece. A 1-byte piece is its byte's id (unless whole words exist: a byte may
    // be one). Misses, > 4 ids and long pieces take encode()'s way; the ids are encode()'s in every case (a 2-byte
    // piece is cached here, where encode() asks the pair table: the same ids).
    void encode_pieces(const char* text, const size_t* ends, size_t n, std::vector<int32_t>& out,
                       SharedWordCache* shared, EntryArena* arena) {
        if (shared == nullptr && !own_pieces.ready() && tables->image && cache.capacity() != 0)
            own_pieces.reset(tables->image);
        const PieceCache* pieces = shared != nullptr ? &shared->pieces : &own_pieces;
        if (!pieces->ready() || cache.capacity() == 0) {
            size_t start = 0;
            for (size_t i = 0; i < n; ++i) {
                encode(text + start, ends[i] - start, out, shared, arena);
                start = ends[i];
            }
            return;
        }
        // Pieces of `shortest`..15 bytes are looked up. 1 when the table holds every single byte (every image but
        // one whose byte ids do not fit a slot, see build_piece_image) or with whole words (a byte may be one):
        // then every short piece takes one path, with no branch on its length: English alternates 1-byte pieces
        // (punctuation, spaces) and longer ones at random, and the branch on it was mispredicted about once in
        // three pieces (cachegrind: 0.67 mispredictions a piece in phases 1 and 2, where gigatoken has 0.12; ~25 %
        // of a long English text's time). Else 2, and a 1-byte piece is its byte's id.
        const size_t shortest = !tables->whole.empty() || pieces->image()->bytes_keyed ? 1 : 2;
        // Per piece of a block: k1s 0: the slow way (empty, or over 15 bytes; hashes: a long piece's hash_bytes
        // for the word cache, or 0); 1: a byte's id, in k0s; else the key (k0s, k1s: a key's k1 holds its length
        // >= 1 in the top byte) and its hash.
        uint64_t k0s[BLOCK], k1s[BLOCK], hashes[BLOCK];
        int32_t buf[4 * BLOCK];
        // The stats, kept in registers: every piece counts as a hit, and direct ones and those the slow way does
        // not find in the table are taken back (no count on the hot path).
        uint64_t hits = 0, direct = 0;
        // The table's slots and mask in locals: the stores to the key arrays and to buf may alias the table's
        // members as far as the compiler knows, which reloaded both for every piece. Asked again after the slow
        // way, which may grow or wipe the encoder's own table.
        const PieceSlot* slots = pieces->slots();
        uint64_t mask = pieces->mask();
        size_t from = 0;
        const size_t wide_end = n ? ends[n - 1] : 0;  // the text's bytes are text[0..wide_end)
        for (size_t base = 0; base < n; base += BLOCK) {
            const size_t m = std::min(BLOCK, n - base);
            const size_t* block = ends + base;
            // 1. Keys and hashes; slots requested. A block whose pieces all start 16 bytes or more before the
            // text's end (all but the last) loads each key in two 16-byte loads, with no test per piece.
            auto keys = [&](auto wide) {
                for (size_t j = 0; j < m; ++j) {
                    const size_t size = block[j] - from;
                    if (size - shortest <= PIECE_MAX - shortest) {  // shortest <= size <= 15, one compare
                        if (wide || from + 16 <= wide_end) {
                            piece_key_wide(text + from, size, k0s[j], k1s[j]);
                        } else {
                            piece_key(text + from, size, k0s[j], k1s[j]);
                        }
                        hashes[j] = piece_hash(k0s[j], k1s[j]);
                        __builtin_prefetch(&slots[hashes[j] & mask]);
                    } else if (size == 1) {
                        k0s[j] = (uint64_t)(uint32_t)byte_ids[(unsigned char)text[from]];
                        k1s[j] = 1;
                        ++direct;
                    } else {
                        k1s[j] = 0;
                        // A long piece for the word cache (16..MAX_KEY bytes: encode() takes it there, the cache
                        // being on here): its hash now, handed to encode(), and its slot requested, as for the
                        // short ones (Chinese text is mostly long Han runs: one cache miss each fewer). 0: none.
                        hashes[j] = 0;
                        if (size - (PIECE_MAX + 1) <= WordCache::MAX_KEY - (PIECE_MAX + 1)) {
                            hashes[j] = hash_bytes(text + from, size);
                            if (shared != nullptr) {
                                shared->prefetch(hashes[j]);
                            } else {
                                cache.prefetch(hashes[j]);
                            }
                        }
                    }
                    from = block[j];
                }
            };
            if (block[m - 1] + 16 <= wide_end) {  // (the last piece starts before block[m - 1])
                keys(std::true_type());
            } else {
                keys(std::false_type());
            }
            // 2. Look up and store into buf (4 id words per hit, then out in one copy per block: out is a
            // std::vector, and making room in it first costs a zero-fill per text).
            size_t at = 0;
            hits += m;
            for (size_t j = 0; j < m; ++j) {
                const uint64_t k1 = k1s[j];
                const PieceSlot* slot = nullptr;
                if (k1 > 1) {
                    uint64_t tagged = 0;  // (left 0 by a miss: no count)
                    slot = PieceCache::find_in(slots, mask, k0s[j], k1, hashes[j], tagged);
                    const uint64_t count = piece_tag(tagged);
                    if (count - 1 < 4) {
                        // 1..4 ids: the slot's v0, v1 copied as they are (16 bytes, the ids in order on a
                        // little-endian machine), the cursor advanced by their count. (They were packed with the
                        // count, and took five operations a piece to unpack.)
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                        std::memcpy(buf + at, &slot->v0, 16);
#else
                        buf[at] = (int32_t)(uint32_t)slot->v0;
                        buf[at + 1] = (int32_t)(slot->v0 >> 32);
                        buf[at + 2] = (int32_t)(uint32_t)slot->v1;
                        buf[at + 3] = (int32_t)(slot->v1 >> 32);
#endif
                        at += count;
                        continue;
                    }
                } else if (k1 == 1) {
                    buf[at++] = (int32_t)k0s[j];
                    continue;
                }
                out.insert(out.end(), buf, buf + at);  // the slow way appends to out
                at = 0;
                const size_t begin = base + j == 0 ? 0 : block[j - 1];  // (block[-1] is the previous block's end)
                const char* word = text + begin;
                const size_t size = block[j] - begin;
                if (slot != nullptr) {
                    unpack_piece_ids(slot->k1, slot->v0, slot->v1, out);
                } else if (k1 > 1) {
                    --hits;
                    encode_miss(word, size, k0s[j], k1, hashes[j], out, shared, arena);
                } else {
                    --hits;
                    encode(word, size, out, shared, arena, hashes[j]);  // (a long piece's hash from phase 1, or 0)
                }
                slots = pieces->slots();
                mask = pieces->mask();
            }
            out.insert(out.end(), buf, buf + at);
        }
        stat_hits += hits - direct;
        stat_uncached += direct;
    }
    size_t cache_capacity() const { return cache.capacity(); }
    // What the memo caches did, for measuring (hf_bpe.core._core.WordEncoder._cache_stats): pieces answered by a
    // cache, pieces merged after a miss, pieces that never reach a cache (<= 2 bytes, whole words, too long).
    uint64_t stat_hits = 0, stat_misses = 0, stat_uncached = 0;
    uint64_t long_steps = 0;  // the long-piece encoder's tries (long_piece.hpp), for the linearity tests
    // Encode pieces of at least `bytes` bytes with the long-piece encoder when the merges allow it (tests set it
    // low to hold it against the other paths; SIZE_MAX: never). Set before encoding on threads.
    void set_long_min(size_t bytes) {
        tables->long_min = bytes;
        tables->long_build_after = 0;
    }
    bool long_usable() {
        long_build();
        return tables->long_piece.usable;
    }
    uint64_t wipes() const { return cache.wipes() + piece_wipes; }
    uint64_t piece_wipes = 0;

    // Build the image every pieces table starts from (piece_cache.hpp): empty, or, if `seeded`, holding every
    // spelling of <= 15 bytes the merges build from the byte ids and every whole word of <= 15 bytes, each with
    // what encode() gives for it. Call after the merges, whole words and cache size are set, before encoding on
    // threads (it replaces the tables' image; copies made before still see it).
    void build_piece_image(bool seeded) {
        tables->ends_decide = spelled_lengths_consistent();
        tables->scan_merges = tables->ends_decide || unique_makers();  // scan_is_exact()
        if (tables->scan_merges && !tables->scan_tables_built) build_scan_tables();  // once: the merges never change
        auto image = std::make_shared<PieceImage>();
        std::vector<std::string> keys;
        const size_t shortest = tables->whole.empty() ? 3 : 1;  // shorter spellings are not seeded
        // Every single byte, seeded or not (encode_pieces asks the table for 1-byte pieces too, see there); not
        // counted as seeded pieces.
        bool all_bytes = false;
        if (cache.capacity() > 0) {
            all_bytes = true;
            for (int b = 0; b < 256; ++b) keys.emplace_back(1, (char)b);
        }
        if (seeded && cache.capacity() > 0) {
            std::unordered_map<int32_t, std::string> spelled;  // first spelling found wins: any would do
            for (int b = 0; b < 256; ++b) spelled.emplace(byte_ids[b], std::string(1, (char)b));
            for (const Merge& m : tables->merges) {
                auto left = spelled.find((int32_t)m.left), right = spelled.find((int32_t)m.right);
                if (left == spelled.end() || right == spelled.end()) continue;  // unreachable from bytes
                if (left->second.size() + right->second.size() > PIECE_MAX) continue;
                std::string both = left->second + right->second;
                spelled.emplace(m.new_id, std::move(both));
            }
            for (auto& entry : spelled) {
                if (entry.second.size() >= shortest) keys.push_back(entry.second);
            }
            tables->whole.each([&](std::string_view word) {
                if (!word.empty() && word.size() <= PIECE_MAX) keys.emplace_back(word);
            });
        }
        image->limit = cache.capacity();
        size_t size = 16;
        while (size * 3 < (keys.size() + image->limit + 1) * 4) size <<= 1;
        if (!keys.empty()) image->slots.assign(size, PieceSlot{0, 0, 0, 0});
        image->mask = size - 1;
        std::vector<int32_t> ids;
        for (const std::string& key : keys) {
            ids.clear();
            encode_uncached(key.data(), key.size(), ids);
            PieceSlot slot;
            piece_key(key.data(), key.size(), slot.k0, slot.k1);
            if (!pack_piece_ids(ids.data(), ids.size(), image->spill, slot.k1, slot.v0, slot.v1)) {
                if (key.size() == 1) all_bytes = false;  // (a missing byte's placeholder id: too large to pack)
                continue;
            }
            if (insert_piece_unshared(image->slots, image->mask, slot)) {
                ++image->seeded;
                if (&key - keys.data() < 256) ++image->bytes;  // (the bytes come first)
            }
        }
        image->bytes_keyed = all_bytes;
        tables->image = image;
    }
    size_t seeded_pieces() const { return tables->image ? tables->image->seeded - tables->image->bytes : 0; }
    bool scan_merges() const { return tables->scan_merges; }  // merge_by_scan in use (set with the image)
    // Have `shared` (a batch's table) start from this encoder's image.
    void share_pieces(SharedWordCache& shared) const { shared.use_pieces(tables->image); }
    // encode() with `shared` (when not null) as the memo cache instead of this encoder's own, the words it merges
    // published there with entries in `arena` (this thread's): how the threads of a batch share their work.
    // `long_hash`: the word's hash_bytes() when the caller computed it ahead (encode_pieces, for a piece the word
    // cache takes), else 0.
    void encode(const char* word, size_t size, std::vector<int32_t>& out, SharedWordCache* shared,
                EntryArena* arena, uint64_t long_hash = 0) {
        const auto& whole = tables->whole;
        if (size <= PIECE_MAX && size >= (whole.empty() ? 3 : 1) && cache.capacity() != 0) {
            // Short pieces: the inline table first. A whole word is looked up on a miss only: a hit holds what
            // encode_uncached gives, whole words included.
            PieceCache* pieces = shared != nullptr ? &shared->pieces : &own_pieces;
            if (shared == nullptr && !own_pieces.ready() && tables->image) own_pieces.reset(tables->image);
            if (pieces->ready()) {
                uint64_t k0, k1;
                piece_key(word, size, k0, k1);
                const uint64_t hash = piece_hash(k0, k1);
                if (pieces->get(k0, k1, hash, out)) {
                    ++stat_hits;
                    return;
                }
                encode_miss(word, size, k0, k1, hash, out, shared, arena);
                return;
            }
        }
        const unsigned char* bytes = (const unsigned char*)word;
        if (!whole.empty()) {
            // With whole words (ignore_merges), a piece over 15 bytes asks the word cache first, the whole words on
            // a miss only (encode_uncached): a hit holds what encode_uncached gives, whole words included. Looked
            // up first, the whole words cost a probe of a 128K-word table (a cache miss or more) per long piece:
            // Llama 3 on Chinese, where most pieces are long Han runs, encoded at half o200k's rate (issue 23).
            if (size > 2 && size <= WordCache::MAX_KEY && cache.capacity() != 0) {
                const uint64_t hash = long_hash != 0 ? long_hash : hash_bytes(word, size);
                encode_cached(word, size, hash, out, shared, arena, true);
                return;
            }
            if (const int32_t* id = whole.find(word, size)) {
                ++stat_uncached;
                out.push_back(*id);
                return;
            }
        }
        // Small-word fast paths (same result as merge_all: at most one pair).
        if (size <= 2) ++stat_uncached;
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
            ++stat_uncached;
            merge_word(bytes, size, out);
            return;
        }
        encode_cached(word, size, long_hash != 0 ? long_hash : hash_bytes(word, size), out, shared, arena, false);
    }

private:
    // A piece of 3..MAX_KEY bytes through the word cache (`shared`'s, or the encoder's own): its cached ids, or on a
    // miss what encode_uncached gives (`whole`: whole words asked first) or merging gives, appended and published.
    // `hash`: hash_bytes(word, size).
    void encode_cached(const char* word, size_t size, uint64_t hash, std::vector<int32_t>& out,
                       SharedWordCache* shared, EntryArena* arena, bool whole) {
        if (shared != nullptr ? shared->get(word, size, hash, out) : cache.get(word, size, hash, out)) {
            ++stat_hits;
            return;
        }
        ++stat_misses;
        const size_t start = out.size();
        if (whole) {
            encode_uncached(word, size, out);
        } else {
            merge_word((const unsigned char*)word, size, out);
        }
        if (shared != nullptr) {
            shared->put(word, size, hash, out.data() + start, out.size() - start, *arena);
        } else {
            cache.put(word, size, hash, out.data() + start, out.size() - start);
        }
    }
    // encode_pieces' pieces per phase: 5 KB of keys and ids on the stack, and the block's prefetched slot lines
    // (8 KB) still in the L1 cache when phase 2 reads them: 256 (16 KB of lines) was 5 % slower on 10 MB of ASCII
    // English, GPT-2, one thread (14.1 against 13.3 ms); 96 and 128 measured alike, 64 and 160 slower.
    static constexpr size_t BLOCK = 128;
    // A piece of <= 15 bytes (key k0, k1, hash) the pieces table does not hold: its ids appended to out and
    // published in the table (`shared`'s, spilled ids in *arena, or the encoder's own, grown or wiped when full).
    void encode_miss(const char* word, size_t size, uint64_t k0, uint64_t k1, uint64_t hash,
                     std::vector<int32_t>& out, SharedWordCache* shared, EntryArena* arena) {
        ++stat_misses;
        const size_t start = out.size();
        encode_uncached(word, size, out);
        if (shared != nullptr) {
            shared->pieces.put(k0, k1, hash, out.data() + start, out.size() - start, *arena);
        } else if (!own_pieces.put(k0, k1, hash, out.data() + start, out.size() - start, own_arena)) {
            if (!own_pieces.grow()) {  // full at its budget: back to the image, then add this one
                own_pieces.reset();
                own_arena = EntryArena();
                ++piece_wipes;
            }
            own_pieces.put(k0, k1, hash, out.data() + start, out.size() - start, own_arena);
        }
    }
    // Whether merge_by_scan (merge_scan.hpp) gives merge_all's result for every word. merge_all pops its queued entries
    // (rank, pos, new id) in (rank, pos) order and executes one iff the pair now at pos makes that new id; the scan
    // merges the lowest (rank, pos) of the current pairs. They agree when an executed entry is always the current pair
    // it was queued for (every current pair has its entry queued, so the first one executed is then the scan's choice).
    // Two sufficient conditions, either one:
    // (a) lengths (spelled_lengths_consistent): every id a word can hold has one byte length, each pair that can
    //     fire making an id as long as its two inputs together (true of every real vocabulary: a merge spells its
    //     token; Llama 3's 280K merges make 90K tokens from several pairs each). Since an entry was queued, the
    //     symbol at pos and its right neighbour only grew (or pos was absorbed: skipped), so a changed pair spans
    //     more bytes and makes a longer id, never the queued one.
    // (b) unique makers (unique_makers): each pair's new id is made by no other pair and is neither of its inputs;
    //     then a pair making the queued id is the queued pair.
    // Otherwise (arbitrary merges) a stale entry can merge a grown pair at an older rank, and only merge_all
    // reproduces that.
    bool scan_is_exact() const { return spelled_lengths_consistent() || unique_makers(); }
    // Condition (a): lengths propagated from the bytes (1) through the merges that can fire (the pair's last rank,
    // both inputs reachable from bytes), in rank order, again while a pass adds lengths (a merge whose inputs are
    // made by later merges); a merge whose new id already has another length fails it. O(merges x passes), no
    // allocation per merge; ids too sparse for a dense table answer false (merge_all then: exact anyway).
    bool spelled_lengths_consistent() const {
        // A byte id above every merge's ids (a missing byte's placeholder) is in no pair: it never merges.
        int64_t largest = 0;
        for (const Merge& m : tables->merges) {
            largest = std::max<int64_t>(largest, std::max<int64_t>(m.new_id, std::max(m.left, m.right)));
        }
        if (largest >= (int64_t)(8 * (tables->merges.size() + 256) + 65536)) return false;
        std::vector<uint32_t> length((size_t)largest + 1, 0);  // 0: not reachable from bytes (yet)
        for (int b = 0; b < 256; ++b) {
            if (byte_ids[b] <= largest) length[(size_t)byte_ids[b]] = 1;
        }
        // Live: the merge the pair table holds for its pair (an earlier rank of a repeated pair never fires):
        // every merge but those add_merge saw overridden, with no pass over the table (a lookup per merge, 280,000
        // random probes of Llama 3's 8 MB table, was most of this function's ~10 ms; a pass over its slots 1-2 ms).
        if (!tables->ranks_indexed) return false;  // ranks that are not merge indexes: not worth proving
        std::vector<char> live(tables->merges.size(), 1);
        for (const int32_t rank : tables->overridden) live[(size_t)rank] = 0;
        // Passes over the live merges whose inputs have no length yet, in rank order (each pass only over those
        // the last one left: Llama 3's shuffled ranks take several).
        std::vector<uint32_t> pending, left_over;
        for (size_t i = 0; i < live.size(); ++i) {
            if (live[i]) pending.push_back((uint32_t)i);
        }
        for (int pass = 0; pass < 64; ++pass) {
            bool added = false;
            left_over.clear();
            for (const uint32_t i : pending) {
                const Merge& m = tables->merges[i];
                const uint32_t left = length[m.left], right = length[m.right];
                if (left == 0 || right == 0) {
                    left_over.push_back(i);
                    continue;
                }
                const uint32_t both = left + right;
                uint32_t& made = length[(size_t)m.new_id];
                if (made == 0) {
                    made = both;
                    added = true;
                } else if (made != both) {
                    return false;
                }
            }
            if (!added) return true;  // the merges left never fire: an input is not reachable from bytes
            pending.swap(left_over);
        }
        return false;  // deeper than 64 passes (merges far out of rank order): not worth proving
    }
    // Condition (b).
    bool unique_makers() const {
        std::vector<int32_t> made;
        made.reserve(tables->ranks.used);
        for (const auto& slot : tables->ranks.slots) {
            if (slot.key == PairMap<RankValue>::EMPTY) continue;
            const int32_t id = slot.val.new_id;
            if ((uint64_t)(uint32_t)id == (slot.key >> 32) || (uint64_t)(uint32_t)id == (slot.key & 0xFFFFFFFFu))
                return false;
            made.push_back(id);
        }
        std::sort(made.begin(), made.end());
        return std::adjacent_find(made.begin(), made.end()) == made.end();
    }
    // merge_by_scan's tables: ids_ranked, and the grid of the keys it reads, written from the merges in rank
    // order so that a repeated pair's last merge wins, as in the pair table (a rank is its merge's index: a grid
    // key that is a rank names its merge). One pass over the merges (12 bytes each), none over the pair table
    // (16 bytes a slot, at most 3/4 full). O(merges).
    void build_scan_tables() {
        Tables& t = *tables;
        if (!t.ranks_indexed) {
            t.scan_merges = false;  // (never: both callers pass the merge's index)
            return;
        }
        const bool rising = new_ids_rise(t.merges);
        t.ids_ranked = rising;
        t.scan_tables_built = true;
        t.grid.build(t.merges, [rising](size_t rank, int32_t new_id) { return rising ? new_id : (int32_t)rank; });
    }
    // What encode() gives, without any cache.
    void encode_uncached(const char* word, size_t size, std::vector<int32_t>& out) {
        const unsigned char* bytes = (const unsigned char*)word;
        const auto& whole = tables->whole;
        if (!whole.empty()) {
            if (const int32_t* id = whole.find(word, size)) {
                out.push_back(*id);
                return;
            }
        }
        if (size <= 1) {
            if (size == 1) out.push_back(byte_ids[bytes[0]]);
            return;
        }
        merge_word(bytes, size, out);
    }
    void merge_word(const unsigned char* bytes, size_t size, std::vector<int32_t>& out) {
        if (size >= tables->long_min && long_ready(size) &&
            tables->long_piece.encode(bytes, size, tables->ranks, out, long_dead, long_stack, long_memo,
                                      long_steps))
            return;
        if (size <= SCAN_MAX && tables->scan_merges) {
            const Tables& t = *tables;
            merge_by_scan(t.ids_ranked, t.ranks, t.grid, t.merges.data(), byte_ids, bytes, size, out);
        } else {
            merge_all(bytes, size, out);
        }
    }
    // merge_all's symbol at its first byte's position: its id (-1 once absorbed), the previous symbol's position
    // (-1 for the first) and the next one's (n for the last, so that a symbol's end is its `next`).
    struct Symbol {
        int32_t c, prev, next;
    };
    // A heap entry: key = rank << 32 | position (the lowest on top: tokenizers' order), the id it makes and the end
    // of the pair when it was pushed (see merge_all for why that end decides whether it is still current).
    struct Item {
        uint64_t key;
        int32_t new_id, end;
    };
    struct Tables {
        PairMap<RankValue> ranks;
        WholeWords whole;  // whole words (ignore_merges)
        std::vector<Merge> merges;                // in rank order: the image's spellings are built from them
        std::shared_ptr<const PieceImage> image;  // what pieces tables start from (none until built)
        // merge_by_scan's pair keys: ranks, or new ids when they rise with the ranks (ids_ranked); the grid's keys
        // for small ids. Set with the image (build_scan_tables).
        RankGrid grid;
        bool ids_ranked = false;
        bool scan_tables_built = false;
        bool ranks_indexed = true;         // every add_merge's rank was its merge's index
        std::vector<int32_t> overridden;  // ranks whose pair a later merge took (a repeated pair: the last wins)
        bool scan_merges = false;                 // merge_by_scan is exact (scan_is_exact), set with the image
        bool ends_decide = false;                 // spelled_lengths_consistent, set with the image (merge_all)
        // Pieces of at least long_min bytes are encoded by long_piece (linear time), built at the first such
        // piece, when the merges allow it (long_piece.hpp: (M), (S)); else by merge_all.
        LongPiece long_piece;
        std::once_flag long_once;
        std::atomic<bool> long_built{false};
        size_t long_min = SCAN_MAX + 1;
        size_t long_build_after = 256 * 1024;
    };
    std::shared_ptr<Tables> tables = std::make_shared<Tables>();
    WordCache cache;  // pieces over 15 bytes (and all when no image was built)
    PieceCache own_pieces;
    EntryArena own_arena;  // own_pieces' spilled ids
    std::vector<Symbol> symbols;
    MergeQueue<Item> heap;
    std::vector<uint8_t> long_dead;  // long_piece's scratch
    std::vector<int32_t> long_stack;
    std::vector<uint64_t> long_memo;

    uint64_t long_heap_bytes = 0;  // bytes of long pieces merged by the heap before the long-piece tables exist
    // Whether long_piece encodes a piece of `size` bytes. Its tables are built once the long pieces merged by
    // this encoder reach long_build_after bytes (0.1-0.5 s for o200k's 200K tokens: paid only by a process that
    // has already spent about as much merging long pieces by the heap, ~1 us a byte).
    bool long_ready(size_t size) {
        Tables& t = *tables;
        if (!t.long_built.load(std::memory_order_acquire)) {
            if (long_heap_bytes + size < t.long_build_after) {
                long_heap_bytes += size;
                return false;
            }
            long_build();
        }
        return t.long_piece.usable;
    }
    void long_build() {
        Tables& t = *tables;
        std::call_once(t.long_once, [&t, this] {
            t.long_piece.build(t.merges, t.ranks, byte_ids);
            t.long_built.store(true, std::memory_order_release);
        });
    }

    // O(n log n) for a word of n bytes: each merge pops one entry and pushes at most two, in tokenizers' order
    // (lowest rank, then leftmost; merge_queue.hpp: a radix queue, sequential accesses), with lazy deletion.
    // An entry pushed for the pair (L, R) at position p is executed iff the pair now at p makes the entry's id
    // (tokenizers' test). With lengths consistent (scan_is_exact (a): ends_decide), that is iff the symbol at p is
    // alive, has a next symbol, and that pair still ends where (L, R) ended. Proof: symbols only grow (a merge
    // joins a symbol with the one after it), and a symbol's id changes only when its span does. If the span of p's
    // symbol is still L's, its next symbol starts where R started; that symbol ends where R ended iff its span (so
    // its id) is R's: the pair is (L, R). If p's symbol grew, it absorbed R, so the pair at p now ends after R's
    // end. Hence "same end" is "same pair", and tokenizers' test is the same test: the same pair makes the same id,
    // and a pair with another end spells more bytes, so (a) another id. Without (a), the same end still passes
    // (same pair), and another end asks the merge table, as tokenizers does. The test reads two symbols the merge
    // touches anyway, where a lookup in the merge table (megabytes: a cache miss) used to be.
    // Entries with equal keys (the same rank, so the same pair and new id, at the same position) may leave the
    // queue in any order: whichever comes first, the test above decides on the current pair and that id alone.
    static uint64_t rank_key(int32_t rank) { return (uint64_t)((uint32_t)rank ^ 0x80000000u) << 32; }  // signed order
    void merge_all(const unsigned char* bytes, size_t size, std::vector<int32_t>& out) {
        const int32_t n = (int32_t)size;
        const PairMap<RankValue>& map = tables->ranks;
        symbols.resize(size);
        heap.clear();
        for (int32_t i = 0; i < n; ++i) symbols[i] = Symbol{byte_ids[bytes[i]], i - 1, i + 1};
        constexpr int32_t AHEAD = 8;  // the pair table's slots asked for this many pairs before they are read
        for (int32_t i = 0; i + 1 < n && i < AHEAD; ++i) map.prefetch(pair_key(symbols[i].c, symbols[i + 1].c));
        for (int32_t i = 0; i + 1 < n; ++i) {
            if (i + AHEAD + 1 < n) map.prefetch(pair_key(symbols[i + AHEAD].c, symbols[i + AHEAD + 1].c));
            const RankValue* found = map.find(pair_key(symbols[i].c, symbols[i + 1].c));
            if (found) heap.push(Item{rank_key(found->rank) | (uint32_t)i, found->new_id, i + 2});
        }
        while (!heap.empty()) {
            const Item top = heap.pop();
            const int32_t pos = (int32_t)(uint32_t)top.key;
            Symbol& current = symbols[pos];
            if (current.c < 0 || current.next >= n) continue;  // absorbed, or last symbol
            const int32_t right = current.next;
            const int32_t after = symbols[right].next;
            if (after != top.end) {  // not the pair it was pushed for (see above)
                if (tables->ends_decide) continue;
                const RankValue* found = map.find(pair_key(current.c, symbols[right].c));
                if (!found || found->new_id != top.new_id) continue;  // tokenizers' test
            }
            const int32_t before = current.prev;
            if (before >= 0) map.prefetch(pair_key(symbols[before].c, top.new_id));
            if (after < n) map.prefetch(pair_key(top.new_id, symbols[after].c));
            current.c = top.new_id;
            current.next = after;
            symbols[right].c = -1;
            if (after < n) symbols[after].prev = pos;
            if (before >= 0) {
                const RankValue* found = map.find(pair_key(symbols[before].c, current.c));
                if (found) heap.push(Item{rank_key(found->rank) | (uint32_t)before, found->new_id, after});
            }
            if (after < n) {
                const RankValue* found = map.find(pair_key(current.c, symbols[after].c));
                if (found) heap.push(Item{rank_key(found->rank) | (uint32_t)pos, found->new_id,
                                     symbols[after].next});
            }
        }
        for (int32_t i = 0; i < n; i = symbols[i].next) out.push_back(symbols[i].c);
    }
};

}  // namespace hfbpe
