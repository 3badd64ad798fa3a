// Unigram training's hot loops (sentencepiece 0.2.3's unigram_model.cc and unigram_model_trainer.cc), float32 bit
// for bit: the E-step (forward-backward marginals), Viterbi counts, second-best segmentations and unreachable
// pieces. The spec is hf_bpe/training/unigram/lattice.py; every float operation is sentencepiece's, in its order and
// types (float storage, double exp/log/log1p), so this file must be compiled without -ffast-math and with
// -ffp-contract=off (no fused multiply-add where sentencepiece's x86-64 build has none).
//
// Sentences are split among `virtual` threads as sentencepiece splits them (sentence i to thread i % virtual); each
// virtual thread's float sums are its own, and they are added in thread order, so the result depends on `virtual`
// exactly as sentencepiece's does, and not on `workers`, the real threads that run the virtual ones. The real threads
// take virtual threads in order 0, 1, ... and fold each finished one's sums into the total in that order (OrderedSum),
// so at most workers + 1 arrays of model.size() floats are alive, not `virtual` of them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hfbpe_unigram {

// Sentences (or words) as code points, with their counts.
struct Corpus {
    std::vector<uint32_t> text;
    std::vector<size_t> offsets{0};
    std::vector<int64_t> counts;

    void add(const uint32_t* chars, size_t size, int64_t count) {
        text.insert(text.end(), chars, chars + size);
        offsets.push_back(text.size());
        counts.push_back(count);
    }
    size_t size() const { return counts.size(); }
};

// Pieces as code points in one arena: piece i is chars[offsets[i] .. offsets[i + 1]). 4 bytes a character and 4 a
// piece, where a vector each costs 24 bytes and a heap block: the seed model has a few hundred thousand pieces.
struct Pieces {
    std::vector<uint32_t> chars;
    std::vector<uint32_t> offsets{0};

    size_t size() const { return offsets.size() - 1; }
    const uint32_t* data(size_t i) const { return chars.data() + offsets[i]; }
    size_t length(size_t i) const { return offsets[i + 1] - offsets[i]; }
    void push(const uint32_t* piece, size_t length) {
        chars.insert(chars.end(), piece, piece + length);
        if (chars.size() > UINT32_MAX) throw std::length_error("unigram pieces of 2**32 characters or more");
        offsets.push_back((uint32_t)chars.size());
    }
    void clear() {
        chars.clear();
        offsets.assign(1, 0);
    }
    // The pieces whose index is in `kept` (increasing or not), in that order.
    Pieces select(const std::vector<uint32_t>& kept) const {
        Pieces out;
        out.offsets.reserve(kept.size() + 1);
        for (uint32_t i : kept) out.push(data(i), length(i));
        return out;
    }
};

// The trainer's model: pieces (code points) with float scores, and a trie for the prefix search.
class Model {
  public:
    void set(const Pieces& pieces, const std::vector<float>& scores) {
        pieces_ = pieces;
        scores_ = scores;
        size_t capacity = 16;
        while (capacity < 2 * pieces.size() + 2) capacity *= 2;  // grown as the trie's nodes come
        keys_.assign(capacity, kEmpty);
        values_.assign(capacity, 0);
        mask_ = capacity - 1;
        terminal_.assign(1, -1);
        distinct_ = 0;
        max_length_ = 0;
        min_score_ = std::numeric_limits<float>::max();
        for (size_t id = 0; id < pieces.size(); ++id) {
            uint32_t node = 0;
            for (const uint32_t *c = pieces.data(id), *stop = c + pieces.length(id); c < stop; ++c) {
                const uint32_t ch = *c;
                const uint64_t key = (uint64_t)node << 21 | ch;
                uint64_t at = mix(key) & mask_;
                while (keys_[at] != kEmpty && keys_[at] != key) at = (at + 1) & mask_;
                if (keys_[at] == kEmpty) {
                    keys_[at] = key;
                    values_[at] = (uint32_t)terminal_.size();
                    terminal_.push_back(-1);
                    if (2 * terminal_.size() > keys_.size()) {  // at most half full
                        const uint32_t child = values_[at];
                        grow();
                        node = child;
                        continue;
                    }
                }
                node = values_[at];
            }
            if (terminal_[node] < 0) {
                terminal_[node] = (int32_t)id;
                distinct_ += node != 0;
            }
            max_length_ = std::max(max_length_, pieces.length(id));
            min_score_ = std::min(min_score_, scores[id]);
        }
        unk_score_ = min_score_ - 10.0f;  // kUnkPenalty, in float
    }
    size_t size() const { return scores_.size(); }
    const uint32_t* piece(size_t id) const { return pieces_.data(id); }
    size_t piece_length(size_t id) const { return pieces_.length(id); }

