"""spm_train's options beyond the ones this trainer reproduces: which cannot change a BPE model, which are accepted at
one value only, which are refused, and why.

sentencepiece 0.2.3's options are the fields of its ``TrainerSpec`` and ``NormalizerSpec`` plus ``spm_train``'s own
flags (``random_seed``, ``minloglevel``). The ones that shape a BPE model are reproduced and checked in
:data:`hf_bpe.training.sentencepiece_bpe.SPM_DEFAULTS`; every other one is in exactly one table here.

>>> sorted(set(SPM_NO_EFFECT) & set(SPM_ONLY)), sorted(set(SPM_ONLY) & set(SPM_REFUSED))
([], [])
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["SPM_NO_EFFECT", "SPM_ONLY", "SPM_REFUSED", "typed"]

# The other spm_train options (sentencepiece 0.2.3's TrainerSpec and NormalizerSpec fields, and spm_train's own
# flags). Accepted, type-checked and not used: options that cannot change a BPE model (each checked against the
# real trainer in tests/test_sentencepiece_bpe.py), with spm_train's defaults and why.
SPM_NO_EFFECT: Mapping[str, tuple[Any, str]] = MappingProxyType({
    "shuffle_input_sentence": (True, "it orders only the sample input_sentence_size > 0 takes"),
    # The next four shape unigram models (hf_bpe.training.unigram_reference.UNIGRAM_DEFAULTS), not BPE ones.
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
