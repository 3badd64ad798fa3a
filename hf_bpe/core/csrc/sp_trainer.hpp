// SentencePiece-mode BPE (spm_train --model_type=bpe, sentencepiece 0.2.3), phase 3: the exact-count merge loop
// over the words of a corpus (csrc/sp_corpus.hpp). The executable spec is the pure-Python
// reference in hf_bpe/training/sentencepiece/bpe.py (train_sentencepiece_reference and its _Trainer); this file is
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

#include "pair_map.hpp"
#include "sp_corpus.hpp"
#include "sp_piece_check.hpp"

namespace hfbpe_sp {

// A seeded start: words as sequences of atoms (indexes into atoms), word i at rows[start[i] .. start[i + 1]).
struct Seed {
    std::vector<std::vector<uint32_t>> atoms;
    std::vector<bool> mergeable;
    std::vector<int32_t> rows;
    std::vector<int64_t> start{0};
    std::vector<int64_t> counts;
    std::vector<std::vector<uint32_t>> known;  // strings already pieces (the base's): never made again
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
        count_pairs();
    }

    // The loop continued from given words (a seeded start, hf_bpe.extend_sentencepiece): each word a sequence of
    // atoms (the base's pieces as it segments the word, or characters it does not know). A mergeable atom is a
    // symbol like a character; the others never pair (the unknown character's role). `chars` lists every character
    // of a mergeable atom with its CharInfo; merges that make a string of seed.known are dropped as a second path.
    Trainer(Seed seed, const std::vector<uint32_t>& chars, const std::vector<CharInfo>& info, Options options)
        : counts_(std::move(seed.counts)), row_start_(std::move(seed.start)), opt_(options) {
        for (size_t i = 0; i < chars.size(); ++i) info_.emplace(chars[i], info[i]);
        std::vector<int32_t> symbol_of(seed.atoms.size());
        for (size_t a = 0; a < seed.atoms.size(); ++a) {
            const std::vector<uint32_t>& atom = seed.atoms[a];
            if (chars_.size() + atom.size() >= (size_t)UINT32_MAX) throw std::length_error("atoms too long");
            uint32_t begin = (uint32_t)chars_.size();
            chars_.insert(chars_.end(), atom.begin(), atom.end());
            bool mergeable = seed.mergeable[a];
            symbol_of[a] = new_symbol(mergeable ? next_key_++ : -1, -1, -1, begin, (uint32_t)atom.size(), 1,
                                      !mergeable);
        }
        rows_.reserve(seed.rows.size());
        for (int32_t a : seed.rows) rows_.push_back(symbol_of[a]);
        std::vector<int32_t>().swap(seed.rows);
        for (const auto& piece : seed.known) seen_.insert(Text(piece.begin(), piece.end()));
        count_pairs();
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
    void count_pairs() {
        // 3.1 Initial pairs (both starts), counted per (left, right) in first-seen order, positions in corpus order.
        //     Two passes: count each pair's occurrences (remembering every position's pair), then fill each symbol's positions
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
        auto at = [&](size_t i) {
            return i < l.chars_size ? chars_[l.chars_begin + i] : chars_[r.chars_begin + (i - l.chars_size)];
        };
        auto info = [&](uint32_t c) -> const CharInfo* {
            auto found = info_.find(c);
            return found == info_.end() ? nullptr : &found->second;
        };
        return is_valid_piece((size_t)l.chars_size + r.chars_size, at, info, opt_);
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

// The merge loop continued from a seeded start (the seed is moved from).
inline Trainer* make_seeded_trainer(Seed& seed, const std::vector<uint32_t>& chars, const std::vector<CharInfo>& info,
                                    Options options) {
    return new Trainer(std::move(seed), chars, info, options);
}

}  // namespace hfbpe_sp
