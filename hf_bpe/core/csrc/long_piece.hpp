#pragma once

#include "common.hpp"
#include "hash.hpp"
#include "pair_map.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

namespace hfbpe {

// ---------------------------------------------------------------------------------------------------------
// Long pieces in linear time: rank-ordered BPE of one piece by backtracking over the vocabulary's tokens
// (the approach of github/rust-gems' `bpe` crate, re-derived here for merge ranks instead of token ids).
// Executable spec: hf_bpe/core/_reference_long.py; tests/test_long_piece.py holds the two equal, and equal to
// the heap merge (Encoder::merge_all), on adversarial pieces.
//
// Definitions. BPE here is the current-pair process: repeatedly merge the current adjacent pair of lowest key
// (merge rank, position), until no current pair has a merge (merge_all computes exactly this when every id has
// one byte length: encoder.hpp, scan_is_exact (a)). A token t is *self-encoding* when the BPE of its own bytes
// is [t]; its *root* is the last merge of that BPE, (L(t), R(t), rho(t)); bytes are leaves (rho = -1). Two
// tokens a, b are *compatible* when the BPE of bytes(a)bytes(b) is [a, b].
//
// Properties required, checked by build() (else it returns unusable and the encoder keeps the heap merge):
// (M) monotone: every live merge (the last rank of a repeated pair) whose inputs are made from bytes takes only
//     ids that no merge of a higher rank makes. Then a new pair (around a symbol just made at rank r) has a rank
//     above r, and a rank's pairs never make a pair of that rank, so the executed keys strictly increase: the
//     process is "for each rank in order, merge its pairs left to right". True of trained merge lists and of
//     tiktoken/SentencePiece conversions whose tokens are built from lower-ranked parts.
// (S) every id made from bytes has one spelling (and so one byte length: merge_all is the current-pair
//     process), and no merge makes a 1-byte id.
//
// Lemma 1 (locality). If in the BPE of a text no merge ever crosses the boundaries of a span, the merges inside
// the span are those of the span's own BPE, in the same order. (Induction over steps: the next merge is the
// lowest current pair; the span's inside pairs are the same as in isolation; a pending inside merge of key k
// would be current with a key below any later step's, so none is skipped.) Hence every token of a BPE output is
// self-encoding, with its isolated merge tree.
// Lemma 2 (pairs suffice). Tokens t1..tk, each self-encoding, spell the text. The sequence is the text's BPE iff
// each adjacent pair is compatible. (=>) if BPE(ti ti+1) merged across their boundary at key k, then in the
// whole text, once every key below k has run (by (M) keys increase; by Lemma 1 both tokens are at the same
// states), that crossing pair is current with the lowest key, so it would merge there too. (<=) let the first
// crossing merge of the whole text happen at key k between ti and ti+1; by Lemma 1 all merges before it are
// inside tokens, in their isolated order; in BPE(ti ti+1), run up to key k, the two tokens are in the same
// states and the crossing pair is current with the lowest key, so it merges: not compatible.
// Corollary. A prefix of the text has at most one spelling by self-encoding, pairwise compatible tokens (the
// BPE of that prefix): if a position can be reached but cannot be continued to the end, no other spelling
// reaches it either.
//
// Compatibility from the merge trees (no merging): the symbols either side of the boundary of a, b run down
// a's right spine (a, R(a), R(R(a)), ...) and b's left spine. Walk the boundary's states back in time from
// (a, b): undo the later-made of the two symbols (larger rho; on a tie the right one, since equal ranks run left
// to right). The state before lasts until that symbol is made at rank q; its crossing pair (of rank p, if a
// merge) merges first iff p < q, or p == q when the symbol undone is the right one (the crossing pair is then
// left of it). By (M) p exceeds the ranks that made the state's symbols, so that is the whole condition; the
// final state (a, b) never ends: any merge of (a, b) makes them incompatible. Leaves on both sides: compatible.
// O(depth of the two spines), one pair lookup per state.
//
// Encoding (encode()): from position 0, take the longest self-encoding token at the position (a trie of their
// spellings); if it is compatible with the token before it and its end position is not dead, push it and go
// on; else try the next shorter self-encoding token that is a prefix of it (next_prefix); when none is left,
// mark the position dead (Corollary: nothing reaches the end from it), pop the token before, and continue with
// its next shorter prefix. The first spelling that reaches the end is the BPE (Lemma 2). Termination and time:
// every pop marks a position dead and a dead position is never entered again, so each position is entered at
// most once and each (position, token starting there) is tried at most once: O(n x tokens per position x spine
// depth) in the worst case, O(n) in practice; steps counts the tries (tests assert it grows linearly).
// ---------------------------------------------------------------------------------------------------------

class LongPiece {
public:
    struct Root {
        int32_t left = -1, right = -1, rank = -1;  // rank -1: a byte (a leaf), or not self-encoding
    };
    bool usable = false;

