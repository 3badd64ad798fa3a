"""``HFSentencePieceTokenizer``: a `transformers` tokenizer class for SentencePiece BPE and unigram folders, id
for id ``sentencepiece``.

The folders :func:`hf_bpe.save_sentencepiece` and ``hf-bpe convert MODEL.model --to tokenizers`` write hold
``tokenizer.model``, ``tokenizer.json`` and a ``tokenizer_config.json`` naming ``PreTrainedTokenizerFast`` by
default (transformers 4.x and 5.x load it from ``tokenizer.json`` without ``hf_bpe``) or this class when asked
(``tokenizer_class="HFSentencePieceTokenizer"``, ``--tokenizer-class HFSentencePieceTokenizer``) and when the folder
has no ``tokenizer.json``: ``AutoTokenizer.from_pretrained(folder)`` (with ``hf_bpe`` imported) then returns it. Both
encode as ``sentencepiece.SentencePieceProcessor.encode``; ``HFSentencePieceTokenizer.from_pretrained(folder)`` loads
either folder.

The class reads ``tokenizer.model``, normalizes as SentencePiece does (its own normalizer, compiled:
:mod:`hf_bpe.core.sentencepiece_normalize`; user-defined symbols copied and frozen) and merges with the BPE model of
the exact ``tokenizers`` pipeline of :mod:`hf_bpe.integrations.sentencepiece_hf` (score-ranked merges, byte
fallback), under transformers' Python backend; a unigram model encodes with
:class:`hf_bpe.model.unigram.UnigramModel` (sentencepiece's float32 Viterbi). It therefore also encodes exactly what
that pipeline cannot: models with user-defined symbols (and unigram models with UNUSED pieces: their folders have no
``tokenizer.json``), the combining sequences on which ``tokenizers``' ``Precompiled`` differs from SentencePiece,
and the unigram ties that ``tokenizers``' float64 sums break otherwise. Further: special tokens are never matched in
text (``split_special_tokens=True``, as ``sentencepiece`` encodes ``"<s>"`` in a text as characters) and no BOS/EOS is
added unless asked (``add_bos_token``/``add_eos_token``). ``save_pretrained`` writes ``tokenizer.model`` and
``tokenizer.json`` again (not for user-defined symbols).
"""

from __future__ import annotations

import json
import operator
import os
import random
from collections.abc import Mapping
from typing import Any

import regex

from ..core._sentencepiece import SentencePieceNormalizer as CompiledNormalizer
from ..formats.sentencepiece_model import CONTROL, UNKNOWN, USER_DEFINED, SentencePieceModel
from ..model.unigram import UnigramModel
from .saved_json import saved_tokenizer_json, template_flags, template_processing
from .sentencepiece_hf import (SENTENCEPIECE_CLASSES, folder_class, sentencepiece_tokenizer, tokenizer_json_blocker,
                               user_symbols)
from .special_ends import SpecialEndsMixin
from .transformers_compat import PreTrainedConfig, PreTrainedTokenizer, register_with_auto

__all__ = ["HFSentencePieceConfig", "HFSentencePieceTokenizer", "register"]

TOKENIZER_CLASS = "HFSentencePieceTokenizer"


class HFSentencePieceConfig(PreTrainedConfig):
    """The model type ``AutoTokenizer.register`` needs to know ``HFSentencePieceTokenizer``."""

    model_type = "hf_bpe_sentencepiece"


