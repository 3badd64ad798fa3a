"""Benchmark encoding: hf_bpe against tiktoken, `tokenizers` and transformers on the same vocabulary and lines.

Usage::

    python scripts/bench_encode.py [--corpus PATH] [--vocab DIR] [--lines 150000] [--mb 5] [--repeat 3]
                                   [--slow-lines 2000] [--threads N] [--markdown]

Vocabulary: ``--vocab DIR`` (``vocab.json`` + ``merges.txt``, GPT-2 format), by default GPT-2's files in
``../shared/data/vocabs/gpt2`` when present, else a 32,000 vocabulary trained with hf_bpe on the embedded default
corpus. Text: the first ``--mb`` MB of ``--corpus`` (default ``../shared/data/corpora/en/english_combined.txt``,
else the embedded default corpus), split on ``"\\n"``, at most ``--lines`` lines; every peer gets the same list.

Each peer runs once untimed (warm-up: imports, lazy global tables), then ``--repeat`` timed runs, each with a
freshly built encoder (built outside the timing) so that no word cache is primed with the very same lines;
``--warm-cache`` reuses one encoder instead (steady state of a long-running encoder). hf_bpe's N-thread and 1-thread
runs alternate, so that load from elsewhere on the machine falls on both sides of their ratio. The table shows the median. Timings cover turning the list of lines into lists of ids (for `tokenizers`, reading ``.ids`` off
each ``Encoding`` is included). transformers' slow ``GPT2Tokenizer`` only encodes the first ``--slow-lines``
lines; its time is scaled to the full text by bytes. ``ids identical`` compares each peer with hf_bpe's output.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, os.fspath(Path(__file__).resolve().parent))
sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))

from _bench_common import (  # noqa: E402
    GPT2_PATTERN,
    SHARED_DATA,
    fmt,
    format_table,
    load_average,
    machine_lines,
    median,
    missing_reason,
)

DEFAULT_TEXT = SHARED_DATA / "corpora" / "en" / "english_combined.txt"
DEFAULT_VOCAB = SHARED_DATA / "vocabs" / "gpt2"
GPT2_TIKTOKEN = SHARED_DATA / "tiktoken" / "gpt2.tiktoken"


class Row:
    """One peer's timings on the benchmark lines (or the reason it was skipped)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seconds: list[float] = []
        self.scale = 1.0  # > 1 when the peer encoded a subset: its time is multiplied by this
        self.text_bytes = 0
        self.identical: str = "n/a"
        self.skipped: str | None = None

    @property
    def full_seconds(self) -> float | None:
        return median(self.seconds) * self.scale if self.seconds else None


# ------------------------------------------------------------------------------------------------- inputs


