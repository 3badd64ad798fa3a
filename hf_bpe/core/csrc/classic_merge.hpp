// The classic BPE merge loop: symbol sequences with counts, one merge at a time, with the tie-breaks of the
// published trainers. The executable spec is hf_bpe/core/_reference_classic.py (learn_merges); this file is held
// equal to it by tests/test_classic_core.py.
//
// Layout: every sequence's symbols sit in one array, linked as a doubly linked list per sequence (nxt/prv, -1 at
// the ends), so a merge touches only the occurrences of the merged pair and their two neighbours: O(occurrences)
// per merge, not O(corpus). A position is the index of a symbol's first unit; it never moves, so the order of
// positions is the order "sequence by sequence, left to right" in which Python's insertion-ordered dicts first
// see a pair. Each pair keeps the positions where it was ever formed; a position stays valid as long as the
// pair is still there (a symbol only grows, so a stale position never becomes valid again) and stale ones are
// dropped lazily.
//
// Selection: a binary heap of (count, tie-break) entries with one live entry per pair (entries of an older
// version are skipped). For first-seen, the entry holds a lower bound on the pair's first position; popping an
// entry whose bound is out of date re-inserts it with the true first position, so the top that survives is the
// exact winner.
//
// Objective: COUNT ranks pairs by count (BPE); SCORE by WordPiece's likelihood score count(ab) / (freq(a) freq(b)),
// freq(x) being the weighted occurrences of symbol x in the current sequences (the Hugging Face course's
// compute_pair_scores). The score is the double Python's int / int gives (correctly rounded, see score_ratio), so
// that two scores equal as the course's floats tie as there. A merge changes freq(a), freq(b) and freq(new), and with
// them the score of every pair holding one of them: those pairs (by_symbol_) get fresh heap entries.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace hfbpe_classic {

enum TieBreak : int { FIRST_SEEN = 0, LARGEST_PAIR = 1, SMALLEST_IDS = 2 };
enum Objective : int { COUNT = 0, SCORE = 1 };

using u128 = unsigned __int128;

// Bit length of a 128-bit value (0 for 0).
inline int bit_length(u128 x) {
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if (hi) return 128 - __builtin_clzll(hi);
    return lo ? 64 - __builtin_clzll(lo) : 0;
}

// A 192-bit unsigned integer as three 64-bit limbs, little end first: just what score_ratio's division needs.
struct U192 {
    uint64_t w[3] = {0, 0, 0};
    static U192 of(u128 x) {
        U192 r;
        r.w[0] = (uint64_t)x;
        r.w[1] = (uint64_t)(x >> 64);
        return r;
    }
    U192 shl(int k) const {  // 0 <= k < 192; bits shifted past 192 are lost (callers keep them in range)
        U192 r;
        int limbs = k / 64, bits = k % 64;
        for (int i = 2; i >= limbs; --i) {
            uint64_t v = w[i - limbs] << bits;
            if (bits && i - limbs - 1 >= 0) v |= w[i - limbs - 1] >> (64 - bits);
            r.w[i] = v;
        }
        return r;
    }
    bool less(const U192& o) const {
        for (int i = 2; i >= 0; --i)
            if (w[i] != o.w[i]) return w[i] < o.w[i];
        return false;
    }
    bool zero() const { return !(w[0] | w[1] | w[2]); }
    void sub(const U192& o) {  // *this >= o
        unsigned borrow = 0;
        for (int i = 0; i < 3; ++i) {
            u128 d = (u128)w[i] - o.w[i] - borrow;
            w[i] = (uint64_t)d;
            borrow = (unsigned)((d >> 64) & 1);
        }
    }
};

