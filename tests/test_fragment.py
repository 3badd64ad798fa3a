"""The cut rule of hf_bpe.core.fragment, held by property tests for every named pattern."""

from __future__ import annotations

import pickle

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core.fragment import CUTTABLE_PATTERNS, Fragment, last_safe_cut
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.core.pretokenize import Pretokenizer

# Every character class the patterns treat differently: letters of each case, marks, digits (ASCII and not),
# apostrophes and contractions, punctuation, '/', whitespace of each kind.
_ALPHABET = st.sampled_from(list("aZé中Ǆʰ\u0301 1٣½'sStTlLdDmM!,./\t\n\r\u00a0\u3000\u2019😀"))
_ALL_CUTS = regex.compile(r"(?<=[\p{L}\p{N}]) ")


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.text(alphabet=_ALPHABET, max_size=60))
def test_fragment_every_safe_cut_keeps_the_pieces(pattern, add_prefix_space, text):
    compiled = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
    whole = compiled.split(text)
    spec = regex.findall(PATTERNS[pattern], (" " + text) if add_prefix_space and text[:1] not in ("", " ") else text)
    assert whole == spec
    for match in _ALL_CUTS.finditer(text):
        cut = match.start()
        assert compiled.split(text[:cut]) + compiled.split(text[cut:]) == whole, (pattern, text, cut)


def test_fragment_cuts_only_before_a_space_after_a_letter_or_digit():
    assert last_safe_cut("ab cd ef") == 5
    assert last_safe_cut("ab  ") == 2
    assert last_safe_cut("!! ?") == 0
    assert last_safe_cut("x\u00a0y") == 0
    assert last_safe_cut("") == 0


def test_fragment_pickles_with_its_flags():
    fragment = Fragment(" tail", start=False, end=True, line_bytes=99)
    back = pickle.loads(pickle.dumps(fragment))
    assert (back, back.start, back.end, back.line_bytes, type(back)) == (" tail", False, True, 99, Fragment)