    // Calls found(length, id) for each piece that starts text[0..size), shorter first.
    template <class F>
    void prefixes(const uint32_t* text, size_t size, F&& found) const {
        uint32_t node = 0;
        const size_t limit = std::min(size, max_length_);
        for (size_t i = 0; i < limit; ++i) {
            const uint32_t* next = find((uint64_t)node << 21 | text[i]);
            if (next == nullptr) return;
            node = *next;
            if (terminal_[node] >= 0) found(i + 1, terminal_[node]);
        }
    }
    float score(int32_t id) const { return scores_[id]; }
    float unk_score() const { return unk_score_; }
    // The id of each of `pieces` in this model, -1 for none.
    std::vector<int32_t> ids_of(const Pieces& pieces) const {
        std::vector<int32_t> out(pieces.size(), -1);
        for (size_t k = 0; k < pieces.size(); ++k) {
            uint32_t node = 0;
            bool found = true;
            for (const uint32_t *c = pieces.data(k), *stop = c + pieces.length(k); c < stop; ++c) {
                const uint32_t* next = find((uint64_t)node << 21 | *c);
                if (next == nullptr) {
                    found = false;
                    break;
                }
                node = *next;
            }
            if (found && pieces.length(k) != 0) out[k] = terminal_[node];
        }
        return out;
    }
    const Pieces& pieces() const { return pieces_; }
    size_t distinct() const { return distinct_; }
    size_t max_length() const { return max_length_; }

  private:
    Pieces pieces_;
    std::vector<float> scores_;
    // The trie's edges (node << 21 | character -> child) in an open-addressing table (linear probing, a power of
    // two at most half full): the E-step looks one up per character of every prefix tried, std::unordered_map's
    // chained buckets cost a cache miss or two more each.
    std::vector<uint64_t> keys_;  // kEmpty where free
    std::vector<uint32_t> values_;
    uint64_t mask_ = 0;
    static constexpr uint64_t kEmpty = ~(uint64_t)0;
    std::vector<int32_t> terminal_;
    size_t distinct_ = 0;  // the pieces the trie can find: distinct and not empty

    static uint64_t mix(uint64_t key) {
        key *= 0x9E3779B97F4A7C15ull;
        return key ^ (key >> 29);
    }
    void grow() {
        std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
        std::vector<uint32_t> values(keys.size(), 0);
        const uint64_t mask = keys.size() - 1;
        for (size_t k = 0; k < keys_.size(); ++k) {
            if (keys_[k] == kEmpty) continue;
            uint64_t at = mix(keys_[k]) & mask;
            while (keys[at] != kEmpty) at = (at + 1) & mask;
            keys[at] = keys_[k];
            values[at] = values_[k];
        }
        keys_.swap(keys);
        values_.swap(values);
        mask_ = mask;
    }
    const uint32_t* find(uint64_t key) const {
        for (uint64_t at = mix(key) & mask_;; at = (at + 1) & mask_) {
            if (keys_[at] == key) return &values_[at];
            if (keys_[at] == kEmpty) return nullptr;
        }
    }
    size_t max_length_ = 0;
    float min_score_ = 0.0f, unk_score_ = 0.0f;
};

