// SentencePiece's IsValidSentencePiece (trainer_interface.cc), shared by the BPE merge loop (sp_trainer.hpp) and the
// unigram seed step (unigram_seed.hpp). Spec: hf_bpe.training.sentencepiece.bpe.valid_piece.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hfbpe_sp {

constexpr int32_t kAnyScript = -1, kInherited = -2;
constexpr uint32_t kPieceWs = 0x2581;

// What IsValidSentencePiece needs to know about a character.
struct CharInfo {
    int32_t script;  // kInherited takes the previous character's script; Hiragana/Katakana already mapped to Han
    bool decimal, forbidden;
};

struct Options {
    int64_t max_piece_length;
    bool split_by_whitespace, split_by_number, split_by_unicode_script, split_digits, allow_ws_only;
    bool ws_as_suffix = false;  // treat_whitespace_as_suffix: "▁" only as a suffix
};

// Whether the n characters at(0), ..., at(n - 1) make a valid piece (the length is checked by the callers);
// info(c) is the CharInfo of c, or nullptr for a character that is not kept (never valid).
template <class At, class Info>
bool is_valid_piece(size_t n, At&& at, Info&& info, const Options& opt) {
    bool all_ws = true;
    for (size_t i = 0; i < n; ++i) all_ws = all_ws && at(i) == kPieceWs;
    int32_t previous = kAnyScript;
    for (size_t pos = 0; pos < n; ++pos) {
        const uint32_t c = at(pos);
        const CharInfo* ci = info(c);
        if (ci == nullptr || ci->forbidden) return false;
        if (c == kPieceWs) {
            if (!opt.allow_ws_only || !all_ws) {
                const bool first = pos == 0, last = pos + 1 == n;
                if (opt.ws_as_suffix ? (opt.split_by_whitespace && !last) || (!opt.split_by_whitespace && !last && first)
                                     : (opt.split_by_whitespace && !first) || (!opt.split_by_whitespace && !first && last))
                    return false;
            }
            continue;
        }
        int32_t script = ci->script == kInherited ? previous : ci->script;
        if (!opt.split_by_number && ci->decimal) script = kAnyScript;
        if (opt.split_digits && ci->decimal && n > 1) return false;
        if (opt.split_by_unicode_script && script != kAnyScript && previous != kAnyScript && previous != script)
            return false;
        previous = script;
    }
    return true;
}

}  // namespace hfbpe_sp