    // Build from the merges (left, right, new id) in rank order, `ranks` (pair -> its last rank and new id) and
    // the byte ids. `merge` runs the isolated current-pair process on a few ids and returns the last merge.
    template <typename Merge, typename RankMap>
    void build(const std::vector<Merge>& merges, const RankMap& ranks, const int32_t* byte_ids) {
        usable = false;
        int64_t largest = 0;
        for (const Merge& m : merges) {
            largest = std::max<int64_t>(largest, std::max<int64_t>(m.new_id, std::max(m.left, m.right)));
        }
        for (int b = 0; b < 256; ++b) {
            if (byte_ids[b] < 0) return;
            largest = std::max<int64_t>(largest, byte_ids[b]);
        }
        if (largest >= (int64_t)(8 * (merges.size() + 256) + 65536)) return;  // ids too sparse for dense tables
        const size_t ids = (size_t)largest + 1;
        std::vector<std::string> spelled(ids);
        std::vector<char> has(ids, 0), used(ids, 0);
        for (int b = 0; b < 256; ++b) {
            if (!has[byte_ids[b]]) spelled[byte_ids[b]] = std::string(1, (char)b);
            has[byte_ids[b]] = 1;
        }
        std::vector<size_t> waiting;  // live merges whose inputs were not made by lower ranks
        for (size_t rank = 0; rank < merges.size(); ++rank) {
            const Merge& m = merges[rank];
            const auto* found = ranks.find(pair_key(m.left, m.right));
            if (found == nullptr || found->rank != (int32_t)rank) continue;  // a repeated pair's earlier rank
            if (!has[m.left] || !has[m.right]) {
                waiting.push_back(rank);
                continue;
            }
            if (used[m.new_id]) return;  // (M): made after a merge that takes it
            std::string both = spelled[m.left] + spelled[m.right];
            if (has[m.new_id] && spelled[m.new_id] != both) return;  // (S): two spellings, or a byte made
            spelled[m.new_id] = std::move(both);
            has[m.new_id] = 1;
            used[m.left] = used[m.right] = 1;
        }
        for (size_t rank : waiting) {
            if (has[merges[rank].left] && has[merges[rank].right]) return;  // (M): inputs made only later
        }
        length.assign(ids, 0);
        roots.assign(ids, Root());
        next_prefix.assign(ids, -1);
        node_token.clear();
        children.reset(1024);
        for (int b = 0; b < 256; ++b) {
            first[b] = new_node();
            node_token[first[b]] = byte_ids[b];
            length[byte_ids[b]] = 1;
        }
        std::vector<int32_t> work;
        for (size_t t = 0; t < ids; ++t) {
            const std::string& s = spelled[t];
            if (!has[t] || s.size() < 2) continue;
            work.clear();
            for (unsigned char c : s) work.push_back(byte_ids[c]);
            const Root root = merge_isolated(work, ranks);
            if (work.size() != 1 || work[0] != (int32_t)t) continue;  // not self-encoding: never in an output
            roots[t] = root;
            length[t] = (int32_t)s.size();
            insert(s, (int32_t)t);
        }
        run_node.assign(256 * RUN, -1);
        run_best.assign(256 * RUN, -1);
        for (int b = 0; b < 256; ++b) {
            int32_t node = first[b], best = node_token[node];
            size_t k = 1;
            for (; k < RUN && node >= 0; ++k) {
                if (node_token[node] >= 0) best = node_token[node];
                run_node[b * RUN + k] = node;
                run_best[b * RUN + k] = best;
                node = child(node, (unsigned char)b);
            }
            run_max[b] = (uint8_t)(k - 1);  // the longest run of b that is a path of the trie (capped)
        }
        second.assign(1 << 16, -1);
        for (int b = 0; b < 256; ++b) {
            for (int c = 0; c < 256; ++c) second[(size_t)b << 8 | c] = child(first[b], (unsigned char)c);
        }
        // next_prefix: walk each token's spelling in the trie; the last token met before its end.
        for (size_t t = 0; t < ids; ++t) {
            if (length[t] < 2) continue;
            const std::string& s = spelled[t];
            int32_t node = first[(unsigned char)s[0]], best = node_token[node];
            for (size_t k = 1; k + 1 < s.size(); ++k) {
                node = child(node, (unsigned char)s[k]);
                if (node_token[node] >= 0) best = node_token[node];
            }
            next_prefix[t] = best;
        }
        usable = true;
    }

