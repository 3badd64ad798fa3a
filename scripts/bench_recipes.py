"""Benchmark the named recipes: hf_bpe against the implementation each one reproduces, on the same text.

Usage::

    python scripts/bench_recipes.py [--corpus PATH] [--recipes all|a,b] [--merges 2000] [--reference-mb 1]
                                    [--reference-merges 200] [--markdown]

For every recipe two rows of timings (training only, in this process, one run each):

- on the whole corpus: hf_bpe, and the reference where it is fast enough to run there (`tokenizers`' WordPieceTrainer
  for ``wordpiece``, the PyPI ``subword-nmt`` for ``subword-nmt`` when ``--reference-mb 0``);
- on its first ``--reference-mb`` MB with ``--reference-merges`` merges: hf_bpe and the reference. The pure-Python
  references (the paper, the HF course, minbpe, rasbt) recount every pair at every merge, as their published code
  does; hf_bpe's spec ``hf_bpe.core._reference_classic.learn_merges`` is that loop, so it stands in for them
  (their own code is not installable from PyPI), after the same pre-tokenization.

The speed-up column is reference / hf_bpe on the same text and size. Results equal: each pair of runs is
compared merge for merge where both learn the same thing.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))
sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))

from _bench_common import fmt, format_table, load_average, machine_lines  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpora" / "en" / "english_combined.txt"
COUNTS_MERGES = ("sennrich-paper", "subword-nmt", "minbpe-basic", "minbpe-regex")


def _size(recipe: str, merges: int, initial: int) -> dict[str, int]:
    return {"num_merges": merges} if recipe in COUNTS_MERGES else {"vocab_size": initial + merges}


def _initial(recipe: str) -> int:
    # Initial symbols before any merge, as the recipes count them: only matters for the vocab_size recipes.
    return {"hf-course": 1 + 256, "rasbt": 258, "rasbt-simple": 258, "wordpiece": 5 + 2 * 256,
            "wordpiece-score": 5 + 2 * 256}.get(recipe, 0)


def _hf_bpe(recipe: str, path: Path, merges: int) -> tuple[float, Any]:
    import hf_bpe

    start = time.perf_counter()
    model = hf_bpe.train([path], recipe=recipe, show_progress=False, **_size(recipe, merges, _initial(recipe)))
    return time.perf_counter() - start, model


def _reference(recipe: str, path: Path, merges: int) -> tuple[float, str]:
    """Time the implementation a recipe reproduces, learning ``merges`` merges; return (seconds, what ran)."""
    if recipe == "subword-nmt":
        from subword_nmt.learn_bpe import learn_bpe

        start = time.perf_counter()
        with codecs.open(os.fspath(path), encoding="utf-8") as handle:
            learn_bpe(handle, io.StringIO(), merges, min_frequency=2)
        return time.perf_counter() - start, "subword-nmt (PyPI) learn_bpe"
    if recipe == "wordpiece":
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=_initial(recipe) + merges, show_progress=False,
                                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        start = time.perf_counter()
        tokenizer.train([os.fspath(path)], trainer)
        return time.perf_counter() - start, "tokenizers WordPieceTrainer"
    return _python_loop(recipe, path, merges), "published loop in pure Python (recount per merge)"


def _python_loop(recipe: str, path: Path, merges: int) -> float:
    import numpy as np

    from hf_bpe.core._reference_classic import learn_merges
    from hf_bpe.core.bytelevel import token_to_str
    from hf_bpe.model.segment import rasbt_pretokenize
    from hf_bpe.training.classic import classic

    text = path.read_text(encoding="utf-8")
    start = time.perf_counter()
    options: dict[str, Any] = {}
    if recipe == "wordpiece-score":  # the HF course's WordPiece loop: recount and rescore every pair per merge
        from hf_bpe.training.classic.wordpiece_score import bert_pretokenized_counts

        counted = bert_pretokenized_counts(text.split("\n"))
        words = [tuple(c if i == 0 else "##" + c for i, c in enumerate(w)) for w in counted]
        counts = list(counted.values())
        options = {"objective": "score", "strip_prefix": b"##"}
    elif recipe == "sennrich-paper":
        words, counts = classic.words_paper([text])
    elif recipe == "hf-course":
        raw, counts = classic.words_regex(text.splitlines(keepends=True), "gpt2")
        words = [tuple(token_to_str(bytes([b])) for b in w) for w in raw]
    elif recipe == "minbpe-regex":
        raw, counts = classic.words_regex([text], "gpt4")
        words = [tuple(bytes([b]) for b in w) for w in raw]
    elif recipe == "minbpe-basic":
        words, counts = [tuple(bytes([b]) for b in text.encode("utf-8"))], [1]
    elif recipe == "rasbt":
        counted: dict[str, int] = {}
        for token in rasbt_pretokenize(text):
            counted[token] = counted.get(token, 0) + 1
        words, counts = list(counted), list(counted.values())
    else:  # rasbt-simple
        words, counts = ["".join("Ġ" if c == " " and i else c for i, c in enumerate(text) if c != " " or i)], [1]
    alphabet: dict[Any, int] = {}
    for word in words:
        for symbol in word:
            alphabet.setdefault(symbol, len(alphabet))
    symbols = [alphabet[s] for w in words for s in w]
    starts = np.cumsum([0] + [len(w) for w in words]).tolist()
    vocab = [s if isinstance(s, bytes) else s.encode("utf-8") for s in alphabet]
    reuse = not recipe.startswith(("minbpe", "rasbt"))
    learn_merges(symbols, starts, counts, vocab, num_merges=merges, reuse_equal=reuse, **options)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    from hf_bpe.training.classic.recipes import RECIPES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="UTF-8 text (default english_combined)")
    parser.add_argument("--recipes", default="all", help=f"comma-separated, from {', '.join(RECIPES)}")
    parser.add_argument("--merges", type=int, default=2000, help="merges on the whole corpus (default 2000)")
    parser.add_argument("--reference-mb", type=float, default=1.0,
                        help="MB of the corpus for the slow references (default 1; 0: whole corpus)")
    parser.add_argument("--reference-merges", type=int, default=200, help="merges for the slow references")
    parser.add_argument("--markdown", action="store_true", help="Markdown tables")
    args = parser.parse_args(argv)
    recipes = list(RECIPES) if args.recipes == "all" else args.recipes.split(",")
    unknown = [r for r in recipes if r not in RECIPES]
    if unknown:
        parser.error(f"unknown recipes {unknown!r}; choose from {', '.join(RECIPES)}")
    size_mb = args.corpus.stat().st_size / 1e6
    with tempfile.TemporaryDirectory() as work:
        small = args.corpus
        if args.reference_mb:
            data = args.corpus.read_bytes()[: int(args.reference_mb * 1e6)]
            small = Path(work) / "prefix.txt"
            small.write_bytes(data[: data.rindex(b"\n") + 1])
        small_mb = small.stat().st_size / 1e6
        rows = []
        for recipe in recipes:
            full, _ = _hf_bpe(recipe, args.corpus, args.merges)
            fast_reference = recipe == "wordpiece"
            full_ref = _reference(recipe, args.corpus, args.merges)[0] if fast_reference else None
            ours, model = _hf_bpe(recipe, small, args.reference_merges)
            # The vocab_size recipes learn as many merges as their alphabet leaves room for: give the reference
            # the same number (wordpiece's tokenizers run gets the same vocab_size instead).
            learned = args.reference_merges if recipe in COUNTS_MERGES + ("wordpiece",) else len(model.merges)
            theirs, what = _reference(recipe, small, learned)
            rows.append([recipe, what, fmt(full), fmt(full_ref), fmt(ours, 3), fmt(theirs), fmt(theirs / ours, 1)])
            print(f"done {recipe}", file=sys.stderr)
    header = ["recipe", "reference", f"hf_bpe s ({size_mb:.1f} MB, {args.merges} merges)", "reference s (same)",
              f"hf_bpe s ({small_mb:.2f} MB, {args.reference_merges} merges)", "reference s (same)", "speed-up"]
    print("\n".join(machine_lines(["hf_bpe", "tokenizers", "subword-nmt"])))
    print(f"load average: {load_average()}")
    print(format_table(header, rows, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