def _read_lines(path: Path | None, megabytes: float, max_lines: int) -> tuple[list[str], str]:
    limit = int(megabytes * 1e6)
    if path is not None:
        with open(path, "rb") as handle:
            data = handle.read(limit)
        # Cut at the last newline so no line (and no UTF-8 sequence) is split.
        if len(data) == limit and b"\n" in data:
            data = data[: data.rindex(b"\n") + 1]
        lines = data.decode("utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        source = os.fspath(path)
    else:
        from hf_bpe.training.corpus import default_corpus_files, describe_default_corpus

        lines, size = [], 0
        for file in default_corpus_files():
            for line in file.read_bytes().split(b"\n"):
                if size >= limit:
                    break
                lines.append(line.decode("utf-8"))
                size += len(line) + 1
        source = "embedded default: " + describe_default_corpus()
    return lines[:max_lines], source


def _vocabulary(path: Path | None, work: Path) -> tuple[Path, str]:
    if path is not None:
        if not (path / "vocab.json").is_file() or not (path / "merges.txt").is_file():
            raise SystemExit(f"--vocab {os.fspath(path)!r} must be a folder holding vocab.json and merges.txt")
        return path, os.fspath(path)
    if (DEFAULT_VOCAB / "vocab.json").is_file():
        return DEFAULT_VOCAB, f"GPT-2 ({DEFAULT_VOCAB})"
    import hf_bpe
    from hf_bpe.training.corpus import default_corpus_files, describe_default_corpus

    print("no GPT-2 files found: training a 32,000 vocabulary on the embedded default corpus", file=sys.stderr)
    model = hf_bpe.train(default_corpus_files(), vocab_size=32000, show_progress=False)
    out = model.save(work / "trained")
    return out, f"hf_bpe, 32,000 tokens trained on {describe_default_corpus()}"


def _tiktoken_encoding(vocab_dir: Path) -> Any:
    import tiktoken

    from hf_bpe.core.bytelevel import str_to_token

    if vocab_dir.resolve() == DEFAULT_VOCAB.resolve() and GPT2_TIKTOKEN.is_file():
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(os.fspath(GPT2_TIKTOKEN))
        specials = {"<|endoftext|>": 50256}
    else:
        # Ranks are the vocabulary ids; entries outside the byte-level alphabet are special tokens.
        ranks, specials = {}, {}
        for text, idx in json.loads((vocab_dir / "vocab.json").read_text(encoding="utf-8")).items():
            try:
                ranks[str_to_token(text)] = idx
            except ValueError:
                specials[text] = idx
    return tiktoken.Encoding(name="bench", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def _tokenizers_tokenizer(vocab_dir: Path) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    if (vocab_dir / "tokenizer.json").is_file():
        return Tokenizer.from_file(os.fspath(vocab_dir / "tokenizer.json"))
    tokenizer = Tokenizer(models.BPE.from_file(os.fspath(vocab_dir / "vocab.json"),
                                               os.fspath(vocab_dir / "merges.txt")))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


# ----------------------------------------------------------------------------------------------- timing


def _measure(row: Row, make: Callable[[], Callable[[list[str]], Any]], lines: list[str], repeat: int,
             reference: list[list[int]] | None, *, warm_cache: bool) -> list[list[int]]:
    """Warm up once, time ``repeat`` runs, compare the last output with ``reference``; return the output.

    Unless ``warm_cache``, every timed run gets a freshly built encoder (built outside the timing), so no run
    profits from a word cache filled by encoding the very same lines before: the warm-up only pays imports and
    lazily built global tables.
    """
    row.text_bytes = sum(len(line.encode("utf-8")) for line in lines)
    encode = make()
    ids = encode(lines)
    for index in range(repeat):
        del ids
        if not warm_cache:
            del encode
            encode = make()
        gc.collect()
        start = time.perf_counter()
        ids = encode(lines)
        row.seconds.append(time.perf_counter() - start)
        print(f"  {row.name} run {index + 1}/{repeat}: {row.seconds[-1]:.3f} s", file=sys.stderr, flush=True)
    if reference is not None:
        ids = [list(x) for x in ids]
        if ids == reference:
            row.identical = "yes"
        elif len(ids) != len(reference):
            row.identical = f"no ({len(ids)} outputs for {len(reference)} lines)"
        else:
            bad = next(i for i, (a, b) in enumerate(zip(ids, reference)) if a != b)
            row.identical = f"no (first differing line {bad})"
    return ids


def _measure_alternating(rows: Sequence[Row], makes: Sequence[Callable[[], Callable[[list[str]], Any]]],
                         lines: list[str], repeat: int, *, warm_cache: bool) -> list[list[int]]:
    """Time ``rows`` as :func:`_measure` does, their runs alternating; check they agree; return the first's output."""
    outputs = []
    encoders = []
    for row, make in zip(rows, makes):
        row.text_bytes = sum(len(line.encode("utf-8")) for line in lines)
        encoders.append(make())
        outputs.append(encoders[-1](lines))  # warm-up
    for index in range(repeat):
        for k, (row, make) in enumerate(zip(rows, makes)):
            outputs[k] = None
            if not warm_cache:
                encoders[k] = make()
            gc.collect()
            start = time.perf_counter()
            outputs[k] = encoders[k](lines)
            row.seconds.append(time.perf_counter() - start)
            print(f"  {row.name} run {index + 1}/{repeat}: {row.seconds[-1]:.3f} s", file=sys.stderr, flush=True)
    first = [list(x) for x in outputs[0]]
    for row, output in zip(rows[1:], outputs[1:]):
        row.identical = "yes" if [list(x) for x in output] == first else "no"
    return outputs[0]


def _run(row: Row, make: Callable[[], Callable[[list[str]], Any]], lines: list[str], repeat: int,
         reference: list[list[int]] | None, *, warm_cache: bool) -> list[list[int]] | None:
    try:
        return _measure(row, make, lines, repeat, reference, warm_cache=warm_cache)
    except Exception as exc:  # a peer that breaks must not stop the benchmark; report why
        row.skipped = f"failed: {type(exc).__name__}: {exc}"[:300]
        row.seconds = []
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the encoding benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help=f"UTF-8 text file (default: {DEFAULT_TEXT} when present)")
    parser.add_argument("--vocab", type=Path, help=f"GPT-2 format folder (default: {DEFAULT_VOCAB} when present)")
    parser.add_argument("--lines", type=int, default=150000, help="at most this many lines")
    parser.add_argument("--mb", type=float, default=5.0, help="read the first MB of the text file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slow-lines", type=int, default=2000, help="lines for transformers' slow GPT2Tokenizer")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="num_threads of hf_bpe's and tiktoken's encode_ordinary_batch (default: the CPU count)")
    parser.add_argument("--warm-cache", action="store_true",
                        help="reuse one encoder for the warm-up and all timed runs (word caches primed with the "
                             "same lines); default: a fresh encoder per run")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.lines < 1 or args.mb <= 0 or args.slow_lines < 1 or args.threads < 1:
        parser.error("--repeat, --lines, --slow-lines, --threads must be >= 1 and --mb > 0")
    if args.corpus is not None and not args.corpus.is_file():
        parser.error(f"--corpus {os.fspath(args.corpus)!r} is not a file")
    warnings.filterwarnings("ignore", module="transformers")

    distributions = ["hf_bpe", "tiktoken", "tokenizers", "transformers", "datasets", "rustbpe", "bpeasy"]
    cache = "one encoder reused, caches warm" if args.warm_cache else "fresh encoder per run, cold caches"
    out = [f"# BPE encoding benchmark (repeat={args.repeat}, median of runs, one untimed warm-up each, {cache})", ""]
    bullet = "- " if args.markdown else ""
    out += [bullet + line for line in machine_lines(distributions)]

    with tempfile.TemporaryDirectory(prefix="bench_encode_") as tmp:
        vocab_dir, vocab_description = _vocabulary(args.vocab, Path(tmp))
        text_path = args.corpus if args.corpus is not None else DEFAULT_TEXT if DEFAULT_TEXT.is_file() else None
        lines, source = _read_lines(text_path, args.mb, args.lines)
        total_bytes = sum(len(line.encode("utf-8")) for line in lines)
        out.append(f"{bullet}vocabulary: {vocab_description}")
        out.append(f"{bullet}text: {source}: {len(lines)} lines, {total_bytes / 1e6:.2f} MB (UTF-8)")
        out.append("")
        rows = _bench(lines, vocab_dir, args)

    base = rows[0].full_seconds
    header = ["peer", "median s", "MB/s", "ratio to hf_bpe", "ids identical"]
    table = []
    for row in rows:
        if row.skipped:
            continue
        s = row.full_seconds
        table.append([row.name, fmt(s, 3), fmt(row.text_bytes / 1e6 / median(row.seconds)),
                      fmt(s / base if s and base else None), row.identical])
    out.append(format_table(header, table, markdown=args.markdown))
    out.append("")
    for row in rows:
        if row.skipped:
            out.append(f"{bullet}{row.name}: skipped, {row.skipped}")
    out.append(f"{bullet}ratio = peer time / hf_bpe raw batch time (> 1: hf_bpe is faster); MB/s on the text "
               "actually encoded; the slow GPT2Tokenizer's time is scaled to the full text by bytes")
    by_name = {row.name: row for row in rows if not row.skipped}
    tiktoken_rows = sorted((n for n in by_name if n.startswith("tiktoken")), key=lambda n: by_name[n].full_seconds)
    single = "hf_bpe encode_ordinary_batch (1 thread)"
    targets = [("hf_bpe raw batch vs the faster tiktoken row", rows[0].name, tiktoken_rows[0] if tiktoken_rows
                else None),
               ("hf_bpe 1 thread vs tiktoken's single-thread loop (target >= 2x)", single,
                "tiktoken encode_ordinary loop (1 thread)"),
               (f"hf_bpe {args.threads} threads vs 1 thread (target >= 1.7x on 2 cores)", rows[0].name, single),
               ("HFBPETokenizer vs GPT2TokenizerFast", "HFBPETokenizer(lines)", "GPT2TokenizerFast(lines)"),
               ("tokenize_dataset vs GPT2TokenizerFast in datasets.map (target >= 3x)",
                "hf_bpe tokenize_dataset (datasets.map)", "GPT2TokenizerFast in datasets.map"),
               ("hf-bpe tokenize vs GPT2TokenizerFast in datasets.map (target >= 3x)",
                "hf-bpe tokenize --format bin (file to tokens.bin)", "GPT2TokenizerFast in datasets.map")]
    for label, ours, theirs in targets:
        if ours in by_name and theirs in by_name:
            speedup = by_name[theirs].full_seconds / by_name[ours].full_seconds
            target = "" if "target" in label else " (target >= 1.5x)"
            out.append(f"{bullet}{label} ({theirs}): {speedup:.2f}x{target}")
    out.append(f"{bullet}load average (1/5/15 min) at end: {load_average()}")
    print("\n".join(out))
    return 0