static inline float log_sum_exp(float x, float y, bool init) {
    if (init) return y;
    const float vmin = std::min(x, y);
    const float vmax = std::max(x, y);
    constexpr float kMinusLogEpsilon = 50;
    if (vmax > vmin + kMinusLogEpsilon) return vmax;
    return vmax + std::log1p(std::exp(static_cast<double>(vmin - vmax)));
}

// One text's lattice: node 0 is BOS, 1 is EOS, then the pieces by start, shorter first, and unknown nodes (id 0).
class Lattice {
  public:
    std::vector<int32_t> ids;
    std::vector<float> scores;
    std::vector<uint32_t> starts, lengths;
    std::vector<std::vector<uint32_t>> begin, end;
    size_t size = 0;

    void set(const Model& model, const uint32_t* text, size_t n) {
        size = n;
        ids.assign({-1, -1});
        scores.assign({0.0f, 0.0f});
        starts.assign({0, (uint32_t)n});
        lengths.assign({0, 0});
        if (begin.size() < n + 1) {
            begin.resize(n + 1);
            end.resize(n + 1);
        }
        for (size_t i = 0; i <= n; ++i) {
            begin[i].clear();
            end[i].clear();
        }
        end[0].push_back(0);
        begin[n].push_back(1);
        for (size_t start = 0; start < n; ++start) {
            bool single = false;
            model.prefixes(text + start, n - start, [&](size_t length, int32_t id) {
                insert(start, length, id, model.score(id));
                single = single || length == 1;
            });
            if (!single) insert(start, 1, 0, model.unk_score());
        }
    }

    // PopulateMarginal: expected[id] += freq * posterior, in float.
    void marginal(float freq, std::vector<float>& expected) {
        const size_t count = ids.size();
        alpha_.assign(count, 0.0f);
        beta_.assign(count, 0.0f);
        for (size_t pos = 0; pos <= size; ++pos) {
            const auto& ends = end[pos];
            for (uint32_t right : begin[pos]) {
                for (uint32_t left : ends)
                    alpha_[right] = log_sum_exp(alpha_[right], 1.0f * scores[left] + alpha_[left], left == ends[0]);
            }
        }
        for (size_t k = size + 1; k-- > 0;) {
            const auto& begins = begin[k];
            for (uint32_t left : end[k]) {
                for (uint32_t right : begins)
                    beta_[left] = log_sum_exp(beta_[left], scores[right] + beta_[right], right == begins[0]);
            }
        }
        const float z = alpha_[1];
        for (size_t pos = 0; pos < size; ++pos) {
            for (uint32_t node : begin[pos]) {
                if (ids[node] >= 0)
                    expected[ids[node]] +=
                        freq * std::exp(static_cast<double>(alpha_[node] + scores[node] + beta_[node] - z));
            }
        }
    }

    // Viterbi: fills backtrace; returns the best path (BOS and EOS left out) into path, and its score.
    float viterbi(std::vector<uint32_t>& path) {
        path.clear();
        const size_t count = ids.size();
        backtrace.assign(count, 0.0f);
        previous_.assign(count, -1);
        if (size == 0) return 0.0f;
        for (size_t pos = 0; pos <= size; ++pos) {
            for (uint32_t right : begin[pos]) {
                int64_t best = -1;
                float best_score = 0.0f;
                for (uint32_t left : end[pos]) {
                    const float score = backtrace[left] + scores[right];
                    if (best < 0 || score > best_score) {
                        best = left;
                        best_score = score;
                    }
                }
                previous_[right] = best;
                backtrace[right] = best_score;
            }
        }
        for (int64_t node = previous_[1]; node != -1 && previous_[node] != -1; node = previous_[node])
            path.push_back((uint32_t)node);
        std::reverse(path.begin(), path.end());
        return backtrace[1];
    }

