// SentencePiece-mode BPE (spm_train --model_type=bpe, sentencepiece 0.2.3): the sentence store that finishes
// normalization, counts characters and words, and the exact-count merge loop. The executable spec is the pure-Python
// reference in hf_bpe/training/sentencepiece_bpe.py (train_sentencepiece_reference and its _Trainer); this file is
// held equal to it by tests/test_sentencepiece_core.py. Text is code points (uint32_t) throughout.
//
// Merge loop data structures (bpe_model_trainer.cc's, with the reference's names):
// - a symbol is a character or a merged pair; pairs are found by a structural key (the interned pair of the
//   children's keys), so two paths to one piece ("aa"+"a", "a"+"aa") are two symbols with one string;
// - every word is a row of symbol ids with holes (-1) where a merge removed the right symbol;
// - each symbol keeps the positions (word, left, right) where it was formed and its exact count, updated around
//   each merge; a count lowered by a neighbouring merge marks the symbol stale rather than re-queuing it;
// - a binary heap with lazy entries: (count, fewer characters, smaller string, push order); an entry whose count
//   is out of date is dropped, a stale symbol's entry is re-pushed. Each merge costs O(positions of the merged pair)
//   plus O(log heap) per touched neighbour pair.
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hash.hpp"
#include "pair_map.hpp"
#include "sp_normalizer.hpp"

