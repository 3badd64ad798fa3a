"""Parity-aware BPE in plain Python: the executable spec of ``tokenizers``' ``ParityBpeTrainer`` (0.23.3).

``ParityBpeTrainer`` (``models/bpe/parity_trainer.rs``, PR #1974; Foroutan et al., "Parity-aware BPE", ACL 2026)
learns one merge list for several languages, serving at each step the language that is compressed worst. This
module states what it does, step for step, and recounts everything at every step so that it can be read;
:mod:`hf_bpe.training.parity.trainer` does the same incrementally on the compiled core (``core._parity``) and the
tests hold the two equal (and both equal to ``tokenizers`` on real text). The driver :func:`run_parity` (language choice, exhaustion, stopping) is shared:
only the pair counting and the merging differ between the two.

Input: per language, the training pre-tokens with their counts, and optionally the development (dev) pre-tokens.
``tokenizers`` works on the byte-level *strings* of the pre-tokens (one character per byte, the GPT-2 alphabet), so
this module does too: characters, order and ties are those of the byte-level spelling.

1. **Ids.** The special tokens first, in order, a repeat skipped. Then the alphabet: every character seen in any
   training **or dev** pre-token, sorted by code point (of the byte-level character, not of the byte); a character
   whose string is already a special token shares its id. Bytes never seen get no id, unless ``all_bytes``
   (``initial_alphabet=ByteLevel.alphabet()``) adds all 256.
   Then one id per merge in merge order; a merge that builds a string which already has an id (a special token, or
   a token built before from another pair) reuses that id and the merge is still recorded.
2. **Lengths**, the measure of how badly each language is compressed, in one of three modes:
   ``dev`` (dev sets given; ``ratio`` is then ignored, as the Python binding does, while ``train_parity`` refuses
   the two together): the total number of tokens of the
   language's dev pre-tokens (length x count) under the merges so far. ``ratio``: the same total over the training
   pre-tokens, as a float; the language's value is ``(initial / current) / ratio[lang]`` (its compression rate over
   its target). ``neither``: the training total as in ``ratio`` mode, but compared as lengths.
3. **Each step** (until ``num_merges`` merges are made; with ``total_symbols``, ``num_merges`` minus the size of
   the vocabulary before any merge, specials and alphabet: ``num_merges`` is then the whole vocabulary. The Rust
   source of PR #1974 takes off distinct inner plus distinct last characters of the training pre-tokens instead;
   the 0.23.3 wheel does what is written here, and the tests hold hf_bpe to the wheel):

   - while fewer than ``global_merges`` merges are made, the pair is chosen from the sum of every language's
     counts; if there is none (or its count is below ``min_frequency``) training stops;
   - otherwise a language is chosen. ``base``: the longest (``dev``/``neither``) or the lowest value (``ratio``),
     the first in language order on ties, skipping exhausted languages (an argmax/argmin that starts from
     language 0, so when every candidate is NaN language 0 comes back). ``window``: a window of the last
     ``window_size`` choices; candidates are taken longest first (``ratio``: highest ``-value``; exhausted ones
     count as -infinity and are never "best" but language 0 is the default), and one is taken when its share of the
     window ``count / window_size <= alpha / number_of_languages``, else it is masked and the next is tried; when all
     are masked the last one tried is taken. The choice enters the window (oldest dropped past ``window_size``)
     before its pair is looked at, even when the language turns out exhausted;
   - the chosen language's best pair: the highest count, ties to the largest ``(left string, right string)``
     (Python's ``max(stats, key=lambda p: (stats[p], p))`` of the paper's code). No pair, or a count below
     ``min_frequency`` (a pair of exactly ``min_frequency`` is merged): the language is exhausted for good, the
     step makes no merge, and training stops when every language is exhausted.
4. **The merge** is applied to every language's training pre-tokens and dev pre-tokens, left to right and
   non-overlapping (``Word::merge``), and the lengths are updated.

Where ``tokenizers`` never returns, hf_bpe serves the first language not yet exhausted (a *stall*, counted in
:attr:`ParityResult.stalls`), and goes on. `tokenizers` loops forever (1) in ``base`` mode when its choice is a
language already exhausted, which only NaN values make (``ratio`` with an empty language after language 0, once
language 0 is exhausted); (2) in ``window`` mode when language 0 is masked for its share of the window and every
other unmasked language is exhausted (or NaN): the search returns to language 0 again and again, e.g. three
languages of which the last two ran out of pairs; (3) in ``window`` mode when the choices of exhausted languages
bring back a window already seen since the last merge. Whenever ``tokenizers`` returns, this returns the same.

>>> result = train_parity_reference([{b"aabb": 10}, {b"ccdd": 10}], num_merges=6)
>>> [result.vocab[a] + " " + result.vocab[b] for a, b, _ in result.merges]
['b b', 'd d', 'a bb', 'c dd', 'a abb', 'c cdd']
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import Literal, NamedTuple, Protocol

from ...core.bytelevel import BYTE_TO_UNICODE, token_to_str

__all__ = ["BYTE_LEVEL_ALPHABET", "ParityOptions", "ParityResult", "initial_vocab", "merge_word", "run_parity",
           "train_parity_reference", "with_rebuilt_specials"]

Variant = Literal["base", "window"]
# `tokenizers`' ByteLevel.alphabet(): the 256 byte-level characters.
BYTE_LEVEL_ALPHABET = tuple(BYTE_TO_UNICODE.values())


class ParityOptions(NamedTuple):
    """The trainer's options (checked by :func:`hf_bpe.training.parity.parity.check_parity_options`)."""

    num_merges: int
    variant: Variant = "base"
    ratio: tuple[float, ...] | None = None
    window_size: int = 100
    alpha: float = 2.0
    global_merges: int = 0
    min_frequency: int = 0
    total_symbols: bool = False