    // NBest(2, sample=false) by A*, with sentencepiece's agenda limits; returns the number of paths (0, 1 or 2).
    size_t nbest2(std::vector<uint32_t>& first, std::vector<uint32_t>& second) {
        first.clear();
        second.clear();
        if (size == 0) return 0;
        std::vector<uint32_t> path;
        viterbi(path);
        struct Hyp {
            uint32_t node;
            int64_t next;  // index in hyps, -1 for none
            float fx, gx;
        };
        std::vector<Hyp> hyps;
        struct Less {
            const std::vector<Hyp>* hyps;
            bool operator()(int64_t a, int64_t b) const { return (*hyps)[a].fx < (*hyps)[b].fx; }
        };
        using Agenda = std::priority_queue<int64_t, std::vector<int64_t>, Less>;
        Agenda agenda(Less{&hyps});
        hyps.push_back({1, -1, backtrace[1], 0.0f});
        agenda.push(0);
        size_t found = 0, total = 1, allocated = 1, limit = 100000;
        int shrinks = 0;
        while (!agenda.empty()) {
            const int64_t top = agenda.top();
            agenda.pop();
            const Hyp hyp = hyps[top];
            if (hyp.node == 0) {
                auto& out = found == 0 ? first : second;
                for (int64_t n = hyp.next; n != -1 && hyps[n].next != -1; n = hyps[n].next) out.push_back(hyps[n].node);
                if (++found == 2) break;
                continue;
            }
            const auto& ends = end[starts[hyp.node]];
            for (uint32_t left : ends) {
                hyps.push_back({left, top, backtrace[left] + hyp.gx, scores[left] + hyp.gx});
                agenda.push((int64_t)hyps.size() - 1);
            }
            total += ends.size();
            allocated += ends.size();
            if (total >= 500000 || allocated >= 500000) return fallback(first, second);
            if (agenda.size() >= 10000 || (agenda.size() > 20 && allocated >= limit)) {
                if (shrinks >= 10) return fallback(first, second);
                ++shrinks;
                std::vector<int64_t> kept;
                for (size_t i = 0, keep = std::min<size_t>(agenda.size(), 20); i < keep; ++i) {
                    kept.push_back(agenda.top());
                    agenda.pop();
                }
                Agenda fresh(Less{&hyps});
                std::vector<char> seen(hyps.size(), 0);
                allocated = 0;
                for (int64_t h : kept) {
                    fresh.push(h);
                    for (int64_t n = h; n != -1 && !seen[n]; n = hyps[n].next) {
                        seen[n] = 1;
                        ++allocated;
                    }
                }
                agenda = std::move(fresh);
                limit = allocated + 100000;
            }
        }
        return found;
    }

    std::vector<float> backtrace;

  private:
    std::vector<float> alpha_, beta_;
    std::vector<int64_t> previous_;

    void insert(size_t start, size_t length, int32_t id, float score) {
        const uint32_t node = (uint32_t)ids.size();
        ids.push_back(id);
        scores.push_back(score);
        starts.push_back((uint32_t)start);
        lengths.push_back((uint32_t)length);
        begin[start].push_back(node);
        end[start + length].push_back(node);
    }
    size_t fallback(std::vector<uint32_t>& first, std::vector<uint32_t>& second) {
        second.clear();
        viterbi(first);
        return 1;
    }
};

// One text's lattice for the E-step and Viterbi counts, as flat edges: the pieces (and unknown nodes) by start, in
// Lattice::set's order (shorter first, the unknown node last), so that edges [first[p], first[p + 1]) are begin[p].
// Every node that begins at p has the same alpha (sentencepiece computes it once per node, from the same nodes
// ending at p in the same order: the same floats), and every node that ends at p the same beta; so alpha and beta
// are kept per position, O(edges) log-sum-exps instead of O(sum over p of |begin[p]| * |end[p]|).
class Edges {
  public:
    std::vector<int32_t> ids;
    std::vector<float> scores;
    std::vector<uint32_t> ends;   // start + length
    std::vector<uint32_t> first;  // first[p]: the first edge that begins at p; first[size] = edges
    size_t size = 0;

