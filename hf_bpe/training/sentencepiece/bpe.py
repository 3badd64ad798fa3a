"""SentencePiece-mode BPE training: ``spm_train --model_type=bpe``, piece for piece (the pure-Python reference).

This module follows ``trainer_interface.cc`` (sentence loading, normalization, character coverage, meta pieces,
splitting into words) and ``bpe_model_trainer.cc`` (the merge loop) step by step, including what makes
SentencePiece's BPE differ from ``tokenizers``':

- the normalized text (``nmt_nfkc`` by default; SentencePiece's own normalizer,
  :mod:`hf_bpe.core.sentencepiece_normalize`) keeps its ``▁`` word marks; words are the ``▁``-started runs
  (``split_by_whitespace``), counted and sorted by count;
- characters outside ``character_coverage`` become ``▅`` (unknown) and never merge; the kept ones are appended to
  the vocabulary after the merged pieces, most frequent first;
- a pair may merge only into a valid piece (``IsValidSentencePiece``: length, ``▁`` only as a prefix, one Unicode
  script, digits alone with ``split_digits``, ...);
- each step takes the most frequent pair (exact counts, updated around each merge, as sentencepiece 0.2.3 does; its
  earlier releases searched only the top 5% of pairs), ties going to the piece of fewer characters, then the
  smaller string; a piece reached by a second path (``"aa"+"a"`` after ``"a"+"aa"``) is dropped; scores are
  ``-index``; pieces stop at ``vocab_size`` minus the meta pieces and the required characters.

Where sentencepiece leaves an order to its containers (two paths to one piece with the same count), this
reference takes the order in which the pairs were queued. ``input_sentence_size`` takes the sentences spm_train takes
(:func:`~hf_bpe.training.sentencepiece.options.select_sentences`); differential privacy and TSV input are
refused. ``treat_whitespace_as_suffix`` puts the dummy ``▁`` at the end, ends words after a ``▁`` and allows it only
as a piece's suffix, as spm_train does (such a model gets no ``tokenizer.json``: ``HFSentencePieceTokenizer`` encodes
it).

>>> model = train_sentencepiece_reference(["ab ab ab", "abc"], vocab_size=9)
>>> [p.piece for p in model.pieces]
['<unk>', '<s>', '</s>', 'ab', '▁ab', 'a', 'b', '▁', 'c']
"""

from __future__ import annotations

import functools
import heapq
import struct
from collections import Counter
from collections.abc import Container, Iterable, Mapping
from typing import Any

import regex

from ...formats.sentencepiece_model import (BYTE, CONTROL, NORMAL, TRAINER_DEFAULTS, UNKNOWN, USER_DEFINED, Piece,
                                           SentencePieceModel)
from ...core.sentencepiece_normalize import SentencePieceNormalizer
from .normalizer import SPACE
from .options import (EMPTY_CORPUS, SPM_DEFAULTS, SPM_NO_EFFECT, SPM_ONLY, SPM_REFUSED, LongSentences, closest_option,
                      known_options, parse_spm_options, select_sentences, typed)
from .scripts import script_of

__all__ = ["EMPTY_CORPUS", "LongSentences", "SPM_DEFAULTS", "assemble_model", "builtin_charsmap", "char_info",
           "check_spm_options", "load_sentences", "load_store", "parse_spm_options", "prepare_training", "select_required",
           "serialize_pieces", "split_words", "train_sentencepiece_reference", "valid_piece"]

_RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
WS, UNK_CHAR, BOUNDARY = SPACE, "\u2585", "\x1f"  # sentencepiece 0.2.3's kPretokenizationBoundaryChar

# SentencePiece's scripts (its unicode_script_map.h: Unicode 9.0's Scripts.txt, in sentencepiece_scripts); a
# character it does not list is Common. A newer Unicode (`regex`'s) would let "ց։" be a piece, which 0.2.3 forbids.
_SCRIPTS = (
    "Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki "
    "Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee "
    "Coptic Cuneiform Cypriot Cyrillic Deseret Devanagari Duployan Egyptian_Hieroglyphs Elbasan Ethiopic Georgian "
    "Glagolitic Gothic Grantha Greek Gujarati Gurmukhi Han Hangul Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic "
    "Inherited Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi "
    "Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Malayalam Mandaic "
    "Manichaean Marchen Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro "
    "Multani Myanmar Nabataean New_Tai_Lue Newa Nko Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian "
    "Old_Permic Old_Persian Old_South_Arabian Old_Turkic Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau "
    "Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting "
    "Sinhala Sora_Sompeng Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil "
    "Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta Ugaritic Vai Warang_Citi Yi"
).split()
_script = functools.cache(script_of)


