"""Shared helpers of the benchmark scripts: machine description, timing, child processes and tables.

Not part of the package: ``scripts/bench_train.py`` and ``scripts/bench_encode.py`` import it from their own
folder. Every helper is plain standard library, so a benchmark never depends on the code it measures.

>>> median([3.0, 1.0, 2.0])
2.0
>>> print(format_table(["peer", "s"], [["a", "1.00"]], markdown=True))
| peer | s |
|---|---:|
| a | 1.00 |
"""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ROOT",
    "SHARED_DATA",
    "GPT2_PATTERN",
    "median",
    "missing_reason",
    "peer_version",
    "machine_lines",
    "load_average",
    "format_table",
    "fmt",
    "ChildResult",
    "run_child",
    "timed",
]

ROOT = Path(__file__).resolve().parent.parent
# The lead keeps real reference data beside the repository (see /work/shared/data/README.md); a worktree elsewhere
# finds it through HF_BPE_SHARED_DATA, as the tests do.
SHARED_DATA = Path(os.environ.get("HF_BPE_SHARED_DATA") or ROOT.parent / "shared" / "data")
# GPT-2's pre-tokenizer regex: the `regex` module syntax that tiktoken, rustbpe and bpeasy accept too.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# How often the memory sampler reads /proc while a child runs (seconds): often enough to catch a worker pool
# that lives for a second, rarely enough to cost nothing measurable on a 2-core machine.
_SAMPLE_EVERY = 0.05


def median(values: Sequence[float]) -> float:
    """Return the median of a non-empty sequence of timings."""
    return float(statistics.median(values))


def missing_reason(module: str) -> str | None:
    """Say why ``module`` cannot be benchmarked (not installed), or return None when it can be imported."""
    if importlib.util.find_spec(module) is None:
        return f"python module {module!r} is not installed (pip install {module})"
    return None


def peer_version(distribution: str) -> str:
    """Return the installed version of a distribution, or ``"not installed"``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        if distribution == "hf_bpe":
            sys.path.insert(0, os.fspath(ROOT))
            try:
                import hf_bpe

                return f"{hf_bpe.__version__} (source tree {ROOT})"
            except ImportError:
                pass
        return "not installed"


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages from /proc/loadavg (``"n/a"`` where it does not exist)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024**2:.1f} GB"
    except OSError:
        pass
    return "n/a"


def machine_lines(distributions: Sequence[str]) -> list[str]:
    """Describe the machine, the date, the load and the version of every peer, one fact per line."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = ", ".join(f"{name} {peer_version(name)}" for name in distributions)
    return [
        f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine: {_cpu_model()}, {os.cpu_count()} logical cores ({usable} usable), RAM {_ram_gb()}, "
        f"{platform.system()} {platform.release()}",
        f"python: {platform.python_implementation()} {platform.python_version()}",
        f"versions: {versions}",
        f"load average (1/5/15 min) at start: {load_average()}",
    ]


def fmt(value: float | None, digits: int = 2) -> str:
    """Format a number for a table, ``"n/a"`` for None."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("x×"))
    except ValueError:
        return False
    return True


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool = False) -> str:
    """Render rows as an aligned text table, or as a Markdown table (numeric columns right-aligned).

    A column is numeric when every cell in it parses as a number or is a placeholder (``n/a``, ``-``, empty, or
    ``≠`` for ids that differ).
    """
    columns = len(header)
    numeric = [
        all(_is_number(row[i]) or row[i] in ("n/a", "-", "", "≠") for row in rows)
        and any(_is_number(row[i]) for row in rows)
        for i in range(columns)
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(header[i])), *(len(row[i]) for row in rows)) for i in range(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(row) for row in rows)])


class ChildResult:
    """What one benchmark child process left behind.

    Attributes:
        status: the exit status (0: success).
        payload: the JSON the child wrote (empty when it failed before writing).
        peak_rss_mb: ``ru_maxrss`` of the child from ``wait4``: the largest resident set of the child or of any
            of its descendants (one process, not a sum), as ``/usr/bin/time`` reports it. On Linux a child started
            by ``posix_spawn`` (vfork) inherits this process's high-water mark at exec, so the figure is at least
            this process's own peak: only meaningful when the parent is small (use ``tree_rss_mb`` otherwise).
        tree_rss_mb: the largest sum of resident sets of the child and all its descendants seen by sampling /proc
            every 50 ms (counts worker processes together; shared copy-on-write pages count once per process).
        log_tail: the last lines of the child's stdout+stderr, for error messages.
        wall_seconds: the child's whole life, spawn to exit (interpreter start and imports included).
        cpu_seconds: the child's user + system CPU time from ``wait4`` (its threads and waited-for children
            included): the work done, less sensitive to a loaded machine than wall time.
    """

    def __init__(self, status: int, payload: dict[str, Any], peak_rss_mb: float, tree_rss_mb: float | None,
                 log_tail: str, wall_seconds: float | None = None, cpu_seconds: float | None = None) -> None:
        self.status = status
        self.payload = payload
        self.peak_rss_mb = peak_rss_mb
        self.tree_rss_mb = tree_rss_mb
        self.log_tail = log_tail
        self.wall_seconds = wall_seconds
        self.cpu_seconds = cpu_seconds


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _descendants(root: int) -> list[int]:
    # /proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN, which many kernels lack: scan every stat file.
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Field 4 (ppid) follows the command name, which is in parentheses and may contain spaces.
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, ()))
    return found


def _sample_tree(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        total = sum(_rss_kb(p) for p in _descendants(pid))
        peak[0] = max(peak[0], total)
        stop.wait(_SAMPLE_EVERY)


def run_child(argv: Sequence[str], result_file: Path, log_file: Path, *,
              env: dict[str, str] | None = None) -> ChildResult:
    """Run ``argv`` in a fresh process and measure its peak memory.

    The child must write its result as JSON to ``result_file``; its stdout and stderr go to ``log_file``. A
    fresh process per run makes the peak memory that of this run alone, and ``wait4`` gives the rusage of
    exactly this child (``RUSAGE_CHILDREN`` would mix every child this process ever waited for).
    """
    if not hasattr(os, "wait4") or not hasattr(os, "posix_spawn"):
        raise OSError("the training benchmark needs os.wait4 and os.posix_spawn (Linux or macOS)")
    result_file.unlink(missing_ok=True)
    log_fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    started = time.perf_counter()
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, log_fd, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2),
            (os.POSIX_SPAWN_CLOSE, log_fd),
        ]
        pid = os.posix_spawn(argv[0], list(argv), env if env is not None else dict(os.environ),
                             file_actions=actions)
    finally:
        os.close(log_fd)
    peak = [0]
    stop = threading.Event()
    sampler = None
    if Path("/proc").is_dir():
        sampler = threading.Thread(target=_sample_tree, args=(pid, stop, peak), daemon=True)
        sampler.start()
    try:
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - started
    finally:
        stop.set()
        if sampler is not None:
            sampler.join()
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    divisor = 1024**2 if sys.platform == "darwin" else 1024
    payload: dict[str, Any] = {}
    if result_file.exists():
        payload = json.loads(result_file.read_text())
    lines = log_file.read_text(errors="replace").splitlines() if log_file.exists() else []
    return ChildResult(
        status=os.waitstatus_to_exitcode(status),
        payload=payload,
        peak_rss_mb=usage.ru_maxrss / divisor,
        tree_rss_mb=peak[0] / 1024 if sampler is not None else None,
        log_tail="\n".join(lines[-8:]),
        wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
    )


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Call ``function`` once and return ``(wall seconds, result)``."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result