    // set() from a text's recorded pieces (found[start]: how many pieces the trie found at start; found_ids: their
    // ids, shorter first) under an earlier model whose pieces hold all of this model's (the trainer only drops
    // pieces), `live` mapping its ids to this model's (-1: dropped) and `length` giving their lengths. The kept ones
    // come in set()'s order (both tries give the prefixes shorter first); no trie walk.
    // Returns how many found_ids it read.
    size_t set_recorded(const Model& model, size_t n, const uint16_t* found, const int32_t* found_ids,
                        const std::vector<int32_t>& live, const std::vector<uint16_t>& length) {
        const int32_t* const from = found_ids;
        fill(model, n, [&](size_t start, auto&& emit) {
            for (const int32_t* end = found_ids + found[start]; found_ids < end; ++found_ids)
                if (live[*found_ids] >= 0) emit(length[*found_ids], live[*found_ids]);
        });
        return (size_t)(found_ids - from);
    }

    // set(), recording the pieces found at each start for set_recorded (appended to found and found_ids).
    void set(const Model& model, const uint32_t* text, size_t n, std::vector<uint16_t>* found = nullptr,
             std::vector<int32_t>* found_ids = nullptr) {
        fill(model, n, [&](size_t start, auto&& emit) {
            uint16_t count = 0;
            model.prefixes(text + start, n - start, [&](size_t length, int32_t id) {
                emit(length, id);
                if (found_ids != nullptr) found_ids->push_back(id);
                ++count;
            });
            if (found != nullptr) found->push_back(count);
        });
    }

    // Lattice::marginal, per position: alpha[p] (of the nodes beginning at p) folds the nodes ending at p by start,
    // pushed forward in start order; beta[p] (of the nodes ending at p) folds the nodes beginning at p in order.
    void marginal(float freq, std::vector<float>& expected) {
        const size_t n = size;
        alpha_.assign(n + 1, 0.0f);
        beta_.assign(n + 1, 0.0f);
        seen_.assign(n + 1, 0);
        seen_[0] = 1;  // alpha[0]: the BOS node alone ends at 0 (score 0, alpha 0): log_sum_exp(., 0, init) = 0
        for (size_t p = 0; p < n; ++p) {
            const float a = alpha_[p];
            for (uint32_t e = first[p]; e < first[p + 1]; ++e) {
                const uint32_t q = ends[e];
                alpha_[q] = log_sum_exp(alpha_[q], 1.0f * scores[e] + a, !seen_[q]);
                seen_[q] = 1;
            }
        }
        // beta[n] folds EOS alone (score 0, beta 0): 0.
        for (size_t p = n; p-- > 0;) {
            float b = 0.0f;
            for (uint32_t e = first[p]; e < first[p + 1]; ++e)
                b = log_sum_exp(b, scores[e] + beta_[ends[e]], e == first[p]);
            beta_[p] = b;
        }
        const float z = alpha_[n];
        for (size_t p = 0; p < n; ++p) {
            for (uint32_t e = first[p]; e < first[p + 1]; ++e) {
                if (ids[e] >= 0)
                    expected[ids[e]] +=
                        freq * std::exp(static_cast<double>(alpha_[p] + scores[e] + beta_[ends[e]] - z));
            }
        }
    }

