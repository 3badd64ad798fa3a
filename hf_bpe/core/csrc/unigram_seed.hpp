// Unigram's seed step (sentencepiece 0.2.3's MakeSeedSentencePiecesFromCorpus), compiled: each chunk's suffix array
// (prefix doubling with radix sorts from the first 4 bytes, O(n log n)) and LCP array (Kasai, O(n)) are walked as an LCP-interval tree; the
// byte strings that pass sentencepiece's checks add their counts into one table, which keeps the best 8 * keep
// entries when it grows past 16 * keep, and gives the best `keep` at the end. The spec is
// hf_bpe/training/unigram_seed.py (the suffix and LCP arrays are unique, so any correct construction gives libsais's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sp_piece_check.hpp"

namespace hfbpe_unigram {

using hfbpe_sp::CharInfo;
using hfbpe_sp::Options;

// The suffixes of s[0..n) in order of their first `depth` bytes (a shorter suffix before the longer ones it
// begins; suffixes with the same first `depth` bytes in any order), by prefix doubling with radix sorts, then
// comparison sorts of the unfinished groups once they are under a third: O(n log n log depth) time at worst,
// 3 + 1 int32 per byte (and 2 int32 per unfinished suffix). depth >= n gives the suffix array.
inline std::vector<int32_t> suffix_order(const uint8_t* s, int32_t n, int64_t depth) {
    std::vector<int32_t> sa(n), rank(n), tmp(n), count(std::max<int32_t>(n, 256) + 1);
    // The first 4 bytes at once (a byte past the end is 0, every byte b is b + 1): two stable counting sorts on
    // 16-bit keys, bytes 2-3 then bytes 0-1, instead of the first two doubling rounds (each a full pass of random
    // reads and writes).
    auto byte = [&](int64_t i) -> uint32_t { return i < n ? s[i] + 1u : 0u; };
    auto half = [&](int32_t i, int32_t at) -> uint32_t { return byte((int64_t)i + at) * 257u + byte((int64_t)i + at + 1); };
    {
        std::vector<int32_t> buckets(257 * 257 + 1, 0);
        for (int32_t i = 0; i < n; ++i) ++buckets[half(i, 2) + 1];
        for (size_t b = 1; b < buckets.size(); ++b) buckets[b] += buckets[b - 1];
        for (int32_t i = 0; i < n; ++i) tmp[buckets[half(i, 2)]++] = i;
        std::fill(buckets.begin(), buckets.end(), 0);
        for (int32_t i = 0; i < n; ++i) ++buckets[half(i, 0) + 1];
        for (size_t b = 1; b < buckets.size(); ++b) buckets[b] += buckets[b - 1];
        for (int32_t j = 0; j < n; ++j) sa[buckets[half(tmp[j], 0)]++] = tmp[j];
    }
    auto first4 = [&](int32_t i) -> uint64_t { return (uint64_t)half(i, 0) << 17 | half(i, 2); };
    // unfinished: the suffixes whose class holds others too (counted by runs of equal classes in sa).
    int32_t classes = 0;
    int64_t unfinished = 0, run = 1;
    for (int32_t i = 0; i < n; ++i) {
        if (i > 0 && first4(sa[i]) != first4(sa[i - 1])) {
            ++classes;
            unfinished += run > 1 ? run : 0;
            run = 1;
        } else if (i > 0) {
            ++run;
        }
        rank[sa[i]] = classes;
    }
    unfinished += n > 0 && run > 1 ? run : 0;
    int64_t k = 4;
    // Radix rounds over every suffix while most are unfinished (a third or more).
    for (; classes + 1 < n && k < depth && 3 * unfinished >= n; k *= 2) {
        // Order by the second half (past the end first), then a stable counting sort by the first half.
        int32_t at = 0;
        for (int32_t i = (int32_t)std::max<int64_t>(0, n - k); i < n; ++i) tmp[at++] = i;
        for (int32_t i = 0; i < n; ++i)
            if (sa[i] >= k) tmp[at++] = (int32_t)(sa[i] - k);
        std::fill(count.begin(), count.begin() + classes + 2, 0);
        for (int32_t i = 0; i < n; ++i) ++count[rank[i] + 1];
        for (int32_t i = 1; i <= classes + 1; ++i) count[i] += count[i - 1];
        for (int32_t i = 0; i < n; ++i) sa[count[rank[tmp[i]]]++] = tmp[i];
        auto second = [&](int32_t i) { return i + k < n ? rank[i + k] : -1; };
        tmp[sa[0]] = 0;
        classes = 0;
        unfinished = 0;
        run = 1;
        for (int32_t i = 1; i < n; ++i) {
            if (rank[sa[i]] != rank[sa[i - 1]] || second(sa[i]) != second(sa[i - 1])) {
                ++classes;
                unfinished += run > 1 ? run : 0;
                run = 1;
            } else {
                ++run;
            }
            tmp[sa[i]] = classes;
        }
        unfinished += run > 1 ? run : 0;
        rank.swap(tmp);
    }
    if (classes + 1 >= n || k >= depth) return sa;
    // Then only the unfinished classes, each sorted on its own by the rank k bytes on (Manber and Myers' doubling
    // restricted to unfinished groups): English text has a third of its suffixes unfinished after 16 bytes and
    // under 1% after 32. A rank becomes the index in sa of its class's first suffix (the same order as the class
    // numbers), so finished suffixes keep theirs; new ranks are written after each round, so every comparison in a
    // round reads the ranks of the first k bytes.
    std::vector<std::pair<int32_t, int32_t>> groups, next, keyed;  // groups: [l, r) in sa; keyed: (key, suffix)
    for (int32_t j = 0; j < n;) {
        int32_t e = j + 1;
        while (e < n && rank[sa[e]] == rank[sa[j]]) ++e;
        if (e - j > 1) groups.emplace_back(j, e);
        for (int32_t t = j; t < e; ++t) tmp[sa[t]] = j;
        j = e;
    }
    rank.swap(tmp);
    for (; !groups.empty() && k < depth; k *= 2) {
        next.clear();
        for (const auto& group : groups) {
            const int32_t l = group.first, size = group.second - group.first;
            keyed.clear();
            for (int32_t j = l; j < group.second; ++j) {
                const int32_t i = sa[j];
                keyed.emplace_back(i + k < n ? rank[i + k] : -1, i);
            }
            std::sort(keyed.begin(), keyed.end());
            for (int32_t a = 0; a < size;) {
                int32_t b = a + 1;
                while (b < size && keyed[b].first == keyed[a].first) ++b;
                if (b - a > 1) next.emplace_back(l + a, l + b);
                for (int32_t t = a; t < b; ++t) {
                    sa[l + t] = keyed[t].second;
                    tmp[keyed[t].second] = l + a;
                }
                a = b;
            }
        }
        for (const auto& group : groups)
            for (int32_t j = group.first; j < group.second; ++j) rank[sa[j]] = tmp[sa[j]];
        groups.swap(next);
    }
    return sa;
}

// lcp[i]: the longest common prefix of the suffixes sa[i-1] and sa[i], at most cap; lcp[0] = 0; sa in the order of
// the first cap + 1 bytes (suffix_order). Kasai's bound (the next suffix's LCP is at least this one's minus 1) holds
// after an LCP of at most cap (the two suffixes differ where sa's order is exact); after two suffixes tied on cap + 1
// bytes (ordered arbitrarily) the next LCP is counted from 0: O(n * cap) at worst.
inline std::vector<int32_t> lcp_array(const uint8_t* s, int32_t n, const std::vector<int32_t>& sa, int32_t cap) {
    std::vector<int32_t> rank(n), lcp(n, 0);
    for (int32_t i = 0; i < n; ++i) rank[sa[i]] = i;
    int32_t h = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (rank[i] == 0) {
            h = 0;
            continue;
        }
        const int32_t j = sa[rank[i] - 1];
        while (h <= cap && i + h < n && j + h < n && s[i + h] == s[j + h]) ++h;
        lcp[rank[i]] = std::min(h, cap);
        h = h > cap ? 0 : std::max(h - 1, 0);
    }
    return lcp;
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

class SeedCounter {
  public:
    SeedCounter(std::unordered_map<uint32_t, CharInfo> info, Options options, size_t keep)
        : info_(std::move(info)), opt_(options), keep_(keep) {}

