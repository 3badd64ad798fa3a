// SentencePiece's unigram Viterbi (unigram_model.cc, Model::EncodeOptimized), exactly: the compiled twin of
// hf_bpe.model.unigram.UnigramModel.viterbi_reference (the executable spec; tests/test_unigram.py holds them equal).
//
// The pieces sentencepiece keeps in its trie (NORMAL, USER_DEFINED, UNUSED) sit in a byte trie whose edges are one
// hash map keyed by (node << 8 | byte). One pass over the UTF-8 text keeps, for every byte position, the best path
// ending there: candidates are float32 sums (as sentencepiece adds them), a stored one is replaced only by a strictly
// greater one, and candidates arrive by start position, then by length (the tie order). A USER_DEFINED piece scores
// float(0.1 * bytes - 0.1) -- sentencepiece 0.2.3 as measured, see the Python module. Complexity: O(n k) for n bytes
// and k the longest piece in bytes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace hfbpe_unigram {

enum Kind : int { kNormal = 1, kUserDefined = 4, kUnused = 5 };

class UnigramViterbi {
 public:
  UnigramViterbi(int32_t unk_id, float unk_score) : unk_id_(unk_id), unk_score_(unk_score) {
    values_.push_back(-1);
  }

  // Adds a trie piece (its UTF-8 bytes), its id, score and kind.
  void add(const std::string& piece, int32_t id, float score, int kind) {
    int32_t node = 0;
    for (unsigned char byte : piece) {
      const uint64_t key = (static_cast<uint64_t>(node) << 8) | byte;
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        const int32_t next = static_cast<int32_t>(values_.size());
        values_.push_back(-1);
        edges_.emplace(key, next);
        node = next;
      } else {
        node = it->second;
      }
    }
    values_[node] = static_cast<int32_t>(entries_.size());
    const float value = kind == kUserDefined
        ? static_cast<float>(static_cast<double>(piece.size()) * 0.1 - 0.1) : score;
    entries_.push_back(Entry{id, value, kind == kUnused});
  }

  // The best segmentation of `text` (normalized, UTF-8): starts[i] is the byte offset where piece i begins and
  // ids[i] its id (the unknown id for an unknown character, one per character).
  void segment(const char* text, size_t size, std::vector<int32_t>& starts, std::vector<int32_t>& ids) const {
    starts.clear();
    ids.clear();
    if (size == 0) return;
    std::vector<Best> best(size + 1);
    size_t start = 0;
    while (start < size) {
      const float till = best[start].score;
      const size_t mblen = std::min(one_char_len(static_cast<unsigned char>(text[start])), size - start);
      bool single = false;
      int32_t node = 0;
      for (size_t key = start; key < size; ++key) {
        auto it = edges_.find((static_cast<uint64_t>(node) << 8) | static_cast<unsigned char>(text[key]));
        if (it == edges_.end()) break;
        node = it->second;
        const int32_t entry = values_[node];
        if (entry < 0) continue;
        const Entry& piece = entries_[entry];
        if (piece.unused) continue;
        const float candidate = piece.score + till;
        Best& target = best[key + 1];
        if (target.start < 0 || candidate > target.score) {
          target = Best{candidate, static_cast<int32_t>(start), piece.id};
        }
        if (key + 1 - start == mblen) single = true;
      }
      if (!single) {
        const float candidate = unk_score_ + till;
        Best& target = best[start + mblen];
        if (target.start < 0 || candidate > target.score) {
          target = Best{candidate, static_cast<int32_t>(start), unk_id_};
        }
      }
      start += mblen;
    }
    for (size_t end = size; end > 0; end = static_cast<size_t>(best[end].start)) {
      starts.push_back(best[end].start);
      ids.push_back(best[end].id);
    }
    std::reverse(starts.begin(), starts.end());
    std::reverse(ids.begin(), ids.end());
  }

 private:
  struct Entry {
    int32_t id;
    float score;
    bool unused;
  };
  struct Best {
    float score = 0.0f;
    int32_t start = -1;
    int32_t id = -1;
  };

  // sentencepiece's string_util::OneCharLen: the UTF-8 length announced by a lead byte (1 for a stray one).
  static size_t one_char_len(unsigned char lead) {
    static const size_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLengths[lead >> 4];
  }

  int32_t unk_id_;
  float unk_score_;
  std::vector<int32_t> values_;  // node -> entry index, or -1
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, int32_t> edges_;
};

}  // namespace hfbpe_unigram
