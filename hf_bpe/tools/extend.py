"""``hf_bpe.extend``: extend a byte-level BPE tokenizer given as a model or as a path, recording where the base is.

The merge learning lives in :mod:`hf_bpe.training.bpe.extend` (the training layer); reading a base from a path needs
:func:`hf_bpe.tools.convert.load_any` (every format hf_bpe reads), which sits in this layer, so the public entry
is here. It records the base's path and the sha256 of its files in the manifest, which :func:`hf_bpe.verify`
uses to re-run the extension.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> base = hf_bpe_train(["low lower lowest"] * 3, vocab_size=258, show_progress=False).save(folder / "base")
>>> model = extend(base, ["low lower lowest"] * 3, new_tokens=2, show_progress=False)
>>> len(model), model.merges[-1], "vocab.json" in base_files(base)
(260, (b' low', b'e'), True)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ..formats.folder import GPT2_PAIRS
from ..model.bpe import BPEModel
from ..training.bpe.trainer import train as hf_bpe_train
from ..training.bpe.extend import extend_model
from .convert import SPECIAL_TOKENS_FILE, load_any

__all__ = ["base_files", "extend", "load_base"]

# The files of a folder that can say what its tokenizer is (every file load_any may read there).
_TOKENIZER_FILES = frozenset({name for pair in GPT2_PAIRS for name in pair} | {
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "hf_bpe_manifest.json", SPECIAL_TOKENS_FILE})


def base_files(path: str | os.PathLike[str]) -> dict[str, dict[str, object]]:
    """Return ``{name: {"sha256", "bytes"}}`` of the tokenizer files at ``path`` (a folder, or one file).

    For a folder, every file there that a tokenizer loader may read (``vocab.json``, ``merges.txt``,
    ``encoder.json``, ``vocab.bpe``, ``tokenizer.json``, the configs, ``.tiktoken`` files, the manifest); for a
    file, the file and a ``special_tokens.json`` beside it.
    """
    where = Path(path)
    if where.is_dir():
        chosen = [p for p in where.iterdir() if p.is_file() and (p.name in _TOKENIZER_FILES or p.suffix == ".tiktoken")]
    else:
        chosen = [where] + [p for p in [where.parent / SPECIAL_TOKENS_FILE] if p.is_file()]
    table = {}
    for file in sorted(chosen):
        data = file.read_bytes()
        table[file.name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return table


def load_base(base: object, pattern: str | None = None) -> tuple[BPEModel, dict[str, object] | None]:
    """Return the base as a model, and what the manifest records of it (None for a model given as an object).

    Raises:
        TypeError: for a base that is neither a ``BPEModel`` nor a path.
        ValueError: for a SentencePiece ``.model`` (use ``hf_bpe.extend_sentencepiece``) or an unreadable base.
        FileNotFoundError: when the path does not exist.
    """
    if isinstance(base, BPEModel):
        if pattern is not None:
            raise ValueError(f"pattern={pattern!r:.80} applies to a base given as a path; a BPEModel has its own "
                             f"({base.pattern!r:.80})")
        return base, None
    if not isinstance(base, (str, os.PathLike)):
        raise TypeError(f"base must be a BPEModel or the path of a tokenizer folder or file, got "
                        f"{type(base).__name__} {base!r:.80}")
    path = Path(base)
    if path.suffix == ".model" or (path.is_dir() and (path / "tokenizer.model").is_file()
                                   and not any((path / v).is_file() for v, _ in GPT2_PAIRS)
                                   and not (path / "tokenizer.json").is_file()):
        raise ValueError(f"{os.fspath(base)!r} is a SentencePiece model; extend it with "
                         "hf_bpe.extend_sentencepiece (hf_bpe.extend takes byte-level BPE bases)")
    model = load_any(path, pattern=pattern)
    return model, {"path": os.fspath(path.resolve()), "files": base_files(path)}


def extend(
    base: BPEModel | str | os.PathLike[str],
    corpus: Any,
    *,
    vocab_size: int | None = None,
    new_tokens: int | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    show_progress: bool = True,
    text_column: str = "text",
    workers: int | None = None,
    pattern: str | None = None,
) -> BPEModel:
    """Extend a byte-level BPE tokenizer with merges learned on a new corpus, every existing id kept.

    Each base token keeps its id and bytes, the base merges stay in order as the prefix, special tokens keep ids
    and roles (those the base has as transformers loads it: GPT-2 files without a config get GPT2TokenizerFast's
    ``<|endoftext|>`` as bos, eos and unk), new ids start after the largest id in use; the corpus is pre-tokenized
    with the base's pattern, each pre-token segmented exactly as the base encodes it, and ``tokenizers``'
    ``BpeTrainer`` loop continues from there (:mod:`hf_bpe.training.bpe.extend` states the contract).

    Which text keeps its ids, exactly: a text encodes to the same ids as with the base if and only if none of its
    pre-tokens, as the base encodes them, holds two neighbouring tokens that a new merge joins (and, with
    ``ignore_merges``, none is itself a new token). Every text is made of the base's tokens (bytes at least), so
    "text the base already covers encodes as before" is not the rule: a text changes exactly where a new merge
    applies to its base encoding (new merges rank after every base merge, so the base's merges all happen first).
    ``docs/guides/extending.md`` shows it, and the SentencePiece case (``extend_sentencepiece``).

    Args:
        base: a :class:`BPEModel`, or the path of what :func:`hf_bpe.tools.convert.load_any` reads: a folder
            (GPT-2 files, ``tokenizer.json``, one hf_bpe saved) or a ``.tiktoken`` file. A path is recorded in the
            manifest with the sha256 of its files, for ``hf-bpe verify --corpus``.
        corpus: what :func:`hf_bpe.train` accepts (texts, a ``datasets`` dataset, file paths).
        vocab_size: the final number of ids; or
        new_tokens: how many ids to add (exactly one of the two).
        min_frequency: the smallest pair count still merged.
        max_token_length: the longest token (bytes) a new merge may build, as ``BpeTrainer``.
        show_progress: progress bars on stderr.
        text_column: the text column of a dataset.
        workers: counting threads (the output never depends on it).
        pattern: the base's pre-tokenizer where its files do not say: a ``.tiktoken`` file that is not one of
            OpenAI's, GPT-2 files without ``tokenizer.json`` or an hf_bpe config (Qwen2's ``vocab.json`` +
            ``merges.txt``: ``"qwen2"``; they would otherwise get GPT-2's).

    Returns:
        The extended :class:`BPEModel`.

    Raises:
        TypeError, ValueError: for bad options; ValueError for a SentencePiece ``.model`` base (call
            ``hf_bpe.extend_sentencepiece``); FileNotFoundError for a missing base.

    >>> base = hf_bpe_train(["low lower lowest"] * 3, vocab_size=258, show_progress=False)
    >>> extended = extend(base, ["newer lower"] * 2, new_tokens=2, show_progress=False)
    >>> [a + b for a, b in extended.merges[len(base.merges):]], extended.vocab[b"er"]
    ([b'er', b'ew'], 258)
    """
    model, record = load_base(base, pattern)
    return extend_model(model, corpus, vocab_size=vocab_size, new_tokens=new_tokens, min_frequency=min_frequency,
                        max_token_length=max_token_length, show_progress=show_progress, text_column=text_column,
                        workers=workers, base_record=record)
