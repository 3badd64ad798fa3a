"""Where each token of an encoding comes from: character offsets and word (pre-token) indices, as `tokenizers`.

The fast tokenizer reports, for each token, the span of characters of the input whose bytes it holds (a token
holding part of a character's bytes spans the whole character) and the index of the pre-token ("word") it belongs
to. hf_bpe knows each token's bytes, so it gives the same, measured on every line of the shared corpora:

- words are the pieces of the pre-tokenizer (gaps of a custom pattern included), numbered from ``first_word``;
- with ``add_prefix_space`` the space put before a text belongs to its first character (a token that is only that
  space spans the first character), as tokenizers aligns it;
- offsets are in characters (code points) of the text, shifted by ``start``.

>>> from hf_bpe.model.bpe import BPEModel
>>> ids, offsets, words = align_ordinary(BPEModel.bytes_only(), "hé y")
>>> ids, offsets, words
([104, 195, 169, 32, 121], [(0, 1), (1, 2), (1, 2), (2, 3), (3, 4)], [0, 0, 0, 1, 1])
"""

from __future__ import annotations

from .bpe import BPEModel

__all__ = ["align_ordinary"]


def align_ordinary(
    model: BPEModel, text: str, *, start: int = 0, first_word: int = 0
) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """Encode ``text`` as :meth:`BPEModel.encode_ordinary` and align each token with the text.

    Args:
        model: the model.
        text: the text (no special-token handling: see ``HFBPETokenizer`` for added tokens).
        start: added to every offset (the text's position in a larger one).
        first_word: the word index of the text's first piece.

    Returns:
        ``(ids, offsets, words)``: the ids (equal to ``encode_ordinary``), ``(start, end)`` character spans and
        word indices, one per token. O(len(text)).
    """
    pretokenizer = model.pretokenizer
    prefixed = pretokenizer.add_prefix_space and bool(text) and not text.startswith(" ")
    encode_spans = model.encode_word_spans
    ids: list[int] = []
    offsets: list[tuple[int, int]] = []
    words: list[int] = []
    position = start  # the character where the current piece starts in the (unprefixed) text
    for index, piece in enumerate(pretokenizer.split(text)):
        data = piece.encode("utf-8")
        spans = encode_spans(data)
        extra = 1 if index == 0 and prefixed else 0  # the added space: aligned with the first character
        # char_of[b]: the character (relative to `position`) holding byte b of the piece.
        if piece.isascii():
            char_of = list(range(-extra, len(data) - extra))
        else:
            char_of = [-extra] * extra
            for offset, char in enumerate(piece[extra:]):
                char_of.extend([offset] * len(char.encode("utf-8")))
        if extra:
            char_of[0] = 0
        word = first_word + index
        for token_id, first, end in spans:
            ids.append(token_id)
            offsets.append((position + char_of[first], position + char_of[end - 1] + 1))
        words += [word] * len(spans)
        position += len(piece) - extra
    return ids, offsets, words