def _bench(lines: list[str], vocab_dir: Path, args: argparse.Namespace) -> list[Row]:
    repeat = args.repeat
    rows: list[Row] = []

    # 1. hf_bpe's raw batch encoder: the reference for the ratio and for the ids.
    from hf_bpe import BPEModel

    def make_batch(threads: int) -> Callable[[], Callable[[list[str]], Any]]:
        def make() -> Callable[[list[str]], Any]:
            encode = BPEModel.load(vocab_dir).encode_ordinary_batch
            return lambda batch: encode(batch, num_threads=threads)

        return make

    # The N-thread and 1-thread runs alternate (their ratio is a target): a burst of load from elsewhere on the
    # machine then slows both rows instead of one.
    row = Row(f"hf_bpe encode_ordinary_batch ({args.threads} threads)")
    rows.append(row)
    print(row.name, file=sys.stderr, flush=True)
    if args.threads == 1:
        reference = _run(row, make_batch(1), lines, repeat, None, warm_cache=args.warm_cache)
    else:
        single = Row("hf_bpe encode_ordinary_batch (1 thread)")
        rows.append(single)
        reference = _measure_alternating((row, single), (make_batch(args.threads), make_batch(1)), lines, repeat,
                                         warm_cache=args.warm_cache)
    if reference is None:
        raise SystemExit(f"hf_bpe failed, nothing to compare with: {row.skipped}")
    reference = [list(x) for x in reference]
    row.identical = "(reference)"

    def add(name: str, module: str | None, make: Callable[[], Callable[[list[str]], Any]], *,
            subset: int | None = None, skip: str | None = None) -> None:
        row = Row(name)
        rows.append(row)
        reason = skip or (missing_reason(module) if module else None)
        if reason:
            row.skipped = reason
            return
        print(name, file=sys.stderr, flush=True)
        part, expected = lines, reference
        if subset is not None and subset < len(lines):
            part, expected = lines[:subset], reference[:subset]
        _run(row, make, part, repeat, expected, warm_cache=args.warm_cache)
        if part is not lines and row.seconds:
            row.scale = sum(len(x.encode("utf-8")) for x in lines) / max(1, row.text_bytes)
            row.name += f" [{len(part)} lines, scaled]"

    # 2. hf_bpe through transformers' API.
    def make_hf_tokenizer() -> Callable[[list[str]], Any]:
        from hf_bpe import HFBPETokenizer

        tokenizer = HFBPETokenizer.from_pretrained(os.fspath(vocab_dir))
        return lambda batch: tokenizer(batch)["input_ids"]

    add("HFBPETokenizer(lines)", "transformers", make_hf_tokenizer)

    # 3. tiktoken, threaded batch and single-threaded loop, on the same ranks.
    def make_tiktoken_batch() -> Callable[[list[str]], Any]:
        encoding = _tiktoken_encoding(vocab_dir)
        return lambda batch: encoding.encode_ordinary_batch(batch, num_threads=args.threads)

    def make_tiktoken_loop() -> Callable[[list[str]], Any]:
        encode = _tiktoken_encoding(vocab_dir).encode_ordinary
        return lambda batch: [encode(line) for line in batch]

    add(f"tiktoken encode_ordinary_batch ({args.threads} threads)", "tiktoken", make_tiktoken_batch)
    add("tiktoken encode_ordinary loop (1 thread)", "tiktoken", make_tiktoken_loop)

    # 4. tokenizers (Rust, rayon over all cores).
    def make_tokenizers(method: str) -> Callable[[], Callable[[list[str]], Any]]:
        def make() -> Callable[[list[str]], Any]:
            encode = getattr(_tokenizers_tokenizer(vocab_dir), method)
            return lambda batch: [e.ids for e in encode(batch, add_special_tokens=False)]

        return make

    add("tokenizers encode_batch", "tokenizers", make_tokenizers("encode_batch"))
    fast_missing = None
    if missing_reason("tokenizers") is None:
        import tokenizers

        if not hasattr(tokenizers.Tokenizer, "encode_batch_fast"):
            fast_missing = f"tokenizers {tokenizers.__version__} has no encode_batch_fast"
    add("tokenizers encode_batch_fast", "tokenizers", make_tokenizers("encode_batch_fast"), skip=fast_missing)

    # 5. transformers' fast and slow GPT-2 tokenizers.
    def make_transformers(class_name: str) -> Callable[[], Callable[[list[str]], Any]]:
        def make() -> Callable[[list[str]], Any]:
            import transformers

            tokenizer = getattr(transformers, class_name).from_pretrained(os.fspath(vocab_dir))
            return lambda batch: tokenizer(batch)["input_ids"]

        return make

    add("GPT2TokenizerFast(lines)", "transformers", make_transformers("GPT2TokenizerFast"))
    add("GPT2Tokenizer(lines) (slow)", "transformers", make_transformers("GPT2Tokenizer"), subset=args.slow_lines)

    # 6. Dataset preprocessing: the lines as an in-memory datasets.Dataset, tokenized by one batched Dataset.map
    #    (hf_bpe.tokenize_dataset, and GPT2TokenizerFast in the same map); `hf-bpe tokenize` on a fresh text file
    #    (a new file each run, so that neither the text loading nor the map comes from the datasets cache).
    def make_map(which: str) -> Callable[[], Callable[[list[str]], Any]]:
        def make() -> Callable[[list[str]], Any]:
            import datasets

            datasets.disable_progress_bars()
            if which == "hf_bpe":
                from hf_bpe import BPEModel, tokenize_dataset

                model = BPEModel.load(vocab_dir)
                return lambda batch: tokenize_dataset(datasets.Dataset.from_dict({"text": batch}), model,
                                                      add_eos=False)["input_ids"][:]
            import transformers

            tokenizer = transformers.GPT2TokenizerFast.from_pretrained(os.fspath(vocab_dir))
            return lambda batch: datasets.Dataset.from_dict({"text": batch}).map(
                lambda rows: tokenizer(rows["text"]), batched=True, remove_columns=["text"])["input_ids"][:]

        return make

    add("hf_bpe tokenize_dataset (datasets.map)", "datasets", make_map("hf_bpe"))
    add("GPT2TokenizerFast in datasets.map", "transformers", make_map("fast"))
    runs = iter(range(1_000_000))

    def make_cli() -> Callable[[list[str]], Any]:
        from hf_bpe.cli import main as cli_main
        from hf_bpe.formats.token_file import read_token_file

        work = Path(tempfile.mkdtemp(prefix="bench_tokenize_"))

        def run(batch: list[str]) -> list[list[int]]:
            text = work / f"lines{next(runs)}.txt"
            text.write_text("\n".join(batch) + "\n", encoding="utf-8")
            status = cli_main(["tokenize", "--model", os.fspath(vocab_dir), os.fspath(text), "--out",
                               os.fspath(work / "out"), "--format", "bin", "--no-eos", "--force", "--quiet"])
            if status != 0:
                raise RuntimeError(f"hf-bpe tokenize exited {status}")
            ids, index = read_token_file(work / "out")
            offsets = index["document_offsets"]
            return [ids[a:b].tolist() for a, b in zip(offsets, offsets[1:])]

        return run

    add("hf-bpe tokenize --format bin (file to tokens.bin)", "datasets", make_cli)

    # 7. Trainers whose encoders cannot take this vocabulary, said so rather than silently left out.
    add("rustbpe", "rustbpe", lambda: None, skip=missing_reason("rustbpe") or (
        "its Tokenizer encodes only with a vocabulary it trained itself (no API to load vocab/merges or ranks), "
        "so it cannot encode with this vocabulary"))
    add("bpeasy", "bpeasy", lambda: None, skip=missing_reason("bpeasy") or (
        "it encodes through tiktoken (bpeasy.tokenizer.BPEasyTokenizer wraps tiktoken.Encoding): see the "
        "tiktoken rows"))
    return rows


if __name__ == "__main__":
    sys.exit(main())
