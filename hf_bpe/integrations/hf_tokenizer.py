"""``HFBPETokenizer``: a `transformers` tokenizer over an hf_bpe ``BPEModel``, id for id equal to the fast tokenizer.

It is a ``PreTrainedTokenizer`` (transformers 5's ``PythonBackend``), so the whole user surface works: ``__call__``
on texts, batches and pairs, padding, truncation, tensors, added and special tokens, ``decode``,
``save_pretrained``/``from_pretrained`` and ``AutoTokenizer`` (after :func:`register`, which ``import hf_bpe``
arranges through :func:`hf_bpe.integrations.auto_register.install_import_hook`).

Added tokens follow `tokenizers`' rules, not those of transformers' Python base class (measured on
transformers 5.23 / tokenizers 0.23.3; ``tests/test_hf_tokenizer.py`` pins each difference):

- two passes, as ``AddedVocabulary::extract_and_normalize``: tokens with ``normalized=False`` (all specials) are
  found first, leftmost-longest; tokens with ``normalized=True`` then in the pieces between them;
- ``lstrip``/``rstrip`` take Unicode ``White_Space`` (the base class uses ``str.strip``, which also eats
  U+001C..U+001F) and an ``lstrip`` never reaches into the previous added token;
- ``single_word`` refuses a match next to a word character (``\\w``: letters, marks, digits, connectors); the base
  class only looks for a neighbouring ``" "`` and glues refused tokens to their neighbour;
- ``split_special_tokens=True`` spells out special tokens only; non-special added tokens still match (the base
  class ignores every added token);
- every piece of text between added tokens is encoded on its own, so with ``add_prefix_space`` each such piece
  gets its own leading ``" "`` (``"hi<s>x"`` is ``Ġhi <s> Ġx``), exactly as tokenizers' ``ByteLevel`` does.

Batches of strings (``tok(list_of_texts)``, with or without pairs) skip transformers' per-item Python: the ids
come from the compiled core in one call (only texts holding an added token's text are split first) and truncation,
special tokens, padding and NumPy arrays are done per batch, giving what transformers' per-item pipeline gives.
Other inputs and options (pre-tokenized words, ``return_overflowing_tokens``, a subclass overriding a step of
that pipeline, ...) still take it.

Decoding joins token bytes and decodes them once (``errors`` as given, ``"replace"`` by default); added tokens
decode to their text; ``skip_special_tokens`` drops the tokens flagged special, as the fast tokenizer does; ids
outside the vocabulary are dropped, as the fast tokenizer does (models often pad their embedding matrix).

>>> from hf_bpe.model import BPEModel
>>> tok = HFBPETokenizer.from_model(BPEModel.bytes_only(special_tokens={"<|end|>": 256}))
>>> tok("hi<|end|>")["input_ids"]
[104, 105, 256]
>>> tok.decode([104, 105, 256], skip_special_tokens=True)
'hi'
"""

from __future__ import annotations

import bisect
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import regex
from transformers.configuration_utils import PreTrainedConfig
from transformers.tokenization_python import PreTrainedTokenizer
from transformers.tokenization_utils_base import (
    VERY_LARGE_INTEGER,
    AddedToken,
    BatchEncoding,
    PaddingStrategy,
    TruncationStrategy,
)
from transformers.utils import TensorType, logging

from ..formats import hf_config
from ..formats import manifest
from ..core.bytelevel import str_to_token, token_to_str
from ..core.specials import special_tokens_regex
from ..model.bpe import BPEModel

__all__ = ["HFBPETokenizer", "HFBPEConfig", "register"]

logger = logging.get_logger(__name__)

VOCAB_FILES_NAMES = {"vocab_file": "vocab.json", "merges_file": "merges.txt"}

# Keys that loaders put into the init kwargs; they describe where a tokenizer came from, not what it is, so
# they are neither kept nor saved (transformers itself drops some of them when saving, not all).
_LOADER_KEYS = frozenset({
    "backend", "is_local", "local_files_only", "_from_auto", "_commit_hash", "revision", "trust_remote_code",
    "cache_dir", "force_download", "proxies", "token", "subfolder", "user_agent", "files_loaded", "use_fast",
    "tokenizer_file", "added_tokens_file", "special_tokens_map_file", "tokenizer_config_file", "gguf_file",
})

