"""Build the compiled core. Everything else about the package lives in pyproject.toml."""

import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

_FLAGS = ["-O3"]
# Every extension includes some of these headers: an edited header rebuilds them (setuptools compares times).
_HEADERS = sorted(glob.glob("hf_bpe/core/csrc/*.hpp"))


def _extension(name: str, *, flags: tuple[str, ...] = (), link: tuple[str, ...] = ()) -> Extension:
    """The C++ extension hf_bpe.core.<name>, built from hf_bpe/core/<name>.pyx."""
    return Extension(f"hf_bpe.core.{name}", [f"hf_bpe/core/{name}.pyx"], language="c++",
                     extra_compile_args=_FLAGS + ["-std=c++17", *flags], extra_link_args=list(link), depends=_HEADERS)


extensions = [
    _extension(name)
    for name in ("_core", "_classic", "_scanner", "_tally", "_spelling", "_sentencepiece", "_unigram_encode")
] + [
    # Float32 sums bit for bit as sentencepiece's: no fused multiply-add (spec: hf_bpe/training/unigram_lattice.py).
    _extension("_unigram", flags=("-ffp-contract=off", "-pthread"), link=("-pthread",)),
]

# Every core compiles an extension at a time (a fresh install, and CI's two environments, spend most of their set-up
# compiling eight -O3 C++ extensions).
_JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

setup(
    ext_modules=cythonize(
        extensions,
        nthreads=_JOBS,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False, "cdivision": True},
    ),
    options={"build_ext": {"parallel": _JOBS}},
)