    // Phases 2-3 for one chunk (sentences, each NUL-terminated), then BoundedPriorityQueue::MaybeGc.
    void add_chunk(const std::string& chunk) {
        if (chunk.size() >= (size_t)INT32_MAX) throw std::length_error("a seed chunk of 2**31 bytes or more");
        const int32_t n = (int32_t)chunk.size();
        const uint8_t* s = reinterpret_cast<const uint8_t*>(chunk.data());
        // No string deeper than 4 * max_piece_length + 1 bytes can be kept (its NUL-trimmed bytes hold too many
        // characters or a NUL), nor deeper than the widest max_piece_length + 1 consecutive characters of the chunk
        // (a kept string is at most that many characters, its one trailing NUL included; English: ~40 bytes, one
        // doubling round fewer). Capping the LCP values there leaves the shallower intervals as they are: the
        // suffixes need only be ordered by their first cap + 1 bytes.
        const int64_t widest = widest_window(s, n, opt_.max_piece_length + 1);
        const int32_t cap = (int32_t)std::min<int64_t>(
            std::min<int64_t>(4 * opt_.max_piece_length + 2, widest == INT64_MAX ? INT64_MAX : widest + 1),
            INT32_MAX - 1);
        const std::vector<int32_t> sa = suffix_order(s, n, (int64_t)cap + 1);
        const std::vector<int32_t> lcp = lcp_array(s, n, sa, cap);
        std::vector<std::pair<int32_t, int32_t>> stack{{0, 0}};  // (left end in sa, depth)
        for (int32_t i = 1; i <= n; ++i) {
            const int32_t value = i < n ? lcp[i] : 0;
            int32_t last_left = i - 1;
            while (value < stack.back().second) {
                const auto top = stack.back();
                stack.pop_back();
                last_left = top.first;
                process(s, n, sa[top.first], top.second, (uint64_t)(i - top.first));
                if (value > stack.back().second) stack.emplace_back(top.first, value);
            }
            if (value > stack.back().second) stack.emplace_back(last_left, value);
        }
        if (counts_.size() > 2 * 8 * keep_) keep_best(8 * keep_);
    }

