// SentencePiece-mode BPE, phases 1-2 (trainer_interface.cc's LoadSentences and SplitSentencesByWhitespace): the
// sentence store that normalizes (csrc/sp_normalizer.hpp), keeps sentences as distinct-word ids, and counts
// characters and words. The executable spec is train_sentencepiece_reference in
// hf_bpe/training/sentencepiece/bpe.py; tests/test_sentencepiece_core.py holds the two equal.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hash.hpp"
#include "sp_normalizer.hpp"

namespace hfbpe_sp {

constexpr uint32_t kSpace = 0x20, kWs = 0x2581, kUnkChar = 0x2585, kBoundary = 0x1f, kMaxCodePoint = 0x110000;

using Text = std::u32string;

// Words as the trainer takes them: all characters one word after another, word i at [start[i], start[i + 1]).
struct Words {
    std::vector<uint32_t> chars;
    std::vector<int64_t> start{0};
    std::vector<int64_t> counts;
    size_t size() const { return counts.size(); }
    void add(const uint32_t* p, size_t n, int64_t count) {
        chars.insert(chars.end(), p, p + n);
        start.push_back((int64_t)chars.size());
        counts.push_back(count);
    }
};

// 1. Sentences. add() normalizes a sentence exactly as SentencePiece does (csrc/sp_normalizer.hpp), then replaces
//    meta pieces with the boundary character. A sentence is kept as its sequence of distinct-word ids (words split
//    at "▁" as the trainer splits them, before characters outside the coverage are known): memory grows with the
//    vocabulary of the corpus, not its size, and characters and words are counted per distinct word. finish()
//    drops empty sentences as LoadSentences does (swapped with the last one).
class Corpus {
   public:
    Corpus(const std::string& charsmap, bool remove_extra_whitespaces, bool add_dummy_prefix, bool allow_ws_only,
           const std::vector<std::vector<uint32_t>>& meta, bool ws_as_suffix = false)
        : normalizer_(charsmap, add_dummy_prefix, remove_extra_whitespaces, true, {}, ws_as_suffix),
          allow_ws_only_(allow_ws_only), suffix_(ws_as_suffix) {
        for (const auto& piece : meta)
            if (!piece.empty()) meta_.emplace_back(piece.begin(), piece.end());
        // Longest first, then the smaller string: at each position the first match is the longest.
        std::sort(meta_.begin(), meta_.end(), [](const Text& a, const Text& b) {
            return a.size() != b.size() ? a.size() > b.size() : a < b;
        });
        slots_.assign(1 << 16, -1);
    }