# tokenizers' added-token matcher uses Rust regex classes: `\s` is Unicode White_Space (25 code points, all below
# U+3001), `\w` is alphabetic, marks, decimal digits, connector punctuation and join controls. The `regex`
# module agrees on both, except on the few thousand code points that its newer Unicode tables assign and
# tokenizers' do not yet (checked over every code point in the tests).
_WHITESPACE = frozenset(chr(c) for c in range(0x3001) if regex.match(r"\s", chr(c)))
_WORD_CHAR = regex.compile(r"\w")


def _is_word_char(char: str) -> bool:
    return _WORD_CHAR.match(char) is not None


# What transformers' __call__ and encode pass to _encode_plus; a call with any other keyword takes the general path.
_FAST_OPTIONS = frozenset({
    "add_special_tokens", "padding_strategy", "truncation_strategy", "max_length", "stride", "is_split_into_words",
    "pad_to_multiple_of", "padding_side", "return_tensors", "return_token_type_ids", "return_attention_mask",
    "return_overflowing_tokens", "return_special_tokens_mask", "return_offsets_mapping", "return_length", "verbose",
    "split_special_tokens",
})

# The methods whose combined effect the batch fast path reproduces (it calls some once per batch instead of once per
# item, or not at all when they would do nothing); a subclass that overrides any of them gets the general path.
_FAST_PATH_METHODS = (
    "_encode_plus", "_encode_batch_fast", "_encode_texts", "_encode_text", "_splitter", "_added_token_finder",
    "tokenize", "prepare_for_tokenization", "convert_tokens_to_ids", "prepare_for_model",
    "_get_padding_truncation_strategies", "num_special_tokens_to_add", "build_inputs_with_special_tokens",
    "_eventual_warn_about_too_long_sequence", "pad", "_pad",
)

# A batch is joined with the first of these characters that no added token contains, so that one regex search
# over the joined text finds every text holding an added token and no match can straddle two texts.
_SEPARATORS = ("\x00", "\uffff", "\U0010ffff", "\x01", "\ufffe")


class _Matcher:
    """Leftmost-longest search for a set of added tokens (an alternation sorted longest first)."""

    __slots__ = ("pattern", "tokens")

    def __init__(self, tokens: Mapping[str, tuple[int, AddedToken]]) -> None:
        self.pattern = special_tokens_regex(tokens)
        self.tokens = dict(tokens)

    def split(self, sentence: str, skip_special: bool) -> list[tuple[str, int | None]]:
        """Split ``sentence`` into (text, None) and (text, added token id) pieces, as ``find_matches`` does."""
        if self.pattern is None or not sentence:
            return [(sentence, None)]
        pieces: list[tuple[str, int | None]] = []
        end = len(sentence)
        start_offset = 0
        position = 0
        while True:
            match = self.pattern.search(sentence, position)
            if match is None:
                break
            start, stop = match.span()
            # The automaton resumes after the match even when the match is then refused (single_word, special).
            position = stop
            token_id, token = self.tokens[match.group()]
            if skip_special and token.special:
                continue
            if token.single_word and (
                (start > 0 and _is_word_char(sentence[start - 1])) or (stop < end and _is_word_char(sentence[stop]))
            ):
                continue
            if token.lstrip:
                # Equivalent to max(start of the trailing whitespace, end of the previous added token).
                while start > start_offset and sentence[start - 1] in _WHITESPACE:
                    start -= 1
            if token.rstrip:
                while stop < end and sentence[stop] in _WHITESPACE:
                    stop += 1
            if start_offset < start:
                pieces.append((sentence[start_offset:start], None))
            pieces.append((sentence[start:stop], token_id))
            start_offset = stop
        if start_offset != end:
            pieces.append((sentence[start_offset:], None))
        return pieces


def _rows_as_numpy(rows: list[Any]) -> Any:
    """Return ``rows`` as the array BatchEncoding's "np" conversion makes, or unchanged if the rows are ragged."""
    if not rows or not isinstance(rows[0], list):
        return np.asarray(rows) if rows else rows  # "length": a list of ints
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        return rows
    # BatchEncoding gives int64 to an array without any element (all rows empty), NumPy's default otherwise.
    return np.asarray(rows, dtype=np.int64) if width == 0 else np.asarray(rows)


class HFBPEConfig(PreTrainedConfig):
    """The model type that ``AutoTokenizer.register`` needs to know ``HFBPETokenizer`` (tokenizer-only folders)."""

    model_type = "hf_bpe"


