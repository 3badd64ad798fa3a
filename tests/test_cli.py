"""The hf-bpe command, driven through main(argv): data on stdout, errors as one line with exit status 2."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from hf_bpe.cli import main


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    lines = [f"hello world {i} times, said {name}!\n" for i in range(200) for name in ("Ann", "Bob", "Zoë")]
    path.write_text("".join(lines) + "中文 😀 don't stop\n", encoding="utf-8")
    return path


@pytest.fixture
def trained(tmp_path, corpus):
    out = tmp_path / "tok"
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(out), "--special-token", "<|endoftext|>",
                 "--quiet"]) == 0
    return out


def test_cli_train_writes_all_files(trained, capsys):
    names = sorted(p.name for p in trained.iterdir())
    assert {"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json"} <= set(names)
    vocab = json.loads((trained / "vocab.json").read_text(encoding="utf-8"))
    assert len(vocab) == 300 and vocab["<|endoftext|>"] == 0 and vocab["!"] == 1


def test_cli_encode_decode_round_trip(trained, capsys):
    assert main(["encode", "--model", str(trained), "hello world<|endoftext|>"]) == 0
    ids = capsys.readouterr().out.split()
    assert ids[-1] == "0"
    assert main(["decode", "--model", str(trained), *ids]) == 0
    assert capsys.readouterr().out == "hello world<|endoftext|>\n"


def test_cli_encode_reads_stdin_one_line_per_line(trained, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n\nworld 中文\n"))
    assert main(["encode", "--model", str(trained)]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines[:3]) + "\n"))
    assert main(["decode", "--model", str(trained)]) == 0
    assert capsys.readouterr().out == "hello\n\nworld 中文\n"


def test_cli_refuses_existing_output_without_force(trained, corpus, capsys):
    before = (trained / "merges.txt").read_bytes()
    assert main(["train", str(corpus), "--vocab-size", "280", "--out", str(trained), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and "--force" in err and "Traceback" not in err
    assert (trained / "merges.txt").read_bytes() == before
    assert main(["train", str(corpus), "--vocab-size", "280", "--out", str(trained), "--quiet", "--force"]) == 0
    assert (trained / "merges.txt").read_bytes() != before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "{missing}", "--out", "{out}"], "does not exist"),
        (["train", "{corpus}", "--out", "{out}", "--vocab-size", "10"], "at least 256"),
        (["train", "{corpus}", "--out", "{out}", "--pattern", "nope"], "nope"),
        (["train", "{latin1}", "--out", "{out}"], "is not UTF-8"),
        (["train", "{empty}", "--out", "{out}"], "corpus is empty"),
        (["decode", "--model", "{out}", "12", "x"], "is not a token id"),
        (["encode", "--model", "{missing}", "hi"], "missing' does not exist; expected a tokenizer folder"),
    ],
)
def test_cli_user_errors_exit_2_without_traceback(tmp_path, corpus, trained, capsys, argv, message):
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"caf\xe9\n")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    names = {"missing": tmp_path / "missing", "out": trained if argv[0] == "decode" else tmp_path / "new",
             "corpus": corpus, "latin1": latin1, "empty": empty}
    argv = [a.format(**names) for a in argv]
    assert main(argv + (["--quiet"] if argv[0] == "train" else [])) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_cli_help_ends_with_examples(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].strip().startswith("hf-bpe decode")
    assert main([]) == 2
    assert "hf-bpe: error:" in capsys.readouterr().err


def test_cli_train_from_saved_dataset(tmp_path, capsys):
    import datasets

    folder = tmp_path / "ds"
    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"body": ["hello world"] * 20})}).save_to_disk(folder)
    out = tmp_path / "tok"
    assert main(["train", "--dataset", str(folder), "--text-column", "body", "--vocab-size", "270", "--out",
                 str(out), "--quiet"]) == 0
    assert main(["train", "--dataset", str(folder), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "no column 'text'" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_train_without_corpus_uses_embedded_default(tmp_path, capsys):
    out = tmp_path / "tok"
    assert main(["train", "--out", str(out), "--vocab-size", "1000", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "embedded default corpus" in err and "standard library" in err
    assert len(json.loads((out / "vocab.json").read_text(encoding="utf-8"))) == 1000


def test_cli_verify_passes_then_names_the_changed_file(trained, corpus, capsys):
    assert (trained / "hf_bpe_manifest.json").is_file()
    assert main(["verify", str(trained), "--corpus", str(corpus)]) == 0
    merges = trained / "merges.txt"
    data = bytearray(merges.read_bytes())
    data[-2] ^= 1
    merges.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["verify", str(trained)]) == 1
    assert "merges.txt" in capsys.readouterr().out + capsys.readouterr().err


def test_cli_refuses_a_folder_holding_any_saved_file_before_training(tmp_path, corpus, capsys):
    out = tmp_path / "model"
    out.mkdir()
    (out / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "tokenizer_config.json" in captured.err and "merges" not in captured.err  # refused before training
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer_config.json"]


def test_cli_refuses_impossible_out_before_training(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 3, encoding="utf-8")
    for out in ("", str(corpus / "sub")):
        assert main(["train", str(corpus), "--out", out, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error:") and "Traceback" not in err
    assert main(["count", str(corpus), "--out", str(corpus / "c.parquet"), "--quiet"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_cli_os_errors_while_writing_are_one_line(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 3, encoding="utf-8")
    from hf_bpe.formats import atomic

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "out"))

    monkeypatch.setattr(atomic, "_write_new_directory", full_disk)
    assert main(["train", str(corpus), "--out", str(tmp_path / "out"), "--vocab-size", "260", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_cli_encode_names_the_stdin_line_that_is_not_utf8(tmp_path, capsys, monkeypatch):
    import io

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 3, encoding="utf-8")
    assert main(["train", str(corpus), "--out", str(tmp_path / "m"), "--vocab-size", "260", "--quiet"]) == 0

    class Stdin(io.TextIOWrapper):
        pass

    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO(b"hello\n\xff\xfe bad\n"), encoding="utf-8"))
    assert main(["encode", "--model", str(tmp_path / "m")]) == 2
    assert "stdin line 2 is not UTF-8: byte 0xff" in capsys.readouterr().err


def test_cli_missing_dataset_path_fails_at_once(tmp_path, capsys):
    assert main(["train", "--dataset", str(tmp_path / "absent"), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_version(capsys):
    from hf_bpe import __version__

    assert main(["--version"]) == 0  # issue 22: was refused ("the following arguments are required: COMMAND")
    assert capsys.readouterr().out == f"hf-bpe {__version__}\n"


@pytest.mark.parametrize("offline", [True, False])
def test_cli_dataset_that_is_not_a_local_folder_is_refused_without_reaching_the_hub(tmp_path, corpus, capsys,
                                                                                    monkeypatch, offline):
    # Issue 22: a mistyped --dataset NAME waited ~24 s on five Hub retries. hf_bpe never downloads: anything but a
    # local folder is refused before datasets is asked for it.
    import datasets

    def no_hub(*args, **kwargs):
        raise AssertionError(f"datasets.load_dataset{args!r} reached")

    monkeypatch.setattr(datasets, "load_dataset", no_hub)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if offline:
            monkeypatch.setenv(name, "1")
        else:
            monkeypatch.delenv(name, raising=False)
    # A deep path is quoted whole (cut at 80 characters it lost its end: found by a run whose tmp paths were longer).
    deep = tmp_path / ("d" * 120) / "corpus.txt"
    deep.parent.mkdir()
    deep.write_text("a b\n")
    for dataset, found in (("wikitext", "does not exist (hf_bpe reads local folders only, never downloads)"),
                           (str(corpus), "is a file"), (str(deep), "is a file")):
        assert main(["train", "--dataset", dataset, "--out", str(tmp_path / "o"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"hf-bpe: error: dataset {dataset!r} {found}; pass a folder saved with "
                              "Dataset.save_to_disk, or a folder of data files") and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_cli_dataset_folder_of_data_files_trains(tmp_path, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "part.csv").write_text("text\n" + "hello world, said Ann\n" * 20, encoding="utf-8")
    assert main(["train", "--dataset", str(folder), "--out", str(tmp_path / "tok"), "--vocab-size", "262",
                 "--quiet"]) == 0
    assert len(json.loads((tmp_path / "tok" / "vocab.json").read_text(encoding="utf-8"))) == 262


def test_cli_out_symlink_to_a_folder_is_written_through(tmp_path, corpus, trained, capsys):
    # Issue 22: the link was replaced by a real folder, the target kept the old model, and a hidden
    # `.NAME.hf_bpe-XXXX -> target` link was left forever.
    link = tmp_path / "link"
    link.symlink_to(trained)
    before = (trained / "vocab.json").read_bytes()
    assert main(["train", str(corpus), "--vocab-size", "280", "--out", str(link), "--force", "--quiet"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(trained)
    assert (trained / "vocab.json").read_bytes() != before
    assert len(json.loads((trained / "vocab.json").read_text(encoding="utf-8"))) == 280
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "link", "tok"]


def test_cli_out_dangling_symlink_is_refused_before_training(tmp_path, corpus, capsys):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    for command in (["train", str(corpus), "--vocab-size", "280"], ["count", str(corpus)]):
        assert main([*command, "--out", str(link), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err == (f"hf-bpe: error: --out {str(link)!r} is a symbolic link to {str(tmp_path / 'gone')!r}, which "
                       "does not exist (or loops); create the folder it names, or remove the link\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "link"]


def test_cli_full_disk_names_the_folder_being_written(tmp_path, corpus, capsys, monkeypatch):
    # Issue 22: os.write's ENOSPC names no file, and the message read "cannot read or write None".
    import errno

    real_write = os.write

    def full_disk(fd, data):
        if fd > 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    out = tmp_path / "out"
    assert main(["train", str(corpus), "--out", str(out), "--vocab-size", "260", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (f"hf-bpe: error: cannot read or write {str(out)!r}: No space left on device; nothing was written "
                   "(free space or choose another place)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


def test_cli_split_of_a_single_saved_dataset_is_refused(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict({"text": ["hello world"] * 4}).save_to_disk(str(tmp_path / "ds"))
    assert main(["train", "--dataset", str(tmp_path / "ds"), "--split", "validation", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert "single saved Dataset" in capsys.readouterr().err and not (tmp_path / "o").exists()


# A child that stops at a known point of the hf-bpe command and says so on stderr ("gate: ..."), then waits on a
# pipe the test holds (EOF once the test closes it). The test sends Ctrl-C to the process group only after reading
# that line, so the interrupt lands exactly there, whatever the machine's load: nothing depends on timing.
_GATED_CHILD = r"""
import os, signal, sys
# As in a terminal: Ctrl-C interrupts. (A shell starts background jobs with SIGINT ignored, and Python keeps it
# ignored: the suite run as `pytest &` must not turn that into a failure.)
signal.signal(signal.SIGINT, signal.default_int_handler)
_gate_fd = int(os.environ["HF_BPE_TEST_GATE"])
kind, _, name = os.environ["HF_BPE_TEST_STAGE"].partition(":")