    // Add one sentence (valid UTF-8).
    void add(const char* utf8, size_t n) {
        normalizer_.normalize(utf8, n, normalized_);
        buffer_.clear();
        const unsigned char* p = (const unsigned char*)normalized_.data();
        for (size_t i = 0, end = normalized_.size(); i < end;) {  // UTF-8 to code points
            uint32_t c = p[i];
            size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            if (i + len > end) throw std::invalid_argument("normalized text is not UTF-8");
            if (len == 2) c = ((c & 0x1F) << 6) | (p[i + 1] & 0x3F);
            else if (len == 3) c = ((c & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
            else if (len == 4)
                c = ((c & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F);
            buffer_.push_back(c);
            i += len;
        }
        if (!meta_.empty()) replace_meta();
        size_t first = sentence_words_.size();
        split(buffer_.data(), buffer_.size(), allow_ws_only_, suffix_, [&](const uint32_t* q, size_t len) {
            sentence_words_.push_back(intern(q, len));
        });
        sentences_.emplace_back(first, (uint32_t)(sentence_words_.size() - first));
    }

    size_t finish() {
        for (size_t i = 0; i < sentences_.size();) {
            if (sentences_[i].second == 0) {
                sentences_[i] = sentences_.back();
                sentences_.pop_back();
            } else {
                ++i;
            }
        }
        return sentences_.size();
    }

    // Every character's count, in code point order, without U+0000 and U+0020.
    std::vector<std::pair<uint32_t, int64_t>> char_counts() const {
        std::vector<int64_t> counts(kMaxCodePoint, 0);
        for (size_t w = 0; w < word_count_.size(); ++w)
            for (int64_t i = word_start_[w]; i < word_start_[w + 1]; ++i) counts[chars_[i]] += word_count_[w];
        std::vector<std::pair<uint32_t, int64_t>> out;
        for (uint32_t c = 1; c < kMaxCodePoint; ++c)
            if (counts[c] && c != kSpace) out.emplace_back(c, counts[c]);
        return out;
    }

    // 2. Words (SplitSentencesByWhitespace), characters outside `required` written as the unknown character:
    //    distinct words by count, then string (split_by_whitespace), or the sentences in order with count 1.
    Words words(const std::vector<uint32_t>& required, bool split_by_whitespace) {
        std::vector<bool> keep(kMaxCodePoint, false);
        for (uint32_t c : required) keep[c] = true;
        for (uint32_t& c : chars_) c = keep[c] ? c : kUnkChar;
        Words out;
        if (!split_by_whitespace || !keep[kWs]) {
            // Sentence by sentence: in order (no split), or re-split once "▁" itself is unknown (rare).
            Words sentences;
            Text text;
            for (const auto& sentence : sentences_) {
                text.clear();
                for (uint32_t k = 0; k < sentence.second; ++k) {
                    int32_t w = sentence_words_[sentence.first + k];
                    text.append(chars_.begin() + word_start_[w], chars_.begin() + word_start_[w + 1]);
                }
                sentences.add(reinterpret_cast<const uint32_t*>(text.data()), text.size(), 1);
            }
            if (!split_by_whitespace) return sentences;
            std::unordered_map<Text, int64_t> table;
            for (size_t s = 0; s < sentences.size(); ++s)
                split(sentences.chars.data() + sentences.start[s], sentences.start[s + 1] - sentences.start[s],
                      allow_ws_only_, suffix_, [&](const uint32_t* p, size_t len) { ++table[Text(p, p + len)]; });
            return sorted(table);
        }
        // Words that hold the unknown character may now be equal: merged. The others are distinct already.
        std::unordered_map<Text, int64_t> unknown;
        std::vector<int32_t> order;
        for (size_t w = 0; w < word_count_.size(); ++w) {
            const uint32_t *p = chars_.data() + word_start_[w], *end = chars_.data() + word_start_[w + 1];
            if (std::find(p, end, kUnkChar) != end)
                unknown[Text(p, end)] += word_count_[w];
            else
                order.push_back((int32_t)w);
        }
        Words merged = sorted(unknown);
        auto less = [&](int32_t a, int32_t b) {
            if (word_count_[a] != word_count_[b]) return word_count_[a] > word_count_[b];
            return std::lexicographical_compare(chars_.begin() + word_start_[a], chars_.begin() + word_start_[a + 1],
                                                chars_.begin() + word_start_[b], chars_.begin() + word_start_[b + 1]);
        };
        std::sort(order.begin(), order.end(), less);
        // Two sorted runs merged into one: count descending, then string.
        size_t i = 0, j = 0;
        while (i < order.size() || j < merged.size()) {
            bool take_known = j == merged.size();
            if (!take_known && i < order.size()) {
                int32_t w = order[i];
                int64_t a = word_count_[w], b = merged.counts[j];
                take_known = a != b ? a > b
                                    : std::lexicographical_compare(
                                          chars_.begin() + word_start_[w], chars_.begin() + word_start_[w + 1],
                                          merged.chars.begin() + merged.start[j],
                                          merged.chars.begin() + merged.start[j + 1]);
            }
            if (take_known) {
                int32_t w = order[i++];
                out.add(chars_.data() + word_start_[w], word_start_[w + 1] - word_start_[w], word_count_[w]);
            } else {
                out.add(merged.chars.data() + merged.start[j], merged.start[j + 1] - merged.start[j],
                        merged.counts[j]);
                ++j;
            }
        }
        return out;
    }

   private:
    // A word starts at the text's start and at each "▁" (at each run of "▁" with allow_ws_only); with
    // treat_whitespace_as_suffix (ws_as_suffix) a word ends after each "▁" (after each run with allow_ws_only).
    template <typename F>
    static void split(const uint32_t* p, size_t n, bool allow_ws_only, bool ws_as_suffix, F&& emit) {
        if (ws_as_suffix) {
            for (size_t i = 0; i < n;) {  // each step takes at least one character
                size_t j = i;
                while (j < n && p[j] != kWs) ++j;
                if (j < n) {
                    ++j;
                    if (allow_ws_only)
                        while (j < n && p[j] == kWs) ++j;
                }
                emit(p + i, j - i);
                i = j;
            }
            return;
        }
        for (size_t i = 0; i < n;) {
            size_t j = i;
            if (p[j] == kWs) {
                ++j;
                if (allow_ws_only)
                    while (j < n && p[j] == kWs) ++j;
            }
            while (j < n && p[j] != kWs) ++j;
            emit(p + i, j - i);
            i = j;
        }
    }

    static Words sorted(const std::unordered_map<Text, int64_t>& table) {
        std::vector<const std::pair<const Text, int64_t>*> entries;
        entries.reserve(table.size());
        for (const auto& entry : table) entries.push_back(&entry);
        std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
            return a->second != b->second ? a->second > b->second : a->first < b->first;
        });
        Words out;
        for (const auto* entry : entries)
            out.add(reinterpret_cast<const uint32_t*>(entry->first.data()), entry->first.size(), entry->second);
        return out;
    }

    // PrefixMatcher::GlobalReplace: at each position the longest meta piece becomes the boundary character.
    void replace_meta() {
        scratch_.clear();
        for (size_t i = 0; i < buffer_.size();) {
            size_t matched = 0;
            for (const Text& piece : meta_) {
                if (piece.size() <= buffer_.size() - i &&
                    std::equal(piece.begin(), piece.end(), buffer_.begin() + i)) {
                    matched = piece.size();
                    break;
                }
            }
            if (matched) {
                scratch_.push_back(kBoundary);
                i += matched;
            } else {
                scratch_.push_back(buffer_[i++]);
            }
        }
        buffer_.swap(scratch_);
    }

    static uint64_t hash(const uint32_t* p, size_t n) {
        uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
        for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
        return hfbpe::mix64(h);
    }

    // The distinct word's id (a new one for a new word); open addressing, load <= 1/2.
    int32_t intern(const uint32_t* p, size_t n) {
        uint64_t h = hash(p, n);
        size_t mask = slots_.size() - 1;
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            int32_t w = slots_[i];
            if (w < 0) break;
            if (hashes_[w] == h && (size_t)(word_start_[w + 1] - word_start_[w]) == n &&
                std::equal(p, p + n, chars_.begin() + word_start_[w])) {
                ++word_count_[w];
                return w;
            }
        }
        if (word_count_.size() >= (size_t)INT32_MAX) throw std::length_error("more than 2**31 - 1 distinct words");
        int32_t w = (int32_t)word_count_.size();
        chars_.insert(chars_.end(), p, p + n);
        word_start_.push_back((int64_t)chars_.size());
        word_count_.push_back(1);
        hashes_.push_back(h);
        if (2 * word_count_.size() > slots_.size()) {
            slots_.assign(slots_.size() * 2, -1);
            for (int32_t v = 0; v < (int32_t)hashes_.size(); ++v) place(v);
        } else {
            place(w);
        }
        return w;
    }

    void place(int32_t w) {
        size_t mask = slots_.size() - 1, i = hashes_[w] & mask;
        while (slots_[i] >= 0) i = (i + 1) & mask;
        slots_[i] = w;
    }

    Normalizer normalizer_;
    bool allow_ws_only_, suffix_;
    std::vector<Text> meta_;
    std::string normalized_;
    std::vector<uint32_t> buffer_, scratch_;
    std::vector<uint32_t> chars_;          // distinct words' characters
    std::vector<int64_t> word_start_{0};   // word w at [word_start_[w], word_start_[w + 1])
    std::vector<int64_t> word_count_;
    std::vector<uint64_t> hashes_;
    std::vector<int32_t> slots_;           // the word table: word ids, -1 for free
    std::vector<int32_t> sentence_words_;  // every sentence's word ids, one sentence after another
    std::vector<std::pair<size_t, uint32_t>> sentences_;  // (first word, number of words)
};

}  // namespace hfbpe_sp
