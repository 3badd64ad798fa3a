"""Build the compiled core. Everything else about the package lives in pyproject.toml."""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

_FLAGS = ["-O3"]

extensions = [
    Extension("hf_bpe.core._core", ["hf_bpe/core/_core.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._classic", ["hf_bpe/core/_classic.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._scanner", ["hf_bpe/core/_scanner.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._tally", ["hf_bpe/core/_tally.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._spelling", ["hf_bpe/core/_spelling.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._sentencepiece", ["hf_bpe/core/_sentencepiece.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    Extension("hf_bpe.core._unigram_encode", ["hf_bpe/core/_unigram_encode.pyx"], language="c++", extra_compile_args=_FLAGS + ["-std=c++17"]),
    # Float32 sums bit for bit as sentencepiece's: no fused multiply-add (spec: hf_bpe/training/unigram_lattice.py).
    Extension("hf_bpe.core._unigram", ["hf_bpe/core/_unigram.pyx"], language="c++",
              extra_compile_args=_FLAGS + ["-std=c++17", "-ffp-contract=off", "-pthread"], extra_link_args=["-pthread"]),
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