def _gate(where):
    os.write(2, ("gate: " + where + "\n").encode())
    os.read(_gate_fd, 1)  # b"" when the test closes its end, after its SIGINT


if kind == "import":  # inside `import name`, wherever the command first imports it
    class _ImportGate:
        def find_spec(self, fullname, path=None, target=None):
            if fullname == name:
                _gate("import " + fullname)
            return None

    sys.meta_path.insert(0, _ImportGate())
elif kind == "argparse":  # inside parse_intermixed_args, where it has begun to change the parser's state
    import argparse

    _usage = argparse.ArgumentParser.format_usage

    def _gated_usage(self, *args, **kwargs):
        _gate("argparse")
        return _usage(self, *args, **kwargs)

    argparse.ArgumentParser.format_usage = _gated_usage
else:  # in the counting workers (forked: they run these functions of __main__)
    from hf_bpe.training import counts

    if kind == "pool":  # a worker started, before its initializer has ignored SIGINT
        _initializer = counts._ignore_interrupts

        def _gated_initializer():
            _gate("worker start")
            _initializer()

        counts._ignore_interrupts = _gated_initializer
    else:  # a worker counting its first batch
        _count = counts._count_batch

        def _gated_count(args):
            _gate("worker counting")
            return _count(args)

        counts._count_batch = _gated_count
