"""The fast tokenizer's call pipeline for ``HFBPETokenizer``: offsets, word ids, overflowing windows with stride.

transformers' Python tokenizers return no offsets, no ``word_ids()`` and put overflowing tokens in one extra field;
the fast tokenizer returns one row per window with ``overflow_to_sample_mapping`` and answers every alignment
lookup. :class:`AlignedBatchMixin` runs the pipeline of :mod:`hf_bpe.integrations.encoding` (a port of
`tokenizers`' truncation, post-processing and padding) over hf_bpe's aligned encodings, and builds the same
``BatchEncoding`` as ``TokenizersBackend._encode_plus``. Calls that ask for neither offsets nor overflow keep the
faster path and get their ``Encoding`` objects lazily, the first time ``word_ids()`` or another lookup needs them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from transformers.tokenization_utils_base import BatchEncoding, PaddingStrategy, TruncationStrategy

from ..model.alignment import align_ordinary
from .encoding import Encoding, PipelineOptions, longest_first_lengths, pad_encodings, post_process

__all__ = ["AlignedBatchMixin"]


class AlignedBatchMixin:
    """Give ``HFBPETokenizer`` the fast tokenizer's ``Encoding`` objects and overflow rows."""

    def truncate_sequences(
        self,
        ids: list[int],
        pair_ids: list[int] | None = None,
        num_tokens_to_remove: int = 0,
        truncation_strategy: str | TruncationStrategy = "longest_first",
        stride: int = 0,
    ) -> tuple[list[int], list[int] | None, list[int]]:
        """Truncate as the fast tokenizer does; for pairs with ``longest_first`` the base class splits differently.

        tokenizers (``utils/truncation.rs``) keeps ``n1``, ``n2`` tokens with n1 the shorter length:
        ``n2 = max(n1, L - n1)`` (or ``n1`` if ``n1 > L``), and if ``n1 + n2 > L`` then ``n1 = L // 2`` and
        ``n2 = n1 + L % 2``, where ``L`` is the length left after removing ``num_tokens_to_remove``. The base class
        removes the odd token from the other sequence (5 + 9 tokens cut to 9: fast keeps 4 + 5, base 5 + 4).
        """
        strategy = TruncationStrategy(truncation_strategy)
        if num_tokens_to_remove <= 0 or pair_ids is None or strategy != TruncationStrategy.LONGEST_FIRST:
            return super().truncate_sequences(  # type: ignore[misc]
                ids, pair_ids, num_tokens_to_remove, truncation_strategy, stride)
        limit = max(len(ids) + len(pair_ids) - num_tokens_to_remove, 0)
        n1, n2 = longest_first_lengths(len(ids), len(pair_ids), limit)
        if self.truncation_side == "left":  # type: ignore[attr-defined]
            return ids[len(ids) - n1:], pair_ids[len(pair_ids) - n2:], []
        return ids[:n1], pair_ids[:n2], []

    def _aligned_path_applies(self) -> bool:
        """Whether the pipeline gives what this tokenizer's own methods would (no override, default type ids)."""
        return (self._keeps_fast_path_methods()  # type: ignore[attr-defined]
                and getattr(self, "token_type_ids_pattern", "bert_style") == "bert_style"
                and getattr(self, "token_type_ids_include_special_tokens", True)
                and getattr(self, "special_tokens_pattern", None) != "prefix_suffix")

    def _check_aligned_path(self) -> None:
        """Refuse offsets and overflow where the pipeline would not honour this tokenizer's customisations."""
        if not self._aligned_path_applies():
            raise NotImplementedError(
                f"{type(self).__name__} gives offsets and overflowing windows only with HFBPETokenizer's own "
                "special-token methods and token_type_ids_pattern='bert_style'; this instance overrides them "
                "(build_inputs_with_special_tokens, prepare_for_model, ... or the token type pattern): drop "
                "return_offsets_mapping / return_overflowing_tokens, or undo the override"
            )

    def _encode_aligned(self, text: str, split_special_tokens: bool) -> Encoding:
        """Encode one text with offsets and word indices (added tokens are one word each)."""
        model = self.bpe_model  # type: ignore[attr-defined]
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        words: list[int | None] = []
        if not self._added_tokens_encoder:  # type: ignore[attr-defined]
            ids, offsets, words = align_ordinary(model, text)  # type: ignore[assignment]
        else:
            raw, normalized = self._splitter()  # type: ignore[attr-defined]
            word = position = 0
            for piece, token_id in raw.split(text, split_special_tokens):
                parts = [(piece, token_id)] if token_id is not None else normalized.split(piece, split_special_tokens)
                for part, part_id in parts:
                    if part_id is not None:
                        ids.append(part_id)
                        offsets.append((position, position + len(part)))
                        words.append(word)
                        word += 1
                    elif part:
                        more_ids, more_offsets, more_words = align_ordinary(model, part, start=position,
                                                                             first_word=word)
                        ids += more_ids
                        offsets += more_offsets
                        words += more_words
                        word = more_words[-1] + 1 if more_words else word
                    position += len(part)
        tokens = self._ids_to_token_strings(ids)  # type: ignore[attr-defined]
        return Encoding(ids, tokens, words, offsets)

    def _pipeline_options(self, kwargs: dict[str, Any]) -> PipelineOptions:
        truncation = TruncationStrategy(kwargs.get("truncation_strategy", TruncationStrategy.DO_NOT_TRUNCATE))
        padding = PaddingStrategy(kwargs.get("padding_strategy", PaddingStrategy.DO_NOT_PAD))
        max_length = kwargs.get("max_length")
        return PipelineOptions(
            truncation=None if truncation == TruncationStrategy.DO_NOT_TRUNCATE or max_length is None
            else truncation.value,
            max_length=max_length, stride=kwargs.get("stride", 0) or 0,
            direction=self.truncation_side,  # type: ignore[attr-defined]
            padding=padding != PaddingStrategy.DO_NOT_PAD,
            pad_length=max_length if padding == PaddingStrategy.MAX_LENGTH else None,
            pad_to_multiple_of=kwargs.get("pad_to_multiple_of"),
            pad_side=kwargs.get("padding_side") or self.padding_side,  # type: ignore[attr-defined]
            pad_id=self.pad_token_id, pad_type_id=self.pad_token_type_id,  # type: ignore[attr-defined]
            pad_token=self.pad_token,  # type: ignore[attr-defined]
            add_special_tokens=kwargs.get("add_special_tokens", True),
        )

    def _template(self) -> tuple[tuple[list[int], list[int]] | None, dict[int, str]]:
        before = [self.bos_token_id] if self.add_bos_token else []  # type: ignore[attr-defined]
        after = [self.eos_token_id] if self.add_eos_token else []  # type: ignore[attr-defined]
        names = {i: self.convert_ids_to_tokens(i) for i in before + after}  # type: ignore[attr-defined]
        return ((before, after) if before or after else None), names

    def _aligned_encodings(self, text: Any, text_pair: Any, kwargs: dict[str, Any]) -> tuple[list[Encoding], bool]:
        """Run the pipeline on str inputs; return one Encoding per sample (windows in ``overflowing``), batched."""
        if kwargs.get("is_split_into_words"):
            raise NotImplementedError(
                "HFBPETokenizer gives offsets, word ids and overflowing windows for str inputs, not for "
                "is_split_into_words=True; join the words into a str (or use the fast tokenizer)"
            )
        batched = isinstance(text, list | tuple)
        texts = list(text) if batched else [text]
        pairs = (list(text_pair) if batched else [text_pair]) if text_pair is not None else [None] * len(texts)
        for value in [*texts, *(p for p in pairs if p is not None)]:
            if not isinstance(value, str):
                raise TypeError(f"texts must be str, got {type(value).__name__} {value!r:.60}")
        if len(pairs) != len(texts):
            raise ValueError(f"batch length of `text`: {len(texts)} does not match batch length of `text_pair`: "
                             f"{len(pairs)}.")
        split = kwargs.get("split_special_tokens")
        split = self.split_special_tokens if split is None else split  # type: ignore[attr-defined]
        options = self._pipeline_options(kwargs)
        template, names = self._template()
        encodings = []
        for first, second in zip(texts, pairs):
            pair = None
            if second is not None:  # tokenizers encodes the second sequence with type id 1
                pair = self._encode_aligned(second, split)
                pair.type_ids = [1] * len(pair.ids)
            encodings.append(post_process(self._encode_aligned(first, split), pair, template, names, options))
        pad_encodings(encodings, options)
        return encodings, batched

    def _encode_aligned_call(self, text: Any, text_pair: Any, kwargs: dict[str, Any]) -> BatchEncoding:
        """``TokenizersBackend._encode_plus`` over :meth:`_aligned_encodings`."""
        encodings, batched = self._aligned_encodings(text, text_pair, kwargs)
        overflow = kwargs.get("return_overflowing_tokens", False)
        want_types = kwargs.get("return_token_type_ids")
        want_types = "token_type_ids" in self.model_input_names if want_types is None else want_types  # type: ignore[attr-defined]
        want_mask = kwargs.get("return_attention_mask")
        want_mask = "attention_mask" in self.model_input_names if want_mask is None else want_mask  # type: ignore[attr-defined]
        data: dict[str, list[Any]] = defaultdict(list)
        rows: list[Encoding] = []
        mapping: list[int] = []
        for index, encoding in enumerate(encodings):
            for row in [encoding, *encoding.overflowing] if overflow else [encoding]:
                rows.append(row)
                mapping.append(index)
                data["input_ids"].append(row.ids)
                if want_types:
                    data["token_type_ids"].append(row.type_ids)
                if want_mask:
                    data["attention_mask"].append(row.attention_mask)
                if kwargs.get("return_special_tokens_mask"):
                    data["special_tokens_mask"].append(row.special_tokens_mask)
                if kwargs.get("return_offsets_mapping"):
                    data["offset_mapping"].append(row.offsets)
                if kwargs.get("return_length"):
                    data["length"].append(len(row.ids))
        if overflow:
            data["overflow_to_sample_mapping"] = mapping
        for ids in data["input_ids"]:
            self._eventual_warn_about_too_long_sequence(ids, kwargs.get("max_length"), kwargs.get("verbose", True))  # type: ignore[attr-defined]
        tensors = kwargs.get("return_tensors")
        output = BatchEncoding(dict(data), rows, tensor_type=tensors)
        if not batched and tensors is None and not overflow:
            output = BatchEncoding({key: (value[0] if value and isinstance(value[0], list) else value)
                                    for key, value in output.items()}, output.encodings)
        return output

    def _attach_lazy_encodings(self, output: BatchEncoding, text: Any, text_pair: Any,
                               kwargs: dict[str, Any]) -> BatchEncoding:
        """Give a result of the fast path ``Encoding`` objects, computed when a lookup first needs them."""
        if kwargs.get("is_split_into_words") or not (
            isinstance(text, str) or (isinstance(text, list | tuple) and all(isinstance(t, str) for t in text))
        ):
            return output
        output._encodings = _LazyEncodings(self, text, text_pair, dict(kwargs))
        output._n_sequences = 1 if text_pair is None else 2
        return output


class _LazyEncodings:
    """A list of ``Encoding`` objects computed on first use (most calls never ask for them)."""

    __slots__ = ("_source", "_items")

    def __init__(self, tokenizer: AlignedBatchMixin, text: Any, text_pair: Any, kwargs: dict[str, Any]) -> None:
        self._source: tuple[Any, ...] | None = (tokenizer, text, text_pair, kwargs)
        self._items: list[Encoding] | None = None

    def _get(self) -> list[Encoding]:
        if self._items is None:  # _source is set until then
            tokenizer, text, text_pair, kwargs = self._source  # type: ignore[misc]
            self._items = tokenizer._aligned_encodings(text, text_pair, kwargs)[0]
            self._source = None
        return self._items

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Any:
        return iter(self._get())

    def __bool__(self) -> bool:
        return True

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as the plain list: a BatchEncoding sent to another process must not carry the tokenizer.
        return (list, (self._get(),))
