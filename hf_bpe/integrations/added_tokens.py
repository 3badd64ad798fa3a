"""Find a tokenizer's added tokens in text exactly as `tokenizers`' added-vocabulary matcher does.

Leftmost-longest matches, with each token's flags: ``single_word`` (not inside a word), ``lstrip``/``rstrip``
(swallow the whitespace beside it) and ``special`` (skipped when special tokens are split as text).
"""

from __future__ import annotations

from collections.abc import Mapping

import regex
from transformers.tokenization_utils_base import AddedToken

from ..core.specials import special_tokens_regex

__all__ = ["SEPARATORS", "AddedTokenMatcher", "is_word_char"]

# tokenizers' added-token matcher uses Rust regex classes: `\s` is Unicode White_Space (25 code points, all below
# U+3001), `\w` is alphabetic, marks, decimal digits, connector punctuation and join controls. The `regex`
# module agrees on both, except on the few thousand code points that its newer Unicode tables assign and
# tokenizers' do not yet (checked over every code point in the tests).
_WHITESPACE = frozenset(chr(c) for c in range(0x3001) if regex.match(r"\s", chr(c)))
_WORD_CHAR = regex.compile(r"\w")


def is_word_char(char: str) -> bool:
    """Tell whether ``char`` is a word character for ``single_word`` (Rust regex's ``\\w``)."""
    return _WORD_CHAR.match(char) is not None


# A batch is joined with the first of these characters that no added token contains, so that one regex search
# over the joined text finds every text holding an added token and no match can straddle two texts.
SEPARATORS = ("\x00", "\uffff", "\U0010ffff", "\x01", "\ufffe")


class AddedTokenMatcher:
    """Leftmost-longest search for a set of added tokens (an alternation sorted longest first)."""

    __slots__ = ("pattern", "tokens")

    def __init__(self, tokens: Mapping[str, tuple[int, AddedToken]]) -> None:
        if "" in tokens:
            # An empty alternative would match everywhere without advancing the search (an endless split).
            raise ValueError(f"added token id {tokens[''][0]} has empty content; every added token needs text")
        self.pattern = special_tokens_regex(tokens)
        self.tokens = dict(tokens)

    def split(self, sentence: str, skip_special: bool) -> list[tuple[str, int | None]]:
        """Split ``sentence`` into (text, None) and (text, added token id) pieces, as ``find_matches`` does."""
        if self.pattern is None or not sentence:
            return [(sentence, None)]
        pieces: list[tuple[str, int | None]] = []
        end = len(sentence)
        start_offset = 0
        position = 0
        while True:
            match = self.pattern.search(sentence, position)
            if match is None:
                break
            start, stop = match.span()
            # The automaton resumes after the match even when the match is then refused (single_word, special).
            # No token is empty (refused in __init__), so stop > start >= position: every turn advances.
            position = stop
            token_id, token = self.tokens[match.group()]
            if skip_special and token.special:
                continue
            if token.single_word and (
                (start > 0 and is_word_char(sentence[start - 1])) or (stop < end and is_word_char(sentence[stop]))
            ):
                continue
            if token.lstrip:
                # Equivalent to max(start of the trailing whitespace, end of the previous added token).
                while start > start_offset and sentence[start - 1] in _WHITESPACE:
                    start -= 1
            if token.rstrip:
                while stop < end and sentence[stop] in _WHITESPACE:
                    stop += 1
            if start_offset < start:
                pieces.append((sentence[start_offset:start], None))
            pieces.append((sentence[start:stop], token_id))
            start_offset = stop
        if start_offset != end:
            pieces.append((sentence[start_offset:], None))
        return pieces