"""


def _console_script() -> str:
    """The ``hf-bpe`` script as pip writes it, for the entry point pyproject.toml declares."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    entry = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["scripts"]["hf-bpe"]
    module, _, func = entry.partition(":")
    try:
        from pip._internal.operations.install.wheel import PipScriptMaker

        template = PipScriptMaker.script_template
    except ImportError:  # pragma: no cover - pip 25's template, kept for environments without pip
        template = ("import sys\nfrom %(module)s import %(import_name)s\nif __name__ == '__main__':\n"
                    "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit(%(func)s())\n")
    return template % {"module": module, "import_name": func, "func": func}


@pytest.mark.parametrize("stage", [
    "import:hf_bpe",  # the package's __init__ not started: before issue 22, a KeyboardInterrupt traceback
    "import:hf_bpe.integrations.auto_register",  # in the middle of hf_bpe/__init__.py (issue 22)
    "import:hf_bpe.cli",  # loading the command's modules
    "import:hf_bpe.training.bpe.trainer",  # building the parser
    "argparse",  # issue 13: argparse's own clean-up failed with an AttributeError traceback
    "pool",  # issue 13: a worker killed before ignoring SIGINT left Pool.terminate blocked forever
    "count",  # workers counting
])
def test_cli_interrupt_exits_130_without_traceback_workers_included(tmp_path, stage):
    # Ctrl-C reaches the whole process group, workers included: one line, status 130, nothing left behind.
    import signal
    import subprocess

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox, jumps over 12 lazy dogs; l'été\n" * 2_000, encoding="utf-8")
    out = tmp_path / "tok"
    gate_read, gate_write = os.pipe()
    root = os.fspath(Path(__file__).resolve().parents[1])  # this checkout's _hf_bpe_entry and hf_bpe
    env = {**os.environ, "HF_BPE_TEST_GATE": str(gate_read), "HF_BPE_TEST_STAGE": stage,
           "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-c", _GATED_CHILD + _console_script(), "train", str(corpus), "--out", str(out),
         "--pattern", r"\w+|\W", "--workers", "2", "--vocab-size", "300", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, pass_fds=(gate_read,), env=env)
    os.close(gate_read)
    try:
        seen = []
        while not (seen and seen[-1].startswith(b"gate: ")):
            line = process.stderr.readline()
            assert line, f"the child ended before reaching {stage!r}: {b''.join(seen).decode()}"
            seen.append(line)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    finally:
        os.close(gate_write)  # the gate opens; the interrupt is already pending in every process of the group
    # communicate() returns at EOF on stderr: every process holding it, the workers included, has exited.
    _, rest = process.communicate(timeout=600)  # a hang guard only; the outcome never depends on it
    stderr = (b"".join(seen) + rest).decode()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.strip().endswith("hf-bpe: interrupted"), stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