class ParityResult(NamedTuple):
    """The vocabulary (byte-level strings by id), the merges ``(left, right, new)`` in order, the shared special ids,
    the number of stalls (choices `tokenizers` never returns from: 0 whenever it returns), and the merges asked for
    (``num_merges``, less the initial vocabulary with ``total_symbols``)."""

    vocab: list[str]
    merges: list[tuple[int, int, int]]
    shared_specials: frozenset[int]
    stalls: int = 0
    budget: int = 0


class Counts(Protocol):
    """What :func:`run_parity` asks of a pair-counting back end (the reference's recount, or the incremental one)."""

    def best_pair(self, lang: int) -> tuple[tuple[int, int], int] | None: ...  # the language's best pair and count

    def best_global_pair(self) -> tuple[tuple[int, int], int] | None: ...  # the best pair of the summed counts

    def apply(self, pair: tuple[int, int], new: int) -> None: ...  # merge it everywhere (training and dev)

    def lengths(self, dev: bool) -> list[int]: ...  # per language: tokens in the dev or training pre-tokens


def initial_vocab(specials: Sequence[str], chars: Iterable[str]) -> tuple[list[str], dict[str, int], set[int]]:
    """Return the vocabulary before any merge (specials, then the sorted alphabet), its index and the shared ids.

    ``chars``: every character of the training and dev pre-tokens (repeats allowed).

    >>> initial_vocab(["<s>", "b"], "abca")
    (['<s>', 'b', 'a', 'c'], {'<s>': 0, 'b': 1, 'a': 2, 'c': 3}, {1})
    """
    vocab: list[str] = []
    index: dict[str, int] = {}
    for token in specials:
        if token not in index:
            index[token] = len(vocab)
            vocab.append(token)
    shared = set()
    for char in sorted(set(chars)):
        if char in index:
            shared.add(index[char])
        else:
            index[char] = len(vocab)
            vocab.append(char)
    return vocab, index, shared


