"""Build the compiled core. Everything else about the package lives in pyproject.toml."""

import glob
import os
import shutil
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# HF_BPE_SANITIZE=1 (scripts/sanitize.py, in a copy of the tree): AddressSanitizer + UBSan, -O1 with frame pointers
# and line tables for readable reports; never the in-tree build.
_SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"] if os.environ.get("HF_BPE_SANITIZE") else []
_FLAGS = ["-O1", "-g", *_SANITIZE] if _SANITIZE else ["-O3"]
# Every extension includes some of these headers: an edited header rebuilds them (setuptools compares times).
_HEADERS = sorted(glob.glob("hf_bpe/core/csrc/*.hpp"))
_PXDS = sorted(glob.glob("hf_bpe/core/*.pxd"))


def _extension(name: str, *, flags: tuple[str, ...] = (), link: tuple[str, ...] = ()) -> Extension:
    """The C++ extension hf_bpe.core.<name>, built from hf_bpe/core/<name>.pyx."""
    return Extension(f"hf_bpe.core.{name}", [f"hf_bpe/core/{name}.pyx"], language="c++",
                     extra_compile_args=_FLAGS + ["-std=c++17", *flags], extra_link_args=[*link, *_SANITIZE],
                     depends=_HEADERS)


extensions = [
    _extension(name)
    for name in ("_core", "_classic", "_scanner", "_tally", "_spelling", "_sentencepiece", "_unigram_encode",
                 "_parity")
] + [
    # Float32 sums bit for bit as sentencepiece's: no fused multiply-add (spec: hf_bpe/training/unigram/lattice.py).
    _extension("_unigram", flags=("-ffp-contract=off", "-pthread"), link=("-pthread",)),
]

class _BuildExt(build_ext):
    """build_ext that reuses an extension already built in the source tree when it is newer than its sources.

    An editable install compiles into a fresh temporary folder and copies the result into the tree, so a second
    environment on the same checkout (CI's transformers 4.x run, a developer's second venv) compiled all eight -O3
    extensions again (~3 minutes) although the tree held them, built from the same sources by the same interpreter
    ABI (the file name carries it). Any .pyx, .pxd or header newer than the built file rebuilds it, as distutils'
    own check does for in-place builds.
    """

    def _reusable(self, ext: Extension) -> str | None:
        """The in-tree build of ``ext`` when it is newer than every source it is built from, else None."""
        built = self.get_ext_filename(ext.name)  # relative: the in-tree path of this interpreter's build
        # The project's own sources: the .pyx behind each generated .cpp (which cythonize writes again whenever the
        # build environment's Cython is newer, i.e. in every fresh isolated build), the .pxd files, the headers.
        own = [os.path.splitext(src)[0] + ".pyx" if os.path.exists(os.path.splitext(src)[0] + ".pyx") else src
               for src in ext.sources] + _PXDS + list(ext.depends)
        if (os.path.abspath(built) != os.path.abspath(self.get_ext_fullpath(ext.name)) and os.path.exists(built)
                and all(os.path.getmtime(src) < os.path.getmtime(built) for src in own)):
            return built
        return None

    def build_extensions(self) -> None:
        stale = [ext for ext in self.extensions if self._reusable(ext) is None]
        if stale and not self.dry_run:
            _say_compiling(len(stale))
        super().build_extensions()

    def build_extension(self, ext: Extension) -> None:
        built = self._reusable(ext)
        if built is not None:
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            shutil.copy2(built, target)
            return
        super().build_extension(ext)


# CPU time of one -O3 extension, measured on the project's 2-core machine (the eight: ~110 CPU-seconds in all).
_SECONDS_PER_EXTENSION = 14


def _say_compiling(count: int) -> None:
    """Say, before the minutes of silent C++ compilation, what compiles and for how long.

    pip shows a build backend's output only with -v, so under pip (which sets PIP_BUILD_TRACKER for its builds) the
    line also goes to the terminal itself when there is one (/dev/tty, which pip does not capture); a build without
    a terminal (CI, a log) has it on stderr.
    """
    minutes = max(1, round(count * _SECONDS_PER_EXTENSION / _JOBS / 60))
    flags = " ".join(_FLAGS)  # -O3, or the sanitizer build's flags (scripts/sanitize.py)
    line = (f"hf_bpe: compiling {count} C++ extension{'s' if count > 1 else ''} (Cython, {flags}), about {minutes} "
            f"minute{'s' if minutes > 1 else ''} on {_JOBS} core{'s' if _JOBS > 1 else ''} (longer on a busy "
            "machine); nothing is downloaded\n")
    sys.stderr.write(line)
    sys.stderr.flush()
    if "PIP_BUILD_TRACKER" not in os.environ:
        return
    try:
        with open("/dev/tty", "w") as terminal:
            terminal.write(line)
    except OSError:
        pass


# Every core compiles an extension at a time (a fresh install, and CI's two environments, spend most of their set-up
# compiling eight -O3 C++ extensions).
_JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

setup(
    ext_modules=cythonize(
        extensions,
        nthreads=_JOBS,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False, "cdivision": True},
    ),
    cmdclass={"build_ext": _BuildExt},
    options={"build_ext": {"parallel": _JOBS}},
)
