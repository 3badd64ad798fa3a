"""SentencePiece's normalizer (``normalizer.cc``) as a ``tokenizers`` normalizer: what both the SentencePiece-mode
trainer and the converted ``tokenizer.json`` apply to text.

Steps, for a normalizer spec (the ``normalizer`` dict of
:class:`~hf_bpe.formats.sentencepiece_model.SentencePieceModel`):

1. the precompiled charsmap (``tokenizers``' ``Precompiled``, which reads SentencePiece's own tables), with
   ``"\\r\\n"`` first spelled as its characters' forms: ``Precompiled`` looks graphemes up whole and would map the
   CRLF grapheme with the entry of ``"\\r"`` alone, where SentencePiece maps each character;
2. ``remove_extra_whitespaces``: runs of U+0020 collapsed, leading and trailing ones removed (only U+0020:
   ``Strip`` would also remove tabs and newlines);
3. ``add_dummy_prefix``: ``"▁"`` prepended. SentencePiece adds it when the text is not empty *before*
   normalization; ``Prepend`` adds it to a non-empty result, so without whitespace removal it goes first (a text
   the charsmap deletes whole still gives ``"▁"``);
4. ``escape_whitespaces``: U+0020 written as ``"▁"``.

>>> spec = {"precompiled_charsmap": b"", "remove_extra_whitespaces": True, "add_dummy_prefix": True,
...         "escape_whitespaces": True}
>>> sentencepiece_normalizer(spec).normalize_str("  Hello   world ")
'▁Hello▁world'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SPACE", "charsmap_normalizer", "sentencepiece_normalizer"]

SPACE = "\u2581"


def _charsmap_steps(spec: Mapping[str, Any]) -> list[Any]:
    from tokenizers import normalizers

    steps: list[Any] = []
    if spec["precompiled_charsmap"]:
        try:
            charsmap = normalizers.Precompiled(spec["precompiled_charsmap"])
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception
            # sentencepiece checks only the blob's sizes; tokenizers parses it: an inexact model either way.
            raise ValueError(f"normalizer_spec.precompiled_charsmap is broken: tokenizers cannot read it ({exc}); "
                             "the model file is damaged") from None
        split = charsmap.normalize_str("\r") + charsmap.normalize_str("\n")
        if charsmap.normalize_str("\r\n") != split and charsmap.normalize_str(split) == split:
            steps.append(normalizers.Replace("\r\n", split))
        steps.append(charsmap)
    return steps


def charsmap_normalizer(spec: Mapping[str, Any]) -> Any:
    """Return step 1 alone (the precompiled charsmap) as a ``tokenizers`` normalizer, or ``None`` without a charsmap
    (the compiled trainer does steps 2-4 itself)."""
    from tokenizers import normalizers

    steps = _charsmap_steps(spec)
    return normalizers.Sequence(steps) if steps else None


def sentencepiece_normalizer(spec: Mapping[str, Any]) -> Any:
    """Return the ``tokenizers`` normalizer equal to SentencePiece's ``Normalizer::Normalize`` for ``spec``."""
    from tokenizers import Regex, normalizers

    steps = _charsmap_steps(spec)
    if spec["remove_extra_whitespaces"]:
        steps += [normalizers.Replace(Regex(" {2,}"), " "), normalizers.Replace(Regex(r"\A | \z"), "")]
    if spec["add_dummy_prefix"]:
        prepend = normalizers.Prepend(SPACE if spec["escape_whitespaces"] else " ")
        steps = steps + [prepend] if spec["remove_extra_whitespaces"] else [prepend, *steps]
    if spec["escape_whitespaces"]:
        steps.append(normalizers.Replace(" ", SPACE))
    return normalizers.Sequence(steps)
