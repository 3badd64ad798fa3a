"""spm_train's options beyond the ones this trainer reproduces: which cannot change a BPE model, which are accepted at
one value only, which are refused, and why.

sentencepiece 0.2.3's options are the fields of its ``TrainerSpec`` and ``NormalizerSpec`` plus ``spm_train``'s own
flags (``random_seed``, ``minloglevel``). The ones that shape a BPE model are reproduced and checked in
:data:`hf_bpe.training.sentencepiece.bpe.SPM_DEFAULTS`; every other one is in exactly one table here.
:class:`LongSentences` says what ``max_sentence_length`` left out, as spm_train logs it.

>>> sorted(set(SPM_NO_EFFECT) & set(SPM_ONLY)), sorted(set(SPM_ONLY) & set(SPM_REFUSED))
([], [])
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ...formats.sentencepiece_model import DEFAULT_UNK_SURFACE

__all__ = ["EMPTY_CORPUS", "LongSentences", "SPM_DEFAULTS", "SPM_NO_EFFECT", "SPM_ONLY", "SPM_REFUSED",
           "closest_option", "known_options", "parse_spm_options", "select_sentences", "typed"]

# spm_train's options this trainer reproduces, with spm_train's defaults.
SPM_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "character_coverage": 0.9995, "max_sentencepiece_length": 16, "max_sentence_length": 4192,
    "split_by_unicode_script": True, "split_by_number": True, "split_by_whitespace": True, "split_digits": False,
    "treat_whitespace_as_suffix": False, "allow_whitespace_only_pieces": False, "byte_fallback": False,
    "add_dummy_prefix": True, "remove_extra_whitespaces": True, "normalization_rule_name": "nmt_nfkc",
    "control_symbols": (), "user_defined_symbols": (), "required_chars": "", "use_all_vocab": False,
    "hard_vocab_limit": True, "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "unk_piece": "<unk>",
    "bos_piece": "<s>", "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": DEFAULT_UNK_SURFACE,
    "input_sentence_size": 0, "shuffle_input_sentence": True,
    # hf_bpe's own (no spm_train option): seeds the sample input_sentence_size takes with shuffle_input_sentence
    # when the corpus holds more sentences than that (see select_sentences); -1: no seed given.
    "sample_seed": -1,
})


# The other spm_train options (sentencepiece 0.2.3's TrainerSpec and NormalizerSpec fields, and spm_train's own
# flags). Accepted, type-checked and not used: options that cannot change a BPE model (each checked against the
# real trainer in tests/test_sentencepiece_bpe.py), with spm_train's defaults and why.
SPM_NO_EFFECT: Mapping[str, tuple[Any, str]] = MappingProxyType({
    # The next four shape unigram models (hf_bpe.training.unigram.reference.UNIGRAM_DEFAULTS), not BPE ones.
    "num_threads": (16, "BPE training gives the same model on any number of threads"),
    "seed_sentencepiece_size": (1000000, "unigram's seed pieces"),
    "shrinking_factor": (0.75, "unigram's pruning"),
    "num_sub_iterations": (2, "unigram's EM steps"),
    "train_extremely_large_corpus": (False, "unused by sentencepiece 0.2.3 (its seed step reads 500 MB chunks)"),
    "mining_sentence_size": (0, "deprecated, unused"),
    "training_sentence_size": (0, "deprecated, unused"),
    "self_test_sample_size": (0, "a log after training"),
    "vocabulary_output_piece_score": (True, "the .vocab file, not the model"),
    "accept_language": ((), "metadata"),
    "differential_privacy_noise_level": (0.0, "used only with enable_differential_privacy"),
    "differential_privacy_clipping_threshold": (0, "used only with enable_differential_privacy"),
    "random_seed": (4294967295, "it seeds sampling only"),
    "minloglevel": (0, "logging"),
})
# Accepted at these values only (spm_train's default, or what this trainer is): name -> (values, why not others).
SPM_ONLY: Mapping[str, tuple[tuple[Any, ...], str]] = MappingProxyType({
    "model_type": (("bpe", "unigram"), "hf_bpe trains BPE (spm_train --model_type=bpe) and unigram"),
    "input_format": (("text", ""), "TSV input (sentence<TAB>count) is not read; give one sentence per line"),
    "escape_whitespaces": ((True,), "spm_train refuses escape_whitespaces=false for BPE"),
    "auto_character_coverage": ((False,), "it picks character_coverage itself (with byte_fallback), which this "
                                          "trainer does not reproduce; give character_coverage="),
    "enable_differential_privacy": ((False,), "it adds random noise to the counts, which this trainer does not "
                                              "reproduce"),
})
# Refused whatever the value, with the reason.
SPM_REFUSED: Mapping[str, str] = MappingProxyType({
    "input": "give the corpus as FILE arguments (CLI) or as corpus (Python)",
    "model_prefix": "the model is written by --out DIR (CLI) or hf_bpe.save_sentencepiece(model, DIR)",
    "vocab_size": "give it as --vocab-size (CLI) or vocab_size= (Python)",
    "pretokenization_delimiter": "it changes the words; this trainer does not reproduce it",
    "seed_sentencepieces_file": "a seed file is not read (spm_train refuses it for BPE; for unigram, let the corpus "
                                "give the seeds)",
    "normalization_rule_tsv": "custom normalization rules are not reproduced; use normalization_rule_name",
    "denormalization_rule_tsv": "a denormalizer is not written; leave it out",
})


def known_options() -> dict[str, Any]:
    """Every accepted option, with a value of its type (spm_train's default)."""
    return {**{k: default for k, (default, _) in SPM_NO_EFFECT.items()},
            **{k: values[0] for k, (values, _) in SPM_ONLY.items()}, **SPM_DEFAULTS}


def closest_option(name: str) -> str:
    """The end of an unknown-option message: the closest known names (difflib), not the list of all of them.

    >>> closest_option("charcter_coverage")
    '; did you mean character_coverage or auto_character_coverage?'
    """
    import difflib

    close = difflib.get_close_matches(name, [*known_options(), *SPM_REFUSED], n=3, cutoff=0.6)
    where = "hf_bpe.training.sentencepiece.options.SPM_DEFAULTS lists the options spm_train and hf_bpe share"
    return f"; did you mean {' or '.join(close)}?" if close else f" ({where})"


def parse_spm_options(pairs: Iterable[str]) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` strings (spm_train's command-line spelling) into options typed as :data:`SPM_DEFAULTS`:
    ``true``/``false``, numbers, comma-separated lists.

    >>> parse_spm_options(["byte_fallback=true", "character_coverage=1.0", "control_symbols=<a>,<b>"])
    {'byte_fallback': True, 'character_coverage': 1.0, 'control_symbols': ('<a>', '<b>')}
    """
    options: dict[str, Any] = {}
    known = known_options()
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().lstrip("-")
        if sep and key in SPM_REFUSED:
            raise ValueError(f"{pair!r}: {key} is not accepted here: {SPM_REFUSED[key]}")
        if not sep:
            raise ValueError(f"{pair!r}: expected KEY=VALUE, e.g. character_coverage=1.0")
        if key not in known:
            raise ValueError(f"{pair!r}: unknown SentencePiece option {key!r}{closest_option(key)}")
        default = known[key]
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(value)
                options[key] = value.lower() in ("true", "1")
            elif isinstance(default, int | float):
                options[key] = type(default)(value)
            elif isinstance(default, tuple):
                options[key] = tuple(v for v in value.split(",") if v)
            else:
                options[key] = value
        except ValueError:
            raise ValueError(f"{pair!r}: {key} takes a {type(default).__name__} value (spm_train's default: "
                             f"{default!r})") from None
    return options


def select_sentences(texts: Iterable[Any], opts: Mapping[str, Any]) -> Iterable[Any]:
    """Take the sentences spm_train trains on under ``input_sentence_size`` (its SentenceSelector).

    A sentence here is a corpus item that spm_train's reader keeps: not empty, at most ``max_sentence_length``
    UTF-8 bytes, without ``▅``; the others pass through (the loader skips them, or refuses an item that is no str)
    and are not counted, as in spm_train, where the selection comes before normalization (a sentence that
    normalizes to nothing still counts). ``input_sentence_size=0`` takes all. Otherwise:

    - ``shuffle_input_sentence=false``: the first ``input_sentence_size`` sentences, as spm_train (reading stops);
    - ``shuffle_input_sentence=true`` (spm_train's default) and a corpus of at most ``input_sentence_size``
      sentences: all of them in order, which is what spm_train's sampler keeps too (any seed);
    - ``shuffle_input_sentence=true`` and a larger corpus: spm_train samples with its own generator (a reservoir
      over ``std::mt19937``), which hf_bpe does not reproduce. With ``sample_seed=S`` a reservoir sample of
      ``input_sentence_size`` sentences is taken with Python's ``random.Random(S)`` instead (the same sentences
      for the same corpus and seed, but not spm_train's); without it, a ValueError says so.

    Memory: ``input_sentence_size`` sentences at most, whatever the corpus size.

    >>> opts = {"input_sentence_size": 2, "shuffle_input_sentence": False, "sample_seed": -1,
    ...         "max_sentence_length": 4192}
    >>> list(select_sentences(["a", "", "b", "c"], opts))
    ['a', '', 'b']
    >>> list(select_sentences(["a", "b"], {**opts, "shuffle_input_sentence": True}))
    ['a', 'b']
    >>> sorted(select_sentences(["a", "b", "c", "d"], {**opts, "shuffle_input_sentence": True, "sample_seed": 0}))
    ['a', 'c']

    Raises:
        ValueError: a shuffled sample is needed and no ``sample_seed`` was given.
    """
    size = opts["input_sentence_size"]
    return _selected(texts, size, opts["shuffle_input_sentence"], opts["sample_seed"],
                     opts["max_sentence_length"]) if size else texts


def _is_sentence(text: Any, limit: int) -> bool:
    """Whether spm_train's reader keeps ``text`` (False also for what the loader refuses)."""
    if not isinstance(text, str) or not text or "\u2585" in text:
        return False
    try:
        return len(text) <= limit // 4 or len(text.encode("utf-8")) <= limit
    except UnicodeEncodeError:  # a lone surrogate: the loader refuses it, naming the item
        return False


def _selected(texts: Iterable[Any], size: int, shuffle: bool, seed: int, limit: int) -> Iterable[Any]:
    import random

    reservoir: list[str] = []
    total = 0
    generator = random.Random(seed)
    for text in texts:
        if not _is_sentence(text, limit):
            yield text
            continue
        total += 1
        if not shuffle:
            yield text
            if total >= size:
                return
        elif total <= size:
            reservoir.append(text)
        elif seed < 0:
            raise ValueError(
                f"input_sentence_size={size} with shuffle_input_sentence=true samples {size} of this corpus's "
                "sentences with spm_train's own random generator, which hf_bpe does not reproduce; pass "
                f"shuffle_input_sentence=false to take the first {size} (as spm_train does), or sample_seed=S for a "
                "seeded sample (hf_bpe's generator: not spm_train's sentences), or input_sentence_size=0 for all")
        else:
            drawn = generator.randrange(total)
            if drawn < size:
                reservoir[drawn] = text
    yield from reservoir


def typed(name: str, default: Any, value: Any) -> Any:
    """Return ``value`` checked against the type of ``default`` (a list of str becomes a tuple)."""
    kind = type(default)
    if kind is tuple:
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{name} must be a list of str, got {value!r}")
        return tuple(value)
    if kind is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number, got {value!r}")
    elif not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{name} must be {kind.__name__}, got {type(value).__name__} {value!r}")
    return value


EMPTY_CORPUS = "the corpus holds no text to train on (every sentence was empty after normalization)"
_MAX_SENTENCE_LENGTH = 1073741824  # spm_train's upper bound for max_sentence_length


class LongSentences:
    """Count the sentences spm_train skips for being longer than ``max_sentence_length`` UTF-8 bytes, so that the
    skip is said (spm_train logs "Skipped N too long sentences"); items pass through unchanged.

    >>> long = LongSentences(10)
    >>> list(long.watch(["short", "x" * 11, "é" * 6])), long.count, long.longest
    (['short', 'xxxxxxxxxxx', 'éééééé'], 2, 12)
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.longest = 0
        self.index, self.last = -1, None

    def watch(self, texts: Iterable[Any]) -> Iterable[Any]:
        """Yield ``texts`` as they are, counting the too long ones (only texts of more than limit/4 characters
        are measured: a character is at most 4 bytes); the last one yielded and its index stay in ``last`` and
        ``index`` (for :meth:`not_unicode`)."""
        limit = self.limit
        for self.index, text in enumerate(texts):
            self.last = text
            if isinstance(text, str) and len(text) * 4 > limit:
                size = len(text.encode("utf-8", "surrogatepass"))
                if size > limit:
                    self.count += 1
                    self.longest = max(self.longest, size)
            yield text

    def not_unicode(self, error: UnicodeEncodeError) -> ValueError:
        """The error for the last sentence :meth:`watch` yielded, which holds a lone surrogate (``error``: its
        UTF-8 encoding's failure): no UTF-8 text, which spm_train cannot take either (pybind11 refuses the str)."""
        from ...errors import excerpt

        bad = error.object[error.start:error.end]
        return ValueError(f"corpus item {self.index} holds a lone surrogate {bad!r} at character {error.start} "
                          f"({excerpt(self.last)}): it is not Unicode text and has no UTF-8 (sentencepiece refuses "
                          "it too); repair it first, e.g. text.encode('utf-16', 'surrogatepass').decode('utf-16', "
                          "'replace') makes each lone surrogate U+FFFD")

    def _fix(self) -> str:
        wanted = min(self.longest, _MAX_SENTENCE_LENGTH)
        return f"pass max_sentence_length={wanted} to keep them (CLI: --spm max_sentence_length={wanted})"

    def check(self, left: int) -> None:
        """Warn that sentences were skipped; raise the empty-corpus error, naming the option, when none is left.

        Raises:
            ValueError: ``left`` is 0.
        """
        if not self.count:
            if not left:
                raise ValueError(EMPTY_CORPUS)
            return
        said = (f"{self.count} sentence(s) longer than max_sentence_length={self.limit} UTF-8 bytes (the longest: "
                f"{self.longest}) were skipped, as spm_train skips them")
        if not left:
            raise ValueError(f"the corpus holds no text to train on: {said}, and the others were empty after "
                             f"normalization; {self._fix()}")
        warnings.warn(f"{said}; {self._fix()}", UserWarning, stacklevel=3)
