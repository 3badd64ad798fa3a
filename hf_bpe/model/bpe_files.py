"""A byte-level BPE model's files: rendered and saved (GPT-2 files, ``tokenizer.json``, configs, manifest), loaded.

The mixin :class:`ModelFiles` is a base class of :class:`hf_bpe.model.bpe.BPEModel`; it reads the model's own state
and keeps the file formats (``hf_bpe.formats``) out of the model's encoding code.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from .vocab_checks import regular_tokens

__all__ = ["ModelFiles"]


class ModelFiles:
    """What :class:`~hf_bpe.model.bpe.BPEModel` writes and reads: :meth:`files`, :meth:`save`, :meth:`from_files`,
    :meth:`load`."""

    _vocab: dict[bytes, int]
    _specials: dict[str, int]
    _merges: tuple[tuple[bytes, bytes], ...]
    _pattern: str
    _ignore_merges: bool
    _unk: tuple[str | None, bool]
    _roles: Mapping[str, str]
    _provenance: Mapping[str, Any]
    _pretokenizer: Any
    add_prefix_space: bool

    def files(self, *, tokenizer_class: str = "PreTrainedTokenizerFast") -> dict[str, str]:
        """Render every file :meth:`save` writes, as texts, without writing anything.

        ``vocab.json``, ``merges.txt`` and ``tokenizer.json`` (byte-identical to what `tokenizers` writes), the
        transformers config files, and the manifest that lists them all. ``tokenizer_class`` is as in :meth:`save`.

        >>> from hf_bpe import BPEModel
        >>> sorted(BPEModel.bytes_only().files())  # doctest: +NORMALIZE_WHITESPACE
        ['hf_bpe_manifest.json', 'merges.txt', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json',
         'vocab.json']
        """
        from ..formats import gpt2, hf_config, manifest, tokenizer_json

        tokens = {i: t for t, i in self._vocab.items()}
        # Checked and laid out once for the three files (what the dump_* functions each do alone).
        layout = gpt2.lay_out_vocab(tokens, self._specials)
        lefts, rights = gpt2.merge_parts(self._merges)
        pattern_regex = None if self._pretokenizer.name == "gpt2" else self._pretokenizer.regex
        files = {
            "vocab.json": gpt2.render_vocab_json(layout),
            "merges.txt": gpt2.render_merges_txt(lefts, rights),
            "tokenizer.json": tokenizer_json.render_tokenizer_json(
                layout, lefts, rights, special_tokens=self._specials,
                split_regex=None if pattern_regex is None else tokenizer_json.check_pattern(pattern_regex),
                add_prefix_space=self.add_prefix_space, ignore_merges=self._ignore_merges,
                unk_token=self._unk[0], fuse_unk=self._unk[1],
            ),
            **hf_config.tokenizer_config_files(
                special_tokens=self._specials, pattern=self._pattern, add_prefix_space=self.add_prefix_space,
                ignore_merges=self._ignore_merges, roles=self._roles, tokenizer_class=tokenizer_class,
            ),
        }
        # The manifest covers every other file; a trained model also records its options and corpus fingerprint.
        provenance = self._provenance
        files[manifest.MANIFEST_NAME] = manifest.dump_manifest(
            manifest.build_manifest(files, options=provenance.get("options", {}), corpus=provenance.get("corpus"))
        )
        return files

    def save(self, directory: str | os.PathLike[str], *, force: bool = False,
             tokenizer_class: str = "PreTrainedTokenizerFast") -> Path:
        """Write ``vocab.json``, ``merges.txt``, ``tokenizer.json`` and the transformers config files, atomically.

        The default folder loads everywhere with the same ids: ``AutoTokenizer`` and ``PreTrainedTokenizerFast``
        under transformers 4.x and 5.x, with or without hf_bpe imported (the fast tokenizer of ``tokenizer.json``),
        ``HFBPETokenizer.from_pretrained`` and ``BPEModel.load``.

        Args:
            directory: the output folder; created if absent.
            force: replace hf_bpe's files if they already exist there (other files are never touched).
            tokenizer_class: what ``tokenizer_config.json`` names for ``AutoTokenizer``: ``"PreTrainedTokenizerFast"``
                (the default), or ``"HFBPETokenizer"`` to have ``AutoTokenizer`` build hf_bpe's class; such a folder
                needs hf_bpe imported wherever it loads (under transformers 4.x, ``AutoTokenizer`` refuses a class
                it does not know: "Tokenizer class HFBPETokenizer does not exist").

        Returns:
            The folder's path.

        Raises:
            FileExistsError: when an output file exists and ``force`` is false.
            ValueError: for another ``tokenizer_class``.
        """
        from ..formats import atomic

        return atomic.replace_folder(directory, self.files(tokenizer_class=tokenizer_class), force=force)

    @classmethod
    def from_files(
        cls,
        vocab_file: str | os.PathLike[str],
        merges_file: str | os.PathLike[str],
        *,
        special_tokens: Sequence[str] | Mapping[str, int] = (),
        special_if_present: Collection[str] = (),
        pattern: str = "gpt2",
        add_prefix_space: bool = False,
        ignore_merges: bool = False,
        missing_bytes: Literal["refuse", "allow"] = "refuse",
    ) -> Self:
        """Load a GPT-2 format vocabulary (``vocab.json``/``encoder.json`` + ``merges.txt``/``vocab.bpe``).

        Entries of the vocabulary that are not spelled in the byte-level alphabet (e.g. ``"<|im start|>"``) and
        the names in ``special_tokens`` become special tokens; a special lives only in :attr:`special_tokens`,
        not also in :attr:`vocab`, unless it spells a byte or a part of a merge (then it is both, with one id).

        Args:
            vocab_file: the JSON vocabulary.
            merges_file: the merges, one ``"a b"`` per line.
            special_tokens: names of vocabulary entries that are special, or a mapping of names to ids (for
                specials that the vocabulary file does not list).
            special_if_present: names that are special when the vocabulary has them and skipped otherwise (a
                transformers config may name tokens added later, which live outside the file).
            pattern: see :class:`BPEModel`.
            add_prefix_space: see :class:`BPEModel`.
            ignore_merges: see :class:`BPEModel`.
            missing_bytes: see :class:`BPEModel`.
        """
        from ..formats import folder, gpt2

        if isinstance(special_tokens, str):
            raise TypeError(
                f"special_tokens must be a sequence of str, got one str {special_tokens!r}; use [{special_tokens!r}]"
            )
        tokens, others = gpt2.load_vocab_json(vocab_file)
        merges = gpt2.load_merges_txt(merges_file, vocab=tokens)
        specials = dict(others)
        if isinstance(special_tokens, Mapping):
            specials.update(special_tokens)
        else:
            for name in special_tokens:
                idx = others.get(name, tokens.get(name.encode("utf-8")))
                if idx is None:
                    raise ValueError(
                        f"special token {name!r} is not in {os.fspath(vocab_file)!r}; add it to the vocab first"
                    )
                specials[name] = idx
        for name in special_if_present:
            idx = others.get(name, tokens.get(name.encode("utf-8")))
            if idx is not None:
                specials[name] = idx
        folder.check_merges_present(merges_file, merges, tokens, specials)
        return cls(regular_tokens(tokens, merges, specials), merges, special_tokens=specials, pattern=pattern,
                   add_prefix_space=add_prefix_space, ignore_merges=ignore_merges, missing_bytes=missing_bytes)

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *,
             missing_bytes: Literal["refuse", "allow"] = "refuse") -> Self:
        """Load a tokenizer folder: one written by :meth:`save`, GPT-2 files, or a ``tokenizer.json`` alone.

        ``tokenizer_config.json``, when present, gives the pattern, ``add_prefix_space``, ``ignore_merges`` and
        the special tokens (``added_tokens_decoder``); what it does not say comes from a ``tokenizer.json`` in the
        folder (GPT-2's own folder declares ``<|endoftext|>`` only there). See :mod:`hf_bpe.formats.folder`.
        ``missing_bytes="allow"`` loads a vocabulary without some byte tokens, as `tokenizers` does.

        Raises:
            FileNotFoundError: when the folder does not exist or holds no tokenizer (the message says what is
                missing).
            ValueError: naming the file when one is malformed.
        """
        # The cyclic GC paused meanwhile: the ~100,000 tuples and lists of a large vocabulary (no cycles among them)
        # triggered full collections that traverse them all, ~4 % of a whole `hf-bpe tokenize` process (perf).
        enabled = gc.isenabled()
        gc.disable()
        try:
            return cls._load(directory, missing_bytes)
        finally:
            if enabled:
                gc.enable()

    @classmethod
    def _load(cls, directory: str | os.PathLike[str], missing_bytes: Literal["refuse", "allow"]) -> Self:
        from ..formats import folder
        from . import load_cache

        # A large folder read before (same files, same readers) comes from the per-user cache (model/load_cache.py).
        key = load_cache.folder_key(directory, missing_bytes)
        if key is not None and (model := load_cache.kept(cls, key, directory, missing_bytes)) is not None:
            return model
        contents = folder.read_folder(directory)
        try:
            model = cls(regular_tokens(contents.tokens, contents.merges, contents.specials), contents.merges,
                        special_tokens=contents.specials, roles=contents.roles, missing_bytes=missing_bytes,
                        **contents.options)
        except (TypeError, ValueError) as exc:
            kind = ValueError if isinstance(exc, UnicodeError) else type(exc)  # UnicodeError's take 5 arguments
            raise kind(f"{os.fspath(directory)!r}: {exc}") from None
        if key is not None:
            load_cache.keep(key, model, contents)
        return model
