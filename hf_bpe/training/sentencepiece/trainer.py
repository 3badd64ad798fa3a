"""SentencePiece-mode BPE training on the compiled core: ``train_sentencepiece``, equal to ``spm_train
--model_type=bpe`` piece for piece.

The phases are the reference's (:func:`hf_bpe.training.sentencepiece.bpe.train_sentencepiece_reference`), with the
same option checks, coverage arithmetic and serialization; the loops run in ``hf_bpe.core._sentencepiece``:

1. options, meta pieces, the normalizer spec (the reference's ``prepare_training``);
2. sentences: read (:func:`sentences_of`), filtered and normalized into the compiled store (SentencePiece's own
   normalizer over the charsmap, ``csrc/sp_normalizer.hpp``);
3. characters counted in the store, the kept ones chosen in Python (``select_required``);
4. words counted and the merge loop run in C++ (``csrc/sp_trainer.hpp``), in chunks (progress, Ctrl-C);
5. the model assembled as the reference does (``assemble_model``).

``tests/test_sentencepiece_core.py`` holds this module equal to the reference; ``tests/test_sentencepiece_bpe.py``
holds both equal to ``sentencepiece`` itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ...formats.sentencepiece_model import SentencePieceModel
from ..corpus import check_paths
from ..progress import counted, progress_bar
from .bpe import assemble_model, char_info, load_store, prepare_training

__all__ = ["sentences_of", "train_sentencepiece"]


def sentences_of(corpus: Any, *, text_column: str = "text") -> Iterable[str]:
    """The sentences of a corpus as sentencepiece reads them: text files as ``spm_train --input`` (split at
    ``"\\n"`` only, the ``"\\n"`` removed, ``"\\r"`` kept); a ``datasets`` Dataset's ``text_column`` or an iterable of
    str as ``SentencePieceTrainer.train(sentence_iterator=...)`` (trailing ``"\\r"``/``"\\n"`` removed)."""
    import os

    if isinstance(corpus, str | os.PathLike):
        corpus = [corpus]
    if isinstance(corpus, list | tuple) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        check_paths(corpus)  # a missing file is an error before the progress bar is drawn
        return _file_lines([os.fspath(p) for p in corpus])
    column_names = getattr(corpus, "column_names", None)
    if column_names is not None:
        if text_column not in column_names:
            raise ValueError(f"the dataset has no column {text_column!r}; its columns are {column_names!r}")
        return _strip_line_ends(row[text_column] for row in corpus)
    return _strip_line_ends(corpus)


def _strip_line_ends(texts: Iterable[Any]) -> Iterable[Any]:
    for text in texts:
        yield text.rstrip("\r\n") if isinstance(text, str) else text


def _file_lines(paths: list[str]) -> Iterable[str]:
    import os

    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"corpus file {path!r} does not exist (or is not a file)")
    for path in paths:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    yield line.rstrip(b"\n").decode("utf-8") if line.endswith(b"\n") else line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{path!r} line {number} is not UTF-8 ({exc.reason}); decode it first") from None


def _both(first: Callable[[int], object], second: Callable[[int], object]) -> Callable[[int], None]:
    def both(added: int) -> None:
        first(added)
        second(added)

    return both


def unigram_from_corpus(corpus: Any, *, vocab_size: int, text_column: str, progress: Callable[[int], object] | None,
                        options: dict[str, Any], show_progress: bool = False) -> SentencePieceModel:
    """Train SentencePiece unigram on a corpus read as :func:`sentences_of` reads it (``hf_bpe.train_unigram``)."""
    from ..unigram.trainer import run_compiled

    model = run_compiled(sentences_of(corpus, text_column=text_column), vocab_size, options,
                         show_progress=show_progress)
    if progress is not None:
        progress(len(model.pieces))
    return model


def train_sentencepiece(corpus: Any, *, vocab_size: int = 8000, text_column: str = "text",
                        progress: Callable[[int], object] | None = None, show_progress: bool = False,
                        **options: Any) -> SentencePieceModel:
    """Train a SentencePiece BPE model equal to ``spm_train --model_type=bpe`` with the same options.

    Unigram (spm_train's default model type) is :func:`hf_bpe.train_unigram`; ``model_type="unigram"`` here still
    trains it, with a ``DeprecationWarning``.

    Args:
        corpus: text files (paths: one sentence per line), a ``datasets`` Dataset (``text_column``), or an iterable
            of str (one sentence each).
        vocab_size: the number of pieces, meta pieces included (spm_train's default 8000).
        text_column: the column of a Dataset.
        progress: called with the number of pieces added, after each chunk of merges (unigram: once, at the end).
        show_progress: a progress bar per phase on stderr (loading the sentences; BPE: the merges; unigram: the
            seed pieces, the EM and pruning rounds).
        options: spm_train's options under their own names (``model_type``, ``character_coverage``,
            ``byte_fallback``, ``split_digits``, ``normalization_rule_name``, ``user_defined_symbols``, ...; see
            ``SPM_DEFAULTS``; for unigram also ``num_threads`` (default 16: it changes the float sums, hence the
            model, exactly as in spm_train), ``seed_sentencepiece_size``, ``shrinking_factor``,
            ``num_sub_iterations``).

    Returns:
        The model; ``hf_bpe.save_sentencepiece(model, folder)`` writes ``tokenizer.model`` and the Hugging Face files.

    Raises:
        TypeError, ValueError: what ``train_sentencepiece_reference`` raises, with the same messages.

    Warns:
        UserWarning: sentences longer than ``max_sentence_length`` UTF-8 bytes were skipped (as spm_train skips
            them), with their count; when they were all there was, the ValueError names the option instead.

    >>> model = train_sentencepiece(["low lower lowest"] * 3, vocab_size=16)
    >>> [p.piece for p in model.pieces][3:8]
    ['lo', 'low', '▁low', '▁lowe', 'st']
    """
    if options.get("model_type", "bpe") == "unigram":
        warnings.warn("hf_bpe.train_sentencepiece(corpus, model_type='unigram', ...) is deprecated: call "
                      "hf_bpe.train_unigram(corpus, ...) with the other arguments", DeprecationWarning, stacklevel=2)
        return unigram_from_corpus(corpus, vocab_size=vocab_size, text_column=text_column, progress=progress,
                                   options=options, show_progress=show_progress)

    # 1. Options, meta pieces, normalizer.
    opts, meta, spec = prepare_training(vocab_size, options)
    # 2-3. Sentences, normalized (SentencePiece's own rules) into the compiled store; the characters kept by the
    #      coverage.
    sentences = sentences_of(corpus, text_column=text_column)  # files checked here, before the bar
    with progress_bar(show_progress, desc="load sentences", unit=" sentences") as bar:
        store, required = load_store(counted(sentences, bar), opts, meta, spec, vocab_size)
    # 4. Words and the merge loop.
    merges = vocab_size - len(meta) - len(required)
    with progress_bar(show_progress, desc="merges", total=max(0, merges)) as bar:
        merged = store.train(required, {c: char_info(c) for c in required}, merges=merges,
                             max_sentencepiece_length=opts["max_sentencepiece_length"],
                             split_by_whitespace=opts["split_by_whitespace"], split_by_number=opts["split_by_number"],
                             split_by_unicode_script=opts["split_by_unicode_script"],
                             split_digits=opts["split_digits"],
                             allow_whitespace_only_pieces=opts["allow_whitespace_only_pieces"],
                             progress=bar.update if progress is None else _both(bar.update, progress))
    # 5. The model.
    return assemble_model(merged, required, meta, vocab_size, opts, spec)
