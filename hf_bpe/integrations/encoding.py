"""``Encoding``: what the fast tokenizer returns per row (offsets, words, sequences, overflow), for ``HFBPETokenizer``.

transformers' ``BatchEncoding`` answers ``word_ids()``, ``char_to_token()``, ``token_to_chars()``, ... through
the `tokenizers` ``Encoding`` objects of a fast tokenizer. This module gives ``HFBPETokenizer`` the same objects:
a port of the parts of `tokenizers`' ``encoding.rs`` (``truncate`` with stride, ``merge_with``, ``pad``, the
lookups), ``utils/truncation.rs`` (``truncate_encodings``), the ``ByteLevel`` and ``TemplateProcessing``
post-processors, in the order ``TokenizerImpl::post_process`` applies them. Each function names its Rust
counterpart; ``tests/test_encoding.py`` holds the results equal to ``GPT2TokenizerFast`` on the shared corpora.

>>> e = Encoding([5, 6], ["a", "b"], [0, 1], [(0, 1), (1, 2)])
>>> e.truncate(1, 0, "right"); e.ids, [o.ids for o in e.overflowing]
([5], [[6]])
>>> e.char_to_token(0), e.word_ids
(0, [0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["Encoding", "PipelineOptions", "longest_first_lengths", "pad_encodings", "post_process", "truncate_encodings"]


class Encoding:
    """One encoded row, with the lookups of `tokenizers`' ``Encoding`` (the subset transformers uses).

    Args:
        ids, tokens, words, offsets: one entry per token (words: ``None`` for special and pad tokens).
        type_ids, special_tokens_mask, attention_mask: one per token (defaults: 0, 0, 1).
    """

    __slots__ = ("ids", "type_ids", "tokens", "words", "offsets", "special_tokens_mask", "attention_mask",
                 "overflowing", "sequence_ranges")

    def __init__(self, ids: list[int], tokens: list[str], words: list[int | None], offsets: list[tuple[int, int]],
                 type_ids: list[int] | None = None, special_tokens_mask: list[int] | None = None,
                 attention_mask: list[int] | None = None) -> None:
        self.ids = ids
        self.tokens = tokens
        self.words = words
        self.offsets = offsets
        self.type_ids = [0] * len(ids) if type_ids is None else type_ids
        self.special_tokens_mask = [0] * len(ids) if special_tokens_mask is None else special_tokens_mask
        self.attention_mask = [1] * len(ids) if attention_mask is None else attention_mask
        self.overflowing: list[Encoding] = []
        self.sequence_ranges: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self.ids)}, overflowing={len(self.overflowing)})"

    def _slice(self, start: int, stop: int) -> Encoding:
        return Encoding(self.ids[start:stop], self.tokens[start:stop], self.words[start:stop],
                        self.offsets[start:stop], self.type_ids[start:stop], self.special_tokens_mask[start:stop],
                        self.attention_mask[start:stop])

    def copy(self) -> Encoding:
        """A deep copy (overflowing included), as Rust's ``clone``."""
        new = self._slice(0, len(self.ids))
        new.overflowing = [o.copy() for o in self.overflowing]
        new.sequence_ranges = dict(self.sequence_ranges)
        return new

    # -- the attributes tokenizers' Python binding exposes ---------------------------------------------------------

    @property
    def word_ids(self) -> list[int | None]:
        return list(self.words)

    @property
    def n_sequences(self) -> int:
        return len(self.sequence_ranges) or 1

    @property
    def sequence_ids(self) -> list[int | None]:
        sequences: list[int | None] = [None] * len(self.ids)
        for sequence_id in range(self.n_sequences):
            start, stop = self._sequence_range(sequence_id)
            sequences[start:stop] = [sequence_id] * (stop - start)
        return sequences

    def _sequence_range(self, sequence_id: int) -> tuple[int, int]:
        return self.sequence_ranges.get(sequence_id, (0, len(self.ids)))

    def set_sequence_id(self, sequence_id: int) -> None:
        self.sequence_ranges[sequence_id] = (0, len(self.ids))

    def token_to_sequence(self, token: int) -> int | None:
        if token >= len(self.ids):
            return None
        if not self.sequence_ranges:
            return 0
        return next((s for s, (a, b) in self.sequence_ranges.items() if a <= token < b), None)

    def token_to_word(self, token: int) -> int | None:
        if self.token_to_sequence(token) is None or not 0 <= token < len(self.words):
            return None
        return self.words[token]

    def token_to_chars(self, token: int) -> tuple[int, int] | None:
        if self.token_to_sequence(token) is None or not 0 <= token < len(self.offsets):
            return None
        return self.offsets[token]

    def word_to_tokens(self, word: int, sequence_id: int = 0) -> tuple[int, int] | None:
        start_range, stop_range = self._sequence_range(sequence_id)
        start = end = None
        for index, current in enumerate(self.words[start_range:stop_range]):
            # Rust's take_while(w <= Some(word)): None sorts before every Some.
            if current is not None and current > word:
                break
            if current == word:
                start = index if start is None else start
                end = index + 1
        if start is None or end is None:
            return None
        return start_range + start, start_range + end

    def word_to_chars(self, word: int, sequence_id: int = 0) -> tuple[int, int] | None:
        span = self.word_to_tokens(word, sequence_id)
        if span is None or span[1] == 0:
            return None
        return self.offsets[span[0]][0], self.offsets[span[1] - 1][1]

    def char_to_token(self, position: int, sequence_id: int = 0) -> int | None:
        start_range, stop_range = self._sequence_range(sequence_id)
        for index, (start, end) in enumerate(self.offsets[start_range:stop_range]):
            if start <= position < end:
                return start_range + index
        return None

    def char_to_word(self, position: int, sequence_id: int = 0) -> int | None:
        token = self.char_to_token(position, sequence_id)
        return None if token is None else self.token_to_word(token)

    # -- encoding.rs: truncate, merge_with, pad ---------------------------------------------------------------------

    def truncate(self, max_len: int, stride: int, direction: str) -> None:
        """Keep ``max_len`` tokens; the rest become ``overflowing`` windows overlapping by ``stride`` tokens."""
        total = len(self.ids)
        if max_len >= total:
            return
        if max_len == 0:
            whole = self.copy()
            self.__init__([], [], [], [])  # type: ignore[misc]
            self.overflowing.append(whole)
            return
        if stride >= max_len:
            raise ValueError(f"stride={stride} must be smaller than the tokens left for text per row ({max_len}: "
                             "max_length minus the special tokens); lower the stride or raise max_length")
        step = max_len - stride
        parts: list[tuple[int, int]] = []
        if direction == "right":
            for start in range(0, total, step):
                stop = min(start + max_len, total)
                parts.append((start, stop))
                if stop == total:
                    break
        else:
            for last in range(total - 1, -1, -step):
                stop = last + 1
                start = max(stop - max_len, 0)
                parts.append((start, stop))
                if start == 0:
                    break
        windows = [self._slice(a, b) for a, b in parts]
        main = windows[0]
        main.overflowing = windows[1:]
        self._take(main)

    def _take(self, other: Encoding) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(other, name))

    def merge_with(self, pair: Encoding) -> None:
        """Append ``pair`` (Rust's ``merge_with(pair, false)``), combining the overflowing windows of both."""
        overflowings = []
        for own in self.overflowing:
            joined = own.copy()
            joined.merge_with(pair.copy())
            overflowings.append(joined)
            for other in pair.overflowing:
                joined = own.copy()
                joined.merge_with(other.copy())
                overflowings.append(joined)
        for other in pair.overflowing:
            joined = self.copy()
            joined.merge_with(other.copy())
            overflowings.append(joined)
        shift = len(self.ids)
        for sequence_id, (a, b) in pair.sequence_ranges.items():
            self.sequence_ranges[sequence_id] = (shift + a, shift + b)
        self.ids += pair.ids
        self.type_ids += pair.type_ids
        self.tokens += pair.tokens
        self.words += pair.words
        self.offsets += pair.offsets
        self.special_tokens_mask += pair.special_tokens_mask
        self.attention_mask += pair.attention_mask
        self.overflowing = overflowings

    def pad(self, target: int, pad_id: int, pad_type_id: int, pad_token: str, side: str) -> None:
        """Pad to ``target`` tokens (the overflowing windows too)."""
        for other in self.overflowing:
            other.pad(target, pad_id, pad_type_id, pad_token, side)
        missing = target - len(self.ids)
        if missing <= 0:
            return
        fill = {"ids": [pad_id], "type_ids": [pad_type_id], "tokens": [pad_token], "words": [None],
                "offsets": [(0, 0)], "special_tokens_mask": [1], "attention_mask": [0]}
        for name, value in fill.items():
            current = getattr(self, name)
            setattr(self, name, value * missing + current if side == "left" else current + value * missing)
        if side == "left":
            self.sequence_ranges = {s: (a + missing, b + missing) for s, (a, b) in self.sequence_ranges.items()}