    // The BPE of text[0..n) appended to out; false (nothing appended) if no spelling was found, which (M) and
    // (S) rule out: the caller then merges with the heap.
    template <typename RankMap>
    bool encode(const unsigned char* text, size_t n, const RankMap& ranks, std::vector<int32_t>& out,
                std::vector<uint8_t>& dead, std::vector<int32_t>& stack, std::vector<uint64_t>& memo,
                uint64_t& steps) const {
        dead.assign(n + 1, 0);
        // Compatibility answers, direct-mapped by pair: pair_key(a, b) with the answer in bit 63 (ids < 2^31).
        if (memo.size() != MEMO) memo.assign(MEMO, ~0ULL);
        stack.clear();
        uint64_t tries = 0;
        size_t pos = 0;
        int32_t token = n ? longest(text, pos, n) : -1;
        while (pos < n) {
            while (token >= 0) {
                ++tries;
                if (!dead[pos + (size_t)length[token]] && (stack.empty() || remembered(stack.back(), token, ranks, memo)))
                    break;
                token = next_prefix[token];
            }
            if (token >= 0) {
                stack.push_back(token);
                pos += (size_t)length[token];
                if (pos < n) token = longest(text, pos, n);
            } else {
                dead[pos] = 1;
                if (stack.empty()) {
                    steps += tries;
                    return false;
                }
                const int32_t last = stack.back();
                stack.pop_back();
                pos -= (size_t)length[last];
                token = next_prefix[last];
            }
        }
        steps += tries;
        out.insert(out.end(), stack.begin(), stack.end());
        return true;
    }

    template <typename RankMap>
    bool compatible(int32_t a, int32_t b, const RankMap& ranks) const {
        int32_t limit = INT32_MAX;
        bool right_ended = false, final_state = true;
        for (;;) {
            const auto* found = ranks.find(pair_key((uint32_t)a, (uint32_t)b));
            if (found != nullptr &&
                (final_state || found->rank < limit || (right_ended && found->rank == limit)))
                return false;
            final_state = false;
            const int32_t ra = roots[a].rank, rb = roots[b].rank;
            if (ra < 0 && rb < 0) return true;
            if (ra > rb) {
                limit = ra;
                right_ended = false;
                a = roots[a].right;
            } else {
                limit = rb;
                right_ended = true;
                b = roots[b].left;
            }
        }
    }

private:
    static constexpr size_t MEMO = 1 << 15;  // 256 KB: the pairs of a long piece repeat (runs, small alphabets)
    template <typename RankMap>
    bool remembered(int32_t a, int32_t b, const RankMap& ranks, std::vector<uint64_t>& memo) const {
        const uint64_t key = pair_key((uint32_t)a, (uint32_t)b);
        uint64_t& slot = memo[mix64(key) & (MEMO - 1)];
        if ((slot & ~(1ULL << 63)) == key) return slot >> 63;
        const bool yes = compatible(a, b, ranks);
        slot = key | ((uint64_t)yes << 63);
        return yes;
    }
    std::vector<int32_t> length;       // per id: its spelling's length if self-encoding (bytes: 1), else 0
    std::vector<Root> roots;           // per id: its root merge, if self-encoding and not a byte
    std::vector<int32_t> next_prefix;  // per id: the longest self-encoding token that is a proper prefix, or -1
    int32_t first[256] = {};           // the trie's node of each first byte
    PairMap<int32_t> children;         // pair_key(node, byte) -> node
    std::vector<int32_t> second;       // [first byte << 8 | second byte]: the node of a 2-byte prefix, or -1
    static constexpr size_t RUN = 256;
    std::vector<int32_t> run_node;     // [b * RUN + k], 1 <= k <= run_max[b]: the node of b repeated k times
    std::vector<int32_t> run_best;     // [b * RUN + k]: the longest token b^j, j <= k
    uint8_t run_max[256] = {};
    std::vector<int32_t> node_token;   // per node: the self-encoding token spelled by its path, or -1