def _is_decimal(char: str) -> bool:
    return "0" <= char <= "9" or "\uff10" <= char <= "\uff19"


@functools.cache
def builtin_charsmap(rule: str) -> bytes:
    """Return the precompiled charsmap of one of SentencePiece's built-in normalization rules, as the installed
    ``sentencepiece`` writes it into a model (``identity``: none)."""
    if rule not in _RULES:
        raise ValueError(f"normalization_rule_name must be one of {list(_RULES)}, got {rule!r}")
    if rule == "identity":
        return b""
    import io

    import sentencepiece

    written = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(["a b"]), model_writer=written,
                                             model_type="char", vocab_size=8, hard_vocab_limit=False,
                                             normalization_rule_name=rule, minloglevel=2)
    return SentencePieceModel.from_bytes(written.getvalue()).normalizer["precompiled_charsmap"]


def check_spm_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Return spm_train's options with the defaults filled in.

    Raises:
        TypeError, ValueError: an unknown option (naming the known ones), a value of the wrong type, or an option
            this trainer refuses (saying why).
    """
    refused = sorted(set(options) & set(SPM_REFUSED))
    if refused:
        raise ValueError(f"SentencePiece option {refused[0]} is not accepted here: {SPM_REFUSED[refused[0]]}")
    unknown = sorted(set(options) - set(known_options()))
    if unknown:
        raise ValueError(f"unknown SentencePiece option {unknown[0]!r}{closest_option(unknown[0])}")
    for name, (values, why) in SPM_ONLY.items():
        if name in options and typed(name, values[0], options[name]) not in values:
            accepted = " or ".join(f"{name}={v!r}" for v in values)
            raise ValueError(f"{name}={options[name]!r} is not supported ({accepted} only): {why}")
    merged = dict(SPM_DEFAULTS, **{k: v for k, v in options.items() if k in SPM_DEFAULTS})
    for name, default in SPM_DEFAULTS.items():
        merged[name] = typed(name, default, merged[name])
    # Checked like spm_train, then not used (no effect on BPE) but recorded in the trainer_spec, as spm_train does.
    for name in set(options) & set(SPM_NO_EFFECT):
        merged[name] = typed(name, SPM_NO_EFFECT[name][0], options[name])
    for name in set(options) & set(SPM_ONLY) - {"model_type"}:  # model_type: the trainer's own
        merged[name] = typed(name, SPM_ONLY[name][0][0], options[name])
    if not (merged["input_sentence_size"] == 0 or merged["input_sentence_size"] > 100):  # spm_train's VerifySpec
        raise ValueError(f"input_sentence_size must be 0 (every sentence) or more than 100 (as spm_train checks), got "
                         f"{merged['input_sentence_size']!r}")
    # spm_train's own range checks (VerifySpec), with its limits.
    if merged["use_all_vocab"]:
        raise ValueError("use_all_vocab=true is valid for WORD/CHAR models only (spm_train refuses it for BPE)")
    for name, low, high in (("character_coverage", 0.98, 1.0), ("max_sentencepiece_length", 1, 512),
                            ("max_sentence_length", 10, 1073741824)):
        if not low <= merged[name] <= high:
            raise ValueError(f"{name} must be between {low} and {high} (as spm_train checks), got {merged[name]!r}")
    for role in ("unk", "bos", "eos", "pad"):
        if not merged[f"{role}_piece"]:
            raise ValueError(f"{role}_piece must not be empty")
    for name in ("control_symbols", "user_defined_symbols"):
        if "" in merged[name]:
            raise ValueError(f"{name} holds an empty symbol: {list(merged[name])!r}; list non-empty strings")
    # A piece with U+0000 cannot be in a model: sentencepiece's trie (darts) refuses the key, spm_train fails on a
    # meta piece and cuts a symbol there (user_defined_symbols=['a\0b'] trains the symbol 'a').
    for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece", "control_symbols", "user_defined_symbols"):
        bad = next((p for p in ([merged[name]] if name.endswith("_piece") else merged[name]) if "\x00" in p), None)
        if bad is not None:
            raise ValueError(f"{name} holds {bad!r}, with a NUL character: sentencepiece cannot hold such a piece "
                             "(spm_train cuts a symbol at the NUL or fails); remove the NUL")
    builtin_charsmap(merged["normalization_rule_name"])  # an unknown rule fails here
    return merged


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def valid_piece(piece: str, options: Mapping[str, Any]) -> bool:
    """IsValidSentencePiece: whether ``piece`` may be a piece under the checked ``options`` (length, '▁' only as a
    prefix, one Unicode script, digits alone with ``split_digits``, no unknown/boundary/NUL/space character)."""
    if not piece or len(piece) > options["max_sentencepiece_length"]:
        return False
    any_type = None
    previous: str | None = any_type
    all_ws = all(c == WS for c in piece)
    for pos, c in enumerate(piece):
        if c in (UNK_CHAR, "\x00", BOUNDARY, " "):
            return False
        if c == WS:
            if not options["allow_whitespace_only_pieces"] or not all_ws:
                last = len(piece) - 1
                if options.get("treat_whitespace_as_suffix"):
                    if (options["split_by_whitespace"] and pos < last) or (
                            not options["split_by_whitespace"] and pos < last and pos == 0):
                        return False
                elif (options["split_by_whitespace"] and pos > 0) or (
                        not options["split_by_whitespace"] and pos > 0 and pos == last):
                    return False
            continue
        script: str | None = _script(c)
        if script in ("Hiragana", "Katakana") or c == "\u30fc":
            script = "Han"
        elif script == "Inherited":
            script = previous
        if not options["split_by_number"] and _is_decimal(c):
            script = any_type
        if options["split_digits"] and _is_decimal(c) and len(piece) > 1:
            return False
        if (options["split_by_unicode_script"] and script is not any_type and previous is not any_type
                and previous != script):
            return False
        previous = script
    return True


class _Symbol:
    __slots__ = ("key", "chars", "left", "right", "is_unk", "freq", "positions", "active", "pending", "stale")

    def __init__(self, key: Any, chars: str, left: _Symbol | None, right: _Symbol | None, freq: int) -> None:
        self.key, self.chars, self.left, self.right = key, chars, left, right
        self.is_unk = chars == UNK_CHAR and left is None
        self.freq = freq
        self.positions: list[tuple[int, int, int]] = []
        self.active, self.pending, self.stale = True, False, False


class _Trainer:
    """bpe_model_trainer.cc's Trainer (sentencepiece 0.2.3): exact pair counts, updated around each merge, and a
    priority queue with lazy entries (most frequent, then fewest characters, then smallest string)."""

    def __init__(self, words: list[tuple[str, int]], required: dict[str, int], options: dict[str, Any], *,
                 seed: tuple[list[list[str]], Container[str], Iterable[str]] | None = None) -> None:
        """``seed``: continue from given words instead (``extend_sentencepiece``): each word's atoms, the atoms
        that may pair (the others never do, as the unknown character) and the strings never made again."""
        self.words = words
        self.required = required
        self.options = options
        self.cache: dict[Any, _Symbol] = {}
        self.queue: list[tuple[int, int, str, int, _Symbol]] = []
        self.pending: list[_Symbol] = []
        self.pushed = 0
        self.known: set[str] = set()
        self.chosen_counts: list[int] = []  # each piece's count when made (0: a pair merged away everywhere)
        if seed is None:
            for c in required:
                self.char_symbol(c)
            self.symbols = [[self.char_symbol(c) for c in word] for word, _ in words]
        else:
            rows, mergeable, known = seed
            self.known = set(known)
            atoms: dict[str, _Symbol] = {}
            for atom in (a for row in rows for a in row):
                if atom not in atoms:
                    atoms[atom] = _Symbol(("atom", atom), atom, None, None, 1)
                    atoms[atom].is_unk = atom not in mergeable
            self.symbols = [[atoms[a] for a in row] for row in rows]
        # 1. Initial pairs, counted per pair; positions in corpus order.
        stats: dict[tuple[int, int], list[Any]] = {}
        for sid, row in enumerate(self.symbols):
            for i in range(1, len(row)):
                left, right = row[i - 1], row[i]
                if left.is_unk or right.is_unk:
                    continue
                entry = stats.setdefault((id(left), id(right)), [left, right, 0, []])
                entry[2] += words[sid][1]
                entry[3].append((sid, i - 1, i))
        for left, right, freq, positions in stats.values():
            symbol = self.pair_symbol(left, right)
            if symbol is not None:
                symbol.freq += freq
                symbol.positions += positions
                self.mark(symbol)
        self.flush()

    def valid(self, piece: str) -> bool:
        return valid_piece(piece, self.options)

    def char_symbol(self, c: str) -> _Symbol:
        symbol = self.cache.get(ord(c))
        if symbol is None:
            symbol = _Symbol(ord(c), c, None, None, self.required.get(c, 1) or 1)
            self.cache[ord(c)] = symbol
        return symbol

    def pair_symbol(self, left: _Symbol | None, right: _Symbol | None) -> _Symbol | None:
        if left is None or right is None or left.is_unk or right.is_unk:
            return None
        key = (left.key, right.key)
        symbol = self.cache.get(key)
        if symbol is not None:
            return symbol
        chars = left.chars + right.chars
        if not self.valid(chars):
            return None
        symbol = _Symbol(key, chars, left, right, 0)
        self.cache[key] = symbol
        return symbol

    def mark(self, symbol: _Symbol) -> None:
        if not symbol.pending:
            symbol.pending = True
            self.pending.append(symbol)

    def push(self, symbol: _Symbol) -> None:
        self.pushed += 1  # equal keys (one piece reached by two paths) pop in push order
        heapq.heappush(self.queue, (-symbol.freq, len(symbol.chars), symbol.chars, self.pushed, symbol))

    def flush(self) -> None:
        for symbol in self.pending:
            symbol.pending = False
            if symbol.active:
                self.compute_freq(symbol)
                self.push(symbol)
        self.pending = []

    @staticmethod
    def compute_freq(symbol: _Symbol) -> None:
        if symbol.stale:
            if symbol.freq == 0:
                symbol.positions = []
            symbol.stale = False

    def neighbour(self, sid: int, index: int, step: int) -> int:
        row = self.symbols[sid]
        index += step
        while 0 <= index < len(row):
            if row[index] is not None:
                return index
            index += step
        return -1

    def add_pair(self, sid: int, left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        symbol = self.pair_symbol(self.symbols[sid][left], self.symbols[sid][right])
        if symbol is not None:
            symbol.positions.append((sid, left, right))
            symbol.freq += self.words[sid][1]
            self.mark(symbol)

    def reset_freq(self, sid: int, left: int, right: int, best: _Symbol) -> None:
        if left == -1 or right == -1:
            return
        symbol = self.pair_symbol(self.symbols[sid][left], self.symbols[sid][right])
        if symbol is not None and symbol is not best:
            symbol.freq -= self.words[sid][1]
            symbol.stale = True

    def best(self) -> _Symbol | None:
        while self.queue:
            freq, _, _, _, symbol = self.queue[0]
            if not symbol.active:
                heapq.heappop(self.queue)
            elif symbol.stale:
                heapq.heappop(self.queue)
                self.compute_freq(symbol)
                self.push(symbol)
            elif -freq != symbol.freq:
                heapq.heappop(self.queue)
            else:
                heapq.heappop(self.queue)
                return symbol
        return None

    def accept(self, best: _Symbol) -> None:
        for sid, left, right in best.positions:
            row = self.symbols[sid]
            if row[left] is not best.left or row[right] is not best.right:
                continue  # merged away since (overlaps such as "aaa"), or another path's symbols
            after = self.neighbour(sid, right, 1)
            before = self.neighbour(sid, left, -1)
            self.reset_freq(sid, before, left, best)
            self.reset_freq(sid, right, after, best)
            row[left], row[right] = best, None
            self.add_pair(sid, before, left)
            self.add_pair(sid, left, after)
        self.cache.pop(best.key, None)
        best.active = False
        best.positions = []

    def run(self, merges_wanted: int) -> list[str]:
        final: list[str] = []
        seen = set(self.known)
        while len(final) < merges_wanted:
            best = self.best()
            if best is None:
                break
            if best.chars in seen:  # the same piece by another path: dropped
                self.cache.pop(best.key, None)
                best.active = False
                best.positions = []
                continue
            seen.add(best.chars)
            final.append(best.chars)
            self.chosen_counts.append(best.freq)
            self.accept(best)
            self.flush()
        return final


def _meta_pieces(options: dict[str, Any], vocab_size: int) -> dict[int, tuple[str, int]]:
    """InitMetaPieces: id -> (piece, type)."""
    meta: dict[int, tuple[str, int]] = {}
    for role in ("unk", "bos", "eos", "pad"):
        index, piece = options[f"{role}_id"], options[f"{role}_piece"]
        if index < 0:
            continue
        if index >= vocab_size or index in meta:
            raise ValueError(f"{role}_id={index} is out of range or taken (vocab_size {vocab_size}); give each of "
                             "unk_id/bos_id/eos_id/pad_id its own id below vocab_size, or -1 to leave it out")
        meta[index] = (piece, UNKNOWN if piece == options["unk_piece"] else CONTROL)
    if options["unk_id"] < 0:
        raise ValueError("unk_id must be a valid id: SentencePiece needs an unknown piece")
    seen: set[str] = set()
    next_id = 0
    extra = [(w, CONTROL) for w in options["control_symbols"]] + [(w, USER_DEFINED) for w in
                                                                 options["user_defined_symbols"]]
    if options["byte_fallback"]:
        extra += [(f"<0x{b:02X}>", BYTE) for b in range(256)]
    for piece, kind in extra:
        if piece in seen or piece == options["unk_piece"]:
            raise ValueError(f"symbol {piece!r} is defined twice (or is the unk piece); list each symbol once")
        seen.add(piece)
        for role in ("bos", "eos", "pad"):
            if piece == options[f"{role}_piece"] and options[f"{role}_id"] >= 0:
                meta[options[f"{role}_id"]] = (piece, kind)
                break
        else:
            while next_id in meta:
                next_id += 1
            meta[next_id] = (piece, kind)
    return meta


def _meta_matcher(pieces: Iterable[str]) -> regex.Pattern[str] | None:
    """PrefixMatcher::GlobalReplace as a regex: at each position the longest meta piece (alternatives longest
    first), scanning left to right; each match becomes the boundary character."""
    ordered = sorted(set(pieces), key=lambda p: (-len(p), p))
    return regex.compile("|".join(regex.escape(p) for p in ordered)) if ordered else None


_WORDS = regex.compile(f"{WS}[^{WS}]*|[^{WS}]+")
_WORDS_WS_RUNS = regex.compile(f"{WS}+[^{WS}]*|[^{WS}]+")
_WORDS_SUFFIX = regex.compile(f"[^{WS}]*{WS}|[^{WS}]+")
_WORDS_SUFFIX_WS_RUNS = regex.compile(f"[^{WS}]+{WS}*|{WS}+")


def split_words(text: str, allow_ws_only: bool, suffix: bool = False) -> list[str]:
    """SplitIntoWords: a word starts at the text's start and at each '▁' (at each run of '▁' with
    ``allow_whitespace_only_pieces``); with ``suffix`` (``treat_whitespace_as_suffix``) a word ends after each '▁'
    (after each run).

    >>> split_words("▁ab▁▁c", False), split_words("ab▁▁c▁", False, True), split_words("ab▁▁c▁", True, True)
    (['▁ab', '▁', '▁c'], ['ab▁', '▁', 'c▁'], ['ab▁▁', 'c▁'])
    """
    if suffix:
        return (_WORDS_SUFFIX_WS_RUNS if allow_ws_only else _WORDS_SUFFIX).findall(text)
    return (_WORDS_WS_RUNS if allow_ws_only else _WORDS).findall(text)


def prepare_training(vocab_size: Any, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[int, tuple[str, int]],
                                                                         dict[str, Any]]:
    """Check ``vocab_size`` and the options; return them with the defaults filled in, the meta pieces
    (``{id: (piece, type)}``) and the normalizer spec."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 1:
        raise ValueError(f"vocab_size must be a positive int, got {vocab_size!r}")
    if vocab_size > 2**31 - 1:  # the proto's int32: spm_train cannot parse a larger one
        raise ValueError(f"vocab_size must be at most {2**31 - 1} (spm_train's vocab_size is an int32), got "
                         f"{vocab_size!r}")
    opts = check_spm_options(options)
    meta = _meta_pieces(opts, vocab_size)
    spec = {"name": opts["normalization_rule_name"], "precompiled_charsmap": builtin_charsmap(
        opts["normalization_rule_name"]), "add_dummy_prefix": opts["add_dummy_prefix"],
            "remove_extra_whitespaces": opts["remove_extra_whitespaces"], "escape_whitespaces": True}
    return opts, meta, spec