class HFBPETokenizer(PreTrainedTokenizer):
    """A byte-level BPE tokenizer for `transformers` backed by hf_bpe's ``BPEModel``.

    Args:
        vocab_file: ``vocab.json`` (GPT-2 format). Not needed with ``bpe_model``.
        merges_file: ``merges.txt``. Not needed with ``bpe_model``.
        pattern: the pre-tokenizer, a name in ``hf_bpe.PATTERNS`` or a regex.
        add_prefix_space: prepend ``" "`` to each piece of text that does not start with one.
        ignore_merges: a pre-token found in the vocabulary is one token (Llama 3).
        errors: how :meth:`decode` treats bytes that are not UTF-8, as in :meth:`bytes.decode`.
        bpe_model: an already built ``BPEModel`` (see :meth:`from_model`); the three options above must then be
            left at their defaults or equal the model's.
        **kwargs: transformers' options: roles (``eos_token=...``), ``added_tokens_decoder``,
            ``model_max_length``, ``padding_side``, ``split_special_tokens``, ``chat_template``, ...

    Raises:
        TypeError: when neither files nor a model are given, or on a wrong type.
        ValueError: when ``bpe_model`` disagrees with explicitly given options.

    >>> from hf_bpe.model import BPEModel
    >>> tok = HFBPETokenizer.from_model(BPEModel.bytes_only(), model_max_length=8)
    >>> tok.tokenize("a b"), tok.model_max_length
    (['a', 'Ġ', 'b'], 8)
    """

    vocab_files_names = VOCAB_FILES_NAMES
    model_input_names = ["input_ids", "attention_mask"]
    # Batches of strings skip transformers' per-item Python (see _encode_batch_fast); False restores it.
    _batch_fast_path = True

    def __init__(
        self,
        vocab_file: str | os.PathLike[str] | None = None,
        merges_file: str | os.PathLike[str] | None = None,
        *,
        pattern: str = "gpt2",
        add_prefix_space: bool = False,
        ignore_merges: bool = False,
        errors: str = "replace",
        bpe_model: BPEModel | None = None,
        **kwargs: Any,
    ) -> None:
        # 1. The model, loaded before the base class's __init__, which calls get_vocab().
        # What the source folder's manifest says about training, for the manifest that save_pretrained writes; a
        # few small, constant entries (datasets hashes __dict__, so it must not change when the tokenizer is used).
        self._training_record: dict[str, Any] | None = None
        if bpe_model is None:
            if vocab_file is None or merges_file is None:
                raise TypeError(
                    f"HFBPETokenizer needs vocab_file and merges_file (got {vocab_file!r}, {merges_file!r}) or "
                    "bpe_model=; to load a folder use HFBPETokenizer.from_pretrained(folder)"
                )
            self._training_record = _folder_training_record(vocab_file, merges_file)
            bpe_model = BPEModel.from_files(vocab_file, merges_file, special_if_present=_named_specials(kwargs),
                                            pattern=pattern, add_prefix_space=add_prefix_space,
                                            ignore_merges=ignore_merges)
        elif not isinstance(bpe_model, BPEModel):
            raise TypeError(f"bpe_model must be an hf_bpe.BPEModel, got {type(bpe_model).__name__}: {bpe_model!r:.80}")
        elif (pattern, add_prefix_space, ignore_merges) not in (
            ("gpt2", False, False), (bpe_model.pattern, bpe_model.add_prefix_space, bpe_model.ignore_merges)
        ):
            raise ValueError(
                f"bpe_model has pattern={bpe_model.pattern!r}, add_prefix_space={bpe_model.add_prefix_space}, "
                f"ignore_merges={bpe_model.ignore_merges} but the call asks for pattern={pattern!r}, "
                f"add_prefix_space={add_prefix_space}, ignore_merges={ignore_merges}; build the model with the "
                "options you want (or use HFBPETokenizer.from_model, which takes them from the model)"
            )
        if not isinstance(errors, str):
            raise TypeError(f"errors must be a str such as 'replace' or 'strict', got {errors!r}")
        self.bpe_model = bpe_model
        self.pattern = bpe_model.pattern
        self.add_prefix_space = bpe_model.add_prefix_space
        self.ignore_merges = bpe_model.ignore_merges
        self.errors = errors
        # `cache` is the one attribute that `datasets` leaves out of a tokenizer's fingerprint: lazily built
        # matchers live there so that hashing does not depend on whether the tokenizer was used.
        self.cache: dict[str, Any] = {}
        self._build_tables()

        # 2. Special tokens of the model become added tokens (what the folder's config says about them wins).
        configured = kwargs.pop("added_tokens_decoder", None) or {}
        added = {int(idx): _as_added_token(token) for idx, token in configured.items()}
        known = {token.content for token in added.values()}
        for content, idx in sorted(bpe_model.special_tokens.items(), key=lambda item: item[1]):
            if content not in known:
                added.setdefault(idx, AddedToken(content, special=True, normalized=False))
        kwargs["added_tokens_decoder"] = added
        if "extra_special_tokens" not in kwargs and "additional_special_tokens" not in kwargs:
            named = {str(kwargs[role]) for role in hf_config.ROLES if kwargs.get(role) is not None}
            extra = [t.content for _, t in sorted(added.items()) if t.special and t.content not in named]
            if extra:
                kwargs["extra_special_tokens"] = extra
        for role in hf_config.ROLES:
            # Saved as null when unset, so GPT2TokenizerFast does not default them to <|endoftext|>.
            kwargs.setdefault(role, None)
        for key in _LOADER_KEYS - {"backend"}:
            kwargs.pop(key, None)

        # 3. The base class: added tokens, roles, padding and truncation options.
        super().__init__(pattern=self.pattern, add_prefix_space=self.add_prefix_space,
                         ignore_merges=self.ignore_merges, errors=errors, **kwargs)

    # -- construction ---------------------------------------------------------------------------------------------

    @classmethod
    def from_model(cls, model: BPEModel, **kwargs: Any) -> HFBPETokenizer:
        """Wrap an in-memory ``BPEModel`` (e.g. fresh from ``hf_bpe.train``) without writing files.

        Args:
            model: the model; its pattern, ``add_prefix_space`` and ``ignore_merges`` are used.
            **kwargs: transformers options, e.g. ``eos_token="<|endoftext|>"``, ``model_max_length=1024``.

        >>> from hf_bpe.model import BPEModel
        >>> HFBPETokenizer.from_model(BPEModel.bytes_only()).vocab_size
        256
        """
        options = {"pattern": model.pattern, "add_prefix_space": model.add_prefix_space,
                   "ignore_merges": model.ignore_merges, **kwargs}
        return cls(bpe_model=model, **options)

    def _build_tables(self) -> None:
        # id -> byte-level string for every model id; the reverse for get_vocab and convert_tokens_to_ids.
        model = self.bpe_model
        decoder: list[str | None] = [None] * model.vocab_size
        for token, idx in model.vocab.items():
            decoder[idx] = token_to_str(token)
        for content, idx in model.special_tokens.items():
            decoder[idx] = content
        self._decoder = decoder
        self._encoder = {token: idx for idx, token in enumerate(decoder) if token is not None}

    def __getstate__(self) -> dict[str, Any]:
        # The lookup tables are rebuilt from the model: pickles stay about the size of the vocabulary once.
        state = self.__dict__.copy()
        state.pop("_decoder", None)
        state.pop("_encoder", None)
        state["cache"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build_tables()

    # -- vocabulary -----------------------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """The model's size: its largest id plus one (tokens added later not included)."""
        return self.bpe_model.vocab_size

    def get_vocab(self) -> dict[str, int]:
        """Return byte-level token strings (and added tokens' text) to ids."""
        vocab = dict(self._encoder)
        vocab.update(self.__dict__.get("_added_tokens_encoder", {}))
        return vocab

    def _convert_token_to_id(self, token: str) -> int | None:
        idx = self._encoder.get(token)
        if idx is None:
            # Unknown token strings map to the unk token's id, if any (as in the fast tokenizer).
            unk = self.__dict__.get("_special_tokens_map", {}).get("unk_token")
            if unk is not None and str(unk) != token:
                return self._convert_token_to_id_with_added_voc(str(unk))
        return idx

    def _convert_id_to_token(self, index: int) -> str | None:
        return self._decoder[index] if 0 <= index < len(self._decoder) else None

    def _update_total_vocab_size(self) -> None:
        # Called by the base class whenever added tokens change: the matchers must then be rebuilt.
        self.cache.pop("splitter", None)
        self.cache.pop("finder", None)
        self.cache.pop("special_ids", None)
        super()._update_total_vocab_size()

    # -- encoding -------------------------------------------------------------------------------------------------

    def _splitter(self) -> tuple[_Matcher, _Matcher]:
        splitter = self.cache.get("splitter")
        if splitter is None:
            raw: dict[str, tuple[int, AddedToken]] = {}
            normalized: dict[str, tuple[int, AddedToken]] = {}
            for content, idx in self._added_tokens_encoder.items():
                token = self._added_tokens_decoder.get(idx)
                if token is None or token.content != content:
                    token = AddedToken(content, special=False, normalized=True)
                (normalized if token.normalized else raw)[content] = (idx, token)
            splitter = self.cache["splitter"] = (_Matcher(raw), _Matcher(normalized))
        return splitter

    def _encode_text(self, text: str, split_special_tokens: bool) -> list[int]:
        """Encode text to ids: added tokens first (tokenizers' two passes), then each piece between them."""
        encode = self.bpe_model.encode_ordinary
        if not self._added_tokens_encoder:
            return encode(text)
        raw, normalized = self._splitter()
        ids: list[int] = []
        for piece, token_id in raw.split(text, split_special_tokens):
            if token_id is not None:
                ids.append(token_id)
                continue
            for sub_piece, sub_id in normalized.split(piece, split_special_tokens):
                if sub_id is not None:
                    ids.append(sub_id)
                elif sub_piece:
                    ids += encode(sub_piece)
        return ids

    def _ids_to_token_strings(self, ids: Iterable[int]) -> list[str]:
        decoder = self._decoder
        added = self._added_tokens_decoder
        return [added[i].content if i in added else decoder[i] for i in ids]  # type: ignore[misc]

    def tokenize(self, text: str, **kwargs: Any) -> list[str]:
        """Split text into token strings (byte-level spelling; added tokens as their text), as the fast tokenizer.

        One difference: the fast tokenizer spells an added token with the whitespace that its ``lstrip``/``rstrip``
        took (``"[CLS] "``); here it is always its text, so that ``convert_tokens_to_ids(tokenize(text))`` holds.

        >>> from hf_bpe.model import BPEModel
        >>> HFBPETokenizer.from_model(BPEModel.bytes_only(special_tokens={"<s>": 256})).tokenize("<s>é")
        ['<s>', 'Ã', '©']
        """
        split_special_tokens = kwargs.pop("split_special_tokens", self.split_special_tokens)
        text, kwargs = self.prepare_for_tokenization(text, **kwargs)
        return self._ids_to_token_strings(self._encode_text(text, split_special_tokens))

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        # Text without added tokens; ids are computed once and spelled through the id table.
        decoder = self._decoder
        return [decoder[i] for i in self.bpe_model.encode_ordinary(text)]  # type: ignore[misc]

    def _encode_plus(self, text: Any, text_pair: Any = None, **kwargs: Any):
        # Batches of strings: ids from the compiled core, the rest of the pipeline done per batch (see
        # _encode_batch_fast); None means the call is one it does not cover, handled below as before.
        if self._batch_fast_path and isinstance(text, (list, tuple)) and text:
            encoded = self._encode_batch_fast(text, text_pair, kwargs)
            if encoded is not None:
                return encoded
        # Encode plain strings to ids here, once, instead of the base class's text -> tokens -> ids round trip.
        # Empty strings stay strings: the base class turns them into [] (an empty id list would be refused).
        if not kwargs.get("is_split_into_words") and not kwargs.get("sanitize_control_tokens"):
            split = kwargs.get("split_special_tokens")
            split = self.split_special_tokens if split is None else split
            if isinstance(text, str) and text:
                text = self._encode_text(text, split) or text
            if isinstance(text_pair, str) and text_pair:
                text_pair = self._encode_text(text_pair, split) or text_pair
        return super()._encode_plus(text, text_pair, **kwargs)

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
        separator = next((c for c in _SEPARATORS if not any(c in t for t in contents)), None)
        self.cache["finder"] = (splitter, pattern, separator)
        return pattern, separator

    def _encode_texts(self, texts: Sequence[str], split_special_tokens: bool) -> list[list[int]]:
        """Encode each text to ids exactly as :meth:`_encode_text` does, with one call into the compiled core.

        Only the texts that contain an added token's text take ``_encode_text``; one regex search over the joined
        batch finds them (linear in the batch's length; a search per text would cost more than encoding it).
        """
        encode_batch = self.bpe_model.encode_ordinary_batch
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

    def _keeps_fast_path_methods(self) -> bool:
        """Tell whether every method whose effect ``_encode_batch_fast`` reproduces is the one it reproduces."""
        cls, instance = type(self), self.__dict__
        return all(getattr(cls, name) is _FAST_PATH_IMPLEMENTATIONS[name] and name not in instance
                   for name in _FAST_PATH_METHODS)

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
        overriding one of ``_FAST_PATH_METHODS``, items that are not ``str`` (pre-tokenized words, ids, pairs
        given as tuples), ``return_overflowing_tokens``, ``return_offsets_mapping``, unknown keywords, and errors
        while encoding (the general path then raises its own, for the item it stops at).
        """
        # 1. Only the calls this path reproduces exactly.
        if not options.keys() <= _FAST_OPTIONS or not self._keeps_fast_path_methods():
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
                data[key] = _rows_as_numpy(rows)
        return BatchEncoding(data, tensor_type=return_tensors)

    def _encode_without_added_tokens(self, text: str) -> list[int]:
        return self.bpe_model.encode_ordinary(text)

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
            return super().truncate_sequences(ids, pair_ids, num_tokens_to_remove, truncation_strategy, stride)
        limit = max(len(ids) + len(pair_ids) - num_tokens_to_remove, 0)
        n1, n2 = len(ids), len(pair_ids)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > limit else max(n1, limit - n1)
        if n1 + n2 > limit:
            n1 = limit // 2
            n2 = n1 + limit % 2
        if swap:
            n1, n2 = n2, n1
        if self.truncation_side == "left":
            return ids[len(ids) - n1:], pair_ids[len(pair_ids) - n2:], []
        return ids[:n1], pair_ids[:n2], []

    # -- decoding -------------------------------------------------------------------------------------------------

    def _token_bytes(self, token: str) -> bytes:
        if token in self._added_tokens_encoder or token in self.bpe_model.special_tokens:
            return token.encode("utf-8")
        try:
            return str_to_token(token)
        except ValueError:
            # Not byte-level spelled (e.g. a token string made by hand): keep its text.
            return token.encode("utf-8")

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Join token strings back into text (byte-level decoding, ``errors=self.errors``).

        >>> from hf_bpe.model import BPEModel
        >>> HFBPETokenizer.from_model(BPEModel.bytes_only()).convert_tokens_to_string(["Ġh", "Ã", "©"])
        ' hé'
        """
        return b"".join([self._token_bytes(token) for token in tokens]).decode("utf-8", errors=self.errors)

    def _special_ids(self) -> frozenset[int]:
        special = self.cache.get("special_ids")
        if special is None:
            special = frozenset(i for i, token in self._added_tokens_decoder.items() if token.special)
            self.cache["special_ids"] = special
        return special

    def _decode(
        self,
        token_ids: int | list[int],
        skip_special_tokens: bool = False,
        clean_up_tokenization_spaces: bool | None = None,
        **kwargs: Any,
    ) -> str:
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        skip = self._special_ids() if skip_special_tokens else frozenset()
        added = self._added_tokens_decoder
        model = self.bpe_model
        size = model.vocab_size
        parts: list[bytes] = []
        for raw_id in token_ids:
            idx = int(raw_id)
            if idx in skip:
                continue
            token = added.get(idx)
            if token is not None:
                parts.append(token.content.encode("utf-8"))
            elif 0 <= idx < size:
                try:
                    parts.append(model.id_to_bytes(idx))
                except ValueError:
                    continue  # a hole in the vocabulary: dropped, as by the fast tokenizer
        text = b"".join(parts).decode("utf-8", errors=self.errors)
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        if clean_up_tokenization_spaces:
            # As TokenizersBackend: this WordPiece-era cleanup corrupts BPE text, so it needs the explicit opt-in.
            if self.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output:
                text = self.clean_up_tokenization(text)
            else:
                logger.warning_once(
                    "Ignoring clean_up_tokenization_spaces=True for the BPE tokenizer HFBPETokenizer: it strips "
                    "legitimate spaces before punctuation. Set clean_up_tokenization_spaces=False to silence this."
                )
        return text

    # -- saving ---------------------------------------------------------------------------------------------------

    def _model_files(self) -> dict[str, str]:
        """Return the texts of the files ``BPEModel.save`` writes (vocab.json, merges.txt, tokenizer.json, ...)."""
        files = self.cache.get("model_files")
        if files is not None:
            return files
        return self.bpe_model.files()

    def save_vocabulary(self, save_directory: str, filename_prefix: str | None = None) -> tuple[str, ...]:
        """Write ``vocab.json`` and ``merges.txt`` (atomically) into ``save_directory``; return their paths."""
        from ..formats import atomic

        if not os.path.isdir(save_directory):
            raise FileNotFoundError(f"save_directory {save_directory!r} is not a folder; create it first")
        prefix = f"{filename_prefix}-" if filename_prefix else ""
        files = self._model_files()
        names = {prefix + name: files[name] for name in VOCAB_FILES_NAMES.values()}
        atomic.write_files(save_directory, names, force=True)
        return tuple(os.path.join(save_directory, name) for name in names)

    def _tokenizer_json(self, text: str) -> str:
        # The model writes its own specials; tokens added since (or with other flags) are put in here.
        data = json.loads(text)
        wanted = [
            {"id": idx, "content": token.content, "single_word": token.single_word, "lstrip": token.lstrip,
             "rstrip": token.rstrip, "normalized": token.normalized, "special": token.special}
            for idx, token in sorted(self._added_tokens_decoder.items())
        ]
        if data.get("added_tokens") == wanted:
            return text
        data["added_tokens"] = wanted
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    def save_pretrained(
        self,
        save_directory: str | os.PathLike[str],
        legacy_format: bool | None = None,
        filename_prefix: str | None = None,
        push_to_hub: bool = False,
        **kwargs: Any,
    ) -> tuple[str, ...]:
        """Save the tokenizer folder: vocab.json, merges.txt, tokenizer.json, tokenizer_config.json, ...

        Every file is written atomically. The folder reloads with ``HFBPETokenizer.from_pretrained``,
        ``AutoTokenizer`` (hf_bpe imported), ``PreTrainedTokenizerFast`` and, for the GPT-2 pattern,
        ``GPT2TokenizerFast``. Returns the written paths.

        hf_bpe's manifest (``hf_bpe_manifest.json``) is written with the other files, in the same atomic step, so
        that ``hf-bpe verify`` passes on the folder. For a trained tokenizer (loaded from a folder whose manifest
        records a training, or wrapping a model fresh from ``hf_bpe.train``) it keeps the training's options and
        corpus fingerprint and lists the files that now differ from what training wrote in
        ``edited_after_training`` (see :mod:`hf_bpe.formats.manifest`); otherwise it records ``options: {}`` and
        ``corpus: null``, as ``BPEModel.save`` does for a loaded model. With ``filename_prefix`` no manifest is
        written: the folder's manifest describes the unprefixed files.
        """
        from ..formats import atomic

        if push_to_hub:
            # The hub path uploads what the base class writes; nothing of it is atomic anyway.
            return super().save_pretrained(save_directory, legacy_format, filename_prefix, push_to_hub, **kwargs)
        if os.path.isfile(save_directory):
            raise FileExistsError(f"save_directory {os.fspath(save_directory)!r} is a file; pass a folder")
        prefix = f"{filename_prefix}-" if filename_prefix else ""
        # 1. Let the base class write everything into a scratch folder (config, chat templates, added tokens).
        self.cache["model_files"] = model_files = self._model_files()
        try:
            with tempfile.TemporaryDirectory(prefix="hf_bpe_") as tmp:
                written = super().save_pretrained(tmp, legacy_format, filename_prefix, **kwargs)
                files: dict[str, str] = {}
                for path in written:
                    if os.path.isfile(path):
                        files[os.path.relpath(path, tmp)] = Path(path).read_text(encoding="utf-8")
        finally:
            self.cache.pop("model_files", None)
        # 2. Drop loader noise from the config and derive special_tokens_map.json from it.
        config_name = prefix + hf_config.TOKENIZER_CONFIG_FILE
        config = json.loads(files[config_name])
        for key in _LOADER_KEYS:
            config.pop(key, None)
        if config.get("model_max_length") == VERY_LARGE_INTEGER:
            config.pop("model_max_length")
        rendered = hf_config.render_config_files(config)
        files[config_name] = rendered[hf_config.TOKENIZER_CONFIG_FILE]
        files[prefix + hf_config.SPECIAL_TOKENS_MAP_FILE] = rendered[hf_config.SPECIAL_TOKENS_MAP_FILE]
        # 3. tokenizer.json for the fast loaders, with the tokenizer's current added tokens.
        files[prefix + "tokenizer.json"] = self._tokenizer_json(model_files["tokenizer.json"])
        # 4. The manifest of the top-level files (a sub-folder's chat templates are not hf_bpe's to verify).
        if not prefix:
            top = {name: text for name, text in files.items() if not os.path.dirname(name)}
            record = self._training_record
            if record is None and manifest.MANIFEST_NAME in model_files:
                # A model fresh from hf_bpe.train: BPEModel.save's manifest is the training's.
                record = manifest.training_record(json.loads(model_files[manifest.MANIFEST_NAME]))
            if record is None:
                built = manifest.build_manifest(top, options={}, corpus=None)
            else:
                built = manifest.build_manifest(top, options=record["options"], corpus=record["corpus"],
                                                trained=record["trained"])
            files[manifest.MANIFEST_NAME] = manifest.dump_manifest(built)
        # 5. Write atomically, per folder (chat templates may sit in a sub-folder); the manifest goes with the
        # top-level files, so the folder never holds a manifest that disagrees with them.
        by_folder: dict[str, dict[str, str]] = {}
        for name, text in files.items():
            folder, base = os.path.split(name)
            by_folder.setdefault(folder, {})[base] = text
        for folder, group in sorted(by_folder.items()):
            atomic.write_files(os.path.join(os.fspath(save_directory), folder), group, force=True)
        return tuple(os.path.join(os.fspath(save_directory), name) for name in sorted(files))


# The implementations _encode_batch_fast was written against (a subclass or a later patch changing one of them
# sends batches down the general path).
_FAST_PATH_IMPLEMENTATIONS = {name: getattr(HFBPETokenizer, name) for name in _FAST_PATH_METHODS}


def _folder_training_record(
    vocab_file: str | os.PathLike[str], merges_file: str | os.PathLike[str]
) -> dict[str, Any] | None:
    """Return the training record of the manifest beside ``vocab.json`` + ``merges.txt``, or None.

    Only a folder holding both files under their standard names counts: a manifest describes those names.
    An unreadable manifest is logged and ignored (it must not stop the tokenizer from loading).
    """
    vocab_path, merges_path = Path(vocab_file), Path(merges_file)
    if (vocab_path.name, merges_path.name) != (VOCAB_FILES_NAMES["vocab_file"], VOCAB_FILES_NAMES["merges_file"]):
        return None
    folder = vocab_path.parent
    if merges_path.parent != folder or not (folder / manifest.MANIFEST_NAME).is_file():
        return None
    try:
        return manifest.training_record(manifest.load_manifest(folder))
    except (OSError, ValueError) as exc:
        logger.warning(f"ignoring the unreadable {manifest.MANIFEST_NAME} in {os.fspath(folder)!r}: {exc}")
        return None


def _named_specials(kwargs: Mapping[str, Any]) -> set[str]:
    """Name the special tokens the config gives (roles, added tokens flagged special).

    ``BPEModel.from_files`` makes vocabulary entries not spelled in the byte-level alphabet special by itself;
    byte-level spelled ones such as ``<|endoftext|>`` are special only when named. A named token the file lacks
    (one added later, saved in ``added_tokens.json``) is skipped there (``special_if_present``).
    """
    names = {str(token) for role in hf_config.ROLES if (token := kwargs.get(role)) is not None}
    for token in (kwargs.get("added_tokens_decoder") or {}).values():
        token = _as_added_token(token)
        if token.special:
            names.add(token.content)
    return names


def _as_added_token(token: Any) -> AddedToken:
    if isinstance(token, AddedToken):
        return token
    if isinstance(token, str):
        return AddedToken(token, special=True, normalized=False)
    if isinstance(token, Mapping):
        fields = {k: v for k, v in token.items() if k != "__type"}
        return AddedToken(**fields)
    raise TypeError(f"added_tokens_decoder values must be AddedToken, str or dict, got {token!r}")


def register() -> None:
    """Register ``HFBPETokenizer`` with ``AutoTokenizer`` (idempotent).

    Afterwards ``AutoTokenizer.from_pretrained(folder)`` returns an ``HFBPETokenizer`` for folders whose
    ``tokenizer_config.json`` names it. ``import hf_bpe`` arranges this lazily through
    :func:`hf_bpe.integrations.auto_register.install_import_hook`.

    >>> register(); register()
    """
    # Imported here, not at the top: importing the auto module fires hf_bpe's import hook, which calls this
    # function, and at the top of this module it would find the module half-initialised (a spurious warning).
    from transformers.models.auto.tokenization_auto import AutoTokenizer

    AutoTokenizer.register(HFBPEConfig, tokenizer_class=HFBPETokenizer, exist_ok=True)


# Importing this module means transformers is loaded: register at once.
register()