    int32_t new_node() {
        node_token.push_back(-1);
        return (int32_t)node_token.size() - 1;
    }
    int32_t child(int32_t node, unsigned char c) const {
        const int32_t* found = children.find(pair_key((uint32_t)node, c));
        return found ? *found : -1;
    }
    void insert(const std::string& s, int32_t token) {
        int32_t node = first[(unsigned char)s[0]];
        for (size_t k = 1; k < s.size(); ++k) {
            int32_t next = child(node, (unsigned char)s[k]);
            if (next < 0) {
                next = new_node();
                children.get_or_insert(pair_key((uint32_t)node, (unsigned char)s[k]), next);
            }
            node = next;
        }
        node_token[node] = token;
    }
    // The longest self-encoding token at text[pos..n) (every byte is one).
    int32_t longest(const unsigned char* text, size_t pos, size_t n) const {
        // A run of one byte (dashes, spaces, "aaaa"): its trie path is tabled (run_node, run_best), so that the
        // walk costs byte compares, not a hash probe per byte (o200k's dash tokens go up to 112 bytes).
        const unsigned char c = text[pos];
        const size_t most = run_max[c];
        const size_t limit = std::min(n - pos, most + 1);
        size_t r = 1;
        while (r < limit && text[pos + r] == c) ++r;
        if (r > most) {
            if (most < RUN - 1) return run_best[c * RUN + most];  // no token spells c more than `most` times
            r = RUN - 1;
        }
        int32_t node = run_node[c * RUN + r], best = run_best[c * RUN + r];
        size_t k = pos + r;
        if (r == 1 && k < n) {  // the trie's second level, dense
            node = second[(size_t)c << 8 | text[k]];
            if (node < 0) return best;
            if (node_token[node] >= 0) best = node_token[node];
            ++k;
        }
        for (; k < n; ++k) {
            node = child(node, text[k]);
            if (node < 0) break;
            if (node_token[node] >= 0) best = node_token[node];
        }
        return best;
    }
    // The current-pair process on `ids` (lowest rank, then leftmost), in place; its last merge. O(n^2): tokens.
    template <typename RankMap>
    static Root merge_isolated(std::vector<int32_t>& ids, const RankMap& ranks) {
        Root last;
        for (;;) {
            int32_t best_rank = INT32_MAX, made = 0;
            size_t best = 0;
            for (size_t i = 0; i + 1 < ids.size(); ++i) {
                const auto* found = ranks.find(pair_key((uint32_t)ids[i], (uint32_t)ids[i + 1]));
                if (found != nullptr && found->rank < best_rank) {
                    best_rank = found->rank;
                    made = found->new_id;
                    best = i;
                }
            }
            if (best_rank == INT32_MAX) return last;
            last = Root{ids[best], ids[best + 1], best_rank};
            ids[best] = made;
            ids.erase(ids.begin() + (ptrdiff_t)best + 1);
        }
    }
};

}  // namespace hfbpe