// c / d rounded to the nearest double, ties to even: what CPython's int / int returns (long_true_divide is
// correctly rounded). c >= 1, 1 <= d < 2**128. Both below 2**53: one IEEE division of exact operands, which is
// correctly rounded. Otherwise: scale so that the integer quotient q = floor(c * 2**s / d) has 54 or 55 bits, round
// it to 53 bits with the dropped bits and the remainder as sticky bit, and scale back (exact: no subnormals here).
inline double score_ratio(uint64_t c, u128 d) {
    const u128 two53 = (u128)1 << 53;
    if (c < two53 && d < two53) return (double)c / (double)(uint64_t)d;
    int n = bit_length(c), m = bit_length(d);
    int s = 54 + m - n;  // c * 2**s / d in [2**53, 2**55)
    U192 num = U192::of(c), den = U192::of(d);
    if (s >= 0) num = num.shl(s); else den = den.shl(-s);
    // Long division, one quotient bit at a time (q < 2**55).
    uint64_t q = 0;
    for (int bit = 55; bit >= 0; --bit) {
        U192 part = den.shl(bit);  // fits: den has at most 128 + 8 bits
        if (!num.less(part)) {
            num.sub(part);
            q |= (uint64_t)1 << bit;
        }
    }
    int extra = (64 - __builtin_clzll(q)) - 53;  // 1 or 2 bits below the 53 kept
    uint64_t kept = q >> extra, dropped = q & ((1ull << extra) - 1), half = 1ull << (extra - 1);
    bool sticky = !num.zero();
    if (dropped > half || (dropped == half && (sticky || (kept & 1)))) ++kept;
    return std::ldexp((double)kept, extra - s);
}

struct Merge {
    int32_t left, right, id;
};

class Learner {
   public:
    // symbols: all sequences one after the other; starts: n_sequences + 1 offsets into symbols; counts: one
    // weight per sequence; vocab: the text of every initial symbol id.
    Learner(const int32_t* symbols, int64_t n_symbols, const int64_t* starts, int64_t n_sequences,
            const int64_t* counts, std::vector<std::string> vocab, int tie_break, bool reuse_equal,
            std::string strip_prefix, int64_t max_vocab, int objective = COUNT)
        : vocab_(std::move(vocab)), tie_(tie_break), reuse_(reuse_equal), strip_(std::move(strip_prefix)),
          max_vocab_(max_vocab), objective_(objective) {
        if (n_symbols >= INT32_MAX) throw std::length_error("more than 2**31 - 1 symbols");
        sym_.assign(symbols, symbols + n_symbols);
        nxt_.resize(n_symbols);
        prv_.resize(n_symbols);
        starts_.assign(starts, starts + n_sequences + 1);
        counts_.assign(counts, counts + n_sequences);
        if (reuse_)
            for (size_t i = 0; i < vocab_.size(); ++i) index_.emplace(vocab_[i], (int32_t)i);
        // 1. Link each sequence and count its pairs, in position order (so first-seen heaps start sorted).
        for (int64_t s = 0; s < n_sequences; ++s) {
            int64_t begin = starts_[s], end = starts_[s + 1];
            for (int64_t p = begin; p < end; ++p) {
                prv_[p] = p > begin ? (int32_t)(p - 1) : -1;
                nxt_[p] = p + 1 < end ? (int32_t)(p + 1) : -1;
            }
            if (counts_[s] == 0) continue;
            for (int64_t p = begin; p + 1 < end; ++p) add(sym_[p], sym_[p + 1], counts_[s], (int32_t)p);
            if (objective_ == SCORE)
                for (int64_t p = begin; p < end; ++p) add_freq(sym_[p], counts_[s]);
        }
        // 2. One heap entry per pair.
        for (int32_t i = 0; i < (int32_t)pairs_.size(); ++i) {
            pairs_[i].touched = false;
            push(i);
        }
        touched_.clear();
    }