def select_required(seen: Mapping[str, int], opts: Mapping[str, Any], meta_count: int,
                    vocab_size: int) -> dict[str, int]:
    """Return the characters kept by ``character_coverage`` with their counts, most frequent first.

    Args:
        seen: every character's count in the normalized sentences, without U+0000 and U+0020.
        opts, meta_count, vocab_size: the checked options, the number of meta pieces, the vocabulary size.

    Raises:
        ValueError: the required characters and the meta pieces do not fit in ``vocab_size``.
    """
    counts: dict[str, list[Any]] = {c: [True, 0] for c in opts["required_chars"] if c != "\x00"}
    for c, n in seen.items():
        counts.setdefault(c, [False, 0])[1] += n
    total = sum(seen.values())
    required: dict[str, int] = {}
    accumulated = 0
    threshold = _f32(opts["character_coverage"])
    for c, (_, count) in sorted(counts.items(), key=lambda kv: (not kv[1][0], -kv[1][1], kv[0])):
        if not opts["use_all_vocab"] and _f32(accumulated / total) >= threshold:
            break
        accumulated += count
        if c == BOUNDARY:
            continue
        required[c] = count
    if len(required) + meta_count > vocab_size:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(required)} required characters plus "
                         f"{meta_count} meta pieces; raise vocab_size or lower character_coverage")
    return required