def merge(encodings: Sequence[Encoding]) -> Encoding:
    """Rust's ``Encoding::merge(encodings, false)``: an empty encoding merged with each in turn."""
    result = Encoding([], [], [], [])
    for encoding in encodings:
        result.merge_with(encoding)
    return result


class PipelineOptions:
    """What one call asks of the pipeline (transformers' arguments, resolved)."""

    __slots__ = ("truncation", "max_length", "stride", "direction", "padding", "pad_length", "pad_to_multiple_of",
                 "pad_side", "pad_id", "pad_type_id", "pad_token", "add_special_tokens")

    def __init__(self, **values: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, values.get(name))


def longest_first_lengths(n1: int, n2: int, limit: int) -> tuple[int, int]:
    """The lengths ``tokenizers``' ``longest_first`` keeps of a pair of ``n1`` and ``n2`` tokens within ``limit``.

    >>> longest_first_lengths(5, 9, 9)
    (4, 5)
    """
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    n2 = n1 if n1 > limit else max(n1, limit - n1)
    if n1 + n2 > limit:
        n1 = limit // 2
        n2 = n1 + limit % 2
    return (n2, n1) if swap else (n1, n2)


def truncate_encodings(first: Encoding, pair: Encoding | None, strategy: str, max_length: int, stride: int,
                       direction: str) -> None:
    """``utils/truncation.rs::truncate_encodings`` (``max_length`` already without the special tokens)."""
    if max_length == 0:
        first.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return
    total = len(first) + (len(pair) if pair is not None else 0)
    if total <= max_length:
        return
    to_remove = total - max_length
    if strategy == "longest_first":
        if pair is None:
            first.truncate(total - to_remove, stride, direction)
            return
        n1, n2 = longest_first_lengths(len(first), len(pair), max_length)
        first.truncate(n1, stride, direction)
        pair.truncate(n2, stride, direction)
        return
    if strategy == "only_second" and pair is None:
        raise ValueError("truncation='only_second' needs a pair of sequences (text_pair=...)")
    target = first if strategy == "only_first" else pair
    assert target is not None
    if len(target) > to_remove:
        target.truncate(len(target) - to_remove, stride, direction)
        return
    raise ValueError(
        f"truncation={strategy!r}: the sequence to truncate has {len(target)} tokens but {to_remove} must go to fit "
        f"max_length; use truncation='longest_first' or a larger max_length"
    )


