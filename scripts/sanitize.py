"""Build the compiled core with AddressSanitizer + UBSan in a copy of the tree and run its tests under them.

Usage::

    python scripts/sanitize.py [--build-dir DIR] [--fuzz-examples N] [--jobs N] [PYTEST_ARGS...]

1. The tree's files (``git ls-files``: tracked and new, not ignored) are copied into ``--build-dir`` (default
   ``build/sanitize``, git-ignored); a file already there with the same size and time is kept, so a second run
   recompiles only what changed. The in-tree build is never touched.
2. ``setup.py build_ext --inplace`` there with ``HF_BPE_SANITIZE=1``: every extension at ``-O1 -g
   -fsanitize=address,undefined -fno-omit-frame-pointer`` (about 3 CPU-minutes from scratch).
3. The compiled-core test files (every parser and loop of ``csrc/``) and ``tests/test_fuzz.py`` (hypothesis, a
   bounded number of examples per parser and encoder: ``--fuzz-examples``) run there with gcc's ``libasan.so`` and
   ``libstdc++.so`` preloaded (CPython is not instrumented, nor linked with libstdc++),
   ``ASAN_OPTIONS=detect_leaks=0:abort_on_error=1`` (CPython's own allocations at exit are not leaks of ours) and
   ``UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1``: the first finding stops the run with its report on stderr
   and a non-zero exit.

Needs gcc (or ``CXX``) with libasan, ``setuptools>=77`` and ``Cython>=3.0`` in the running interpreter. The exit
status is pytest's (0: clean). Extra arguments go to pytest (e.g. ``-k normalize``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Every parser and loop of csrc/: scanners, tallies, the trainers' merge loops, the encoders, the token-file writer,
# the file reader, SentencePiece's normalizer/corpus/trainer, unigram seeding/EM/Viterbi, the long-piece encoder,
# the parity-aware and SuperBPE merge loops; then the fuzz file.
TESTS = ["tests/test_core.py", "tests/test_csrc.py", "tests/test_classic_core.py", "tests/test_mask_scanner.py",
         "tests/test_pretokenize.py", "tests/test_token_arrays.py", "tests/test_file_tokenize.py",
         "tests/test_token_file.py", "tests/test_sentencepiece_core.py", "tests/test_sentencepiece_normalize.py",
         "tests/test_unigram.py", "tests/test_long_piece.py", "tests/test_parity.py", "tests/test_superbpe.py",
         "tests/test_long_text.py", "tests/test_fuzz.py"]
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
                 "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def sync(source: Path, target: Path) -> int:
    """Copy the tree's files into ``target`` (kept where size and time agree); return how many were copied."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=source,
                            check=True, capture_output=True).stdout.split(b"\0")
    copied = 0
    for name in filter(None, listed):
        src, dst = source / os.fsdecode(name), target / os.fsdecode(name)
        if not src.is_file():  # deleted in the work tree but still in the index
            continue
        here, there = src.stat(), dst.stat() if dst.exists() else None
        if there is None or (here.st_size, here.st_mtime_ns) != (there.st_size, there.st_mtime_ns):
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            copied += 1
    return copied


def runtime_libraries() -> str:
    """``LD_PRELOAD`` for the instrumented build: the compiler's libasan.so, then its libstdc++.so.

    CPython is not linked with libstdc++, so without it ASan's ``__cxa_throw`` interceptor finds no real function
    and the first C++ exception (every ``except +`` error path) aborts with "CHECK failed ... real___cxa_throw".
    """
    compiler = os.environ.get("CXX", "g++")
    found = []
    for library in ("libasan.so", "libstdc++.so"):
        try:
            path = subprocess.run([compiler, f"-print-file-name={library}"], check=True, capture_output=True,
                                  text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as exc:
            sys.exit(f"sanitize: {compiler} -print-file-name={library} failed ({exc}); install gcc (or set CXX)")
        if not os.path.isabs(path) or not os.path.exists(path):
            sys.exit(f"sanitize: {compiler} has no {library} (it answered {path!r}); install gcc's libsanitizer "
                     "(e.g. apt-get install libasan8) and libstdc++")
        found.append(os.path.realpath(path))
    return " ".join(found)


def main(argv: list[str] | None = None) -> int:
    """Build, check that the build is instrumented, run the tests; return pytest's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "sanitize")
    parser.add_argument("--fuzz-examples", type=int, default=200, help="hypothesis examples per fuzz test")
    parser.add_argument("--jobs", type=int, default=None, help="pytest-xdist workers (default: none)")
    args, pytest_args = parser.parse_known_args(argv)
    build = args.build_dir.resolve()
    started = time.monotonic()
    copied = sync(ROOT, build)
    print(f"sanitize: {copied} file(s) copied into {build}", file=sys.stderr)
    env = {**os.environ, "HF_BPE_SANITIZE": "1"}
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=build, env=env, check=True)
    built = time.monotonic()
    print(f"sanitize: built in {built - started:.0f} s", file=sys.stderr)
    for library in sorted((build / "hf_bpe" / "core").glob("_*.so")):
        if b"__asan_init" not in library.read_bytes():
            sys.exit(f"sanitize: {library} is not instrumented; remove {build} and run again")
    env.update(SANITIZER_ENV, LD_PRELOAD=runtime_libraries(), HF_BPE_FUZZ_EXAMPLES=str(args.fuzz_examples),
               PYTHONPATH=os.fspath(build))
    shared = ROOT.parent / "shared" / "data"  # where the tests find it from the tree (not from the copy)
    if "HF_BPE_SHARED_DATA" not in env and (shared / "README.md").is_file():
        env["HF_BPE_SHARED_DATA"] = os.fspath(shared)
    # The tests must import this copy, not an installed hf_bpe (an editable install of the tree, say).
    imported = subprocess.run([sys.executable, "-c", "import hf_bpe.core._core as m; print(m.__file__)"], cwd=build,
                              env=env, capture_output=True, text=True)
    if imported.returncode or not Path(imported.stdout.strip()).is_relative_to(build):
        sys.exit(f"sanitize: the instrumented hf_bpe does not load from {build} (got {imported.stdout.strip()!r}, "
                 f"{imported.stderr.strip()[-500:]!r})")
    workers = ["-n", str(args.jobs), "--dist", "loadfile"] if args.jobs else []
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "--durations=8", "-m",
               "not slow", *workers, *TESTS, *pytest_args]
    status = subprocess.run(command, cwd=build, env=env).returncode
    print(f"sanitize: tests {'clean' if status == 0 else f'FAILED (exit {status})'} in "
          f"{time.monotonic() - built:.0f} s; {time.monotonic() - started:.0f} s in all", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
