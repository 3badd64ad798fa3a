// Unigram's seed step (sentencepiece 0.2.3's MakeSeedSentencePiecesFromCorpus), compiled: each chunk's suffix array
// (induced sorting, O(n), 5 bytes per byte) and its neighbours' LCPs (capped, computed as the walk needs them) are
// walked as an LCP-interval tree; the byte strings that pass sentencepiece's checks add their counts into one
// table, which keeps the best 8 * keep entries when it grows past 16 * keep, and gives the best `keep` at the end. The spec is
// hf_bpe/training/unigram/seed.py (the suffix and LCP arrays are unique, so any correct construction gives libsais's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sp_piece_check.hpp"

namespace hfbpe_unigram {

// Hands memory freed to malloc back to the system (glibc keeps it, even past the mmap threshold, which it raises as
// large blocks are freed).
inline void release_free_memory() {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

using hfbpe_sp::CharInfo;
using hfbpe_sp::Options;

// The suffix array of s[0..n) by induced sorting (SA-IS: Nong, Zhang and Chan 2009), with a virtual sentinel after
// s[n - 1] smaller than every symbol (a shorter suffix before the longer ones it begins): O(n) time; the suffix
// array itself (4 bytes per symbol), one type bit per symbol and K bucket counters per level, the reduced problem
// (at most n / 2 names) solved recursively inside the suffix array's own space.
template <class T>
void sais(const T* s, int32_t* sa, int32_t n, int32_t alphabet) {
    if (n <= 0) return;
    if (n == 1) {
        sa[0] = 0;
        return;
    }
    // 1. Types: S (1) when the suffix is smaller than the next one; the last symbol is L (the sentinel is smaller).
    // One bit a symbol (a byte each was an eighth of the top level's memory peak, suffix array included).
    std::vector<uint64_t> types(((size_t)n + 63) / 64, 0);
    auto stype = [&](int32_t i) -> bool { return types[(size_t)i >> 6] >> (i & 63) & 1; };
    for (int32_t i = n - 2, next = 0; i >= 0; --i) {
        next = s[i] < s[i + 1] || (s[i] == s[i + 1] && next);
        types[(size_t)i >> 6] |= (uint64_t)next << (i & 63);
    }
    auto lms = [&](int32_t i) { return i > 0 && stype(i) && !stype(i - 1); };
    // The symbols' counts, kept for a small alphabet; a large one (the reduced problem's names: millions) is
    // counted again into the buckets each time instead (a sequential pass), which saves 4 bytes a name.
    const bool keep_counts = alphabet <= 65536;
    std::vector<int32_t> counts(keep_counts ? alphabet : 0, 0), bucket(alphabet);
    auto count = [&](std::vector<int32_t>& into) {
        std::fill(into.begin(), into.end(), 0);
        for (int32_t i = 0; i < n; ++i) ++into[s[i]];
    };
    if (keep_counts) count(counts);
    auto starts = [&]() {
        if (!keep_counts) count(bucket);
        for (int32_t c = 0, sum = 0; c < alphabet; ++c) {
            const int32_t k = keep_counts ? counts[c] : bucket[c];
            bucket[c] = sum;
            sum += k;
        }
    };
    auto ends = [&]() {
        if (!keep_counts) count(bucket);
        for (int32_t c = 0, sum = 0; c < alphabet; ++c) {
            sum += keep_counts ? counts[c] : bucket[c];
            bucket[c] = sum;
        }
    };
    // The symbol and type before the suffix kAhead places on in sa, fetched ahead of their (random) reads: sa's
    // entry there may still change, then the fetch is only wasted (about a fifth less time on English).
    constexpr int32_t kAhead = 24;
    auto prefetch = [&](int32_t at) {
        if (at >= 0 && at < n && sa[at] > 0) {
            __builtin_prefetch(&s[sa[at] - 1]);
            __builtin_prefetch(&types[(size_t)(sa[at] - 1) >> 6]);
        }
    };
    // L-type suffixes from the sorted ones before them (the last suffix first: it follows the sentinel), then
    // S-type ones from the end.
    auto induce = [&]() {
        starts();
        sa[bucket[s[n - 1]]++] = n - 1;
        for (int32_t i = 0; i < n; ++i) {
            prefetch(i + kAhead);
            const int32_t j = sa[i] - 1;
            if (sa[i] > 0 && !stype(j)) sa[bucket[s[j]]++] = j;
        }
        ends();
        for (int32_t i = n - 1; i >= 0; --i) {
            prefetch(i - kAhead);
            const int32_t j = sa[i] - 1;
            if (sa[i] > 0 && stype(j)) sa[--bucket[s[j]]] = j;
        }
    };
    // 2. The LMS substrings sorted by one induction from the LMS suffixes at their buckets' ends.
    std::fill(sa, sa + n, -1);
    ends();
    for (int32_t i = 1; i < n; ++i)
        if (lms(i)) sa[--bucket[s[i]]] = i;
    induce();
    int32_t n1 = 0;
    for (int32_t i = 0; i < n; ++i)
        if (lms(sa[i])) sa[n1++] = sa[i];
    // 3. Names: equal LMS substrings (symbols and types up to the next LMS position) share one; a substring that
    // reaches the sentinel equals no other. name[pos / 2] lives in sa[n1..) (LMS positions are 2 apart at least).
    std::fill(sa + n1, sa + n, -1);
    int32_t names = 0, previous = -1;
    for (int32_t i = 0; i < n1; ++i) {
        const int32_t pos = sa[i];
        bool differ = previous < 0;
        for (int32_t d = 0; !differ; ++d) {
            if (pos + d == n || previous + d == n || s[pos + d] != s[previous + d] ||
                stype(pos + d) != stype(previous + d)) {
                differ = true;
            } else if (d > 0 && (lms(pos + d) || lms(previous + d))) {
                break;
            }
        }
        if (differ) {
            ++names;
            previous = pos;
        }
        sa[n1 + pos / 2] = names - 1;
    }
    for (int32_t i = n - 1, j = n - 1; i >= n1; --i)
        if (sa[i] >= 0) sa[j--] = sa[i];
    // 4. The reduced string (names in text order, at sa's end) sorted into sa[0..n1), recursively if names repeat.
    int32_t* s1 = sa + n - n1;
    if (names < n1) {
        sais<int32_t>(s1, sa, n1, names);
    } else {
        for (int32_t i = 0; i < n1; ++i) sa[s1[i]] = i;
    }
    // 5. The LMS suffixes in their order at their buckets' ends, then the final induction.
    for (int32_t i = 1, j = 0; i < n; ++i)
        if (lms(i)) s1[j++] = i;
    for (int32_t i = 0; i < n1; ++i) sa[i] = s1[sa[i]];
    std::fill(sa + n1, sa + n, -1);
    ends();
    for (int32_t i = n1 - 1; i >= 0; --i) {
        const int32_t j = sa[i];
        sa[i] = -1;
        sa[--bucket[s[j]]] = j;
    }
    induce();
}

// Runs body(part) for part = 0..parts-1, part 0 on this thread and the others on their own; rethrows the first
// exception.
template <class F>
void run_parts(int parts, F&& body) {
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(parts);
    for (int part = 1; part < parts; ++part) {
        pool.emplace_back([&, part]() {
            try {
                body(part);
            } catch (...) {
                errors[part] = std::current_exception();
            }
        });
    }
    try {
        body(0);
    } catch (...) {
        errors[0] = std::current_exception();
    }
    for (auto& t : pool) t.join();
    for (auto& error : errors)
        if (error) std::rethrow_exception(error);
}

// The longest common prefix of the suffixes x and y of s[0..n), at most cap: compared directly, 8 bytes at a time
// (cap is ~40 bytes on English with the defaults). The walk asks for the LCPs of sa's neighbours in sa's order, so
// no LCP array is kept (Kasai's O(n) one needs it and the inverse suffix array, 6 bytes per byte more, and three
// random reads a step where this has one: the new suffix, which the walk then reads again).
inline int32_t common_prefix(const uint8_t* s, int32_t n, int32_t x, int32_t y, int32_t cap) {
    const int32_t limit = std::min<int32_t>(cap, n - std::max(x, y));
    int32_t h = 0;
    while (h + 8 <= limit) {
        uint64_t u, v;
        std::memcpy(&u, s + x + h, 8);
        std::memcpy(&v, s + y + h, 8);
        if (u != v) return h + (__builtin_ctzll(u ^ v) >> 3);  // little-endian: the first differing byte
        h += 8;
    }
    while (h < limit && s[x + h] == s[y + h]) ++h;
    return h;
}

// The most bytes that m consecutive characters of s[0..n) take (all of s when it has fewer), or INT64_MAX when s
// starts with a NUL or holds two in a row (an empty sentence: a kept string could then end in several NULs).
// O(n) time, m + 1 int32.
inline int64_t widest_window(const uint8_t* s, int32_t n, int64_t m) {
    std::vector<int32_t> ring((size_t)m + 1, 0);  // the starts of the last m + 1 characters
    int64_t chars = 0, widest = 0;
    for (int32_t i = 0; i <= n; ++i) {
        if (i < n) {
            if (s[i] == 0 && (i == 0 || s[i - 1] == 0)) return INT64_MAX;
            if ((s[i] & 0xC0) == 0x80) continue;
        }
        // i starts character number `chars` (or is the end): characters chars - m .. chars - 1 span
        // [start(chars - m), i); fewer than m so far span [0, i).
        widest = std::max<int64_t>(widest, chars >= m ? i - ring[(size_t)((chars - m) % (m + 1))] : i);
        ring[(size_t)(chars % (m + 1))] = i;
        ++chars;
    }
    return widest;
}

// The seed step's table: byte strings with 64-bit counts, by open addressing over a dense array of entries (24
// bytes each, plus 4 bytes a slot at most half full), a key's bytes referred to in place in the chunk being walked
// and copied into one arena (own()) before the chunk goes. A std::unordered_map<std::string, uint64_t> spends about
// 100 bytes an entry (node, std::string, heap block for more than 15 bytes): Chinese text has hundreds of thousands
// of entries, counted while the chunk's suffix array (4 bytes a byte) is alive, the seed step's memory peak.
class StringCounts {
  public:
    struct Entry {
        uint64_t count;
        uint64_t ref;  // kInChunk | offset in the chunk, or offset in the arena
        uint32_t hash;
        uint16_t length;
    };
    static constexpr uint64_t kInChunk = (uint64_t)1 << 63;

    size_t size() const { return entries_.size(); }
    const Entry& entry(size_t i) const { return entries_[i]; }
    const uint8_t* bytes(const Entry& e, const uint8_t* chunk) const {
        return (e.ref & kInChunk) ? chunk + (e.ref & ~kInChunk)
                                  : reinterpret_cast<const uint8_t*>(arena_.data()) + e.ref;
    }

    // Adds `freq` to the count of chunk[offset .. offset + length).
    void add(const uint8_t* chunk, size_t offset, uint16_t length, uint64_t freq) {
        const uint8_t* key = chunk + offset;
        const uint32_t hash = hash_of(key, length);
        uint32_t* slot = find(key, length, hash, chunk);
        if (*slot != kEmpty) {
            entries_[*slot].count += freq;
            return;
        }
        *slot = (uint32_t)entries_.size();
        entries_.push_back({freq, kInChunk | offset, hash, length});
        if (2 * entries_.size() > slots_.size()) rehash(slots_.size() * 2);
    }

    // Adds each of `other`'s counts (its keys all in the same chunk) to this table's.
    void merge(const StringCounts& other, const uint8_t* chunk) {
        for (const Entry& e : other.entries_) {
            if (!(e.ref & kInChunk)) throw std::logic_error("merging a table with keys outside the chunk");
            const uint8_t* key = other.bytes(e, chunk);
            uint32_t* slot = find(key, e.length, e.hash, chunk);
            if (*slot != kEmpty) {
                entries_[*slot].count += e.count;
                continue;
            }
            *slot = (uint32_t)entries_.size();
            entries_.push_back({e.count, kInChunk | (uint64_t)(key - chunk), e.hash, e.length});
            if (2 * entries_.size() > slots_.size()) rehash(slots_.size() * 2);
        }
    }

    // Copies the keys still in `chunk` into the arena (before the chunk goes).
    void own(const uint8_t* chunk) {
        for (Entry& e : entries_) {
            if (!(e.ref & kInChunk)) continue;
            const uint8_t* key = chunk + (e.ref & ~kInChunk);
            e.ref = arena_.size();
            arena_.append(reinterpret_cast<const char*>(key), e.length);
        }
    }

    // Keeps the entries whose indices are `kept` (owned keys only), in that order.
    void keep(const std::vector<uint32_t>& kept) {
        std::vector<Entry> entries;
        std::string arena;
        entries.reserve(kept.size());
        for (uint32_t i : kept) {
            Entry e = entries_[i];
            const uint8_t* key = bytes(e, nullptr);
            e.ref = arena.size();
            arena.append(reinterpret_cast<const char*>(key), e.length);
            entries.push_back(e);
        }
        entries_.swap(entries);
        arena_.swap(arena);
        size_t capacity = 16;
        while (capacity < 2 * entries_.size() + 2) capacity *= 2;
        rehash(capacity);
    }

  private:
    static constexpr uint32_t kEmpty = UINT32_MAX;
    std::vector<Entry> entries_;
    std::vector<uint32_t> slots_ = std::vector<uint32_t>(16, kEmpty);
    std::string arena_;

    static uint32_t hash_of(const uint8_t* key, size_t length) {
        uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix
        for (size_t i = 0; i < length; ++i) h = (h ^ key[i]) * 0x100000001b3ull;
        h ^= h >> 29;
        h *= 0xbf58476d1ce4e5b9ull;
        return (uint32_t)(h ^ (h >> 32));
    }
    uint32_t* find(const uint8_t* key, uint16_t length, uint32_t hash, const uint8_t* chunk) {
        const size_t mask = slots_.size() - 1;
        for (size_t at = hash & mask;; at = (at + 1) & mask) {
            const uint32_t i = slots_[at];
            if (i == kEmpty) return &slots_[at];
            const Entry& e = entries_[i];
            if (e.hash == hash && e.length == length && std::memcmp(bytes(e, chunk), key, length) == 0)
                return &slots_[at];
        }
    }
    void rehash(size_t capacity) {
        slots_.assign(capacity, kEmpty);
        const size_t mask = capacity - 1;
        for (size_t i = 0; i < entries_.size(); ++i) {
            size_t at = entries_[i].hash & mask;
            while (slots_[at] != kEmpty) at = (at + 1) & mask;
            slots_[at] = (uint32_t)i;
        }
    }
};

class SeedCounter {
  public:
    SeedCounter(std::unordered_map<uint32_t, CharInfo> info, Options options, size_t keep)
        : info_(std::move(info)), opt_(options), keep_(keep) {}

    // Phases 2-3 for one chunk (sentences, each NUL-terminated), then BoundedPriorityQueue::MaybeGc.
    void add_chunk(const uint8_t* s, size_t size) {
        if (size >= (size_t)INT32_MAX) throw std::length_error("a seed chunk of 2**31 bytes or more");
        const int32_t n = (int32_t)size;
        // No string deeper than 4 * max_piece_length + 1 bytes can be kept (its NUL-trimmed bytes hold too many
        // characters or a NUL), nor deeper than the widest max_piece_length + 1 consecutive characters of the chunk
        // (a kept string is at most that many characters, its one trailing NUL included; English: ~40 bytes).
        // Capping the LCP values there leaves the shallower intervals as they are.
        const int64_t widest = widest_window(s, n, opt_.max_piece_length + 1);
        const int32_t cap = (int32_t)std::min<int64_t>(
            std::min<int64_t>(4 * opt_.max_piece_length + 2, widest == INT64_MAX ? INT64_MAX : widest + 1),
            UINT16_MAX - 1);
        std::vector<int32_t> sa(n);
        sais<uint8_t>(s, sa.data(), n, 256);
        // Its scratch (a type byte a byte, the reduced problem's buckets: ~3 bytes a byte), freed but kept by malloc
        // below the mmap threshold, goes back to the system before the walk's tables grow.
        release_free_memory();
        // The walk, in two halves of sa cut where the LCP is 0 (no interval of depth > 0 spans the cut; the nearest
        // such place to the middle) on two threads, each into its own table; the counts are then added (sums of
        // integers: the order does not matter).
        const int parts = n >= (1 << 16) && std::thread::hardware_concurrency() >= 2 ? 2 : 1;
        auto lcp = [&](int32_t i) { return common_prefix(s, n, sa[i - 1], sa[i], cap); };
        int32_t cut = n;
        if (parts == 2) {
            for (int32_t d = 0; d < n / 2 && cut == n; ++d) {
                if (lcp(n / 2 + d) == 0) cut = n / 2 + d;
                else if (n / 2 - d > 0 && lcp(n / 2 - d) == 0) cut = n / 2 - d;
            }
        }
        // New keys stay in place in the chunk (counts_'s older ones are in its arena) until own() copies them.
        if (cut == n) {
            walk(s, n, sa, cap, 0, n, counts_, chars_);
            std::vector<int32_t>().swap(sa);
        } else {
            StringCounts other;
            std::vector<uint32_t> other_chars;
            run_parts(2, [&](int part) {
                if (part == 0) walk(s, n, sa, cap, 0, cut, counts_, chars_);
                else walk(s, n, sa, cap, cut, n, other, other_chars);
            });
            std::vector<int32_t>().swap(sa);  // before the table grows by the merge
            counts_.merge(other, s);
        }
        counts_.own(s);
        if (counts_.size() > 2 * 8 * keep_) keep_best(8 * keep_);
    }

    // BoundedPriorityQueue::Get: the best `keep` strings of count >= 2 with their float scores.
    std::vector<std::pair<std::string, float>> best() {
        std::vector<Item> items;
        for (size_t i = 0; i < counts_.size(); ++i)
            if (counts_.entry(i).count >= 2) items.push_back({(uint32_t)i, score(counts_.entry(i))});
        const size_t keep = std::min(items.size(), keep_);
        const Better better{&counts_};
        std::nth_element(items.begin(), items.begin() + keep, items.end(), better);  // a strict total order
        std::sort(items.begin(), items.begin() + keep, better);
        std::vector<std::pair<std::string, float>> out;
        out.reserve(keep);
        for (size_t i = 0; i < keep; ++i) {
            const auto& e = counts_.entry(items[i].entry);
            out.emplace_back(std::string(reinterpret_cast<const char*>(counts_.bytes(e, nullptr)), e.length),
                             items[i].score);
        }
        return out;
    }

  private:
    struct Item {
        uint32_t entry;
        float score;
    };
    // Higher score, then more bytes, then smaller bytes (unsigned, as std::string compares).
    struct Better {
        const StringCounts* counts;
        bool operator()(const Item& a, const Item& b) const {
            if (a.score != b.score) return a.score > b.score;
            const auto& x = counts->entry(a.entry);
            const auto& y = counts->entry(b.entry);
            if (x.length != y.length) return x.length > y.length;
            return std::memcmp(counts->bytes(x, nullptr), counts->bytes(y, nullptr), x.length) < 0;
        }
    };
    std::unordered_map<uint32_t, CharInfo> info_;
    Options opt_;
    size_t keep_;
    StringCounts counts_;
    std::vector<uint32_t> chars_;

    float score(const StringCounts::Entry& e) const {
        const uint8_t* piece = counts_.bytes(e, nullptr);
        size_t length = 0;
        for (size_t i = 0; i < e.length; ++i) length += (piece[i] & 0xC0) != 0x80;
        return static_cast<float>(e.count) * static_cast<float>(length);
    }
    void keep_best(size_t keep) {
        std::vector<Item> items;
        for (size_t i = 0; i < counts_.size(); ++i) items.push_back({(uint32_t)i, score(counts_.entry(i))});
        keep = std::min(keep, items.size());
        std::nth_element(items.begin(), items.begin() + keep, items.end(), Better{&counts_});
        std::vector<uint32_t> kept;
        for (size_t i = 0; i < keep; ++i) kept.push_back(items[i].entry);
        counts_.keep(kept);
    }

    // The LCP-interval tree of sa[from..to) (the LCP at from taken as 0; LCPs capped at cap), intervals in post-order
    // into `counts`.
    void walk(const uint8_t* s, int32_t n, const std::vector<int32_t>& sa, int32_t cap,
              int32_t from, int32_t to, StringCounts& counts, std::vector<uint32_t>& chars) const {
        std::vector<std::pair<int32_t, int32_t>> stack{{from, 0}};  // (left end in sa, depth)
        for (int32_t i = from + 1; i <= to; ++i) {
            const int32_t value = i < to ? common_prefix(s, n, sa[i - 1], sa[i], cap) : 0;
            int32_t last_left = i - 1;
            while (value < stack.back().second) {
                const auto top = stack.back();
                stack.pop_back();
                last_left = top.first;
                process(s, n, sa[top.first], top.second, (uint64_t)(i - top.first), counts, chars);
                if (value > stack.back().second) stack.emplace_back(top.first, value);
            }
            if (value > stack.back().second) stack.emplace_back(last_left, value);
        }
    }

    void process(const uint8_t* s, int32_t n, int32_t offset, int32_t depth, uint64_t freq, StringCounts& counts,
                 std::vector<uint32_t>& chars) const {
        if (depth <= 1 || (int64_t)offset + depth > n) return;
        if ((s[offset] & 0xC0) == 0x80 || (offset + depth < n && (s[offset + depth] & 0xC0) == 0x80)) return;
        int32_t size = depth;
        while (size > 0 && s[offset + size - 1] == 0) --size;  // trailing NULs cut off
        for (int32_t i = 0; i < size; ++i)
            if (s[offset + i] == 0) return;
        if (valid(s + offset, (size_t)size, chars))
            counts.add(s, (size_t)offset, (uint16_t)size, freq);
    }

    // The characters' count in (1, max_piece_length] and IsValidSentencePiece.
    bool valid(const uint8_t* piece, size_t size, std::vector<uint32_t>& chars_) const {
        size_t n = 0;
        for (size_t i = 0; i < size; ++i) n += (piece[i] & 0xC0) != 0x80;
        if (n <= 1 || (int64_t)n > opt_.max_piece_length) return false;
        chars_.clear();
        for (size_t i = 0; i < size;) {
            const uint8_t c = piece[i];
            const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
            for (size_t k = 1; k < len && i + k < size; ++k) cp = cp << 6 | (piece[i + k] & 0x3F);
            chars_.push_back(cp);
            i += len;
        }
        auto info = [&](uint32_t c) -> const CharInfo* {
            auto found = info_.find(c);
            return found == info_.end() ? nullptr : &found->second;
        };
        return hfbpe_sp::is_valid_piece(n, [&](size_t i) { return chars_[i]; }, info, opt_);
    }
};

}  // namespace hfbpe_unigram