    // Learn up to max_merges more merges; fewer means training is over (no pair left, or the best count is below
    // min_frequency). The state persists between calls, so a caller can learn in chunks and report progress.
    std::vector<Merge> run(int64_t max_merges, int64_t min_frequency) {
        std::vector<Merge> merges;
        std::vector<int32_t> live;
        while ((int64_t)merges.size() < max_merges && (int64_t)vocab_.size() < max_vocab_) {
            int32_t best = pop_best();
            if (best < 0 || pairs_[best].count < min_frequency) break;
            Pair& pair = pairs_[best];
            int32_t a = pair.a, b = pair.b;
            // 1. The new symbol: a fresh id, or the id of an equal existing one when symbols are their text.
            // WordPiece: "un" + "##able" is "unable" (the right part loses its continuing-subword prefix).
            const std::string& right = vocab_[b];
            bool strip = !strip_.empty() && right.size() > strip_.size() && right.compare(0, strip_.size(), strip_) == 0;
            std::string text = vocab_[a] + (strip ? right.substr(strip_.size()) : right);
            int32_t id = -1;
            if (reuse_) {
                auto found = index_.find(text);
                if (found != index_.end()) id = found->second;
            }
            if (id < 0) {
                id = (int32_t)vocab_.size();
                vocab_.push_back(text);
                if (reuse_) index_.emplace(text, id);
            }
            merges.push_back({a, b, id});
            // 2. Its occurrences, left to right (left-to-right, non-overlapping, as every published trainer).
            live.clear();
            for (int32_t p : pair.positions)
                if (valid(p, a, b)) live.push_back(p);
            std::sort(live.begin(), live.end());
            live.erase(std::unique(live.begin(), live.end()), live.end());
            for (int32_t p : live) {
                if (!valid(p, a, b)) continue;  // consumed by the merge just left of it ("a a a")
                int32_t q = nxt_[p], l = prv_[p], r = nxt_[q];
                int64_t w = weight(p);
                if (objective_ == SCORE) {
                    add_freq(a, -w);
                    add_freq(b, -w);
                    add_freq(id, w);
                }
                if (l >= 0) remove(sym_[l], a, w);
                if (r >= 0) remove(b, sym_[r], w);
                sym_[p] = id;
                sym_[q] = -1;
                nxt_[p] = r;
                if (r >= 0) prv_[r] = p;
                if (l >= 0) add(sym_[l], id, w, l);
                if (r >= 0) add(id, sym_[r], w, p);
                // This occurrence is merged. Exact accounting, not a reset to 0: when the new token's text is one
                // of its parts (reuse with a stripped prefix: "b" + "##ba" -> "ba"), the merge can create the pair
                // again, and the spec merges it again.
                pairs_[best].count -= w;  // add() may have grown pairs_: index, never hold a reference
                touch(best);
            }
            // 3. Every pair whose count changed (the merged one included) gets a fresh heap entry; for the score,
            // so does every pair holding a symbol whose frequency changed.
            if (objective_ == SCORE) {
                for (int32_t s : {a, b, id})
                    if (s < (int32_t)by_symbol_.size())
                        for (int32_t t : by_symbol_[s]) touch(t);
                // Amortised O(1) per entry: a rebuild follows at least pairs_.size() + 16 pushes (small, so that the
                // tests' small corpora take this path too).
                if (heap_.size() > 2 * pairs_.size() + 16) rebuild_heap();
            }
            for (int32_t t : touched_) {
                pairs_[t].touched = false;
                push(t);
            }
            touched_.clear();
        }
        return merges;
    }

    std::vector<std::string> vocab() const { return vocab_; }

   private:
    struct Pair {
        int32_t a, b;
        int64_t count = 0;
        uint32_t version = 0;
        bool touched = false;
        std::vector<int32_t> positions;  // a min-heap for first-seen, in insertion order otherwise
    };
    struct Entry {
        int64_t count;
        double score;   // SCORE: count / (freq(a) freq(b)) as a double
        int64_t first;  // first-seen: lower bound of the first position
        int32_t pair;
        uint32_t version;
    };

    std::vector<std::string> vocab_;
    std::unordered_map<std::string, int32_t> index_;
    int tie_;
    bool reuse_;
    std::string strip_;
    int64_t max_vocab_;
    int objective_;
    std::vector<int64_t> freq_;                    // SCORE: weighted occurrences of each symbol id
    std::vector<std::vector<int32_t>> by_symbol_;  // SCORE: the pairs holding each symbol id
    std::vector<int32_t> sym_, nxt_, prv_;
    std::vector<int64_t> starts_, counts_;
    std::vector<Pair> pairs_;
    std::unordered_map<uint64_t, int32_t> pair_ids_;
    std::vector<Entry> heap_;
    std::vector<int32_t> touched_;

    static uint64_t key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

    bool valid(int32_t p, int32_t a, int32_t b) const {
        if (sym_[p] != a) return false;
        int32_t q = nxt_[p];
        return q >= 0 && sym_[q] == b;
    }

    int64_t weight(int32_t p) const {
        // The sequence holding position p: the last start <= p.
        auto it = std::upper_bound(starts_.begin(), starts_.end(), (int64_t)p);
        return counts_[(it - starts_.begin()) - 1];
    }