    // Lattice::viterbi's path (BOS and EOS left out, as edge indices): a node's best left neighbour is the first
    // of the highest backtrace[left] + score among the nodes ending at its start (by start), as there.
    void viterbi(std::vector<uint32_t>& path) {
        path.clear();
        const size_t n = size, count = ids.size();
        if (n == 0) return;
        // The nodes ending at each position, by start: a counting sort of the edges by end (stable).
        end_first_.assign(n + 2, 0);
        for (size_t e = 0; e < count; ++e) ++end_first_[ends[e] + 1];
        for (size_t p = 1; p <= n + 1; ++p) end_first_[p] += end_first_[p - 1];
        by_end_.resize(count);
        fill_.assign(end_first_.begin(), end_first_.end() - 1);
        for (size_t e = 0; e < count; ++e) by_end_[fill_[ends[e]]++] = (uint32_t)e;
        backtrace_.assign(count, 0.0f);
        previous_.assign(count, -1);
        int64_t eos_previous = -1;
        for (size_t p = 0; p <= n; ++p) {
            const uint32_t lo = end_first_[p], hi = end_first_[p + 1];
            auto best_left = [&](float right_score, float& best_score) -> int64_t {
                if (p == 0) {  // BOS alone: backtrace 0
                    best_score = 0.0f + right_score;
                    return -2;
                }
                int64_t best = -1;
                for (uint32_t k = lo; k < hi; ++k) {
                    const uint32_t left = by_end_[k];
                    const float score = backtrace_[left] + right_score;
                    if (best < 0 || score > best_score) {
                        best = left;
                        best_score = score;
                    }
                }
                return best;
            };
            if (p == n) {
                float best_score = 0.0f;
                eos_previous = best_left(0.0f, best_score);
                break;
            }
            for (uint32_t e = first[p]; e < first[p + 1]; ++e) {
                float best_score = 0.0f;
                previous_[e] = best_left(scores[e], best_score);
                backtrace_[e] = best_score;
            }
        }
        for (int64_t e = eos_previous; e >= 0; e = previous_[e]) path.push_back((uint32_t)e);
        std::reverse(path.begin(), path.end());
    }

  private:
    // The edges of a text of n characters: at each start, pieces(start, emit) emits (length, id) shorter first,
    // then an unknown node follows where no one-character piece did.
    template <class Pieces>
    void fill(const Model& model, size_t n, Pieces&& pieces) {
        size = n;
        ids.clear();
        scores.clear();
        ends.clear();
        first.assign(n + 1, 0);
        for (size_t start = 0; start < n; ++start) {
            first[start] = (uint32_t)ids.size();
            bool single = false;
            pieces(start, [&](size_t length, int32_t id) {
                add(start + length, id, model.score(id));
                single = single || length == 1;
            });
            if (!single) add(start + 1, 0, model.unk_score());
        }
        first[n] = (uint32_t)ids.size();
    }

    std::vector<float> alpha_, beta_, backtrace_;
    std::vector<char> seen_;
    std::vector<uint32_t> end_first_, fill_, by_end_;
    std::vector<int64_t> previous_;

    void add(size_t end, int32_t id, float score) {
        ids.push_back(id);
        scores.push_back(score);
        ends.push_back((uint32_t)end);
    }
};

// The real threads that run `virtual_threads` virtual ones.
inline int real_workers(int virtual_threads, int workers) { return std::max(1, std::min(workers, virtual_threads)); }

// Runs body(virtual_thread, worker, lattice) for each virtual thread on real_workers() real threads, which take the
// virtual threads in increasing order (so a worker waiting in OrderedSum::fold for a lower one never waits for
// one not yet taken: no deadlock).
template <class F>
void run_virtual(int virtual_threads, int workers, F&& body) {
    workers = real_workers(virtual_threads, workers);
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) {
        pool.emplace_back([&, w]() {
            Edges lattice;
            for (int n = next++; n < virtual_threads; n = next++) body(n, w, lattice);
        });
    }
    for (auto& t : pool) t.join();
}

// Float sums per virtual thread, added into the total strictly in virtual-thread order (sentencepiece's order), one
// array per real worker: a worker finishing virtual thread n waits until 0..n-1 are folded, folds its array, zeroes
// it and takes the next. `copy_first`: the total is thread 0's array itself (RunEStep's expected[0] += ...), not
// 0.0f + it (the Viterbi counts' freq += ...); the two differ only for -0.0f, kept bit for bit all the same.
class OrderedSum {
public:
    OrderedSum(size_t size, int workers, bool copy_first)
        : size_(size), copy_first_(copy_first), total_(size, 0.0f), parts_(workers) {}

    // Worker w's array (allocated on first use, by the worker).
    std::vector<float>& part(int w) {
        if (parts_[w].size() != size_) parts_[w].assign(size_, 0.0f);
        return parts_[w];
    }

