"""A byte-level BPE model: vocabulary, merge ranks, pre-tokenizer and special tokens, with encode and decode.

The model is what a trainer produces and what files load into. It knows nothing of `transformers`; the
``HFBPETokenizer`` wraps it. Encoding follows `tokenizers`' BPE model exactly: special tokens are split out first
(leftmost, longest), every remaining non-empty piece is pre-tokenized (with ``add_prefix_space``, a ``" "`` is
prepended to each such piece that does not start with one), and each pre-token is merged by merge rank, lowest
first, leftmost among equals.

>>> vocab = {bytes([b]): i for i, b in enumerate(range(256))}
>>> vocab[b"ab"] = 256
>>> model = BPEModel(vocab, [(b"a", b"b")], special_tokens={"<|end|>": 257})
>>> model.encode("abab<|end|>", allowed_special="all")
[256, 256, 257]
>>> model.decode([256, 97, 257])
'aba<|end|>'
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, AbstractSet, Literal

from ..core import _core
from ..core.pretokenize import Pretokenizer, usable_cpus
from . import single_text
from .incremental import IncrementalDecoder
from .packing import pack, packed_digest, unpack, unpack_merges
from .tiktoken_compat import (Surrogates, check_surrogates, encode_repairing, offsets_of, repair_each,
                              repair_surrogates, resolve_allowed, resolve_disallowed)
from .bpe_files import ModelFiles
from .token_arrays import TokenArrays, check_batch
from .vocab_checks import merge_triples, tokens_by_id
from ..core.specials import check_special_ids, special_tokens_regex
from ..formats.hf_config import check_roles
from ..errors import DisallowedSpecialTokenError

if TYPE_CHECKING:
    import regex  # annotations only: special_tokens_regex loads it when a model first looks for special tokens

    from .partial_bytes import PartialBytesEncoder  # loaded by a vocabulary that lacks byte tokens (never trained)

__all__ = ["BPEModel", "DisallowedSpecialTokenError", "IncrementalDecoder", "SAVED_FILES"]

# Every file BPEModel.save writes (the CLI refuses an --out folder holding any of them before training, not after).
SAVED_FILES = (
    "vocab.json",
    "merges.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "hf_bpe_manifest.json",
)

_Special = Literal["all"] | AbstractSet[str]
# Byte values that no UTF-8 encoding contains.
_NOT_IN_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])
# Larger than any id tokenizers or hf_bpe gives (2**31 - 1 is the core's limit).
_NO_ID = 2**31 - 1

_Disallowed = Literal["all"] | Collection[str]


def _decline(text: object, num_threads: object, surrogates: object) -> None:
    """Stand in for ``ShortTextEncoder.encode`` where there is none: every text takes the full path."""


class BPEModel(TokenArrays, ModelFiles):
    """Byte-level BPE: tokens as bytes, merges by rank, a pre-tokenizer, special tokens.

    Args:
        vocab: regular tokens (raw bytes) to ids; all 256 single bytes must be present, so any text encodes.
        merges: merge rules in rank order, each a pair of tokens whose concatenation is in ``vocab``. A pair
            listed twice keeps its last rank, as in `tokenizers`.
        special_tokens: special (added) token strings to ids. An id may be shared with a regular token only
            if that token's bytes are the special's UTF-8 spelling (GPT-2's ``<|endoftext|>``).
        pattern: pre-tokenizer: a name in ``hf_bpe.PATTERNS`` (``"gpt2"``, ``"gpt4"``, ``"o200k"``, ...) or a regex.
        add_prefix_space: prepend a space to each piece of text that does not start with one (`tokenizers`'
            ``ByteLevel(add_prefix_space=True)``).
        ignore_merges: a pre-token that is itself in the vocabulary becomes that one token (Llama 3).
        provenance: ``{"options": ..., "corpus": ...}``, how a trainer made the model; :meth:`save` records it in
            the manifest so that ``hf-bpe verify`` can retrain and compare.
        roles: special tokens' roles for transformers, e.g. ``{"eos_token": "<|endoftext|>"}`` (keys:
            ``bos_token``, ``eos_token``, ``unk_token``, ``pad_token``, ...); each names one of ``special_tokens``.
            Written to ``tokenizer_config.json``; encoding does not use them.
        missing_bytes: ``"refuse"`` a vocabulary without a token for some byte UTF-8 text can contain, or
            ``"allow"`` it: such a byte is then dropped from its piece (its neighbours may merge), or becomes
            ``unk_token``'s id, exactly as `tokenizers`' BPE does (toy and character-level vocabularies).
        unk_token: the BPE model's unknown token (`tokenizers`' ``BPE(unk_token=...)``, ``model.unk_token`` in
            ``tokenizer.json``): a token of the vocabulary that each missing byte becomes (not a transformers role).
        fuse_unk: consecutive unknown bytes become one ``unk_token``.

    Raises:
        TypeError: on arguments of the wrong type.
        ValueError: on inconsistent vocabularies (missing bytes, unknown merge parts, clashing ids).
    """

    def __init__(
        self,
        vocab: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]],
        *,
        special_tokens: Mapping[str, int] = MappingProxyType({}),
        pattern: str = "gpt2",
        add_prefix_space: bool = False,
        ignore_merges: bool = False,
        provenance: Mapping[str, object] | None = None,
        roles: Mapping[str, str] = MappingProxyType({}),
        missing_bytes: Literal["refuse", "allow"] = "refuse",
        unk_token: str | None = None,
        fuse_unk: bool = False,
        _trained: bool = False,
        _triples: Sequence[tuple[int, int, int]] | array | None = None,
        _packed: tuple[bytes, ...] | None = None,
    ) -> None:
        # `_trained` (the trainer's merges, consistent with vocab by construction): the encoder waits for the first
        # encode (_encoder), ~60 ms of a 32,000-merge run that only saves the files. `_triples`: merge_triples(vocab,
        # merges), already made (a load from the cache, model/load_cache.py, whose entry was made by it). `_packed`
        # (with `_triples`, `merges` empty): the packed form the vocab came from; the merges are unpacked from it on
        # first use (_merges), which encoding never needs (Llama 3's 280,147: ~0.1 s of every `hf-bpe tokenize`).
        # 1. Validate the vocabulary and the specials, and build the id -> bytes table.
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab must be a mapping of bytes to int ids, got {type(vocab).__name__}")
        specials = check_special_ids(special_tokens)
        by_id = tokens_by_id(vocab)
        # Bytes that UTF-8 never produces (C0, C1, F5..FF) may be absent: real vocabularies (Falcon, MPT,
        # StarCoder) drop them, and encoding a str can never need them.
        missing = [b for b in range(256) if bytes([b]) not in vocab and b not in _NOT_IN_UTF8]
        if missing_bytes not in ("refuse", "allow"):
            raise ValueError(f"missing_bytes must be 'refuse' or 'allow', got {missing_bytes!r}")
        if missing and missing_bytes == "refuse":
            raise ValueError(
                f"a byte-level vocabulary needs a token for every byte that UTF-8 text can contain, but "
                f"{len(missing)} are missing (first: {bytes(missing[:8])!r}); train with hf_bpe.train, add them, or "
                "load with missing_bytes='allow' (such bytes are then dropped, or become unk_token, as tokenizers does)"
            )
        if not isinstance(fuse_unk, bool):
            raise TypeError(f"fuse_unk must be a bool, got {fuse_unk!r}")
        unk_id = None
        if unk_token is not None:
            if not isinstance(unk_token, str):
                raise TypeError(f"unk_token must be a str or None, got {type(unk_token).__name__} {unk_token!r}")
            unk_id = specials.get(unk_token, vocab.get(unk_token.encode("utf-8")))
            if unk_id is None:
                raise ValueError(f"unk_token {unk_token!r} is not a token of the vocabulary; add it or leave it out")
        for text, idx in specials.items():
            if idx in by_id and by_id[idx] != text.encode("utf-8"):
                raise ValueError(
                    f"special token {text!r} has id {idx}, which the vocab already gives to {by_id[idx]!r}; "
                    "give it a free id"
                )
        # A trainer's dict is its own (made for this model alone): kept, not copied (~1 MB at 32,000 tokens).
        self._vocab = vocab if _trained and type(vocab) is dict else dict(vocab)
        self._specials = specials
        size = max([*by_id, *specials.values()]) + 1
        self._size = size
        # A list indexed by id, unless the ids are so sparse that the list would be mostly holes (tokenizers allows
        # any u32 id: one token at 2**30 must not cost gigabytes).
        dense = size <= 2 * (len(by_id) + len(specials)) + 65536
        self._id_bytes: list[bytes | None] | dict[int, bytes] = [None] * size if dense else {}
        for idx, token in by_id.items():
            self._id_bytes[idx] = token
        for text, idx in specials.items():
            self._id_bytes[idx] = text.encode("utf-8")

        # 2. Resolve merges into (left_id, right_id, new_id) triples in rank order.
        if _packed is None or _triples is None:
            merges = tuple(merges)
            self._merges = merges
        triples: list[tuple[int, int, int]] | array | None = (
            (_triples if isinstance(_triples, array) else list(_triples)) if _triples is not None
            else None if _trained and not missing else merge_triples(vocab, merges))

        # 3. The compiled pieces: pre-tokenizer, word encoder, special-token splitter.
        if not isinstance(add_prefix_space, bool) or not isinstance(ignore_merges, bool):
            raise TypeError(
                f"add_prefix_space and ignore_merges must be bool, got {add_prefix_space!r}, {ignore_merges!r}"
            )
        self._pretokenizer = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
        self._pattern = pattern
        self._ignore_merges = ignore_merges
        if triples is not None:
            self._encoder = self._word_encoder(triples)
        self._unk = (unk_token, fuse_unk)
        self._missing = bytes(missing)
        if missing:  # tokenizers' BPE: a byte without a token is dropped, or becomes the unk token
            from .partial_bytes import PartialBytesEncoder

            self._encoder = PartialBytesEncoder(self._encoder, self._missing, unk_id, fuse_unk,
                                                 self._vocab if ignore_merges else None)
        if triples is not None:  # else built with the encoder, at the first encode (_encode_short)
            self._encode_short = self._short_encoder()
        self._special_regex_cache: dict[frozenset[str], regex.Pattern[str]] = {}
        # Given by a trainer: the options and corpus fingerprint that save() writes to the manifest.
        if provenance is not None and not isinstance(provenance, Mapping):
            raise TypeError(f"provenance must be a mapping with 'options' and 'corpus', or None, got {provenance!r}")
        self._provenance: Mapping[str, object] = MappingProxyType(dict(provenance or {}))
        self._packed: tuple[bytes, ...] | None = _packed  # see __reduce__
        self._roles = MappingProxyType(check_roles(roles, specials))

    def _word_encoder(self, triples: list[tuple[int, int, int]] | array) -> _core.WordEncoder:
        # An absent UTF-8-impossible byte maps to an id no vocabulary has, so a misuse would fail loudly on decode.
        # An int32 array (left, right, new, ...: a load from the per-user cache) goes in without a tuple per merge.
        byte_ids = [self._vocab.get(bytes([b]), _NO_ID) for b in range(256)]
        whole = self._vocab if self._ignore_merges else None
        if isinstance(triples, array):
            return _core.WordEncoder._from_flat(triples, byte_ids, whole_words=whole)
        return _core.WordEncoder(triples, byte_ids, whole_words=whole)

    @functools.cached_property
    def _merges(self) -> tuple[tuple[bytes, bytes], ...]:
        # Only a model built with `_packed` gets here (the others set it in __init__); then kept in the instance dict.
        return tuple(unpack_merges(self._packed))  # type: ignore[arg-type]

    @functools.cached_property
    def _encoder(self) -> _core.WordEncoder:
        # Only a `_trained` model gets here (the others set it in __init__); then kept in the instance dict.
        return self._word_encoder(merge_triples(self._vocab, self._merges))

    @functools.cached_property
    def _encode_short(self) -> Callable[[object, object, object], list[int] | None]:
        return self._short_encoder()  # as _encoder

    def _short_encoder(self) -> Callable[[object, object, object], list[int] | None]:
        # encode_ordinary's compiled first try (a named pattern, every byte a token), else one that always declines.
        short = None if self._missing else self._pretokenizer.short_text_encoder(self._encoder,
                                                                                 single_text.LONG_TEXT_CHARS)
        if short is None:
            return _decline
        # `model.encode_ordinary` then finds the compiled equivalent of the method in the instance (the method's
        # Python frame was ~40% of a short line's cost); the class's method stays for subclasses that override it
        # and for explicit `BPEModel.encode_ordinary(model, ...)` calls. (It holds the model: a cycle the GC frees.)
        if type(self).encode_ordinary is BPEModel.encode_ordinary:
            self.__dict__["encode_ordinary"] = _core.OrdinaryEncoder(
                short, functools.partial(single_text.encode_ordinary, self))
        return short.encode

    # -- properties ---------------------------------------------------------------------------------------------

    @property
    def vocab(self) -> Mapping[bytes, int]:
        """Regular tokens (raw bytes) to ids."""
        return MappingProxyType(self._vocab)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """Special token strings to ids."""
        return MappingProxyType(self._specials)

    @property
    def merges(self) -> tuple[tuple[bytes, bytes], ...]:
        """Merge rules in rank order."""
        return self._merges

    @property
    def roles(self) -> Mapping[str, str]:
        """Roles of special tokens for transformers (``{"eos_token": "<|endoftext|>"}``)."""
        return self._roles

    @property
    def pattern(self) -> str:
        """The pre-tokenizer pattern: a name in ``hf_bpe.PATTERNS`` or a regex."""
        return self._pattern

    @property
    def pretokenizer(self) -> Pretokenizer:
        """The pre-tokenizer (pattern and ``add_prefix_space``)."""
        return self._pretokenizer

    @property
    def add_prefix_space(self) -> bool:
        """Whether a space is prepended to each piece of text that does not start with one."""
        return self._pretokenizer.add_prefix_space

    @property
    def ignore_merges(self) -> bool:
        """Whether a pre-token found in the vocabulary is one token without merging (Llama 3)."""
        return self._ignore_merges

    @property
    def word_encoder(self) -> _core.WordEncoder | PartialBytesEncoder:
        """The compiled word encoder behind :meth:`encode_word`, for bulk calls into the core (extending)."""
        return self._encoder

    @property
    def vocab_size(self) -> int:
        """The largest id plus one."""
        return self._size

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return (
            f"BPEModel(vocab_size={self.vocab_size}, merges={len(self._merges)}, specials={len(self._specials)}, "
            f"pattern={self._pattern!r}, add_prefix_space={self.add_prefix_space}, "
            f"ignore_merges={self._ignore_merges})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BPEModel):
            return NotImplemented
        return (
            self._vocab == other._vocab
            and self._merges == other._merges
            and self._specials == other._specials
            and self._pretokenizer == other._pretokenizer
            and self._ignore_merges == other._ignore_merges
            and self._roles == other._roles
            and self._unk == other._unk
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        # Tokens and merges packed into a few byte strings (computed once; the model is immutable): pickling a
        # model for worker processes, and `datasets` hashing it (Python-level pickling) for its cache, then cost
        # milliseconds instead of one pickle call per token and per merge.
        if self._packed is None:
            self._packed = pack(self._vocab, self._merges)
        return (_unpack, (self._packed, self._specials, self._pattern, self.add_prefix_space,
                          self._ignore_merges, dict(self._roles), self._partial_options()))

    def _partial_options(self) -> dict[str, object]:
        """The options of a vocabulary missing some bytes (empty for a complete one)."""
        if not self._missing:
            return {}
        return {"missing_bytes": "allow", "unk_token": self._unk[0], "fuse_unk": self._unk[1]}

    @property
    def missing_bytes(self) -> bytes:
        """The byte values (that UTF-8 text can contain) with no token: dropped, or encoded as the unk token."""
        return self._missing

    def digest(self) -> str:
        """Return a sha256 (hex) of what makes this tokenizer encode as it does: tokens and ids, merges, special
        tokens, pattern and options (not the file spellings, nor roles). Equal models have equal digests.

        >>> BPEModel.bytes_only().digest() == BPEModel.bytes_only().digest()
        True
        """
        if self._packed is None:
            self._packed = pack(self._vocab, self._merges)
        options = [sorted(self._specials.items()), self._pattern, self.add_prefix_space, self._ignore_merges]
        return packed_digest(self._packed, options + ([sorted(self._partial_options().items())] if self._missing
                                                       else []))

    # -- lookups --------------------------------------------------------------------------------------------------

    def id_to_bytes(self, token_id: int) -> bytes:
        """Return the bytes of a token id (a special token's UTF-8 spelling).

        Raises:
            ValueError: for an id outside the vocabulary.
        """
        try:
            token = self._id_bytes[token_id] if 0 <= token_id < self._size else None
        except (KeyError, TypeError):
            token = None
        if token is None:
            raise ValueError(f"token id {token_id!r} is not in the vocabulary (ids 0..{self._size - 1})")
        return token

    def token_to_id(self, token: bytes) -> int | None:
        """Return the id of a regular token's bytes, or None."""
        return self._vocab.get(token)

    # -- encode ---------------------------------------------------------------------------------------------------

    def encode_ordinary(self, text: str, *, num_threads: int | None = None,
                        surrogates: Surrogates = "replace") -> list[int]:
        """Encode text, treating special-token text as ordinary text.

        Args:
            text: the text.
            num_threads: threads for a long text (256K characters or more, named patterns): it is cut where every
                piece ends (``core/fragment.py``) and the parts encoded at once. ``None``: every usable CPU.
                The ids never depend on it.
            surrogates: what to do with surrogate code points (a ``str`` may hold them; UTF-8 cannot):
                ``"replace"``, as tiktoken: a surrogate pair written as two code points encodes as the character
                it spells, any other surrogate as U+FFFD; ``"strict"``: raise ``UnicodeEncodeError``, as
                `tokenizers` refuses such text (``HFBPETokenizer`` does). Other text is unaffected.

        >>> BPEModel.bytes_only().encode_ordinary("hi")
        [104, 105]
        """
        # One compiled call for a short str with default options (the per-text loop's cost was mostly the Python
        # frames on the way); None sends anything else (checks, errors, surrogates, long texts) the full way.
        short = self._encode_short  # a plain attribute load: `self._encode_short(...)` is a method lookup each call
        ids = short(text, num_threads, surrogates)
        return single_text.encode_ordinary(self, text, num_threads, surrogates) if ids is None else ids

    def encode_word(self, word: bytes) -> list[int]:
        """Encode one pre-token, given as its UTF-8 bytes, with the merges (no pre-tokenization).

        >>> BPEModel.bytes_only().encode_word(b"hi")
        [104, 105]
        """
        return self._encoder.encode_word(word)

    def encode_word_spans(self, word: bytes) -> list[tuple[int, int, int]]:
        """Encode one pre-token and give each token's byte span in it: ``(id, start, end)``.

        The spans cover the word end to end, except where a vocabulary without some byte tokens drops a byte.

        >>> BPEModel.bytes_only().encode_word_spans(b"hi")
        [(104, 0, 1), (105, 1, 2)]
        """
        if self._missing:
            return self._encoder.encode_word_spans(word, self.token_length)
        spans, at = [], 0
        for token_id in self._encoder.encode_word(word):
            end = at + self.token_length(token_id)
            spans.append((token_id, at, end))
            at = end
        return spans

    def token_length(self, token_id: int) -> int:
        """Return the number of bytes of a token (a special token's UTF-8 length)."""
        return len(self.id_to_bytes(token_id))

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None,
                              surrogates: Surrogates = "replace") -> list[list[int]]:
        """Encode each text with :meth:`encode_ordinary`, in one compiled call on several threads.

        Args:
            texts: the texts.
            num_threads: threads that split and encode parts of the batch without the GIL (named patterns);
                ``None``: every usable CPU for batches over 64K characters, one below. The ids never depend on it.
            surrogates: as in :meth:`encode_ordinary`.

        >>> BPEModel.bytes_only().encode_ordinary_batch(["hi", "!"], num_threads=2)
        [[104, 105], [33]]
        """
        check_batch(texts, num_threads)
        if self._missing or not self._pretokenizer.compiled:
            check_surrogates(surrogates)
            return [self.encode_ordinary(text, surrogates=surrogates) for text in texts]
        threads = usable_cpus() if num_threads is None else num_threads
        return encode_repairing(lambda batch: single_text.encode_batch(self, batch, threads),
                                texts if type(texts) is list else list(texts), surrogates, repair_each)

    def encode(
        self, text: str, *, allowed_special: _Special = frozenset(), disallowed_special: _Disallowed = "all",
        surrogates: Surrogates = "replace",
    ) -> list[int]:
        """Encode text; special tokens follow tiktoken's ``allowed_special``/``disallowed_special`` contract.

        Args:
            text: the text.
            allowed_special: special tokens recognised in ``text`` (``"all"`` for every one).
            disallowed_special: special tokens whose appearance in ``text`` is an error (``"all"``: every special
                not allowed). Pass ``()`` to encode such text as ordinary text.
            surrogates: as in :meth:`encode_ordinary` (tiktoken looks for disallowed specials before the fix-up).

        Raises:
            DisallowedSpecialTokenError: when ``text`` contains a disallowed special token.

        >>> m = BPEModel.bytes_only(special_tokens={"<s>": 256})
        >>> m.encode("a<s>", allowed_special="all"), m.encode("a<s>", disallowed_special=())
        ([97, 256], [97, 60, 115, 62])
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}: {text!r:.80}")
        allowed = resolve_allowed(self._specials, allowed_special)
        disallowed = resolve_disallowed(self._specials, disallowed_special, allowed)
        if disallowed:
            match = self._special_regex(disallowed).search(text)
            if match:
                token = match.group()
                raise DisallowedSpecialTokenError(
                    f"text contains the special token {token!r} at offset {match.start()}, which is not allowed. "
                    f"To encode it as the special token, pass allowed_special={{{token!r}}} (or 'all'); to encode it "
                    "as ordinary text, pass disallowed_special=() (or leave it out of disallowed_special)"
                )
        if not allowed:
            return self.encode_ordinary(text, surrogates=surrogates)
        # tiktoken fixes the whole text, then finds the specials in it (a special may hold U+FFFD).
        return encode_repairing(lambda t: self._encode_allowed(t, allowed), text, surrogates, repair_surrogates)

    def _encode_allowed(self, text: str, allowed: frozenset[str]) -> list[int]:
        ids: list[int] = []
        start = 0
        for match in self._special_regex(allowed).finditer(text):
            if match.start() > start:
                ids += self.encode_ordinary(text[start : match.start()], surrogates="strict")
            ids.append(self._specials[match.group()])
            start = match.end()
        if start < len(text):
            ids += self.encode_ordinary(text[start:], surrogates="strict")
        return ids

    def encode_batch(
        self, texts: Sequence[str], *, allowed_special: _Special = frozenset(), disallowed_special: _Disallowed = "all",
        surrogates: Surrogates = "replace",
    ) -> list[list[int]]:
        """Encode each text with :meth:`encode`."""
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, got one str; wrap it in a list: [text]")
        return [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special,
                            surrogates=surrogates) for t in texts]

    def _special_regex(self, tokens: frozenset[str]) -> regex.Pattern[str]:
        # Longest first, so that the alternation finds the leftmost-longest special, as tokenizers' matcher does.
        pattern = self._special_regex_cache.get(tokens)
        if pattern is None:
            pattern = self._special_regex_cache[tokens] = special_tokens_regex(tokens)
        return pattern

    # -- decode ---------------------------------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of token ids.

        Raises:
            ValueError: naming the first id outside the vocabulary (negative ids included).

        >>> BPEModel.bytes_only().decode_bytes([104, 105])
        b'hi'
        """
        ids = ids if isinstance(ids, list | tuple) else list(ids)  # read an iterator once, for the error path too
        table = self._id_bytes
        try:
            if ids and min(ids) < 0:  # a list would read table[-1] as its last entry
                raise IndexError
            return b"".join([table[i] for i in ids])  # type: ignore[misc]
        except (IndexError, KeyError, TypeError):
            for i in ids:
                self.id_to_bytes(i)  # raises the ValueError that names the first bad id
            raise

    def token_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """Return the bytes of each token id: a per-token view of :meth:`decode_bytes`.

        >>> BPEModel.bytes_only().token_bytes([104, 0xE4])
        [b'h', b'\\xe4']
        """
        return [self.id_to_bytes(i) for i in ids]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """Decode ids to text and give the character offset where each token starts, as tiktoken's method.

        A token that starts inside a multi-byte character gets the offset of that character.

        Raises:
            UnicodeDecodeError: the ids' bytes are not valid UTF-8 (tiktoken decodes strictly here too).
            ValueError: an id outside the vocabulary.

        >>> BPEModel.bytes_only().decode_with_offsets([104, 0xE4, 0xBD, 0xA0, 33])
        ('h你!', [0, 1, 1, 1, 2])
        """
        return offsets_of(self.token_bytes(tokens))

    def incremental_decoder(self, *, errors: str = "replace", prefill: Iterable[int] = (),
                            skip_special_tokens: bool = False) -> IncrementalDecoder:
        """Return a streaming decoder: text out as ids come in, equal to :meth:`decode` for any chunking.

        ``prefill`` takes the prompt's ids (text already shown) and ``step`` mirrors `tokenizers`'
        ``DecodeStream(ids=prefill, skip_special_tokens=...)``: see :class:`IncrementalDecoder`.

        >>> decoder = BPEModel.bytes_only().incremental_decoder()
        >>> decoder.decode([0xE4, 0xBD]), decoder.decode([0xA0], final=True)
        ('', '你')
        """
        return IncrementalDecoder(self, errors=errors, prefill=prefill, skip_special_tokens=skip_special_tokens)

    def decode(self, ids: Iterable[int], *, errors: str = "replace") -> str:
        """Decode token ids to text; ``errors`` as in :meth:`bytes.decode` (``"strict"`` raises on split UTF-8).

        >>> BPEModel.bytes_only().decode([0xE4, 0xBD])
        '�'
        """
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # -- construction and files -------------------------------------------------------------------------------------

    @classmethod
    def bytes_only(cls, *, special_tokens: Mapping[str, int] = MappingProxyType({}), pattern: str = "gpt2") -> BPEModel:
        """Return a model with the 256 byte tokens (id = byte value) and no merges.

        >>> len(BPEModel.bytes_only())
        256
        """
        return cls({bytes([b]): b for b in range(256)}, [], special_tokens=special_tokens, pattern=pattern)


def _unpack(packed: tuple[bytes, ...], specials, pattern, add_prefix_space, ignore_merges, roles,
            partial=None) -> BPEModel:
    vocab, merges = unpack(packed)
    model = BPEModel(vocab, merges, special_tokens=specials, pattern=pattern, add_prefix_space=add_prefix_space,
                     ignore_merges=ignore_merges, roles=roles or {}, **(partial or {}))
    model._packed = packed
    return model


def _rebuild(vocab, merges, specials, pattern, add_prefix_space, ignore_merges, roles=None) -> BPEModel:
    """Unpickle a model pickled before the packed form (hf_bpe < 0.1 pickles)."""
    return BPEModel(vocab, merges, special_tokens=specials, pattern=pattern, add_prefix_space=add_prefix_space,
                    ignore_merges=ignore_merges, roles=roles or {})
