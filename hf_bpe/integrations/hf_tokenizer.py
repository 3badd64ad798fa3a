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

import functools
import json
import operator
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from transformers.tokenization_utils_base import (
    VERY_LARGE_INTEGER,
    AddedToken,
    TruncationStrategy,
)
from transformers.utils import logging

from ..formats import hf_config
from ..formats import manifest
from ..core.bytelevel import str_to_token, token_to_str
from ..model.bpe import BPEModel
from .added_tokens import AddedTokenMatcher
from .aligned_batch import AlignedBatchMixin
from .transformers_compat import (MAJOR, PreTrainedConfig, PreTrainedTokenizer, Transformers4BatchMixin,
                                   register_with_auto)
from .hf_loading import as_added_token, check_pretrained_folder, load_model
from .saved_json import saved_tokenizer_json, template_flags, template_processing
from .special_ends import SpecialEndsMixin
from .fast_batch import FAST_PATH_METHODS, FastBatchMixin

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


class HFBPEConfig(PreTrainedConfig):
    """The model type that ``AutoTokenizer.register`` needs to know ``HFBPETokenizer`` (tokenizer-only folders)."""

    model_type = "hf_bpe"


class HFBPETokenizer(Transformers4BatchMixin, AlignedBatchMixin, FastBatchMixin, SpecialEndsMixin,
                     PreTrainedTokenizer):
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
    # The batch fast path reproduces transformers 5's general path; under transformers 4 (whose general path
    # differs at the edges) batches take 4.x's own path, so that a batch always equals its items one by one.
    _batch_fast_path = MAJOR >= 5
    # Truncated pairs follow the fast tokenizer's pipeline (aligned_batch.py); False gives the base class's.
    _aligned_pairs = True

    def __init__(
        self,
        vocab_file: str | os.PathLike[str] | None = None,
        merges_file: str | os.PathLike[str] | None = None,
        *,
        pattern: str | None = None,
        add_prefix_space: bool | None = None,
        ignore_merges: bool | None = None,
        errors: str = "replace",
        add_bos_token: bool | None = None,
        add_eos_token: bool | None = None,
        **kwargs: Any,
    ) -> None:
        # 1. The model, loaded before the base class's __init__, which calls get_vocab(). bpe_model= (from_model) is
        #    taken from **kwargs: not a config value (the files are the model), so not a named parameter.
        bpe_model: BPEModel | None = kwargs.pop("bpe_model", None)
        # What the source folder's manifest says about training, for the manifest that save_pretrained writes; a
        # few small, constant entries (datasets hashes __dict__, so it must not change when the tokenizer is used).
        self._training_record: dict[str, Any] | None = None
        # The class save_pretrained names: the source folder's (HFBPETokenizer where it was asked for), else the
        # default PreTrainedTokenizerFast, which loads everywhere (transformers 4.x and 5.x, without hf_bpe).
        source = vocab_file if vocab_file is not None else kwargs.get("tokenizer_file")
        self._tokenizer_class = hf_config.folder_tokenizer_class(
            None if source is None or bpe_model is not None else os.path.dirname(os.fspath(source)))
        if bpe_model is None:
            bpe_model, self._training_record = load_model(vocab_file, merges_file, kwargs, pattern=pattern,
                                                          add_prefix_space=add_prefix_space,
                                                          ignore_merges=ignore_merges)
        elif not isinstance(bpe_model, BPEModel):
            raise TypeError(f"bpe_model must be an hf_bpe.BPEModel, got {type(bpe_model).__name__}: {bpe_model!r:.80}")
        elif any(given is not None and given != actual for given, actual in (
            (pattern, bpe_model.pattern), (add_prefix_space, bpe_model.add_prefix_space),
            (ignore_merges, bpe_model.ignore_merges),
        )):
            raise ValueError(
                f"bpe_model has pattern={bpe_model.pattern!r}, add_prefix_space={bpe_model.add_prefix_space}, "
                f"ignore_merges={bpe_model.ignore_merges} but the call asks for pattern={pattern!r}, "
                f"add_prefix_space={add_prefix_space}, ignore_merges={ignore_merges}; build the model with the "
                "options you want (or use HFBPETokenizer.from_model, which takes them from the model)"
            )
        if not isinstance(errors, str):
            raise TypeError(f"errors must be a str such as 'replace' or 'strict', got {errors!r}")
        # Not given: what the folder's tokenizer.json post-processor does (GPT2TokenizerFast saves the flags there).
        saved_bos, saved_eos = template_flags(kwargs.get("tokenizer_file"))
        add_bos_token = saved_bos if add_bos_token is None else add_bos_token
        add_eos_token = saved_eos if add_eos_token is None else add_eos_token
        if not isinstance(add_bos_token, bool) or not isinstance(add_eos_token, bool):
            raise TypeError(f"add_bos_token and add_eos_token must be bool, got {add_bos_token!r}, {add_eos_token!r}")
        # As GPT2TokenizerFast: each sequence becomes [bos] ids [eos] (pairs: both, in turn).
        self.add_bos_token = add_bos_token
        self.add_eos_token = add_eos_token
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
        added = {int(idx): as_added_token(token) for idx, token in configured.items()}
        # What BPEModel.load refuses in tokenizer_config.json: an empty token (it would match everywhere and the
        # added-token search could not advance) and one text under two ids.
        hf_config.check_added_contents([(idx, token.content) for idx, token in sorted(added.items())],
                                       "added_tokens_decoder (tokenizer_config.json)")
        known = {token.content for token in added.values()}
        for content, idx in sorted(bpe_model.special_tokens.items(), key=lambda item: item[1]):
            if content not in known:
                added.setdefault(idx, AddedToken(content, special=True, normalized=False))
        kwargs["added_tokens_decoder"] = added
        if "extra_special_tokens" not in kwargs and "additional_special_tokens" not in kwargs:
            named = {str(kwargs[role]) for role in hf_config.ROLES if kwargs.get(role) is not None}
            extra = [t.content for _, t in sorted(added.items()) if t.special and t.content not in named]
            if extra:  # the name both majors read (transformers 5 renames it extra_special_tokens)
                kwargs["additional_special_tokens"] = extra
        for role in hf_config.ROLES:
            # Saved as null when unset, so GPT2TokenizerFast does not default them to <|endoftext|>.
            kwargs.setdefault(role, None)
        # "backend" too: a config saved by the fast tokenizer says "tokenizers", but this class is transformers'
        # Python backend ("custom"), and code that branches on it must not call fast-only APIs.
        for key in _LOADER_KEYS:
            kwargs.pop(key, None)

        # 3. The base class: added tokens, roles, padding and truncation options.
        super().__init__(pattern=self.pattern, add_prefix_space=self.add_prefix_space,
                         ignore_merges=self.ignore_merges, errors=errors, add_bos_token=add_bos_token,
                         add_eos_token=add_eos_token, **kwargs)
        for flag, role in ((add_bos_token, "bos_token"), (add_eos_token, "eos_token")):
            if flag and getattr(self, role) is None:
                raise ValueError(f"add_{role} = True but {role} = None: name the token, e.g. "
                                 f"{role}='<|endoftext|>'")

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
                   "ignore_merges": model.ignore_merges, **model.roles, **kwargs}
        return cls(bpe_model=model, **options)

    def train_new_from_iterator(
        self,
        text_iterator: Iterable[str | list[str]],
        vocab_size: int,
        length: int | None = None,
        new_special_tokens: list[str | AddedToken] | None = None,
        special_tokens_map: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> HFBPETokenizer:
        """Train a tokenizer like this one (pattern, specials, roles, options) on new text, with hf_bpe's trainer.

        The model equals what ``GPT2TokenizerFast.train_new_from_iterator`` trains on the same folder and texts
        (tokenizers' ``BpeTrainer``: this tokenizer's special tokens first, in id order, then ``new_special_tokens``,
        then the 256 bytes, then merges).

        Args:
            text_iterator: texts, or batches (lists) of texts.
            vocab_size: the new vocabulary's size.
            length: ignored (a progress-bar hint in transformers).
            new_special_tokens: special tokens to add after the current ones.
            special_tokens_map: renames of current special tokens (old -> new).
            **kwargs: ``min_frequency``, ``max_token_length``, ``show_progress``; other trainer options are refused.

        >>> from hf_bpe.model import BPEModel
        >>> tok = HFBPETokenizer.from_model(BPEModel.bytes_only(special_tokens={"<e>": 256}), eos_token="<e>")
        >>> new = tok.train_new_from_iterator([["low lower lowest"] * 3], 262, show_progress=False)
        >>> new.eos_token, new.convert_ids_to_tokens(new("lowest")["input_ids"])
        ('<e>', ['low', 'e', 'st'])
        """
        from ..training.bpe.trainer import train

        unknown = sorted(set(kwargs) - {"min_frequency", "max_token_length", "show_progress"})
        if unknown:
            raise TypeError(f"train_new_from_iterator does not support {unknown}; hf_bpe's trainer takes "
                            "min_frequency, max_token_length and show_progress")
        rename = dict(special_tokens_map or {})
        specials = [rename.get(t.content, t.content) for _, t in sorted(self._added_tokens_decoder.items()) if t.special]
        specials += [str(token) for token in new_special_tokens or ()]

        def texts() -> Iterable[str]:
            for item in text_iterator:
                yield from [item] if isinstance(item, str) else item

        model = train(texts(), vocab_size=vocab_size, special_tokens=specials, pattern=self.pattern,
                      add_prefix_space=self.add_prefix_space, min_frequency=kwargs.get("min_frequency"),
                      max_token_length=kwargs.get("max_token_length"), show_progress=kwargs.get("show_progress", True))
        options: dict[str, Any] = {role: rename.get(str(value), str(value)) for role in hf_config.ROLES
                                   if (value := getattr(self, role)) is not None}
        for key in ("model_max_length", "padding_side", "truncation_side", "clean_up_tokenization_spaces",
                    "split_special_tokens", "add_bos_token", "add_eos_token", "errors", "chat_template"):
            if key in self.init_kwargs or hasattr(self, key):
                options[key] = getattr(self, key, self.init_kwargs.get(key))
        return type(self).from_model(model, **options)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> HFBPETokenizer:
        """Load a folder (or Hub id) as transformers does; a local folder is checked first.

        Accepted folders: GPT-2 files (``vocab.json`` + ``merges.txt``), a ``tokenizer.json`` alone (what
        transformers 5 saves), or both. A local folder whose ``tokenizer_config.json`` is not a JSON object, or
        that lacks a file, is refused naming the file (transformers itself fails with an ``AttributeError``).

        >>> import tempfile
        >>> from hf_bpe.model import BPEModel
        >>> folder = BPEModel.bytes_only(special_tokens={"<|end|>": 256}).save(tempfile.mkdtemp() + "/tok")
        >>> HFBPETokenizer.from_pretrained(folder)("hi<|end|>")["input_ids"]
        [104, 105, 256]
        """
        check_pretrained_folder(pretrained_model_name_or_path)
        return super().from_pretrained(pretrained_model_name_or_path, *args, **kwargs)

    def _build_tables(self) -> None:
        # id -> byte-level string for every model id; the reverse for get_vocab and convert_tokens_to_ids.
        # A list when the ids are dense (the usual case: fastest), a dict when they are sparse, so that memory
        # follows the number of tokens, not the largest id (a vocab.json may hold an id of 2**31 - 2).
        model = self.bpe_model
        count = len(model.vocab) + len(model.special_tokens)
        decoder: list[str | None] | dict[int, str]
        decoder = [None] * model.vocab_size if model.vocab_size <= 2 * count + 1024 else {}
        for token, idx in model.vocab.items():
            decoder[idx] = token_to_str(token)
        for content, idx in model.special_tokens.items():
            decoder[idx] = content
        self._decoder = decoder
        pairs = decoder.items() if isinstance(decoder, dict) else enumerate(decoder)
        self._encoder = {token: idx for idx, token in sorted(pairs, key=lambda pair: pair[0]) if token is not None}

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
        decoder = self._decoder
        if isinstance(decoder, dict):
            return decoder.get(index)
        return decoder[index] if 0 <= index < len(decoder) else None

    def _update_total_vocab_size(self) -> None:
        # Called by the base class whenever added tokens change: the matchers must then be rebuilt.
        self.cache.pop("splitter", None)
        self.cache.pop("finder", None)
        self.cache.pop("special_ids", None)
        super()._update_total_vocab_size()

    # -- encoding -------------------------------------------------------------------------------------------------

    def _splitter(self) -> tuple[AddedTokenMatcher, AddedTokenMatcher]:
        splitter = self.cache.get("splitter")
        if splitter is None:
            raw: dict[str, tuple[int, AddedToken]] = {}
            normalized: dict[str, tuple[int, AddedToken]] = {}
            for content, idx in self._added_tokens_encoder.items():
                token = self._added_tokens_decoder.get(idx)
                if token is None or token.content != content:
                    token = AddedToken(content, special=False, normalized=True)
                (normalized if token.normalized else raw)[content] = (idx, token)
            splitter = self.cache["splitter"] = (AddedTokenMatcher(raw), AddedTokenMatcher(normalized))
        return splitter

    def _encode_text(self, text: str, split_special_tokens: bool) -> list[int]:
        """Encode text to ids: added tokens first (tokenizers' two passes), then each piece between them."""
        # Surrogates raise (UnicodeEncodeError), as the fast tokenizer refuses such text; the raw API follows tiktoken.
        encode = functools.partial(self.bpe_model.encode_ordinary, surrogates="strict")
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
        return [decoder[i] for i in self.bpe_model.encode_ordinary(text, surrogates="strict")]  # type: ignore[misc]

    def _encode_plus(self, text: Any, text_pair: Any = None, **kwargs: Any):
        # Offsets, overflowing windows and truncated pairs: the fast tokenizer's pipeline (aligned_batch.py), which
        # also gives the Encoding objects behind word_ids(); other calls get those lazily.
        truncated_pair = text_pair is not None and kwargs.get("truncation_strategy") not in (
            None, TruncationStrategy.DO_NOT_TRUNCATE)
        if kwargs.get("return_offsets_mapping") or kwargs.get("return_overflowing_tokens"):
            self._check_aligned_path()
            return self._encode_aligned_call(text, text_pair, kwargs)
        if (truncated_pair and self._aligned_pairs and self._aligned_path_applies()
                and not kwargs.get("is_split_into_words")):
            return self._encode_aligned_call(text, text_pair, kwargs)
        return self._attach_lazy_encodings(self._encode_plus_ids(text, text_pair, kwargs), text, text_pair, kwargs)

    def _encode_plus_ids(self, text: Any, text_pair: Any, kwargs: dict[str, Any]) -> Any:
        # Batches of strings: ids from the compiled core, the rest of the pipeline done per batch (see
        # _encode_batch_fast); None means the call is one it does not cover, handled below as before.
        if self._batch_fast_path and isinstance(text, (list, tuple)) and text:
            encoded = self._encode_batch_fast(text, text_pair, kwargs)
            if encoded is not None:
                return encoded
        if MAJOR < 5 and isinstance(text, (list, tuple)):  # transformers 4 batches in _batch_encode_plus
            items = list(zip(text, text_pair)) if text_pair is not None else list(text)
            return PreTrainedTokenizer._batch_encode_plus(self, items, **kwargs)
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

    def _keeps_fast_path_methods(self) -> bool:
        """Tell whether every method whose effect ``_encode_batch_fast`` reproduces is the one it reproduces."""
        cls, instance = type(self), self.__dict__
        return all(getattr(cls, name) is _FAST_PATH_IMPLEMENTATIONS[name] and name not in instance
                   for name in FAST_PATH_METHODS)


    def _encode_without_added_tokens(self, text: str) -> list[int]:
        return self.bpe_model.encode_ordinary(text, surrogates="strict")

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
            try:
                idx = operator.index(raw_id)  # ints, NumPy and torch integers; never a float's truncation
            except TypeError:
                raise TypeError(f"token ids must be integers, got {raw_id!r} ({type(raw_id).__name__})") from None
            if idx < 0:  # the fast tokenizer raises too (its ids are unsigned)
                raise ValueError(f"token id {idx} is negative; ids are 0..{size - 1}")
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
            # As each major's fast tokenizer: transformers 5's TokenizersBackend needs an explicit opt-in for this
            # WordPiece-era cleanup (it corrupts BPE text); transformers 4 has no such attribute and its fast
            # tokenizers apply the cleanup whenever asked (4.x's text-generation pipeline asks by default).
            if getattr(self, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", MAJOR < 5):
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
        atomic.replace_folder(save_directory, names, force=True)
        return tuple(os.path.join(save_directory, name) for name in names)

    def _tokenizer_json(self, text: str) -> str:
        ends = [(getattr(self, f"{role}_token"), self.convert_tokens_to_ids(str(getattr(self, f"{role}_token"))))
                if getattr(self, f"add_{role}_token") else None for role in ("bos", "eos")]
        return saved_tokenizer_json(text, self._added_tokens_decoder, template_processing(*ends))

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
        ``GPT2TokenizerFast``. Returns the written paths. ``tokenizer_config.json`` names the class the source
        folder named (``HFBPETokenizer`` where that was asked for), else ``PreTrainedTokenizerFast``: the folder
        then loads with the same ids wherever transformers 4.x or 5.x runs, with or without hf_bpe.

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
        config["tokenizer_class"] = self._tokenizer_class
        for key in ("clean_up_tokenization_spaces", "add_bos_token", "add_eos_token"):
            if config.get(key) is False:  # defaults: transformers 4 saves them, 5 does not (the flags live in
                config.pop(key)           # tokenizer.json's post-processor)
        # transformers 5 saves the unnamed specials as an `extra_special_tokens` list, which transformers 4 cannot
        # read (it wants a dict there); both read `additional_special_tokens`.
        if isinstance(config.get("extra_special_tokens"), list):
            extra = config.pop("extra_special_tokens")
            if extra:
                config["additional_special_tokens"] = extra
        elif config.get("extra_special_tokens") == {}:  # transformers 4's empty named-tokens dict
            config.pop("extra_special_tokens")
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
            # The top-level set is swapped in whole (readers never see a mix); a sub-folder's files after it.
            write = atomic.replace_folder if not folder else atomic.write_files
            write(os.path.join(os.fspath(save_directory), folder), group, force=True)
        return tuple(os.path.join(os.fspath(save_directory), name) for name in sorted(files))


# The implementations _encode_batch_fast was written against (a subclass or a later patch changing one of them
# sends batches down the general path).
_FAST_PATH_IMPLEMENTATIONS = {name: getattr(HFBPETokenizer, name) for name in FAST_PATH_METHODS}


def register() -> None:
    """Register ``HFBPETokenizer`` with ``AutoTokenizer`` (idempotent).

    Afterwards ``AutoTokenizer.from_pretrained(folder)`` returns an ``HFBPETokenizer`` for folders whose
    ``tokenizer_config.json`` names it. ``import hf_bpe`` arranges this lazily through
    :func:`hf_bpe.integrations.auto_register.install_import_hook`.

    >>> register(); register()
    """
    register_with_auto(HFBPEConfig, HFBPETokenizer)


# Importing this module means transformers is loaded: register at once.
register()