def merge_word(word: Sequence[int], left: int, right: int, new: int) -> list[int]:
    """Merge every ``(left, right)`` of ``word``, left to right, non-overlapping.

    >>> merge_word([1, 1, 1, 2], 1, 1, 9)
    [9, 1, 2]
    """
    out: list[int] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def run_parity(counts: Counts, vocab: list[str], index: dict[str, int], options: ParityOptions, *, has_dev: bool,
               num_merges: int, progress: Callable[[int], object] | None = None) -> tuple[list[tuple[int, int, int]],
                                                                                       int]:
    """Run the merge loop (point 3 of the module docstring): choose, merge, update.

    ``vocab`` and ``index`` grow with the new tokens.

    Returns:
        The merges ``(left, right, new)``, and how many times a choice was one `tokenizers` never returns from
        (then the first language not exhausted is served).
    """
    n = len(counts.lengths(False))
    use_ratio = options.ratio is not None and not has_dev
    initial = [float(x) for x in counts.lengths(False)] if use_ratio else []
    threshold = options.alpha / n
    window: deque[int] = deque()
    exhausted: set[int] = set()
    seen_idle: set[tuple[int, ...]] = set()  # windows seen while choosing exhausted languages (loop guard)
    merges: list[tuple[int, int, int]] = []
    stalls = 0
    while len(merges) < num_merges and len(exhausted) < n:
        if len(merges) < options.global_merges:
            found = counts.best_global_pair()
            if found is None or found[1] < options.min_frequency:
                break
        else:
            lang = _choose(counts, options, use_ratio, has_dev, initial, window, exhausted, threshold)
            if lang < 0 or lang in exhausted:  # no merge: a step that only moves the window, or tokenizers' loop
                key = tuple(window)
                if lang >= 0 and options.variant == "window" and key not in seen_idle:
                    seen_idle.add(key)
                    continue
                stalls += 1
                lang = min(set(range(n)) - exhausted)
            found = counts.best_pair(lang)
            if found is None or found[1] < options.min_frequency:
                exhausted.add(lang)
                seen_idle.clear()
                continue
        (left, right), _ = found
        token = vocab[left] + vocab[right]
        new = index.get(token)
        if new is None:
            new = index[token] = len(vocab)
            vocab.append(token)
        merges.append((left, right, new))
        counts.apply((left, right), new)
        seen_idle.clear()
        if progress is not None:
            progress(1)
    return merges, stalls


def _choose(counts: Counts, options: ParityOptions, use_ratio: bool, has_dev: bool, initial: list[float],
            window: deque[int], exhausted: set[int], threshold: float) -> int:
    """Return the language to serve this step (point 3), entering it into the window for ``window``."""
    if use_ratio:
        assert options.ratio is not None
        current = counts.lengths(False)
        values = [_divide(a, float(c)) / r for a, c, r in zip(initial, current, options.ratio)]
        if options.variant == "base":
            best, best_value = 0, math.inf
            for i, value in enumerate(values):
                if i not in exhausted and value < best_value:
                    best, best_value = i, value
            return best
        keys = [-math.inf if i in exhausted else -v for i, v in enumerate(values)]
    else:
        lengths = counts.lengths(has_dev)
        if options.variant == "base":
            best, best_value = 0, -math.inf
            for i, value in enumerate(lengths):
                if i not in exhausted and value > best_value:
                    best, best_value = i, value
            return best
        keys = [-math.inf if i in exhausted else float(v) for i, v in enumerate(lengths)]
    chosen = _window_choice(keys, window, options.window_size, threshold)
    if chosen < 0:
        return -1  # tokenizers never returns from this choice
    window.append(chosen)
    if len(window) > options.window_size:
        window.popleft()
    return chosen


def _window_choice(keys: list[float], window: deque[int], window_size: int, threshold: float) -> int:
    """Return the moving window's choice: best key first, skipping languages over their share of the window.

    -1 when `tokenizers` would loop forever: no language left unmasked has a key above -infinity (exhausted, or
    NaN), so language 0 is "best" again, but it is masked already.
    """
    mask = [True] * len(keys)
    while True:
        best, best_key = 0, -math.inf
        for i, key in enumerate(keys):
            if mask[i] and key > best_key:
                best, best_key = i, key
        if not mask[best]:
            return -1
        if window.count(best) / window_size <= threshold:
            return best
        mask[best] = False
        if not any(mask):
            return best