class HFSentencePieceTokenizer(SpecialEndsMixin, PreTrainedTokenizer):
    """A SentencePiece BPE or unigram tokenizer for `transformers` that encodes exactly like ``sentencepiece``.

    Args:
        vocab_file: the SentencePiece model (``tokenizer.model``). Not needed with ``sentencepiece_model``.
        sentencepiece_model: an in-memory model (e.g. fresh from ``hf_bpe.train_sentencepiece``).
        add_bos_token, add_eos_token: add the model's BOS / EOS piece around each sequence (default: as the saved
            ``tokenizer.json`` does; neither for a new one, as ``sentencepiece.encode``).
        sp_model_kwargs: subword regularization for unigram models, as transformers' SentencePiece tokenizers
            (``T5Tokenizer``, ``AlbertTokenizer``) pass it to ``SentencePieceProcessor``: ``enable_sampling``,
            ``nbest_size`` (default -1: every segmentation), ``alpha`` (default 0.1); and ``seed`` (hf_bpe's: the
            draws are a function of it; sentencepiece seeds one global generator instead). Each tokenization then
            draws a segmentation from the distribution sentencepiece defines (see :mod:`hf_bpe.model.unigram`).
            Saved in ``tokenizer_config.json``.
        kwargs: the usual `transformers` tokenizer options (``model_max_length``, ``padding_side``, ...).

    Raises:
        ValueError: no model given, or a model that cannot be encoded exactly (char/word models; BPE with UNUSED
            pieces or ties: see
            :func:`hf_bpe.integrations.sentencepiece_hf.check_expressible`); ``sp_model_kwargs`` with an unknown key,
            a bad value, or sampling for a BPE model (BPE-dropout is not provided).

    >>> from hf_bpe import train_sentencepiece
    >>> model = train_sentencepiece(["low lower lowest"] * 3, vocab_size=16)
    >>> tok = HFSentencePieceTokenizer(sentencepiece_model=model)
    >>> tok("lowest low")["input_ids"], tok.decode(tok("lowest low")["input_ids"])
    ([6, 7, 5], 'lowest low')
    """

    vocab_files_names = {"vocab_file": "tokenizer.model"}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file: str | os.PathLike[str] | None = None, *,
                 sentencepiece_model: SentencePieceModel | None = None, add_bos_token: bool | None = None,
                 add_eos_token: bool | None = None, sp_model_kwargs: Mapping[str, Any] | None = None,
                 **kwargs: Any) -> None:
        # 1. The model and its exact encoder, before the base class (whose __init__ calls get_vocab()).
        if sentencepiece_model is None:
            if vocab_file is None:
                raise ValueError("HFSentencePieceTokenizer needs vocab_file (a SentencePiece tokenizer.model) or "
                                 "sentencepiece_model; load a folder with from_pretrained(folder)")
            sentencepiece_model = SentencePieceModel.load(vocab_file)
        if not isinstance(sentencepiece_model, SentencePieceModel):
            raise TypeError(f"sentencepiece_model must be a SentencePieceModel, got "
                            f"{type(sentencepiece_model).__name__}")
        self.sentencepiece_model = sentencepiece_model
        self._engine = sentencepiece_tokenizer(sentencepiece_model, user_symbols_ok=True)
        # SentencePiece's own normalizer (tokenizers' Precompiled differs on some combining sequences) and its
        # user-defined symbols: copied unnormalized, then never split.
        self._user_symbols = user_symbols(sentencepiece_model)
        self._normalizer = CompiledNormalizer(sentencepiece_model.encoding_normalizer, self._user_symbols)
        self._frozen = regex.compile("|".join(regex.escape(u) for u in sorted(
            self._user_symbols, key=len, reverse=True))) if self._user_symbols else None
        self._pieces = [p.piece for p in sentencepiece_model.pieces]
        self._encoder = {piece: index for index, piece in enumerate(self._pieces)}
        # A unigram model encodes with hf_bpe's exact Viterbi (tokenizers' Unigram only decodes here).
        self._unigram = (UnigramModel.from_sentencepiece(sentencepiece_model)
                         if sentencepiece_model.model_type == "unigram" else None)
        self._write_json = tokenizer_json_blocker(sentencepiece_model) is None
        # The class save_pretrained names: the source folder's where it is one of the two, else the default
        # (PreTrainedTokenizerFast when tokenizer.json is written, which loads everywhere without hf_bpe).
        source = None if vocab_file is None else os.path.dirname(os.fspath(vocab_file))
        self._tokenizer_class = _source_class(source, sentencepiece_model)
        if sp_model_kwargs is not None and not isinstance(sp_model_kwargs, Mapping):
            raise TypeError(f"sp_model_kwargs must be a dict such as {{'enable_sampling': True}}, got "
                            f"{type(sp_model_kwargs).__name__}: {sp_model_kwargs!r:.80}")
        self.sp_model_kwargs = dict(sp_model_kwargs or {})
        self._sampling = sampling_options(self.sp_model_kwargs, unigram=self._unigram is not None)
        # Unset flags come from a saved tokenizer.json's post-processor, where transformers 5 keeps them.
        saved_bos, saved_eos = template_flags(kwargs.get("tokenizer_file"))
        self.add_bos_token = saved_bos if add_bos_token is None else bool(add_bos_token)
        self.add_eos_token = saved_eos if add_eos_token is None else bool(add_eos_token)
        # 2. Roles from the trainer spec unless given; special tokens are never found in text.
        trainer = sentencepiece_model.trainer
        for role in ("bos", "eos", "unk", "pad"):
            index = trainer.get(f"{role}_id", -1)
            if f"{role}_token" not in kwargs and 0 <= index < len(self._pieces) and \
                    sentencepiece_model.pieces[index].type in (CONTROL, UNKNOWN, USER_DEFINED):
                kwargs[f"{role}_token"] = self._pieces[index]
        kwargs.setdefault("split_special_tokens", True)
        kwargs.setdefault("clean_up_tokenization_spaces", False)
        for key in ("backend", "tokenizer_file", "files_loaded", "use_fast"):  # where it came from, not what it is
            kwargs.pop(key, None)
        super().__init__(add_bos_token=self.add_bos_token, add_eos_token=self.add_eos_token,
                         sp_model_kwargs=self.sp_model_kwargs, **kwargs)
        for flag, role in ((self.add_bos_token, "bos_token"), (self.add_eos_token, "eos_token")):
            if flag and getattr(self, role) is None:
                raise ValueError(f"add_{role} = True but the model has no {role.split('_')[0]} piece")

    # -- vocabulary -----------------------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """The number of pieces of the SentencePiece model."""
        return len(self._pieces)

    def get_vocab(self) -> dict[str, int]:
        """Return pieces (and added tokens) to ids."""
        vocab = dict(self._encoder)
        vocab.update(self.__dict__.get("_added_tokens_encoder", {}))
        return vocab

    def _convert_token_to_id(self, token: str) -> int | None:
        index = self._encoder.get(token)
        if index is None and self.unk_token is not None:
            return self._encoder.get(str(self.unk_token))
        return index

    def _convert_id_to_token(self, index: int) -> str | None:
        index = operator.index(index)
        if not 0 <= index < len(self._pieces):
            raise ValueError(f"token id {index} is out of range; ids are 0..{len(self._pieces) - 1}")
        return self._pieces[index]

    # -- encoding and decoding ------------------------------------------------------------------------------------

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        """The pieces ``sentencepiece`` gives ``text``: normalized, user-defined symbols frozen, the rest merged by
        score (byte fallback, fused unknowns) as ``bpe_model.cc`` does."""
        normalized = self._normalizer.normalize(text)
        if self._unigram is not None:
            return self._unigram_tokens(self._unigram, normalized)
        model = self._engine.model
        if self._frozen is None:
            return [token.value for token in model.tokenize(normalized)] if normalized else []
        tokens: list[str] = []
        start = 0
        for match in self._frozen.finditer(normalized):  # leftmost, longest first: bpe_model.cc's PrefixMatcher
            if match.start() > start:
                tokens += [token.value for token in model.tokenize(normalized[start:match.start()])]
            tokens.append(match.group())
            start = match.end()
        if start < len(normalized):
            tokens += [token.value for token in model.tokenize(normalized[start:])]
        return tokens

    def _unigram_tokens(self, unigram: UnigramModel, normalized: str) -> list[str]:
        """The unigram Viterbi's pieces; a run of unknown characters is its text, or the unknown piece when that
        text is also a piece's (so that its id is the unknown id, as in ``sentencepiece``)."""
        unk = self._pieces[unigram.unk_id]
        if self._sampling is None:
            path = unigram.viterbi(normalized)
        else:
            alpha, nbest_size, rng = self._sampling
            path = unigram.sample_normalized(normalized, alpha=alpha, nbest_size=nbest_size, rng=rng)
        if unigram.byte_fallback:
            return unigram.pieces_of(path)
        out: list[str] = []
        previous_unknown = False
        for text, index in path:
            unknown = index == unigram.unk_id
            if unknown and previous_unknown:
                out[-1] = unk if out[-1] == unk else out[-1] + text
            else:
                out.append(text)
            if unknown and out[-1] in self._encoder:
                out[-1] = unk
            previous_unknown = unknown
        return out

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Join pieces as ``sentencepiece`` decodes them (``▁`` as spaces, byte pieces as UTF-8)."""
        return self._engine.decoder.decode(tokens)

    def _decode(self, token_ids: int | list[int], skip_special_tokens: bool = False,
                clean_up_tokenization_spaces: bool | None = None, **kwargs: Any) -> str:
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        ids: list[int] = []
        added = self._added_tokens_decoder
        for raw in token_ids:
            try:
                index = operator.index(raw)
            except TypeError:
                raise TypeError(f"token ids must be integers, got {raw!r} ({type(raw).__name__})") from None
            if index < 0 or (index >= len(self._pieces) and index not in added):
                raise ValueError(f"token id {index} is out of range; ids are 0..{len(self.get_vocab()) - 1}")
            ids.append(index)
        if any(index >= len(self._pieces) for index in ids):  # tokens added after loading: their text
            tokens = [added[i].content if i >= len(self._pieces) else self._pieces[i] for i in ids
                      if not (skip_special_tokens and i in self.all_special_ids)]
            text = self.convert_tokens_to_string(tokens)
        else:
            text = self._engine.decode(ids, skip_special_tokens=skip_special_tokens)
        if clean_up_tokenization_spaces if clean_up_tokenization_spaces is not None else \
                self.clean_up_tokenization_spaces:
            text = self.clean_up_tokenization(text)
        return text

    # -- saving ---------------------------------------------------------------------------------------------------

    def save_pretrained(self, save_directory: str | os.PathLike[str], *args: Any, **kwargs: Any) -> tuple[str, ...]:
        """Save as transformers does; ``tokenizer_config.json`` names the class of the folder this tokenizer was
        loaded from (``PreTrainedTokenizerFast`` by default, ``HFSentencePieceTokenizer`` where that was chosen,
        the folder has no ``tokenizer.json``, or ``sp_model_kwargs`` enables sampling)."""
        from ..formats import atomic
        from ..formats.hf_config import TOKENIZER_CONFIG_FILE, load_tokenizer_config

        written = super().save_pretrained(save_directory, *args, **kwargs)
        name = (kwargs.get("filename_prefix") or "") and f"{kwargs['filename_prefix']}-"
        path = os.path.join(save_directory, name + TOKENIZER_CONFIG_FILE)
        if os.path.isfile(path):
            config = load_tokenizer_config(path)
            # Sampling (sp_model_kwargs) is this class's alone: the fast tokenizer would silently not sample.
            shared = self._write_json and not name and self._sampling is None
            config["tokenizer_class"] = self._tokenizer_class if shared else TOKENIZER_CLASS
            text = json.dumps(config, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
            atomic.replace_folder(save_directory, {name + TOKENIZER_CONFIG_FILE: text}, force=True)
        return written

    def save_vocabulary(self, save_directory: str, filename_prefix: str | None = None) -> tuple[str, ...]:
        """Write ``tokenizer.model`` and the exact ``tokenizer.json`` (atomically); return their paths."""
        from ..formats import atomic

        if not os.path.isdir(save_directory):
            raise FileNotFoundError(f"save_directory {save_directory!r} is not a folder; create it first")
        prefix = f"{filename_prefix}-" if filename_prefix else ""
        files: dict[str, str | bytes] = {prefix + "tokenizer.model": self.sentencepiece_model.to_bytes()}
        if not prefix and self._write_json:  # PreTrainedTokenizerFast reads tokenizer.json by that name
            # The pipeline's own special pieces, tokens added since, and BOS/EOS as the fast tokenizer adds them.
            added = {**self._engine.get_added_tokens_decoder(),
                     **{i: t for i, t in self._added_tokens_decoder.items() if i >= len(self._pieces)}}
            ends = [(str(getattr(self, f"{role}_token")), getattr(self, f"{role}_token_id"))
                    if getattr(self, f"add_{role}_token") else None for role in ("bos", "eos")]
            files["tokenizer.json"] = saved_tokenizer_json(self._engine.to_str(pretty=True) + "\n", added,
                                                           template_processing(*ends))
        atomic.replace_folder(save_directory, files, force=True)
        return tuple(os.path.join(save_directory, name) for name in files)


def _source_class(folder: str | None, model: SentencePieceModel) -> str:
    """The ``tokenizer_class`` the folder ``folder`` names when it is a SentencePiece folder's, else the default."""
    from ..formats.hf_config import TOKENIZER_CONFIG_FILE, load_tokenizer_config

    named = None
    if folder is not None:
        try:
            named = load_tokenizer_config(os.path.join(folder, TOKENIZER_CONFIG_FILE)).get("tokenizer_class")
        except (OSError, ValueError):
            named = None  # no config, or a broken one (what reads the folder reports it)
    return folder_class(model, named if named in SENTENCEPIECE_CLASSES and (
        named == TOKENIZER_CLASS or tokenizer_json_blocker(model) is None) else None)