def test_cli_spark_without_pyspark_or_java_says_what_to_install(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello\n", encoding="utf-8")
    argv = ["train", str(corpus), "--out", str(tmp_path / "o"), "--spark", "local[2]", "--quiet"]
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    assert main(argv) == 2
    assert "pip install 'hf_bpe[spark]'" in capsys.readouterr().err
    monkeypatch.undo()
    pytest.importorskip("pyspark")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on it
    assert main(argv) == 2
    assert "needs a Java runtime" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_readme_chain_train_with_special_token_then_tokenize_with_eos_token(tmp_path, corpus, capsys):
    # Issue 22: `train --special-token '<|endoftext|>'` then `tokenize ... --labels` exited 2 naming add_eos=False;
    # tokenize refused --eos-token.
    import datasets

    import hf_bpe

    model = tmp_path / "my-tok"
    assert main(["train", str(corpus), "--out", str(model), "--special-token", "<|endoftext|>", "--vocab-size",
                 "300", "--quiet"]) == 0
    argv = ["tokenize", "--model", str(model), str(corpus), "--out", str(tmp_path / "blocks"), "--block-size", "16",
            "--labels", "--quiet"]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--eos-token (e.g. '<|endoftext|>')" in err and "--no-eos" in err and "add_eos" not in err
    assert main([*argv, "--eos-token", "<|endoftext|>"]) == 0
    blocks = datasets.load_from_disk(str(tmp_path / "blocks"))
    trained = hf_bpe.BPEModel.load(model)
    lines = corpus.read_text(encoding="utf-8").splitlines()
    stream = [i for line in lines for i in trained.encode_ordinary(line) + [0]]
    assert [i for row in blocks["input_ids"][:] for i in row] == stream[:len(stream) // 16 * 16]  # 0: <|endoftext|>
    assert blocks["labels"][:] == blocks["input_ids"][:]


@pytest.mark.parametrize(("extra", "message"), [
    ([], "has no EOS token to end each document with; it has no special token: train it with --eos-token T"),
    (["--eos-token", "<s>"], "--eos-token '<s>' is not a special token of --model"),
    (["--eos-token", "<s>", "--no-eos"], "--eos-token names the token to append and --no-eos appends none"),
    (["--no-eos", "--block-size", "4", "--pad-last"], "--pad-last pads the last block with the pad or EOS token"),
    (["--no-eos", "--block-size", "1"], "--block-size must be at least 2, got 1"),
    (["--no-eos", "--num-proc", "0"], "--num-proc must be at least 1, got 0"),
    (["--no-eos", "--dtype", "uint16"], "--dtype uint16 applies to --format bin"),
    (["--no-eos", "--dataset", "{ds}"], "has no column 'text'; its columns are ['body']: pass --text-column"),
    (["--no-eos", "--spark", "local[1]", "--skip-empty"], "--skip-empty cannot be used with --spark"),
])
def test_cli_tokenize_errors_name_flags_not_python_keywords(tmp_path, corpus, capsys, extra, message):
    # Issue 22: messages named tokenize_dataset's keywords (add_eos=False, drop_last=False, block_size, num_proc).
    import re

    import datasets

    datasets.Dataset.from_dict({"body": ["a"]}).save_to_disk(str(tmp_path / "ds"))
    model = tmp_path / "m"
    assert main(["train", str(corpus), "--out", str(model), "--vocab-size", "260", "--quiet"]) == 0
    files = [] if "--dataset" in extra else [str(corpus)]
    argv = ["tokenize", "--model", str(model), *files, "--out", str(tmp_path / "o"), "--quiet",
            *(a.format(ds=tmp_path / "ds") for a in extra)]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and message in err, err
    assert not re.search(r"(?<!-)\b(add_eos|drop_last|block_size|num_proc|text_column|eos_token|skip_empty|dtype|format)\b"
                         r"|=(True|False|'|None)", err), err
    assert not (tmp_path / "o").exists()


def test_cli_decode_reads_the_ids_encode_printed(trained, capsys, monkeypatch):
    # Issue 22: the README decoded GPT-2's ids (15496 995) with the user's vocabulary; it now pipes encode's ids.
    assert main(["encode", "--model", str(trained), "Hello world"]) == 0
    ids = capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(ids))
    assert main(["decode", "--model", str(trained)]) == 0
    assert capsys.readouterr().out == "Hello world\n"


# --- One spelling per algorithm (issue 34.7): train takes compare's names; the older spelling keeps working. ---


@pytest.mark.parametrize(("new", "old"), [
    (["--algorithm", "unigram"], ["--algorithm", "sentencepiece", "--spm", "model_type=unigram"]),
    (["--algorithm", "sentencepiece-bpe"], ["--algorithm", "sentencepiece"]),
])
def test_cli_train_algorithm_names_equal_the_older_spelling(corpus, tmp_path, capsys, new, old):
    from hf_bpe.formats.sentencepiece_model import SentencePieceModel

    assert main(["train", str(corpus), *new, "--vocab-size", "40", "--out", str(tmp_path / "new"), "--quiet"]) == 0
    assert main(["train", str(corpus), *old, "--vocab-size", "40", "--out", str(tmp_path / "old"), "--quiet"]) == 0
    made = SentencePieceModel.load(tmp_path / "new" / "tokenizer.model")
    assert made.model_type == ("unigram" if "unigram" in new else "bpe")
    assert (tmp_path / "new" / "tokenizer.model").read_bytes() == (tmp_path / "old" / "tokenizer.model").read_bytes()


def test_cli_train_takes_every_name_compare_takes():
    from hf_bpe.cli import _build_parser

    def choices(command):
        sub = next(a for a in _build_parser()._actions if a.dest == "command").choices[command]
        return set(next(a for a in sub._actions if a.dest == "algorithm").choices)

    assert choices("compare") <= choices("train")
    assert {"bpe", "unigram", "sentencepiece-bpe", "sentencepiece"} <= choices("train")


def test_cli_train_algorithm_and_spm_model_type_disagree(corpus, tmp_path, capsys):
    assert main(["train", str(corpus), "--algorithm", "unigram", "--spm", "model_type=bpe", "--out",
                 str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--algorithm unigram trains model_type=unigram" in err
    assert "--algorithm sentencepiece-bpe" in err


# --- Issue 33.12: a bad corpus is one error line, with no progress bar drawn before it. ---


@pytest.mark.parametrize("algorithm", ["bpe", "unigram", "sentencepiece-bpe"])
@pytest.mark.parametrize("kind", ["missing", "empty", "binary", "latin1"])
def test_cli_bad_corpus_is_one_error_line_before_any_progress_bar(tmp_path, capsys, kind, algorithm):
    path = tmp_path / f"{kind}.txt"
    # (A bad byte past the first 64 KiB of a file is found by the reader, after the bar started.)
    content = {"missing": None, "empty": b"", "binary": bytes(range(256)) * 8, "latin1": b"ok\ncaf\xe9 au lait\n"}[kind]
    if content is not None:
        path.write_bytes(content)
    argv = ["train", str(path), "--algorithm", algorithm, "--out", str(tmp_path / "o")]  # progress bars on
    assert main(argv if algorithm == "bpe" else argv + ["--vocab-size", "30"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and "\r" not in err, err
    said = {"missing": "does not exist", "empty": "corpus is empty",
            "binary": "line 2 is not UTF-8 (invalid start byte at byte 117)",
            "latin1": "line 2 is not UTF-8 (invalid continuation byte at byte 3)"}[kind]
    assert said in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("algorithm", "phases"), [
    ("unigram", ("load sentences", "seed pieces", "EM and pruning")),
    ("sentencepiece-bpe", ("load sentences", "merges")),
])
def test_cli_sentencepiece_training_shows_its_phases(corpus, tmp_path, capsys, algorithm, phases):
    # Issue 33.12: unigram and SentencePiece-BPE training printed nothing for tens of seconds; now a bar per phase,
    # as the byte-level BPE trainer's (none with --quiet).
    argv = ["train", str(corpus), "--algorithm", algorithm, "--vocab-size", "40", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    for phase in phases:
        assert f"{phase}:" in err, err
    assert "601/601" not in err or "load sentences: 601 sentences" in err.replace("\r", "\n")
    assert main([*argv, "--quiet", "--force"]) == 0
    assert not any(phase in capsys.readouterr().err for phase in phases)


# --- encode/decode read SentencePiece folders too (a folder hf-bpe train wrote with --algorithm unigram or
# sentencepiece-bpe): the ids and text of sentencepiece's own processor. ---


def _python_sources(package: str) -> list[str]:
    """Real text: the lines of a standard-library package's sources (docstrings, comments, code)."""
    import email

    root = Path(email.__file__).parent.parent / package
    return [line for path in sorted(root.rglob("*.py")) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.mark.parametrize("algorithm", ["unigram", "sentencepiece-bpe"])
def test_cli_encode_and_decode_read_sentencepiece_folders_as_sentencepiece(tmp_path, capsys, monkeypatch, algorithm):
    import sentencepiece

    train = tmp_path / "train.txt"
    train.write_text("\n".join(_python_sources("email")) + "\n", encoding="utf-8")
    out = tmp_path / "sp"
    assert main(["train", str(train), "--algorithm", algorithm, "--vocab-size", "600", "--out", str(out),
                 "--quiet"]) == 0
    capsys.readouterr()
    processor = sentencepiece.SentencePieceProcessor(model_file=str(out / "tokenizer.model"))
    held_out = _python_sources("json")[:300] + ["<s> special </s> text", "中文 and ünïcode 😀", "  spaces  "]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(held_out) + "\n"))
    assert main(["encode", "--model", str(out)]) == 0
    lines = capsys.readouterr().out.split("\n")[:-1]
    assert [[int(i) for i in line.split()] for line in lines] == [processor.encode(text) for text in held_out]
    assert main(["encode", "--model", str(out), "--split-special-tokens", held_out[0]]) == 0
    assert capsys.readouterr().out == lines[0] + "\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    assert main(["decode", "--model", str(out)]) == 0
    decoded = capsys.readouterr().out.split("\n")[:-1]
    assert decoded == [processor.decode([int(i) for i in line.split()]) for line in lines]
    # A bad id or a lone surrogate is one error line, exit 2.
    assert main(["decode", "--model", str(out), "600"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "id 600 is out of range for this SentencePiece model (0..599)" in err
    assert main(["encode", "--model", str(out), "a\udcff b"]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