_SCRIPT_CODES = {name: code for code, name in enumerate([*_SCRIPTS, "Common"])}


def char_info(char: str) -> tuple[int, bool, bool]:
    """What ``IsValidSentencePiece`` needs of a character, for the compiled loop: its script code (Hiragana,
    Katakana and U+30FC as Han; -2 for Inherited, which takes the previous character's), whether it is a decimal
    digit, whether it is forbidden in pieces."""
    script = _script(char)
    if script in ("Hiragana", "Katakana") or char == "\u30fc":
        script = "Han"
    return (-2 if script == "Inherited" else _SCRIPT_CODES[script], _is_decimal(char),
            char in (UNK_CHAR, "\x00", BOUNDARY, " "))


def assemble_model(merged: list[str], required: Mapping[str, int], meta: Mapping[int, tuple[str, int]],
                   vocab_size: int, opts: Mapping[str, Any], spec: dict[str, Any]) -> SentencePieceModel:
    """Serialize as the trainer does: meta pieces at their ids, then the merged pieces and the required characters
    (most frequent first), scores ``-index``.

    Raises:
        ValueError: fewer pieces than ``vocab_size`` with ``hard_vocab_limit``.
    """
    final = merged + sorted(required, key=lambda c: (-required[c], c))
    return serialize_pieces([(piece, -float(index)) for index, piece in enumerate(final)], meta, vocab_size, opts,
                            spec, model_type=2)