    // BoundedPriorityQueue::Get: the best `keep` strings of count >= 2 with their float scores.
    std::vector<std::pair<std::string, float>> best() {
        std::vector<Item> items;
        for (const auto& kv : counts_)
            if (kv.second >= 2) items.push_back({&kv.first, score(kv.first, kv.second)});
        const size_t keep = std::min(items.size(), keep_);
        std::nth_element(items.begin(), items.begin() + keep, items.end(), better);  // a strict total order
        std::sort(items.begin(), items.begin() + keep, better);
        std::vector<std::pair<std::string, float>> out;
        for (size_t i = 0; i < keep; ++i) out.emplace_back(*items[i].key, items[i].score);
        return out;
    }

  private:
    struct Item {
        const std::string* key;
        float score;
    };
    std::unordered_map<uint32_t, CharInfo> info_;
    Options opt_;
    size_t keep_;
    std::unordered_map<std::string, uint64_t> counts_;
    std::vector<uint32_t> chars_;

    static bool better(const Item& a, const Item& b) {
        if (a.score != b.score) return a.score > b.score;
        if (a.key->size() != b.key->size()) return a.key->size() > b.key->size();
        return *a.key < *b.key;
    }
    static size_t utf8_length(const std::string& piece) {
        size_t length = 0;
        for (unsigned char c : piece) length += (c & 0xC0) != 0x80;
        return length;
    }
    static float score(const std::string& piece, uint64_t count) {
        return static_cast<float>(count) * static_cast<float>(utf8_length(piece));
    }
    void keep_best(size_t keep) {
        std::vector<Item> items;
        for (const auto& kv : counts_) items.push_back({&kv.first, score(kv.first, kv.second)});
        keep = std::min(keep, items.size());
        std::nth_element(items.begin(), items.begin() + keep, items.end(), better);
        std::unordered_map<std::string, uint64_t> kept;
        for (size_t i = 0; i < keep; ++i) kept.emplace(*items[i].key, counts_[*items[i].key]);
        counts_.swap(kept);
    }

    void process(const uint8_t* s, int32_t n, int32_t offset, int32_t depth, uint64_t freq) {
        if (depth <= 1 || (int64_t)offset + depth > n) return;
        if ((s[offset] & 0xC0) == 0x80 || (offset + depth < n && (s[offset + depth] & 0xC0) == 0x80)) return;
        int32_t size = depth;
        while (size > 0 && s[offset + size - 1] == 0) --size;  // trailing NULs cut off
        for (int32_t i = 0; i < size; ++i)
            if (s[offset + i] == 0) return;
        if (valid(s + offset, (size_t)size)) counts_[std::string(reinterpret_cast<const char*>(s + offset), size)] += freq;
    }

    // The characters' count in (1, max_piece_length] and IsValidSentencePiece.
    bool valid(const uint8_t* piece, size_t size) {
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
