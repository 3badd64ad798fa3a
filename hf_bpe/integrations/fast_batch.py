"""The batch fast path of ``HFBPETokenizer``: a batch of strings encoded exactly as the general path, far faster.

The general path of transformers' ``PythonBackend`` sends every item through ``_encode_plus``,
``prepare_for_model`` and a ``BatchEncoding`` (~25 µs of Python per item). :class:`FastBatchMixin` gets the ids of
the whole batch from the compiled core in one call and runs each step of ``prepare_for_model`` and ``pad`` once per
batch; the tests hold it equal to the general path over the option space.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import regex
from transformers.tokenization_utils_base import (
    BatchEncoding,
    PaddingStrategy,
    TruncationStrategy,
)
from transformers.utils import TensorType

from ..core.specials import special_tokens_regex
from .added_tokens import SEPARATORS

__all__ = ["FAST_OPTIONS", "FAST_PATH_METHODS", "FastBatchMixin"]

# What transformers' __call__ and encode pass to _encode_plus; a call with any other keyword takes the general path.
FAST_OPTIONS = frozenset({
    "add_special_tokens", "padding_strategy", "truncation_strategy", "max_length", "stride", "is_split_into_words",
    "pad_to_multiple_of", "padding_side", "return_tensors", "return_token_type_ids", "return_attention_mask",
    "return_overflowing_tokens", "return_special_tokens_mask", "return_offsets_mapping", "return_length", "verbose",
    "split_special_tokens",
})

# The methods whose combined effect the batch fast path reproduces (it calls some once per batch instead of once per
# item, or not at all when they would do nothing); a subclass that overrides any of them gets the general path.
FAST_PATH_METHODS = (
    "_encode_plus", "_encode_batch_fast", "_encode_texts", "_encode_text", "_splitter", "_added_token_finder",
    "tokenize", "prepare_for_tokenization", "convert_tokens_to_ids", "prepare_for_model",
    "_get_padding_truncation_strategies", "num_special_tokens_to_add", "build_inputs_with_special_tokens",
    "_eventual_warn_about_too_long_sequence", "pad", "_pad",
)


def rows_as_numpy(rows: list[Any]) -> Any:
    """Return ``rows`` as the array BatchEncoding's "np" conversion makes, or unchanged if the rows are ragged."""
    if not rows or not isinstance(rows[0], list):
        return np.asarray(rows) if rows else rows  # "length": a list of ints
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        return rows
    # BatchEncoding gives int64 to an array without any element (all rows empty), NumPy's default otherwise.
    return np.asarray(rows, dtype=np.int64) if width == 0 else np.asarray(rows)