def serialize_pieces(final: list[tuple[str, float]], meta: Mapping[int, tuple[str, int]], vocab_size: int,
                     opts: Mapping[str, Any], spec: dict[str, Any], *, model_type: int) -> SentencePieceModel:
    """Serialize (trainer_interface.cc): meta pieces at their ids (score 0), the scored pieces in order in the
    other ids, up to ``vocab_size``; ``model_type`` as the proto's enum (1 unigram, 2 bpe).

    Raises:
        ValueError: fewer pieces than ``vocab_size`` with ``hard_vocab_limit``.
    """
    pieces: list[Piece] = []
    rest = iter(final)
    for index in range(vocab_size):
        if index in meta:
            pieces.append(Piece(meta[index][0], 0.0, meta[index][1]))
            continue
        found = next(rest, None)
        if found is None:  # the pieces ran out (hard_vocab_limit=False): a huge vocab_size is not walked on
            beyond = [i for i in sorted(meta) if i > index]
            if beyond:  # spm_train's Serialize: CHECK that each meta piece lands at its id
                raise ValueError(f"id {beyond[0]} of the meta piece {meta[beyond[0]][0]!r} lies beyond the {index} "
                                 "pieces this corpus makes (with hard_vocab_limit=False the vocabulary ends there; "
                                 f"spm_train refuses it too); give the meta pieces ids below {index}, or train on "
                                 "more text")
            break
        pieces.append(Piece(found[0], found[1], NORMAL))
    if len(pieces) != vocab_size and opts["hard_vocab_limit"]:
        raise ValueError(f"vocab_size {vocab_size} is too high for this corpus: it makes at most {len(pieces)} "
                         "pieces; set vocab_size to at most that, or hard_vocab_limit=False")
    # Every option of the trainer_spec as used, spm_train's defaults for the others (spm_train records them all).
    trainer = {**TRAINER_DEFAULTS, **{k: opts[k] for k in TRAINER_DEFAULTS if k in opts},
               "model_type": model_type, "vocab_size": len(pieces)}
    return SentencePieceModel(tuple(pieces), trainer, spec)


