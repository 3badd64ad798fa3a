"""Time extending GPT-2 by N tokens against training N merges from scratch, on the same corpus; tokens per byte.

Usage::

    python scripts/bench_extend.py --base ../shared/data/vocabs/gpt2 --corpus FILE ... [--new-tokens 10000]
                                   [--heldout FILE] [--heldout-lines 2000]

Both runs count the corpus with GPT-2's pre-tokenizer (the same compiled counting) and then run the merge loop:
training from bytes (256 + N ids), or the seeded loop from the base's segmentation of each distinct pre-token
(``hf_bpe.extend``). The two phases are timed apart: counting, and what follows it (for extending: encoding each
distinct pre-token with the base, then the loop). With ``--heldout``, tokens per byte of the base and of the
extended tokenizer on the last ``--heldout-lines`` lines of that file (lines the corpus should not hold).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hf_bpe.tools.extend import load_base
from hf_bpe.training.bpe.trainer import train_from_counts
from hf_bpe.training.counts import WordCounts
from hf_bpe.training.bpe.extend import extend_from_counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True)
    parser.add_argument("--corpus", nargs="+", required=True)
    parser.add_argument("--new-tokens", type=int, default=10000)
    parser.add_argument("--heldout", default=None)
    parser.add_argument("--heldout-lines", type=int, default=2000)
    args = parser.parse_args()
    files = [Path(f) for f in args.corpus]
    size = sum(f.stat().st_size for f in files)
    base, _ = load_base(args.base)

    started = time.perf_counter()
    counts = WordCounts.from_corpus(files, pattern=base.pattern, add_prefix_space=base.add_prefix_space,
                                    show_progress=False)
    counted = time.perf_counter() - started
    started = time.perf_counter()
    scratch = train_from_counts(counts, vocab_size=256 + args.new_tokens, show_progress=False)
    trained = time.perf_counter() - started
    started = time.perf_counter()
    extended = extend_from_counts(base, counts, new_tokens=args.new_tokens, show_progress=False)
    extending = time.perf_counter() - started
    print(f"corpus: {size / 1e6:.1f} MB, {len(counts)} distinct pre-tokens; counting {counted:.1f} s")
    print(f"train from scratch, {len(scratch.merges)} merges: {trained:.1f} s after counting "
          f"({counted + trained:.1f} s in all)")
    print(f"extend {base.vocab_size} ids by {extended.vocab_size - base.vocab_size}: {extending:.1f} s after "
          f"counting ({counted + extending:.1f} s in all)")
    if args.heldout:
        lines = [line for line in Path(args.heldout).read_text(encoding="utf-8").splitlines() if line.strip()]
        held = lines[-args.heldout_lines:]
        total = sum(len(line.encode("utf-8")) for line in held)
        for name, model in (("base", base), ("extended", extended)):
            tokens = sum(map(len, model.encode_ordinary_batch(held)))
            print(f"{name}: {tokens / total:.4f} tokens per byte on {len(held)} held-out lines ({total} bytes)")


if __name__ == "__main__":
    main()