    // Heap order: true when x ranks below y (std heaps keep the largest on top).
    bool below(const Entry& x, const Entry& y) const {
        if (objective_ == SCORE) {
            if (x.score != y.score) return x.score < y.score;
        } else if (x.count != y.count) {
            return x.count < y.count;
        }
        const Pair& px = pairs_[x.pair];
        const Pair& py = pairs_[y.pair];
        switch (tie_) {
            case FIRST_SEEN:
                return x.first > y.first;
            case LARGEST_PAIR: {
                int c = vocab_[px.a].compare(vocab_[py.a]);
                if (c != 0) return c < 0;
                c = vocab_[px.b].compare(vocab_[py.b]);
                if (c != 0) return c < 0;
                [[fallthrough]];  // equal texts under different ids (no reuse): the smallest ids
            }
            default:
                if (px.a != py.a) return px.a > py.a;
                return px.b > py.b;
        }
    }

    void touch(int32_t i) {
        if (!pairs_[i].touched) {
            pairs_[i].touched = true;
            touched_.push_back(i);
        }
    }

    void add(int32_t a, int32_t b, int64_t w, int32_t p) {
        auto found = pair_ids_.find(key(a, b));
        int32_t i;
        if (found == pair_ids_.end()) {
            i = (int32_t)pairs_.size();
            pair_ids_.emplace(key(a, b), i);
            pairs_.emplace_back();  // value-initialised: count 0, no positions
            pairs_.back().a = a;
            pairs_.back().b = b;
            if (objective_ == SCORE) {
                for (int32_t s : {a, b})
                    if (s >= (int32_t)by_symbol_.size()) by_symbol_.resize(s + 1);
                by_symbol_[a].push_back(i);
                if (b != a) by_symbol_[b].push_back(i);
            }
        } else {
            i = found->second;
        }
        Pair& pair = pairs_[i];
        pair.count += w;
        pair.positions.push_back(p);
        if (tie_ == FIRST_SEEN)
            std::push_heap(pair.positions.begin(), pair.positions.end(), std::greater<int32_t>());
        touch(i);
    }

    void add_freq(int32_t s, int64_t w) {
        if (s >= (int32_t)freq_.size()) freq_.resize(s + 1, 0);
        freq_[s] += w;
    }

    double score(const Pair& pair) const {
        // freq(x) >= count(pair) > 0 for both symbols of a pair that occurs.
        return score_ratio((uint64_t)pair.count, (u128)(uint64_t)freq_[pair.a] * (uint64_t)freq_[pair.b]);
    }

    // Drop the stale entries: one fresh entry per pair that occurs (the lazy heap grows with every rescore).
    void rebuild_heap() {
        heap_.clear();
        for (int32_t i = 0; i < (int32_t)pairs_.size(); ++i)
            if (!pairs_[i].touched) push(i);  // touched ones are pushed by the caller
    }

    void remove(int32_t a, int32_t b, int64_t w) {
        int32_t i = pair_ids_.find(key(a, b))->second;
        pairs_[i].count -= w;
        touch(i);
    }

    // The first valid position of a pair (first-seen), dropping stale ones from its heap.
    int64_t first_position(Pair& pair) {
        auto& h = pair.positions;
        while (!h.empty() && !valid(h.front(), pair.a, pair.b)) {
            std::pop_heap(h.begin(), h.end(), std::greater<int32_t>());
            h.pop_back();
        }
        return h.empty() ? INT64_MAX : h.front();
    }

    void push(int32_t i) {
        Pair& pair = pairs_[i];
        if (pair.count <= 0) return;
        ++pair.version;
        int64_t first = 0;
        if (tie_ == FIRST_SEEN) first = pair.positions.empty() ? INT64_MAX : pair.positions.front();
        double sc = objective_ == SCORE ? score(pair) : 0.0;
        heap_.push_back({pair.count, sc, first, i, pair.version});
        std::push_heap(heap_.begin(), heap_.end(), [this](const Entry& x, const Entry& y) { return below(x, y); });
    }

    int32_t pop_best() {
        auto cmp = [this](const Entry& x, const Entry& y) { return below(x, y); };
        while (!heap_.empty()) {
            Entry top = heap_.front();
            std::pop_heap(heap_.begin(), heap_.end(), cmp);
            heap_.pop_back();
            Pair& pair = pairs_[top.pair];
            if (top.version != pair.version || pair.count <= 0) continue;
            if (tie_ == FIRST_SEEN) {
                int64_t first = first_position(pair);
                if (first != top.first) {
                    push(top.pair);  // its bound was too low: re-rank it with the true first position
                    continue;
                }
            }
            ++pair.version;  // no entry left for it
            return top.pair;
        }
        return -1;
    }
};

}  // namespace hfbpe_classic