def load_sentences(corpus: Iterable[str], opts: Mapping[str, Any], meta: Mapping[int, tuple[str, int]],
                   spec: dict[str, Any], vocab_size: int,
                   normalizer_class: Any = SentencePieceNormalizer) -> tuple[list[list[Any]], dict[str, int]]:
    """LoadSentences (trainer_interface.cc), shared by the BPE and unigram references: the sentences as
    ``[normalized text, count]`` in spm_train's order (meta pieces replaced by the boundary character, characters
    outside ``character_coverage`` by the unknown character ``▅``) and the required characters with their counts.
    ``normalizer_class``: the pure-Python normalizer (the spec) or the compiled one, which gives the same texts.

    Raises:
        TypeError: a corpus item is not str.
        ValueError: an empty corpus, or required characters and meta pieces over ``vocab_size``.
    """
    normalizer = normalizer_class({**spec, "treat_whitespace_as_suffix": opts["treat_whitespace_as_suffix"]})
    meta_matcher = _meta_matcher(piece for piece, _ in meta.values())
    # 2. Sentences (LoadSentences): raw filters, then normalization; an empty result is swapped with the last
    #    sentence (the order matters without split_by_whitespace).
    sentences: list[list[Any]] = []
    long = LongSentences(opts["max_sentence_length"])
    for index, text in enumerate(select_sentences(long.watch(corpus), opts)):
        if not isinstance(text, str):
            raise TypeError(f"corpus item {index} is {type(text).__name__} {text!r:.60}; expected str")
        try:
            if not text or len(text.encode("utf-8")) > opts["max_sentence_length"] or UNK_CHAR in text:
                continue
        except UnicodeEncodeError as error:
            raise long.not_unicode(error) from None
        sentences.append([text, 1])
    for sentence in sentences:
        normalized = normalizer.normalize(sentence[0])
        sentence[0] = meta_matcher.sub(BOUNDARY, normalized) if meta_matcher else normalized
    i = 0
    while i < len(sentences):
        if not sentences[i][0]:
            sentences[i] = sentences[-1]
            sentences.pop()
        else:
            i += 1
    long.check(len(sentences))
    # 3. Characters kept by the coverage; the others become the unknown character.
    seen = Counter()  # every sentence has count 1 here (no TSV input)
    for text, _ in sentences:
        seen.update(text)
    seen.pop("\x00", None)
    seen.pop(" ", None)
    required = select_required(seen, opts, len(meta), vocab_size)
    unknown = {ord(c): UNK_CHAR for c in [*opts["required_chars"], *seen, "\x00", " "] if c not in required}
    for sentence in sentences:
        sentence[0] = sentence[0].translate(unknown)
    return sentences, required