    void fold(int n, int w) {
        std::vector<float>& mine = part(w);
        std::unique_lock<std::mutex> lock(mutex_);
        turn_.wait(lock, [&] { return folded_ == n; });
        if (n == 0 && copy_first_) {
            std::copy(mine.begin(), mine.end(), total_.begin());
        } else {
            for (size_t k = 0; k < size_; ++k) total_[k] += mine[k];
        }
        ++folded_;
        lock.unlock();
        turn_.notify_all();
        std::fill(mine.begin(), mine.end(), 0.0f);
    }

    // The total, once every virtual thread is folded; the workers' arrays are freed.
    std::vector<float> take() {
        std::vector<std::vector<float>>().swap(parts_);
        return std::move(total_);
    }

private:
    size_t size_;
    bool copy_first_;
    std::vector<float> total_;
    std::vector<std::vector<float>> parts_;
    std::mutex mutex_;
    std::condition_variable turn_;
    int folded_ = 0;
};

// The pieces the trie found in each text under the model they were recorded with (the first model the E-step
// met: the seeds), per virtual thread (its texts in order), so that later models, whose pieces are among those,
// set their lattices without walking a trie (Edges::set_recorded): 2 bytes per character and 4 per piece found.
struct Recorded {
    Pieces pieces;  // the recording model's; none: nothing recorded
    std::vector<uint16_t> lengths;
    std::vector<std::vector<uint16_t>> found;
    std::vector<std::vector<int32_t>> found_ids;
};

// Runs body(w, i, lattice) for each text i of each virtual thread n on worker w, its lattice set from the record
// when every piece of the model is among the recorded ones, else by the trie (recording them: this model's record
// replaces the old one); then done(n, w) once n's texts are all done.
template <class F, class G>
void for_each_text(const Model& model, const Corpus& corpus, Recorded& record, int virtual_threads, int workers,
                   F&& body, G&& done) {
    std::vector<int32_t> live;
    bool replay = record.pieces.size() != 0 && record.found.size() == (size_t)virtual_threads;
    if (replay) {
        live = model.ids_of(record.pieces);
        std::vector<char> seen(model.size(), 0);  // distinct ids: the recorded pieces may repeat one
        size_t matched = 0;
        for (int32_t id : live) {
            if (id >= 0 && !seen[id]) {
                seen[id] = 1;
                ++matched;
            }
        }
        replay = matched == model.distinct();
    }
    bool recording = !replay && model.max_length() < 65536;
    // At most 4 recorded pieces a character (English words: ~2.5 under the seeds); past that (Chinese sentences
    // under a million seeds: ~10) the record would outweigh what it saves, so it is dropped and every model walks
    // its trie.
    const size_t budget = 4 * corpus.text.size();
    std::atomic<size_t> recorded{0};
    std::atomic<bool> over{false};
    if (!replay) {
        record = Recorded();
        if (recording) {
            record.pieces = model.pieces();
            for (size_t k = 0; k < record.pieces.size(); ++k)
                record.lengths.push_back((uint16_t)record.pieces.length(k));
            record.found.resize(virtual_threads);
            record.found_ids.resize(virtual_threads);
        }
    }
    run_virtual(virtual_threads, workers, [&](int n, int w, Edges& lattice) {
        size_t at = 0, at_ids = 0;
        for (size_t i = n; i < corpus.size(); i += virtual_threads) {
            const size_t size = corpus.offsets[i + 1] - corpus.offsets[i];
            if (replay) {
                at_ids += lattice.set_recorded(model, size, record.found[n].data() + at,
                                               record.found_ids[n].data() + at_ids, live, record.lengths);
                at += size;
            } else if (recording && !over.load(std::memory_order_relaxed)) {
                const size_t before = record.found_ids[n].size();
                lattice.set(model, corpus.text.data() + corpus.offsets[i], size, &record.found[n],
                            &record.found_ids[n]);
                if (recorded.fetch_add(record.found_ids[n].size() - before) + record.found_ids[n].size() - before >
                    budget) {
                    over = true;
                    std::vector<uint16_t>().swap(record.found[n]);  // freed now: the others stop recording
                    std::vector<int32_t>().swap(record.found_ids[n]);
                }
            } else {
                lattice.set(model, corpus.text.data() + corpus.offsets[i], size);
            }
            body(w, i, lattice);
        }
        if (over) {
            std::vector<uint16_t>().swap(record.found[n]);
            std::vector<int32_t>().swap(record.found_ids[n]);
        }
        done(n, w);
    });
    if (over) record = Recorded();
}