_SAMPLING_KEYS = ("enable_sampling", "nbest_size", "alpha", "seed")


def sampling_options(options: Mapping[str, Any], *, unigram: bool) -> tuple[float, int, random.Random] | None:
    """Check ``sp_model_kwargs``; return (alpha, nbest_size, seeded generator) when sampling is on, else None.

    Raises:
        ValueError: an unknown key, a value of the wrong kind, ``nbest_size`` above 512, or sampling asked of a
            BPE model.

    >>> sampling_options({"enable_sampling": True, "alpha": 0.5, "seed": 1}, unigram=True)[:2]
    (0.5, -1)
    >>> sampling_options({}, unigram=False) is None
    True
    """
    unknown = sorted(set(options) - set(_SAMPLING_KEYS))
    if unknown:
        raise ValueError(f"sp_model_kwargs has {unknown[0]!r}; HFSentencePieceTokenizer takes "
                         f"{', '.join(_SAMPLING_KEYS)} (BOS/EOS: add_bos_token / add_eos_token)")
    enable, nbest_size = options.get("enable_sampling", False), options.get("nbest_size", -1)
    alpha, seed = options.get("alpha", 0.1), options.get("seed")
    if not isinstance(enable, bool):
        raise ValueError(f"sp_model_kwargs['enable_sampling'] must be True or False, got {enable!r}")
    if isinstance(nbest_size, bool) or not isinstance(nbest_size, int) or nbest_size > 512:
        raise ValueError(f"sp_model_kwargs['nbest_size'] must be an int of at most 512 (-1: every segmentation), "
                         f"got {nbest_size!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise ValueError(f"sp_model_kwargs['alpha'] must be a number, got {alpha!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"sp_model_kwargs['seed'] must be an int or None, got {seed!r}")
    if not enable:
        return None
    if not unigram:
        raise ValueError("sp_model_kwargs enable_sampling=True needs a unigram model; for a BPE model "
                         "sentencepiece would apply BPE-dropout, which HFSentencePieceTokenizer does not provide")
    return float(alpha), nbest_size, random.Random(seed)


def register() -> None:
    """Register ``HFSentencePieceTokenizer`` with ``AutoTokenizer`` (idempotent).

    >>> register(); register()
    """
    register_with_auto(HFSentencePieceConfig, HFSentencePieceTokenizer)

register()