def load_store(corpus: Iterable[str], opts: Mapping[str, Any], meta: Mapping[int, tuple[str, int]],
               spec: Mapping[str, Any], vocab_size: int) -> tuple[Any, dict[str, int]]:
    """:func:`load_sentences` on the compiled core: a ``SentencePieceCorpus`` holding the sentences (normalized,
    meta pieces replaced, empty ones dropped) and the required characters with their counts, both equal to
    load_sentences'; ``store.texts(required, split)`` gives its sentences or words (tested equal).

    Raises:
        TypeError, ValueError: what :func:`load_sentences` raises, with the same messages.
    """
    from ...core._sentencepiece import SentencePieceCorpus

    store = SentencePieceCorpus(charsmap=spec["precompiled_charsmap"],
                                remove_extra_whitespaces=opts["remove_extra_whitespaces"],
                                add_dummy_prefix=opts["add_dummy_prefix"],
                                allow_whitespace_only_pieces=opts["allow_whitespace_only_pieces"],
                                meta_pieces=[piece for piece, _ in meta.values()],
                                max_sentence_length=opts["max_sentence_length"],
                                treat_whitespace_as_suffix=opts["treat_whitespace_as_suffix"])
    # Sentences over max_sentence_length are skipped by the store, as spm_train skips them; counted to be said.
    long = LongSentences(opts["max_sentence_length"])
    try:
        store.add(select_sentences(long.watch(corpus), opts))
    except UnicodeEncodeError as error:  # the str the store read last holds a lone surrogate
        raise long.not_unicode(error) from None
    long.check(store.finish())
    return store, select_required(store.char_counts(), opts, len(meta), vocab_size)