def _divide(a: float, b: float) -> float:
    """IEEE division as Rust's f64 does it (0/0 is NaN, x/0 infinite), where Python would raise."""
    if b:
        return a / b
    return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)


class _Recount:
    """The spec's back end: words as id lists, every count recomputed when asked."""

    def __init__(self, vocab: list[str], train: list[list[tuple[list[int], int]]],
                 dev: list[list[tuple[list[int], int]]]) -> None:
        self.vocab, self.train, self.dev = vocab, train, dev

    def _pairs(self, lang: int) -> Counter[tuple[int, int]]:
        pairs: Counter[tuple[int, int]] = Counter()
        for word, count in self.train[lang]:
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        return pairs

    def _best(self, pairs: Counter[tuple[int, int]]) -> tuple[tuple[int, int], int] | None:
        candidates = [(count, self.vocab[a], self.vocab[b], (a, b)) for (a, b), count in pairs.items() if count > 0]
        if not candidates:
            return None
        count, _, _, pair = max(candidates)
        return pair, count

    def best_pair(self, lang: int) -> tuple[tuple[int, int], int] | None:
        return self._best(self._pairs(lang))

    def best_global_pair(self) -> tuple[tuple[int, int], int] | None:
        return self._best(sum((self._pairs(lang) for lang in range(len(self.train))), Counter()))

    def apply(self, pair: tuple[int, int], new: int) -> None:
        for corpus in (*self.train, *self.dev):
            corpus[:] = [(merge_word(word, pair[0], pair[1], new), count) for word, count in corpus]

    def lengths(self, dev: bool) -> list[int]:
        return [sum(len(word) * count for word, count in corpus) for corpus in (self.dev if dev else self.train)]


def train_parity_reference(
    languages: Sequence[Mapping[bytes, int]],
    dev: Sequence[Mapping[bytes, int]] | None = None,
    *,
    special_tokens: Sequence[str] = (),
    all_bytes: bool = False,
    **options: object,
) -> ParityResult:
    """Train parity-aware BPE on per-language pre-token counts (bytes -> count), recounting at every step.

    Args:
        languages: one mapping of pre-token bytes to count per language.
        dev: one such mapping per language, or None.
        special_tokens: given the first ids.
        all_bytes: the alphabet is all 256 bytes (``initial_alphabet=ByteLevel.alphabet()``), not only those seen.
        **options: the fields of :class:`ParityOptions` (``num_merges`` required).

    Returns:
        A :class:`ParityResult`.
    """
    opts = ParityOptions(**options)  # type: ignore[arg-type]
    train = [{token_to_str(w): c for w, c in table.items()} for table in languages]
    devs = [{token_to_str(w): c for w, c in table.items()} for table in dev] if dev is not None else []
    chars = (c for table in (*train, *devs) for word in table for c in word)
    vocab, index, shared = initial_vocab(special_tokens, chain(chars, BYTE_LEVEL_ALPHABET if all_bytes else ()))

    def ids(table: dict[str, int]) -> list[tuple[list[int], int]]:
        return [([index[c] for c in word], count) for word, count in table.items()]

    counts = _Recount(vocab, [ids(t) for t in train], [ids(t) for t in devs])
    budget = max(0, opts.num_merges - len(vocab)) if opts.total_symbols else opts.num_merges
    merges, stalls = run_parity(counts, vocab, index, opts, has_dev=dev is not None, num_merges=budget)
    return ParityResult(vocab, merges, with_rebuilt_specials(shared, merges, special_tokens), stalls,
                        budget)


def with_rebuilt_specials(shared: set[int], merges: list[tuple[int, int, int]],
                          specials: Sequence[str]) -> frozenset[int]:
    """Return the special ids that are regular tokens too: spelled by the alphabet (``shared``) or built by a merge.

    >>> sorted(with_rebuilt_specials({1}, [(2, 3, 0)], ["ab", "x"]))
    [0, 1]
    """
    count = len(dict.fromkeys(specials))
    return frozenset(shared | {new for _, _, new in merges if new < count})