def post_process(first: Encoding, pair: Encoding | None, template: tuple[list[int], list[int]] | None,
                 special_tokens: dict[int, str], options: PipelineOptions) -> Encoding:
    """``TokenizerImpl::post_process``: truncate, then add special tokens (``TemplateProcessing`` when there are
    any: ``template`` is ``(ids before, ids after)`` each sequence, else ``default_process``), then merge.
    """
    # 1. Truncation, leaving room for the special tokens the processor adds.
    if options.truncation is not None:
        added = 0
        if options.add_special_tokens and template is not None:
            added = (len(template[0]) + len(template[1])) * (1 if pair is None else 2)
        truncate_encodings(first, pair, options.truncation, max(options.max_length - added, 0), options.stride,
                           options.direction)
    # 2. Special tokens and the sequence ids, as TemplateProcessing / default_process set them.
    # GPT-2's tokenizer.json and hf_bpe's have a ByteLevel post-processor, whose process() sets the sequence id
    # of a single sequence too: padding then has sequence id None, as the fast tokenizer reports.
    if template is None or not options.add_special_tokens or not any(template):
        for sequence_id, encoding in enumerate((first,) if pair is None else (first, pair)):
            _set_sequence_id_all(encoding, sequence_id)
        return merge([first] if pair is None else [first, pair])
    before, after = template
    parts: list[Encoding] = []
    for sequence_id, encoding in enumerate([first] if pair is None else [first, pair]):
        _set_type_ids_all(encoding, sequence_id)
        _set_sequence_id_all(encoding, sequence_id)
        parts += [_specials(before, sequence_id, special_tokens), encoding, _specials(after, sequence_id, special_tokens)]
    return merge([p for p in parts if p is not None])


def _set_sequence_id_all(encoding: Encoding, sequence_id: int) -> None:
    encoding.set_sequence_id(sequence_id)
    for other in encoding.overflowing:
        _set_sequence_id_all(other, sequence_id)


def _set_type_ids_all(encoding: Encoding, type_id: int) -> None:
    encoding.type_ids = [type_id] * len(encoding.ids)
    for other in encoding.overflowing:
        _set_type_ids_all(other, type_id)


def _specials(ids: list[int], type_id: int, names: dict[int, str]) -> Encoding | None:
    if not ids:
        return None
    return Encoding(list(ids), [names[i] for i in ids], [None] * len(ids), [(0, 0)] * len(ids),
                    [type_id] * len(ids), [1] * len(ids), [1] * len(ids))


def pad_encodings(encodings: list[Encoding], options: PipelineOptions) -> None:
    """``utils/padding.rs::pad_encodings``: to the longest row (or a fixed length), rounded up to a multiple."""
    if not options.padding or not encodings:
        return
    length = options.pad_length if options.pad_length is not None else max(len(e) for e in encodings)
    multiple = options.pad_to_multiple_of
    if multiple and length % multiple:
        length += multiple - length % multiple
    for encoding in encodings:
        encoding.pad(length, options.pad_id, options.pad_type_id, options.pad_token, options.pad_side)