def train_sentencepiece_reference(corpus: Iterable[str], *, vocab_size: int, **options: Any) -> SentencePieceModel:
    """Train SentencePiece BPE on ``corpus`` (one sentence per str) as ``spm_train --model_type=bpe`` does.

    Args:
        corpus: the sentences (lines without their newline).
        vocab_size: the number of pieces, meta pieces included (SentencePiece's ``vocab_size``).
        options: spm_train's options by their own names (:data:`SPM_DEFAULTS`).

    Returns:
        The model (pieces with scores and types, trainer and normalizer specs).

    Raises:
        ValueError: bad options, an empty corpus, or a vocab_size below the meta pieces plus the required
            characters (naming both numbers), or above what the corpus can make with ``hard_vocab_limit``.
    """
    # 1. Options, meta pieces and the normalizer.
    if options.get("model_type", "bpe") != "bpe":
        raise ValueError(f"model_type={options['model_type']!r}: this reference trains BPE; for unigram use "
                         "hf_bpe.training.unigram.reference.train_unigram_reference")
    opts, meta, spec = prepare_training(vocab_size, options)
    # 2-3. Sentences, normalized, with the characters outside the coverage made unknown.
    sentences, required = load_sentences(corpus, opts, meta, spec, vocab_size)
    # 4. Words (SplitSentencesByWhitespace), most frequent first, then the merge loop.
    if opts["split_by_whitespace"]:
        tokens: Counter[str] = Counter()
        for text, _ in sentences:
            tokens.update(split_words(text, opts["allow_whitespace_only_pieces"],
                                      opts["treat_whitespace_as_suffix"]))
        words = sorted(tokens.items(), key=lambda kv: (-kv[1], kv[0]))
    else:
        words = [(text, freq) for text, freq in sentences]
    merged = _Trainer(words, required, opts).run(vocab_size - len(meta) - len(required))
    # 5. Serialize.
    return assemble_model(merged, required, meta, vocab_size, opts, spec)
