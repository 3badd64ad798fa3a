// SentencePiece's normalizer (normalizer.cc's Normalize and NormalizePrefix), exactly, on UTF-8. The executable spec
// is hf_bpe/core/sentencepiece_normalize.py (SentencePieceNormalizer); tests hold both equal to each other and to
// sentencepiece.SentencePieceNormalizer.
//
// The charsmap is SentencePiece's precompiled blob: a uint32 trie size, a darts-clone double-array trie from UTF-8
// sequences to offsets, and the NUL-terminated normalized forms. At each position the longest known sequence is
// replaced (a user symbol, if any starts there, is copied first); O(length of the longest rule) per position.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace hfbpe_sp {

class Normalizer {
   public:
    Normalizer(const std::string& charsmap, bool add_dummy_prefix, bool remove_extra_whitespaces,
               bool escape_whitespaces, std::vector<std::string> user_symbols, bool dummy_as_suffix = false)
        : dummy_(add_dummy_prefix), suffix_(dummy_as_suffix), remove_(remove_extra_whitespaces),
          space_(escape_whitespaces ? "\xe2\x96\x81" : " "), user_(std::move(user_symbols)) {
        if (!charsmap.empty()) {
            // The same checks, in the same order and words, as parse_charsmap in sentencepiece_normalize.py.
            if (charsmap.size() <= 4)
                throw std::invalid_argument("precompiled_charsmap: " + std::to_string(charsmap.size()) +
                                            " bytes; a precompiled charsmap holds a 4-byte trie size, the trie "
                                            "and the normalized forms");
            uint32_t size = 0;
            std::memcpy(&size, charsmap.data(), 4);
            if (size > charsmap.size() - 4 || size % 4)
                throw std::invalid_argument("precompiled_charsmap: its header declares a " + std::to_string(size) +
                                            "-byte trie; " + std::to_string(charsmap.size() - 4) +
                                            " bytes follow the 4-byte header and a trie is a multiple of 4 bytes");
            units_.resize(size / 4);
            if (size) std::memcpy(units_.data(), charsmap.data() + 4, size);  // memcpy needs a valid pointer
            forms_.assign(charsmap.data() + 4 + size, charsmap.size() - 4 - size);
        }
        for (size_t i = 0; i < user_.size(); ++i)  // longest first: the first that matches is the longest
            for (size_t j = i + 1; j < user_.size(); ++j)
                if (user_[j].size() > user_[i].size()) std::swap(user_[i], user_[j]);
    }

    // Normalize data[0..n) into `out` (cleared first).
    void normalize(const char* data, size_t n, std::string& out) const {
        out.clear();
        size_t pos = 0;
        const char* piece;
        size_t piece_size, consumed;
        // 1. Leading pieces that normalize to a single space are dropped.
        if (remove_) {
            while (pos < n) {
                prefix(data + pos, n - pos, &piece, &piece_size, &consumed);
                if (!(piece_size == 1 && piece[0] == ' ')) break;
                pos += consumed;
            }
        }
        if (pos == n) return;
        if (dummy_ && !suffix_) out += space_;
        // 2. Piece by piece: leading spaces of a piece dropped after a space, spaces escaped.
        bool previous_space = remove_;
        while (pos < n) {
            prefix(data + pos, n - pos, &piece, &piece_size, &consumed);
            if (previous_space)
                while (piece_size && *piece == ' ') ++piece, --piece_size;
            if (piece_size) {
                for (size_t i = 0; i < piece_size; ++i) {
                    if (piece[i] == ' ')
                        out += space_;
                    else
                        out += piece[i];
                }
                previous_space = piece[piece_size - 1] == ' ';
            }
            pos += consumed;
            if (!remove_) previous_space = false;
        }
        // 3. Trailing spaces (escaped or not) removed.
        if (remove_)
            while (out.size() >= space_.size() && out.compare(out.size() - space_.size(), space_.size(), space_) == 0)
                out.resize(out.size() - space_.size());
        // 4. treat_whitespace_as_suffix: the dummy space goes at the end (after the trailing ones were removed).
        if (dummy_ && suffix_) out += space_;
    }

   private:
    // NormalizePrefix: the form of the longest rule at `data` (or the user symbol, or the character itself).
    void prefix(const char* data, size_t n, const char** piece, size_t* piece_size, size_t* consumed) const {
        for (const std::string& symbol : user_) {
            if (symbol.size() <= n && std::memcmp(symbol.data(), data, symbol.size()) == 0) {
                *piece = data;
                *piece_size = *consumed = symbol.size();
                return;
            }
        }
        size_t length = 0;
        uint32_t value = 0;
        if (!units_.empty()) longest(data, n, &length, &value);
        if (length) {
            *piece = forms_.data() + value;
            *piece_size = std::strlen(*piece);  // forms_ is a std::string: NUL-terminated past its last form
            *consumed = length;
            return;
        }
        unsigned char first = (unsigned char)data[0];
        size_t size = first < 0x80 ? 1 : first < 0xE0 ? 2 : first < 0xF0 ? 3 : 4;
        *piece = data;
        *piece_size = *consumed = size < n ? size : n;
    }

    // darts-clone's commonPrefixSearch, keeping the longest match.
    void longest(const char* data, size_t n, size_t* length, uint32_t* value) const {
        uint32_t unit = units_[0];
        size_t node = (unit >> 10) << ((unit & 0x200) >> 6);
        for (size_t i = 0; i < n; ++i) {
            unsigned char byte = (unsigned char)data[i];
            node ^= byte;
            if (node >= units_.size()) return;
            unit = units_[node];
            if ((unit & 0x800000FFu) != byte) return;
            node ^= (unit >> 10) << ((unit & 0x200) >> 6);
            if (node >= units_.size()) return;
            if ((unit >> 8) & 1) {
                *length = i + 1;
                *value = units_[node] & 0x7FFFFFFFu;
                if (*value >= forms_.size())
                    throw std::invalid_argument("precompiled_charsmap: the trie points at form " +
                                                std::to_string(*value) + ", past its " +
                                                std::to_string(forms_.size()) + "-byte forms");
            }
        }
    }

    bool dummy_, suffix_, remove_;
    std::string space_;
    std::vector<std::string> user_;
    std::vector<uint32_t> units_;
    std::string forms_;
};

}  // namespace hfbpe_sp
