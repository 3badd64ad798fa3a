// Unigram training's driver state between the hot loops, float32 bit for bit as sentencepiece 0.2.3
// (unigram_model_trainer.cc): the seeds' log probabilities (ToLogProb), the M-step (RunMStep), pruning's arithmetic
// (PruneSentencePieces' last phase) and the unreachable pieces' removal, over pieces kept in one arena. The spec is
// hf_bpe/training/unigram/reference.py (_m_step, _prune) and unigram/seed.py (seed_pieces); each float operation is
// the spec's, in its order and types (float storage, double log/digamma), so this file too must be compiled without
// -ffast-math and with -ffp-contract=off.
//
// The point of keeping this in C++: the seed model has a few hundred thousand pieces (Chinese: ~340,000), which as
// Python (str, float) tuples, beside the compiled model's own copy, were the trainer's memory peak.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "unigram_lattice.hpp"
#include "unigram_seed.hpp"

namespace hfbpe_unigram {

// The trainer's Digamma (double), term by term in its order.
inline double digamma(double x) {
    double result = 0.0;
    for (; x < 7; ++x) result -= 1 / x;
    x -= 1.0 / 2.0;
    const double xx = 1.0 / x;
    const double xx2 = xx * xx;
    const double xx4 = xx2 * xx2;
    result += std::log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 -
              (127.0 / 30720.0) * xx4 * xx4;
    return result;
}

// Appends the code points of `s` (valid UTF-8: the seed step keeps no string cut inside a character) to `out`.
inline void append_utf8(const std::string& s, std::vector<uint32_t>& out) {
    for (size_t i = 0; i < s.size();) {
        const uint8_t c = (uint8_t)s[i];
        const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = cp << 6 | ((uint8_t)s[i + k] & 0x3F);
        out.push_back(cp);
        i += len;
    }
}

class Trainer {
  public:
    Corpus corpus;
    Pieces pieces;
    std::vector<float> scores;

    Trainer(int virtual_threads, int workers) : threads_(virtual_threads), workers_(workers) {}

    // seed_pieces' last steps: the characters (code point, count; in seed order), then the candidates (UTF-8, float
    // score; best first), each score made float(log(score) - log(sum)), the sum in double.
    void seed(const std::vector<std::pair<uint32_t, int64_t>>& chars,
              const std::vector<std::pair<std::string, float>>& candidates) {
        pieces.clear();
        scores.clear();
        pieces.offsets.reserve(chars.size() + candidates.size() + 1);
        scores.reserve(chars.size() + candidates.size());
        std::vector<uint32_t> code;
        for (const auto& c : chars) {
            pieces.push(&c.first, 1);
            scores.push_back((float)(double)c.second);
        }
        for (const auto& c : candidates) {
            code.clear();
            append_utf8(c.first, code);
            pieces.push(code.data(), code.size());
            scores.push_back(c.second);
        }
        double total = 0.0;
        for (float s : scores) total += s;
        const double log_total = std::log(total);
        for (float& s : scores) s = (float)(std::log((double)s) - log_total);
    }

    // One E-step (on the model of the current pieces) and M-step: pieces of expected count < 0.5 dropped, the
    // others scored digamma(count) - digamma(sum).
    void em_step() {
        std::vector<float> expected;
        {
            release_free_memory();  // the last model's blocks, before this one's
            Model model;
            model.set(pieces, scores);
            expected = e_step(model, corpus, record_, threads_, workers_);
        }
        std::vector<uint32_t> kept;
        float total = 0.0f;
        for (size_t i = 0; i < expected.size(); ++i) {
            if (expected[i] < 0.5) continue;
            kept.push_back((uint32_t)i);
            total = total + expected[i];
        }
        const float log_total = (float)digamma((double)total);
        std::vector<float> fresh;
        fresh.reserve(kept.size());
        for (uint32_t i : kept) fresh.push_back((float)(digamma((double)expected[i]) - (double)log_total));
        keep(kept, std::move(fresh));
    }

    // PruneSentencePieces: the pieces whose best segmentation is themselves, then those whose replacement by their
    // second-best segmentation loses the most likelihood, up to max(desired, shrinking_factor * size).
    void prune(size_t desired, float shrinking_factor) {
        const size_t size = pieces.size();
        std::vector<char> always_keep;
        Alternatives alts;
        std::vector<float> freqs;
        {
            Model model;
            model.set(pieces, scores);
            alternatives(model, always_keep, alts);
            freqs = viterbi_counts(model, corpus, record_, threads_, workers_);
        }
        double sum = 0.0;  // std::accumulate with a double 0.0
        for (float f : freqs) sum += f;
        const float total = (float)sum;
        const float log_total = (float)std::log((double)total);
        std::vector<uint32_t> kept;
        std::vector<std::pair<float, uint32_t>> candidates;
        for (size_t i = 0; i < size; ++i) {
            if (freqs[i] == 0 || !always_keep[i]) continue;
            const size_t n_alts = alts.size(i);
            if (n_alts == 0) {
                kept.push_back((uint32_t)i);
                continue;
            }
            const float logprob = (float)(std::log((double)freqs[i]) - (double)log_total);
            const float grown = (float)((double)freqs[i] * (double)(n_alts - 1));
            const float log_total_alt = (float)std::log((double)(float)((double)total + (double)grown));
            float logprob_alt = 0.0f;
            for (const int32_t *n = alts.of(i), *stop = n + n_alts; n < stop; ++n) {
                const float both = (float)((double)freqs[*n] + (double)freqs[i]);
                logprob_alt = (float)((double)logprob_alt + (std::log((double)both) - (double)log_total_alt));
            }
            const float share = (float)((double)freqs[i] / (double)total);
            const float loss = (float)((double)logprob - (double)logprob_alt);
            candidates.emplace_back((float)((double)share * (double)loss), (uint32_t)i);
        }
        std::vector<char>().swap(always_keep);
        alts = Alternatives();
        const size_t shrunk = (size_t)(int64_t)(float)((double)shrinking_factor * (double)(float)size);
        const size_t pruned_size = std::max(desired, shrunk);
        std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        for (const auto& c : candidates) {
            if (kept.size() == pruned_size) break;
            kept.push_back(c.second);
        }
        std::vector<float> fresh;
        fresh.reserve(kept.size());
        for (uint32_t i : kept) fresh.push_back(scores[i]);
        keep(kept, std::move(fresh));
    }

    // PruneUnreachableSentencePieces: the pieces Viterbi can choose, in order.
    void drop_unreachable() {
        std::vector<char> ok;
        {
            Model model;
            model.set(pieces, scores);
            ok = reachable(model);
        }
        std::vector<uint32_t> kept;
        std::vector<float> fresh;
        for (size_t i = 0; i < ok.size(); ++i) {
            if (!ok[i]) continue;
            kept.push_back((uint32_t)i);
            fresh.push_back(scores[i]);
        }
        keep(kept, std::move(fresh));
    }

  private:
    int threads_, workers_;
    Recorded record_;

    void keep(const std::vector<uint32_t>& kept, std::vector<float>&& fresh) {
        Pieces next = pieces.select(kept);
        pieces = std::move(next);
        scores = std::move(fresh);
    }
};

}  // namespace hfbpe_unigram