namespace hfbpe_sp {

constexpr uint32_t kSpace = 0x20, kWs = 0x2581, kUnkChar = 0x2585, kBoundary = 0x1f, kMaxCodePoint = 0x110000;
constexpr int32_t kAnyScript = -1, kInherited = -2;

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
           const std::vector<std::vector<uint32_t>>& meta)
        : normalizer_(charsmap, add_dummy_prefix, remove_extra_whitespaces, true, {}), allow_ws_only_(allow_ws_only) {
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
        split(buffer_.data(), buffer_.size(), allow_ws_only_, [&](const uint32_t* q, size_t len) {
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
                      allow_ws_only_, [&](const uint32_t* p, size_t len) { ++table[Text(p, p + len)]; });
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
    // A word starts at the text's start and at each "▁" (at each run of "▁" with allow_ws_only).
    template <typename F>
    static void split(const uint32_t* p, size_t n, bool allow_ws_only, F&& emit) {
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
    bool allow_ws_only_;
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

// What IsValidSentencePiece needs to know about a character.
struct CharInfo {
    int32_t script;  // kInherited takes the previous character's script; Hiragana/Katakana already mapped to Han
    bool decimal, forbidden;
};

struct Options {
    int64_t max_piece_length;
    bool split_by_whitespace, split_by_number, split_by_unicode_script, split_digits, allow_ws_only;
};

// 3. The merge loop (bpe_model_trainer.cc's Trainer).
class Trainer {
   public:
    // words: each word's characters; counts: their weights; required: the kept characters (first the required
    // order) with their counts and CharInfo; a character not listed is the unknown character.
    Trainer(Words words, const std::vector<uint32_t>& required, const std::vector<int64_t>& required_counts,
            const std::vector<CharInfo>& info, Options options)
        : counts_(std::move(words.counts)), row_start_(std::move(words.start)), opt_(options) {
        for (size_t i = 0; i < required.size(); ++i) {
            info_.emplace(required[i], info[i]);
            char_symbol(required[i], required_counts[i]);
        }
        if (words.chars.size() >= (size_t)INT32_MAX) throw std::length_error("more than 2**31 - 1 characters in words");
        rows_.reserve(words.chars.size());
        for (uint32_t c : words.chars) rows_.push_back(char_symbol(c, 1));
        std::vector<uint32_t>().swap(words.chars);
        // 3.1 Initial pairs, counted per (left, right) in first-seen order, positions in corpus order. Two passes:
        //     count each pair's occurrences (remembering every position's pair), then fill each symbol's positions
        //     once at their final size (one allocation per symbol, not one growth per occurrence).
        struct Stat { int32_t left, right; int64_t freq, occurrences; };
        std::vector<Stat> stats;
        std::vector<int32_t> stat_of(rows_.size(), -1);  // the pair starting at each position, -1 for none
        hfbpe::PairMap<int32_t> index;
        index.reset(rows_.size() / 8);
        for (int32_t sid = 0; sid + 1 < (int32_t)row_start_.size(); ++sid) {
            for (int64_t i = row_start_[sid] + 1; i < row_start_[sid + 1]; ++i) {
                int32_t left = rows_[i - 1], right = rows_[i];
                if (key_[left] < 0 || key_[right] < 0) continue;  // the unknown character
                uint64_t k = ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
                int32_t& slot = index.get_or_insert(k, -1);
                if (slot < 0) {
                    if (stats.size() >= (size_t)INT32_MAX) throw std::length_error("more than 2**31 - 1 pairs");
                    slot = (int32_t)stats.size();
                    stats.push_back(Stat{left, right, 0, 0});
                }
                Stat& stat = stats[slot];
                stat.freq += counts_[sid];
                ++stat.occurrences;
                stat_of[i - 1] = slot;
            }
        }
        index = hfbpe::PairMap<int32_t>();
        std::vector<int32_t> symbol_of(stats.size());
        for (size_t k = 0; k < stats.size(); ++k) {
            int32_t symbol = symbol_of[k] = pair_symbol(stats[k].left, stats[k].right);
            if (symbol < 0) continue;
            symbols_[symbol].freq += stats[k].freq;
            symbols_[symbol].positions.reserve(stats[k].occurrences);
        }
        for (int32_t sid = 0; sid + 1 < (int32_t)row_start_.size(); ++sid) {
            for (int64_t i = row_start_[sid]; i + 1 < row_start_[sid + 1]; ++i) {
                if (stat_of[i] < 0 || symbol_of[stat_of[i]] < 0) continue;
                int32_t at = (int32_t)(i - row_start_[sid]);
                symbols_[symbol_of[stat_of[i]]].positions.push_back(Pos{sid, at, at + 1});
            }
        }
        for (size_t k = 0; k < stats.size(); ++k)
            if (symbol_of[k] >= 0) mark(symbol_of[k]);
        flush();
    }

    // Up to `limit` more pieces; returns how many were added (fewer: nothing left to merge).
    int64_t run(int64_t limit) {
        int64_t added = 0;
        while (added < limit) {
            int32_t best = pop_best();
            if (best < 0) break;
            Text chars = text_of(best);
            if (!seen_.insert(chars).second) {  // the same piece by another path: dropped
                deactivate(best);
                continue;
            }
            final_.push_back(best);
            ++added;
            accept(best);
            flush();
        }
        return added;
    }

    size_t size() const { return final_.size(); }
    std::vector<uint32_t> piece(size_t index) const {
        Text text = text_of(final_[index]);
        return std::vector<uint32_t>(text.begin(), text.end());
    }

   private:
    struct Pos { int32_t sid, left, right; };
    struct Symbol {
        int32_t left, right;  // the children, -1 for a character
        uint32_t chars_begin, chars_size;
        int64_t freq;
        bool active, pending, stale;
        std::vector<Pos> positions;
    };
    struct KeySlot { int32_t key, symbol; };  // a pair's interned key and its live symbol (or kNoSymbol, kInvalid)
    static constexpr int32_t kNoSymbol = -1, kInvalid = -2;
    struct Entry { int64_t freq; int64_t pushed; int32_t symbol; };

    struct Lower {  // a has lower priority than b
        const Trainer* t;
        bool operator()(const Entry& a, const Entry& b) const {
            if (a.freq != b.freq) return a.freq < b.freq;
            const Symbol &x = t->symbols_[a.symbol], &y = t->symbols_[b.symbol];
            if (x.chars_size != y.chars_size) return x.chars_size > y.chars_size;
            int c = t->compare_chars(x, y);
            if (c != 0) return c > 0;
            return a.pushed > b.pushed;
        }
    };

    int compare_chars(const Symbol& x, const Symbol& y) const {
        const uint32_t *a = chars_.data() + x.chars_begin, *b = chars_.data() + y.chars_begin;
        for (uint32_t i = 0; i < x.chars_size && i < y.chars_size; ++i)
            if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
        return x.chars_size == y.chars_size ? 0 : (x.chars_size < y.chars_size ? -1 : 1);
    }

    Text text_of(int32_t symbol) const {
        const Symbol& s = symbols_[symbol];
        return Text(chars_.begin() + s.chars_begin, chars_.begin() + s.chars_begin + s.chars_size);
    }

    int32_t new_symbol(int32_t key, int32_t left, int32_t right, uint32_t begin, uint32_t size, int64_t freq,
                       bool is_unk) {
        if (symbols_.size() >= (size_t)INT32_MAX) throw std::length_error("more than 2**31 - 1 symbols");
        symbols_.push_back(Symbol{left, right, begin, size, freq, true, false, false, {}});
        key_.push_back(is_unk ? -1 : key);
        return (int32_t)(symbols_.size() - 1);
    }

    int32_t char_symbol(uint32_t c, int64_t freq) {
        auto found = char_symbols_.find(c);
        if (found != char_symbols_.end()) return found->second;
        uint32_t begin = (uint32_t)chars_.size();
        chars_.push_back(c);
        int32_t symbol = new_symbol(next_key_++, -1, -1, begin, 1, freq ? freq : 1, c == kUnkChar);
        char_symbols_.emplace(c, symbol);
        return symbol;
    }

    // The structural key of the pair (left, right): the children's keys, which the map interns.
    uint64_t pair_key(int32_t left, int32_t right) const {
        return ((uint64_t)(uint32_t)key_[left] << 32) | (uint32_t)key_[right];
    }

    int32_t pair_symbol(int32_t left, int32_t right) {
        // One table answers both questions, the pair's key and its live symbol: one cache miss per call.
        if (left < 0 || right < 0 || key_[left] < 0 || key_[right] < 0) return -1;  // key_ < 0: unknown
        KeySlot& slot = pair_keys_.get_or_insert(pair_key(left, right), KeySlot{-1, kNoSymbol});
        if (slot.symbol >= 0) return slot.symbol;
        if (slot.symbol == kInvalid) return -1;
        if (slot.key < 0) slot.key = next_key_++;
        int32_t key = slot.key;
        const Symbol &l = symbols_[left], &r = symbols_[right];
        uint32_t begin = (uint32_t)chars_.size(), size = l.chars_size + r.chars_size;
        if ((int64_t)size > opt_.max_piece_length || !valid(l, r)) {
            slot.symbol = kInvalid;  // validity depends on the string alone, which the key determines
            return -1;
        }
        uint32_t lb = l.chars_begin, ls = l.chars_size, rb = r.chars_begin, rs = r.chars_size;
        if (chars_.size() + size >= (size_t)UINT32_MAX) throw std::length_error("more than 2**32 piece characters");
        // Room first, so that appending from chars_ to itself never reallocates under the loop.
        if (chars_.capacity() < chars_.size() + size) chars_.reserve(2 * chars_.capacity() + size);
        for (uint32_t i = 0; i < ls; ++i) chars_.push_back(chars_[lb + i]);
        for (uint32_t i = 0; i < rs; ++i) chars_.push_back(chars_[rb + i]);
        int32_t symbol = new_symbol(key, left, right, begin, size, 0, false);
        slot.symbol = symbol;  // slot is still valid: nothing was inserted into pair_keys_ since
        return symbol;
    }

    // IsValidSentencePiece on left's characters followed by right's.
    bool valid(const Symbol& l, const Symbol& r) const {
        size_t n = (size_t)l.chars_size + r.chars_size;
        auto at = [&](size_t i) {
            return i < l.chars_size ? chars_[l.chars_begin + i] : chars_[r.chars_begin + (i - l.chars_size)];
        };
        bool all_ws = true;
        for (size_t i = 0; i < n; ++i) all_ws = all_ws && at(i) == kWs;
        int32_t previous = kAnyScript;
        for (size_t pos = 0; pos < n; ++pos) {
            uint32_t c = at(pos);
            auto found = info_.find(c);
            if (found == info_.end() || found->second.forbidden) return false;
            if (c == kWs) {
                if (!opt_.allow_ws_only || !all_ws) {
                    if ((opt_.split_by_whitespace && pos > 0) ||
                        (!opt_.split_by_whitespace && pos > 0 && pos == n - 1))
                        return false;
                }
                continue;
            }
            const CharInfo& ci = found->second;
            int32_t script = ci.script == kInherited ? previous : ci.script;
            if (!opt_.split_by_number && ci.decimal) script = kAnyScript;
            if (opt_.split_digits && ci.decimal && n > 1) return false;
            if (opt_.split_by_unicode_script && script != kAnyScript && previous != kAnyScript && previous != script)
                return false;
            previous = script;
        }
        return true;
    }

    void mark(int32_t symbol) {
        Symbol& s = symbols_[symbol];
        if (!s.pending) {
            s.pending = true;
            pending_.push_back(symbol);
        }
    }

    void push(int32_t symbol) { heap_.push(Entry{symbols_[symbol].freq, ++pushed_, symbol}); }

    static void compute_freq(Symbol& s) {
        if (s.stale) {
            if (s.freq == 0) std::vector<Pos>().swap(s.positions);
            s.stale = false;
        }
    }

    void flush() {
        for (int32_t symbol : pending_) {
            Symbol& s = symbols_[symbol];
            s.pending = false;
            if (s.active) {
                compute_freq(s);
                push(symbol);
            }
        }
        pending_.clear();
    }

    int32_t pop_best() {
        while (!heap_.empty()) {
            Entry top = heap_.top();
            Symbol& s = symbols_[top.symbol];
            heap_.pop();
            if (!s.active) continue;
            if (s.stale) {
                compute_freq(s);
                push(top.symbol);
            } else if (top.freq == s.freq) {
                return top.symbol;
            }
        }
        return -1;
    }

    int64_t neighbour(int32_t sid, int64_t index, int step) const {
        int64_t begin = row_start_[sid], n = row_start_[sid + 1] - begin;
        for (index += step; 0 <= index && index < n; index += step)
            if (rows_[begin + index] >= 0) return index;
        return -1;
    }

    int32_t at(int32_t sid, int64_t index) const { return rows_[row_start_[sid] + index]; }

    void add_pair(int32_t sid, int64_t left, int64_t right) {
        if (left < 0 || right < 0) return;
        int32_t symbol = pair_symbol(at(sid, left), at(sid, right));
        if (symbol < 0) return;
        Symbol& s = symbols_[symbol];
        s.positions.push_back(Pos{sid, (int32_t)left, (int32_t)right});
        s.freq += counts_[sid];
        mark(symbol);
    }

    void reset_freq(int32_t sid, int64_t left, int64_t right, int32_t best) {
        if (left < 0 || right < 0) return;
        int32_t symbol = pair_symbol(at(sid, left), at(sid, right));
        if (symbol >= 0 && symbol != best) {
            symbols_[symbol].freq -= counts_[sid];
            symbols_[symbol].stale = true;
        }
    }

    void deactivate(int32_t symbol) {
        Symbol& s = symbols_[symbol];
        pair_keys_.find(pair_key(s.left, s.right))->symbol = kNoSymbol;  // only pairs are merged
        s.active = false;
        std::vector<Pos>().swap(s.positions);
    }

    void accept(int32_t best) {
        // positions is not touched while it is walked: add_pair never forms `best` itself (its key is best's
        // children's, and the rows now hold best), so pushing to best.positions cannot happen here.
        std::vector<Pos> positions;
        positions.swap(symbols_[best].positions);
        int32_t want_left = symbols_[best].left, want_right = symbols_[best].right;
        for (const Pos& p : positions) {
            int64_t base = row_start_[p.sid];
            if (rows_[base + p.left] != want_left || rows_[base + p.right] != want_right) continue;
            int64_t after = neighbour(p.sid, p.right, 1), before = neighbour(p.sid, p.left, -1);
            reset_freq(p.sid, before, p.left, best);
            reset_freq(p.sid, p.right, after, best);
            rows_[base + p.left] = best;
            rows_[base + p.right] = -1;
            add_pair(p.sid, before, p.left);
            add_pair(p.sid, p.left, after);
        }
        deactivate(best);
    }

    std::vector<int64_t> counts_;     // word weights
    std::vector<int64_t> row_start_;  // word w's symbols at rows_[row_start_[w] .. row_start_[w + 1])
    Options opt_;
    std::unordered_map<uint32_t, CharInfo> info_;
    std::unordered_map<uint32_t, int32_t> char_symbols_;  // character -> its symbol (characters never merge away)
    hfbpe::PairMap<KeySlot> pair_keys_;                   // children's keys -> the pair's key and live symbol
    int32_t next_key_ = 0;
    std::vector<int32_t> key_;  // symbol -> its structural key, -1 for the unknown character (never paired)
    std::vector<Symbol> symbols_;
    std::vector<uint32_t> chars_;
    std::vector<int32_t> rows_;
    std::vector<int32_t> pending_;
    std::priority_queue<Entry, std::vector<Entry>, Lower> heap_{Lower{this}};
    int64_t pushed_ = 0;
    std::unordered_set<Text> seen_;
    std::vector<int32_t> final_;
};

// The merge loop over a corpus's words (the corpus's text is rewritten with the unknown character).
inline Trainer* make_trainer(Corpus& corpus, const std::vector<uint32_t>& required,
                             const std::vector<int64_t>& required_counts, const std::vector<CharInfo>& info,
                             Options options) {
    return new Trainer(corpus.words(required, options.split_by_whitespace), required, required_counts, info,
                       options);
}

}  // namespace hfbpe_sp
