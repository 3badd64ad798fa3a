"""The entry point of SentencePiece unigram: a corpus in, a model equal to ``spm_train --model_type=unigram`` out.

>>> model = train_unigram(["low lower lowest"] * 3, vocab_size=12)
>>> model.model_type, len(model.pieces)
('unigram', 12)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...formats.sentencepiece_model import SentencePieceModel
from ..sentencepiece.trainer import unigram_from_corpus

__all__ = ["train_unigram"]


def train_unigram(corpus: Any, *, vocab_size: int = 8000, text_column: str = "text",
                  progress: Callable[[int], object] | None = None, show_progress: bool = False,
                  **options: Any) -> SentencePieceModel:
    """Train a SentencePiece unigram model equal to ``spm_train --model_type=unigram`` (sentencepiece 0.2.3).

    Args:
        corpus: text files (paths: one sentence per line), a ``datasets`` Dataset (``text_column``), or an iterable
            of str (one sentence each), as :func:`hf_bpe.train_sentencepiece` reads them.
        vocab_size: the number of pieces, meta pieces included (spm_train's default 8000).
        text_column: the column of a Dataset.
        progress: called once, at the end, with the number of pieces.
        show_progress: a bar per phase on stderr (loading, seeding, EM and pruning rounds).
        options: spm_train's options under their own names, as :func:`hf_bpe.train_sentencepiece` takes them, and
            ``num_threads`` (default 16: it changes the float sums, hence the model, exactly as in spm_train),
            ``seed_sentencepiece_size``, ``shrinking_factor``, ``num_sub_iterations``.

    Returns:
        The model (``model_type == "unigram"``); ``hf_bpe.save_sentencepiece(model, folder)`` writes its files.

    Raises:
        TypeError, ValueError: bad options (``model_type`` other than ``"unigram"``: train_sentencepiece trains BPE)
            or a bad corpus.
    """
    model_type = options.pop("model_type", "unigram")
    if model_type != "unigram":
        raise ValueError(f"train_unigram trains model_type='unigram', got model_type={model_type!r}; for "
                         "SentencePiece BPE call hf_bpe.train_sentencepiece")
    return unigram_from_corpus(corpus, vocab_size=vocab_size, text_column=text_column, progress=progress,
                               options={"model_type": "unigram", **options}, show_progress=show_progress)