class FastBatchMixin:
    """The batch fast path; mixed into ``HFBPETokenizer`` (it uses its ``bpe_model``, matchers and caches)."""

    def _added_token_finder(self) -> tuple[regex.Pattern[str] | None, str | None]:
        """Return a regex matching the text of any added token (None: no tokens) and a separator none contains."""
        splitter = self._splitter()
        cached = self.cache.get("finder")
        # Tied to the splitter it was made from, so it is never staler than the matchers themselves.
        if cached is not None and cached[0] is splitter:
            return cached[1], cached[2]
        raw, normalized = splitter
        contents = {*raw.tokens, *normalized.tokens}
        pattern = special_tokens_regex(contents)
        separator = next((c for c in SEPARATORS if not any(c in t for t in contents)), None)
        self.cache["finder"] = (splitter, pattern, separator)
        return pattern, separator

    def _encode_texts(self, texts: Sequence[str], split_special_tokens: bool) -> list[list[int]]:
        """Encode each text to ids exactly as :meth:`_encode_text` does, with one call into the compiled core.

        Only the texts that contain an added token's text take ``_encode_text``; one regex search over the joined
        batch finds them (linear in the batch's length; a search per text would cost more than encoding it).
        """
        # Surrogates raise, as in the fast tokenizer (see HFBPETokenizer._encode_text).
        encode_batch = functools.partial(self.bpe_model.encode_ordinary_batch, surrogates="strict")
        pattern, separator = self._added_token_finder() if self._added_tokens_encoder else (None, None)
        if pattern is None:
            return list(encode_batch(texts))
        count = len(texts)
        flagged: list[int] = []
        if separator is None:
            flagged = list(range(count))
        else:
            joined = separator.join(texts)
            match = pattern.search(joined)
            if match is not None:
                starts = [0] * count  # starts[i]: offset of texts[i] in `joined`
                offset = 0
                for i, text in enumerate(texts):
                    starts[i] = offset
                    offset += len(text) + 1
                while match is not None:
                    index = bisect.bisect_right(starts, match.start()) - 1
                    flagged.append(index)
                    if index + 1 == count:
                        break
                    match = pattern.search(joined, starts[index + 1])  # the rest of this text is settled
        if not flagged:
            return list(encode_batch(texts))
        ids: list[list[int]] = [[]] * count
        flagged_set = set(flagged)
        plain = [i for i in range(count) if i not in flagged_set]
        for i, encoded in zip(plain, encode_batch([texts[i] for i in plain])):
            ids[i] = encoded
        for i in flagged:
            ids[i] = self._encode_text(texts[i], split_special_tokens)
        return ids

    def _special_token_frame(self, pair: bool) -> tuple[list[int], list[int], list[int]]:
        """Return the ids that ``build_inputs_with_special_tokens`` puts before, between and after the sequences.

        The base class's method (the fast path runs only when it is not overridden) builds
        ``prefix + ids_0 + suffix`` or ``prefix + ids_0 + middle + ids_1 + suffix`` for every pattern; marker objects
        in place of ids show where each part ends.
        """
        first, second = object(), object()
        built = self.build_inputs_with_special_tokens([first], [second] if pair else None)
        i = built.index(first)
        if not pair:
            return built[:i], [], built[i + 1:]
        j = built.index(second)
        return built[:i], built[i + 1:j], built[j + 1:]

    def _encode_batch_fast(
        self, texts: Sequence[Any], pairs: Any, options: dict[str, Any]
    ) -> BatchEncoding | None:
        """Encode a batch of strings (or string pairs) exactly as the general path does; None if not covered.

        The general path (``PythonBackend._encode_plus``) sends every item through ``_encode_plus``,
        ``prepare_for_model`` and a ``BatchEncoding``, then pads the batch item by item: about 25 µs of Python per
        item, 10 times the cost of encoding an English line. Here the ids come from the compiled core in one call
        and each step of ``prepare_for_model`` and ``pad`` runs once per batch or as a list comprehension. Methods
        whose result depends on the item (``truncate_sequences``, ``create_token_type_ids_from_sequences``,
        ``get_special_tokens_mask``) are called with the same arguments as there. Not covered (None): a subclass
        overriding one of ``FAST_PATH_METHODS``, items that are not ``str`` (pre-tokenized words, ids, pairs
        given as tuples), ``return_overflowing_tokens``, ``return_offsets_mapping``, unknown keywords, and errors
        while encoding (the general path then raises its own, for the item it stops at).
        """
        # 1. Only the calls this path reproduces exactly.
        if not options.keys() <= FAST_OPTIONS or not self._keeps_fast_path_methods():
            return None
        get = options.get
        if get("is_split_into_words") or get("return_overflowing_tokens") or get("return_offsets_mapping"):
            return None
        padding_strategy = get("padding_strategy", PaddingStrategy.DO_NOT_PAD)
        truncation_strategy = get("truncation_strategy", TruncationStrategy.DO_NOT_TRUNCATE)
        if not isinstance(padding_strategy, PaddingStrategy) or not isinstance(truncation_strategy, TruncationStrategy):
            return None
        if self.model_input_names[0] != "input_ids" or not all(isinstance(text, str) for text in texts):
            return None
        pair = pairs is not None
        if pair and not (isinstance(pairs, (list, tuple)) and len(pairs) == len(texts)
                         and all(isinstance(text, str) for text in pairs)):
            return None
        add_special_tokens = get("add_special_tokens", True)
        max_length = get("max_length")
        verbose = get("verbose", True)
        split = get("split_special_tokens")
        split = self.split_special_tokens if split is None else split

        # 2. The ids of every text (added tokens split out as _encode_text does).
        try:
            first = self._encode_texts(texts, split)
            second = self._encode_texts(pairs, split) if pair else None
        except Exception:  # noqa: BLE001 - re-run item by item so that the error is the general path's
            return None

        # 3. prepare_for_model, item by item, with padding off and no attention mask (as the base class asks it).
        _, item_truncation, item_max_length, _ = self._get_padding_truncation_strategies(
            padding=PaddingStrategy.DO_NOT_PAD.value, truncation=truncation_strategy.value, max_length=max_length,
            pad_to_multiple_of=None, verbose=verbose,
        )
        return_token_type_ids = get("return_token_type_ids")
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        return_special_tokens_mask = get("return_special_tokens_mask", False)
        num_special = self.num_special_tokens_to_add(pair=pair) if add_special_tokens else 0
        if item_truncation != TruncationStrategy.DO_NOT_TRUNCATE and item_max_length:
            stride = get("stride", 0)
            for i, ids in enumerate(first):
                pair_ids = second[i] if second is not None else None
                total = len(ids) + len(pair_ids or []) + num_special
                if total > item_max_length:
                    first[i], pair_ids, _ = self.truncate_sequences(
                        ids, pair_ids=pair_ids, num_tokens_to_remove=total - item_max_length,
                        truncation_strategy=item_truncation, stride=stride,
                    )
                    if second is not None:
                        second[i] = pair_ids
        pairs_ids: list[Any] = second if second is not None else [None] * len(first)
        if add_special_tokens:
            prefix, middle, suffix = self._special_token_frame(pair)
            if second is None:
                sequences = [prefix + ids + suffix for ids in first] if prefix or suffix else first
            else:
                # A pair truncated away to None is built as a single sequence, as prepare_for_model would.
                build = self.build_inputs_with_special_tokens
                sequences = [prefix + ids + middle + pair_ids + suffix if pair_ids is not None else build(ids, None)
                             for ids, pair_ids in zip(first, second)]
        else:
            sequences = first if second is None else [
                ids + (pair_ids if pair_ids else []) for ids, pair_ids in zip(first, second)]
        data: dict[str, Any] = {"input_ids": sequences}
        if return_token_type_ids:
            if add_special_tokens:
                make = self.create_token_type_ids_from_sequences
                data["token_type_ids"] = [make(ids, pair_ids) for ids, pair_ids in zip(first, pairs_ids)]
            else:
                data["token_type_ids"] = [[0] * len(sequence) for sequence in sequences]
        if return_special_tokens_mask:
            if add_special_tokens:
                mask = self.get_special_tokens_mask
                data["special_tokens_mask"] = [mask(ids, pair_ids) for ids, pair_ids in zip(first, pairs_ids)]
            else:
                data["special_tokens_mask"] = [[0] * len(sequence) for sequence in sequences]
        model_max_length = self.model_max_length
        if item_max_length is None and verbose and model_max_length != 0:
            for sequence in sequences:
                if len(sequence) > model_max_length:
                    # It warns once per tokenizer: later calls would change nothing.
                    self._eventual_warn_about_too_long_sequence(sequence, item_max_length, verbose)
                    break
        if get("return_length", False):
            data["length"] = [len(sequence) for sequence in sequences]

        # 4. pad, for the batch.
        pad_strategy, _, target, _ = self._get_padding_truncation_strategies(
            padding=padding_strategy.value, max_length=max_length  # pad() is called without verbose
        )
        return_attention_mask = get("return_attention_mask")
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        if return_attention_mask:
            data["attention_mask"] = [[1] * len(sequence) for sequence in sequences]
        if pad_strategy == PaddingStrategy.LONGEST:
            target = max(len(sequence) for sequence in sequences)
            pad_strategy = PaddingStrategy.MAX_LENGTH
        pad_to_multiple_of = get("pad_to_multiple_of")
        if target is not None and pad_to_multiple_of is not None and (target % pad_to_multiple_of != 0):
            target = ((target // pad_to_multiple_of) + 1) * pad_to_multiple_of
        if pad_strategy != PaddingStrategy.DO_NOT_PAD and any(len(sequence) != target for sequence in sequences):
            padding_side = get("padding_side")
            side = padding_side if padding_side is not None else self.padding_side
            if side not in ("right", "left"):
                raise ValueError(f"Invalid padding strategy:{side}")
            fills = {"input_ids": self.pad_token_id, "attention_mask": 0, "special_tokens_mask": 1}
            if "token_type_ids" in data:
                fills["token_type_ids"] = self.pad_token_type_id
            # Longer sequences (padding to a max_length without truncation) are left as they are.
            lengths = [len(sequence) for sequence in sequences]
            for key, fill in fills.items():
                rows = data.get(key)
                if rows is None:
                    continue
                if side == "right":
                    data[key] = [row + [fill] * (target - n) if n < target else row for row, n in zip(rows, lengths)]
                else:
                    data[key] = [[fill] * (target - n) + row if n < target else row for row, n in zip(rows, lengths)]

        # 5. NumPy arrays of the rectangular rows, as BatchEncoding makes them (its own conversion first flattens
        # the rows in Python, one isinstance per id: it would cost more than the rest); ragged rows are its job.
        return_tensors = get("return_tensors")
        if isinstance(return_tensors, str) and return_tensors == TensorType.NUMPY:
            for key, rows in data.items():
                data[key] = rows_as_numpy(rows)
        return BatchEncoding(data, tensor_type=return_tensors)
