"""Extend a SentencePiece BPE model (Llama 2's ``tokenizer.model``, one ``train_sentencepiece`` wrote): spm_train's
BPE merge loop continued on a new corpus, every existing piece kept.

The contract (``tests/test_sentencepiece_extend.py``):

- every base piece keeps its id, string, score and type, and the model keeps the base's trainer and normalizer
  specs (``vocab_size`` updated); the new pieces come after the base's: first the new merged pieces in the order
  the loop made them, then the new characters (most frequent first), as spm_train lays out merges and required
  characters. New piece ``j`` (0-based, in id order) scores ``start - j`` with ``start = min(-n, floor(low) - 1)``,
  ``n`` the number of the base's NORMAL pieces and ``low`` the lowest NORMAL score above -1e9 (0 if none): spm_train's
  ``-index`` continued (its NORMAL pieces score ``-0, -1, ...``), below every merge of the base (Llama 2 pins its
  runs of ``▁`` at -1e9; they stay below). Extending by 0 pieces gives back the base (its file byte for byte);
- the corpus is read as ``train_sentencepiece`` reads it (``sentences_of``), normalized with the base's own
  normalizer spec, its meta pieces (unknown, control, user-defined, byte) replaced by the boundary, and split into
  words with the base's options (``split_by_whitespace``, ``allow_whitespace_only_pieces``);
- characters: ``character_coverage`` (the base's) chooses the kept characters of the new corpus as spm_train does;
  a kept character the base has no piece for (Llama 2 writes it as ``<0xXX>`` bytes) becomes a new piece, as
  spm_train makes it a required character. Nothing merges with a character that is neither a base piece nor kept;
- each distinct word is segmented exactly as the base encodes it (``bpe_model.cc``: the adjacent pair whose join
  is a piece of highest score, leftmost on ties; characters outside the vocabulary stay single); from those words
  spm_train's merge loop continues (``csrc/sp_trainer.hpp``, seeded; the reference's ``_Trainer`` with ``seed``):
  the most frequent pair whose join is a valid piece under the base's ``max_sentencepiece_length`` and ``split_*``
  options, ties to fewer characters then the smaller string; a join that is already a piece (of the base or
  new) is dropped, as spm_train drops a piece reached by a second path;
- options: the ones that decide how the base encodes (normalizer, ``byte_fallback``, meta pieces) are the base's and
  cannot be changed; the trainer's (``character_coverage``, ``max_sentencepiece_length``, ``split_*``, ...) default
  to what the base's ``trainer_spec`` records (spm_train's default where it records nothing) and may be given.

Against training from scratch (``tests/test_sentencepiece_extend.py``: generated corpora over spm_train's options,
and English): with ``base = train_sentencepiece(C, vocab_size=V)`` and ``T = train_sentencepiece(C, vocab_size=V')``,

1. the merge loop started (seeded) from spm_train's own training state at ``V`` makes ``T``'s merged pieces after
   the base's, in order, up to the first piece of count 0 (a corpus out of pairs: spm_train then goes on with pairs
   that occurred and were merged away everywhere, which a continuation never saw), and but for two paths to one
   string tied in count, which spm_train leaves to its containers' order (the reference: the order of queueing,
   which a seeded start cannot replay; never met in the tests);
2. the extension starts from the base's *encoding* of C's words instead. It equals that training state unless
   spm's encoder joins a piece by a path the trainer dropped (``"a"+"aa"`` after ``"aa"+"a"`` made ``"aaa"``);
   where it does, ``extend_sentencepiece(base, C, vocab_size=V')``'s new pieces are ``T``'s merged pieces after
   the base's, same strings in the same order, with other ids (``T`` puts its characters after all its merges,
   the extension keeps the base's where they were). On every generated corpus tried and on 400 KB of English
   (``V`` 1000 to 1500) the encoding equalled the training state.

>>> from hf_bpe import train_sentencepiece
>>> base = train_sentencepiece(["low lower lowest"] * 3, vocab_size=12)
>>> extended = extend_sentencepiece(base, ["slow slower"] * 2, new_tokens=4)
>>> extended.pieces[:12] == base.pieces, [(p.piece, p.score) for p in extended.pieces[12:]]
(True, [('▁s', -9.0), ('low', -10.0), ('▁slow', -11.0), ('er', -12.0)])
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...formats.sentencepiece_model import NORMAL, UNUSED, USER_DEFINED, Piece, SentencePieceModel
from .bpe import SPM_DEFAULTS, UNK_CHAR, LongSentences, _Trainer, char_info, check_spm_options, select_required
from .options import select_sentences
from .trainer import sentences_of

__all__ = ["extend_sentencepiece"]

# Options that decide how the base encodes: the base's, never changed by an extension.
_BASE_ONLY = ("normalization_rule_name", "add_dummy_prefix", "remove_extra_whitespaces", "byte_fallback",
              "control_symbols", "user_defined_symbols", "unk_id", "bos_id", "eos_id", "pad_id", "unk_piece",
              "bos_piece", "eos_piece", "pad_piece", "unk_surface", "treat_whitespace_as_suffix")
# The trainer's options an extension takes from the base's trainer_spec unless given.
_FROM_BASE = ("character_coverage", "max_sentence_length", "max_sentencepiece_length", "split_by_unicode_script",
              "split_by_whitespace", "split_by_number", "split_digits", "allow_whitespace_only_pieces",
              "hard_vocab_limit", "required_chars")
_PINNED = -1e9  # Llama 2's runs of "▁" score here, below every merge; new scores are not placed below them


def extend_sentencepiece(base: str | os.PathLike[str] | SentencePieceModel, corpus: Any, *,
                         vocab_size: int | None = None, new_tokens: int | None = None, text_column: str = "text",
                         progress: Callable[[int], object] | None = None, **options: Any) -> SentencePieceModel:
    """Extend a SentencePiece BPE model with pieces learned on ``corpus``, keeping every base piece and id.

    Which text keeps its ids, exactly: where every NORMAL base piece scores above every new piece (every model
    ``train_sentencepiece`` writes; Llama 2's runs of ``▁`` pinned at -1e9 are the exception), a text encodes to
    the same ids as with the base if and only if no character of it is a new piece (a character the base spelled
    as ``<0xXX>`` bytes or ``<unk>``: Llama 2's tab, once the corpus holds tabs) and no two neighbouring pieces of
    its base encoding join into a new piece. So text made only of the base's pieces may still change (two of them
    joining into a new piece); ``docs/guides/extending.md`` shows both cases.

    Args:
        base: a SentencePiece BPE ``.model`` file, or a :class:`SentencePieceModel` (``train_sentencepiece``'s).
        corpus: text files (paths), a ``datasets`` Dataset (``text_column``) or an iterable of str, one sentence
            each, as ``train_sentencepiece`` reads them.
        vocab_size: the size of the extended model; or ``new_tokens``: how many pieces to add (exactly one).
        text_column: the column of a Dataset.
        progress: called with the number of merged pieces added, after each chunk of merges.
        options: spm_train's trainer options (``character_coverage``, ``max_sentencepiece_length``, ``split_*``,
            ``hard_vocab_limit``, ...), by default the base's; the options that decide how the base encodes
            cannot be changed.

    Returns:
        The extended model; ``hf_bpe.save_sentencepiece(model, folder)`` writes it.

    Raises:
        TypeError: ``base`` or a size of the wrong type.
        FileNotFoundError: no such ``base`` file.
        ValueError: a base that is not BPE, a size below the base's, both or neither of ``vocab_size`` and
            ``new_tokens``, more new characters than new pieces, fewer pieces than asked with ``hard_vocab_limit``,
            an option that would change how the base encodes.
    """
    return _extend(base, corpus, vocab_size=vocab_size, new_tokens=new_tokens, text_column=text_column,
                   progress=progress, options=options, reference=False)


def _extend(base: Any, corpus: Any, *, vocab_size: int | None, new_tokens: int | None, text_column: str,
            progress: Callable[[int], object] | None, options: Mapping[str, Any], reference: bool,
            trace: list[Any] | None = None) -> SentencePieceModel:
    """``extend_sentencepiece``; ``reference``: segment words and run the loop in plain Python (the spec), appending
    ``(words with counts, their segmentations, the options)`` to ``trace`` if given."""
    from ...core._sentencepiece import SentencePieceCorpus

    # 1. The base, the number of new pieces, the options.
    model = _load(base)
    added = _new_count(model, vocab_size, new_tokens)
    opts = _options(model, options)
    if added == 0:
        return model
    # 2. Sentences, normalized with the base's normalizer, its meta pieces as the boundary.
    store = SentencePieceCorpus(charsmap=model.normalizer["precompiled_charsmap"],
                                remove_extra_whitespaces=model.normalizer["remove_extra_whitespaces"],
                                add_dummy_prefix=model.normalizer["add_dummy_prefix"],
                                allow_whitespace_only_pieces=opts["allow_whitespace_only_pieces"],
                                meta_pieces=[p.piece for p in model.pieces if p.type != NORMAL],
                                max_sentence_length=opts["max_sentence_length"])
    long = LongSentences(opts["max_sentence_length"])
    store.add(select_sentences(long.watch(sentences_of(corpus, text_column=text_column)), opts))
    long.check(store.finish())
    # 3. Characters kept by the coverage; the ones the base has no piece for are new pieces.
    kept = select_required(store.char_counts(), opts, 0, sys.maxsize)
    strings = {p.piece for p in model.pieces}
    new_chars = sorted((c for c in kept if c not in strings), key=lambda c: (-kept[c], c))
    if len(new_chars) > added:
        raise ValueError(f"the corpus has {len(new_chars)} characters the base has no piece for (kept by "
                         f"character_coverage={opts['character_coverage']:.6g}), more than the {added} new pieces "
                         "asked for; add more pieces, or lower character_coverage")
    # 4. Words segmented as the base encodes them, then the merge loop continued.
    mergeable = {p.piece for p in model.pieces if p.type == NORMAL} | set(new_chars)
    chars = sorted({c for atom in mergeable for c in atom})
    info = {c: char_info(c) for c in chars}
    scores = {p.piece: p.score for p in model.pieces if p.type in (NORMAL, USER_DEFINED)}
    loop = dict(merges=added - len(new_chars), max_sentencepiece_length=opts["max_sentencepiece_length"],
                split_by_whitespace=opts["split_by_whitespace"], split_by_number=opts["split_by_number"],
                split_by_unicode_script=opts["split_by_unicode_script"], split_digits=opts["split_digits"],
                allow_whitespace_only_pieces=opts["allow_whitespace_only_pieces"])
    if reference:
        seen: list[Any] = [] if trace is None else trace

        def capture(words: list[str], counts: list[int]) -> list[list[str]]:
            rows = [segment_reference(word, scores) for word in words]
            seen.append((list(zip(words, counts)), rows, opts))
            return rows

        store.train_seeded(chars, info, capture, mergeable, strings, **{**loop, "merges": 0})
        words, rows, _ = seen[-1]
        merged = _Trainer(words, {}, opts, seed=(rows, mergeable, strings)).run(loop["merges"])
    else:
        merged = store.train_seeded(chars, info, _segmenter(model, chars), mergeable, strings, progress=progress, **loop)
    if len(merged) < loop["merges"] and opts["hard_vocab_limit"]:
        raise ValueError(f"the corpus makes only {len(merged)} new merged pieces ({len(merged) + len(new_chars)} "
                         f"new pieces in all, {added} asked for); ask for at most that, or hard_vocab_limit=False")
    # 5. The extended model: new pieces after the base's, scores continuing below.
    start = _first_score(model)
    new = [Piece(piece, float(start - j), NORMAL) for j, piece in enumerate([*merged, *new_chars])]
    pieces = (*model.pieces, *new)
    return dataclasses.replace(model, pieces=pieces, trainer={**model.trainer, "vocab_size": len(pieces)})


def _load(base: Any) -> SentencePieceModel:
    if isinstance(base, str | os.PathLike):
        model = SentencePieceModel.load(base)
    elif isinstance(base, SentencePieceModel):
        model = base
    else:
        raise TypeError(f"base must be a path to a SentencePiece .model file or a SentencePieceModel, got "
                        f"{type(base).__name__} {base!r:.60}")
    if model.model_type != "bpe":
        raise ValueError(f"the base is a SentencePiece {model.model_type} model; only BPE models can be extended "
                         "(the extension continues spm_train's BPE merge loop)")
    if any(p.type == UNUSED for p in model.pieces):
        raise ValueError("the base has UNUSED pieces, which SentencePiece merges and splits again; it cannot be "
                         "extended exactly")
    if model.trainer["treat_whitespace_as_suffix"] or not model.normalizer["escape_whitespaces"]:
        raise ValueError("the base has treat_whitespace_as_suffix=true or escape_whitespaces=false, which "
                         "spm_train's BPE trainer (and this extension) does not support")
    return model


def _new_count(model: SentencePieceModel, vocab_size: Any, new_tokens: Any) -> int:
    if (vocab_size is None) == (new_tokens is None):
        raise ValueError(f"give exactly one of vocab_size (the extended size) and new_tokens (how many to add); got "
                         f"vocab_size={vocab_size!r}, new_tokens={new_tokens!r}")
    name, value = ("vocab_size", vocab_size) if vocab_size is not None else ("new_tokens", new_tokens)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    count = value - len(model.pieces) if name == "vocab_size" else value
    if count < 0:
        raise ValueError(f"{name}={value!r} is below the base's size {len(model.pieces)} (an extension only adds "
                         "pieces)" if name == "vocab_size" else f"new_tokens must be >= 0, got {value!r}")
    return count


def _options(model: SentencePieceModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """spm_train's options for the extension: the base's trainer options, overridden by ``options``."""
    base_values = {**{k: model.trainer[k] for k in _BASE_ONLY if k in model.trainer},
                   "normalization_rule_name": model.normalizer["name"],
                   "add_dummy_prefix": model.normalizer["add_dummy_prefix"],
                   "remove_extra_whitespaces": model.normalizer["remove_extra_whitespaces"]}
    for name in _BASE_ONLY:
        value = tuple(options[name]) if isinstance(options.get(name), list) else options.get(name)
        if name in options and value != base_values.get(name, value):
            raise ValueError(f"{name}={options[name]!r} would change how the base encodes (the base has "
                             f"{base_values[name]!r}); an extension keeps the base's: leave {name} out")
    given = {k: v for k, v in options.items() if k not in _BASE_ONLY}
    merged = {**{k: model.trainer.get(k, SPM_DEFAULTS[k]) for k in _FROM_BASE}, **given}
    return check_spm_options(merged)


def _first_score(model: SentencePieceModel) -> int:
    normal = [p.score for p in model.pieces if p.type == NORMAL]
    regular = [s for s in normal if s > _PINNED]
    return min(-len(normal), math.floor(min(regular, default=0.0)) - 1)


def segment_reference(word: str, scores: Mapping[str, float]) -> list[str]:
    """Segment ``word`` (normalized text) as SentencePiece's BPE encoder does (``bpe_model.cc``): from its
    characters, join the adjacent pair whose join is a piece of highest score (the leftmost on ties) until none is.

    >>> segment_reference("▁lower", {"lo": -1.0, "▁lo": -2.0, "we": -3.0, "wer": -4.0, "▁low": -5.0})
    ['▁lo', 'wer']
    """
    symbols = list(word)
    following = list(range(1, len(symbols))) + [-1]
    preceding = list(range(-1, len(symbols) - 1))
    agenda: list[tuple[float, int, int, str]] = []

    def consider(left: int, right: int) -> None:
        joined = symbols[left] + symbols[right]
        if joined in scores:
            heapq.heappush(agenda, (-scores[joined], left, right, joined))

    for i in range(len(symbols) - 1):
        consider(i, i + 1)
    while agenda:
        _, left, right, joined = heapq.heappop(agenda)
        if following[left] != right or symbols[left] + symbols[right] != joined:
            continue  # one side merged since
        symbols[left], symbols[right] = joined, ""
        following[left] = following[right]
        if following[left] >= 0:
            preceding[following[left]] = left
        if preceding[left] >= 0:
            consider(preceding[left], left)
        if following[left] >= 0:
            consider(left, following[left])
    return [s for s in symbols if s]


def _segmenter(model: SentencePieceModel, chars: Iterable[str]) -> Callable[[list[str], list[int]], list[list[str]]]:
    """Words segmented by ``sentencepiece`` itself: the base with its normalizer turned off (words are normalized
    already) and every character of the words it has no piece for added as a piece of the lowest score. A merge
    joins two symbols into a piece of two characters or more, so single-character pieces change no merge: each
    word's pieces are the base's segmentation, with the characters it would write as bytes (or ``<unk>``) as
    themselves."""
    import sentencepiece

    strings = {p.piece for p in model.pieces}
    low = min((p.score for p in model.pieces), default=0.0) - 1.0
    extra = tuple(Piece(c, low, NORMAL) for c in (*chars, UNK_CHAR) if c not in strings)
    plain = dataclasses.replace(model, pieces=(*model.pieces, *extra), normalizer={
        **model.normalizer, "name": "identity", "precompiled_charsmap": b"", "add_dummy_prefix": False,
        "remove_extra_whitespaces": False})
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(plain.to_bytes())

    def segment(words: list[str], counts: list[int]) -> list[list[str]]:
        out: list[list[str]] = []
        for start in range(0, len(words), 4096):
            out += processor.encode(words[start:start + 4096], out_type=str)
        return out

    return segment