// RunEStep: the expected count of each piece (the virtual threads' float sums, added in thread order).
inline std::vector<float> e_step(const Model& model, const Corpus& corpus, Recorded& record, int virtual_threads,
                                 int workers) {
    OrderedSum expected(model.size(), real_workers(virtual_threads, workers), true);
    for_each_text(
        model, corpus, record, virtual_threads, workers,
        [&](int w, size_t i, Edges& lattice) { lattice.marginal((float)corpus.counts[i], expected.part(w)); },
        [&](int n, int w) { expected.fold(n, w); });
    return expected.take();
}

// PruneSentencePieces' second phase: each piece's count on the Viterbi paths, in float, per virtual thread.
inline std::vector<float> viterbi_counts(const Model& model, const Corpus& corpus, Recorded& record,
                                         int virtual_threads, int workers) {
    const int real = real_workers(virtual_threads, workers);
    OrderedSum freq(model.size(), real, false);
    std::vector<std::vector<uint32_t>> paths(real);
    for_each_text(
        model, corpus, record, virtual_threads, workers,
        [&](int w, size_t i, Edges& lattice) {
            lattice.viterbi(paths[w]);
            std::vector<float>& mine = freq.part(w);
            for (uint32_t e : paths[w])
                if (lattice.ids[e] >= 0) mine[lattice.ids[e]] += corpus.counts[i];
        },
        [&](int n, int w) { freq.fold(n, w); });
    return freq.take();
}

// Each piece's second-best segmentation, flat: piece i's ids are ids[offsets[i] .. offsets[i + 1]) (none: empty).
struct Alternatives {
    std::vector<uint32_t> offsets{0};
    std::vector<int32_t> ids;

    size_t size(size_t i) const { return offsets[i + 1] - offsets[i]; }
    const int32_t* of(size_t i) const { return ids.data() + offsets[i]; }
};

// PruneSentencePieces' first phase: keep[i] (0: its best segmentation is split, 1: keep) and, for a piece whose
// best segmentation is itself, the ids of its second-best one.
inline void alternatives(const Model& model, std::vector<char>& keep, Alternatives& alts) {
    keep.assign(model.size(), 1);
    alts.offsets.assign(1, 0);
    alts.offsets.reserve(model.size() + 1);
    alts.ids.clear();
    Lattice lattice;
    std::vector<uint32_t> first, second;
    for (size_t i = 0; i < model.size(); ++i) {
        lattice.set(model, model.piece(i), model.piece_length(i));
        const size_t found = lattice.nbest2(first, second);
        if (found != 1) {
            if (first.size() >= 2) {
                keep[i] = 0;
            } else if (first.size() == 1) {
                for (uint32_t node : second) alts.ids.push_back(lattice.ids[node]);
            }
        }
        alts.offsets.push_back((uint32_t)alts.ids.size());
    }
}

// PruneUnreachableSentencePieces: reachable[i] unless another segmentation outscores the piece itself.
inline std::vector<char> reachable(const Model& model) {
    std::vector<char> out(model.size(), 0);
    Lattice lattice;
    std::vector<uint32_t> path;
    for (size_t i = 0; i < model.size(); ++i) {
        lattice.set(model, model.piece(i), model.piece_length(i));
        int64_t self = -1;
        for (uint32_t node : lattice.begin[0]) {
            if (lattice.ids[node] == (int32_t)i && lattice.lengths[node] == lattice.size) {
                self = node;
                break;
            }
        }
        if (self < 0) continue;
        const float original = lattice.scores[self];
        lattice.scores[self] = -std::numeric_limits<float>::infinity();
        const float alternative = lattice.viterbi(path);
        out[i] = !(!path.empty() && alternative > original);
    }
    return out;
}

}  // namespace hfbpe_unigram
