# distutils: language = c++
# distutils: extra_compile_args = -O3 -std=c++17
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Split text into pre-tokenizer pieces with hand-written scanners for the named regexes.

Each scanner returns, for a start position, the end of the piece that ``regex.findall(PATTERN, text)`` would
return there; the scanners are exact for all of Unicode (tested against ``regex`` with hypothesis and real corpora).
They read the code points of the ``str`` in place (PEP 393 1/2/4-byte data) and create no Python object per
character. Character classes come from the installed ``regex`` module itself (see ``_build_tables``), so they follow
its Unicode version, not ``unicodedata``'s.

Scanner ids (``SCANNERS``) and the regex each one reproduces:

* ``gpt2``: ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``
* ``gpt4`` (tiktoken cl100k_base): ``'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+|
  ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s``
* ``llama3``: ``(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|
  \\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`` (differs from gpt4 only where a whitespace run reaches the end of the text)
* ``qwen2``: llama3 with ``\\p{N}`` instead of ``\\p{N}{1,3}``
* ``o200k``: tiktoken o200k_base (case-aware letter runs with an optional contraction suffix)

The scanners are C++ templates (``csrc/scanner.hpp``), inlined into one loop per pattern for the encoders' splitter
(``pieces_function``); this module builds their character classes and makes Python objects of their pieces.
"""

import array
import os
import sys
import time

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from hf_bpe.core._text_ref cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_IS_ASCII, PyUnicode_KIND, PieceEnds, TextRef, hfbpe_text_ref, hfbpe_unicode_ready,
)


cdef extern from "csrc/piece_counter.hpp":
    cppclass HfbpePieceCounter "hfbpe::HfbpePieceCounter":
        void add(const char* p, size_t n) except +
        # The same method for the threads' scans (no GIL, no Python exception): parallel_count.hpp catches
        # what it throws.
        void add_in_thread "add"(const char* p, size_t n) nogil


cdef extern from "csrc/scanner.hpp" namespace "hfbpe::scanner":
    # The scanners themselves (always-inlined C++ templates, one loop per pattern); this module builds their
    # classes (`classes`, from regex) and makes Python objects of their pieces.
    cdef struct Classes "hfbpe::scanner::Classes":
        const uint8_t* T                 # the BMP's flags (kBmp bytes)
        const uint16_t* S1               # a stage-2 block index per 256 supplementary code points (kSuppBlocks)
        const uint8_t* S2                # the distinct 256-byte blocks
        uint8_t fold_ascii[128]
        uint32_t fold_extra_cp[32]       # MAX_FOLD_EXTRA
        uint8_t fold_extra_letter[32]
        int n_fold_extra
        bint swar
        bint mask
    Classes classes "hfbpe::scanner::g"
    bint kLittleEndian
    # Class flags (one byte per code point) and scanner ids.
    enum:
        F_L "hfbpe::scanner::F_L"        # \p{L}
        F_N "hfbpe::scanner::F_N"        # \p{N}
        F_S "hfbpe::scanner::F_S"        # \s
        F_UP "hfbpe::scanner::F_UP"      # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]   (o200k "upper" run)
        F_LO "hfbpe::scanner::F_LO"      # [\p{Ll}\p{Lm}\p{Lo}\p{M}]         (o200k "lower" run)
        F_NL "hfbpe::scanner::F_NL"      # [\r\n]
        F_LNS "hfbpe::scanner::F_LNS"
        PID_GPT2 "hfbpe::scanner::PID_GPT2"
        PID_GPT4 "hfbpe::scanner::PID_GPT4"
        PID_LLAMA3 "hfbpe::scanner::PID_LLAMA3"
        PID_QWEN2 "hfbpe::scanner::PID_QWEN2"
        PID_O200K "hfbpe::scanner::PID_O200K"
        MAX_FOLD_EXTRA "hfbpe::scanner::MAX_FOLD_EXTRA"
    enum:
        kBmp "hfbpe::scanner::kBmp"
        kBlockShift "hfbpe::scanner::kBlockShift"
        kSuppBlocks "hfbpe::scanner::kSuppBlocks"
    uint8_t flags_of(uint32_t c) noexcept nogil
    bint ascii_letters_match(const uint8_t* t) noexcept nogil
    bint ascii_classes_match(const uint8_t* t) noexcept nogil
    bint cpu_has_avx2() noexcept nogil
    Py_ssize_t next_piece[Ch](const Ch* s, Py_ssize_t n, Py_ssize_t p, int pid) noexcept nogil
    Py_ssize_t utf8_of[Ch](const Ch* s, Py_ssize_t a, Py_ssize_t b, char* out) noexcept nogil
    int pieces[Ch](const Ch* s, Py_ssize_t n, bint ascii, int pid, string* utf8, PieceEnds* ends) noexcept nogil


cdef extern from "Python.h":
    # Declared without an exception value: a str without a UTF-8 form (a lone surrogate) is told by NULL and its
    # error cleared (the callers keep their code-point path, which repairs or raises).
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size)
    void PyErr_Clear()


cdef extern from "csrc/parallel_count.hpp":
    ctypedef int (*HfbpeScanFn "hfbpe::ScanFn")(const TextRef*, int, HfbpePieceCounter*, string*) noexcept nogil


# ---------------------------------------------------------------------------------------------------------------
# Character classes: one flag byte per code point (a flat BMP table and two levels past it, ~96 KB), from `regex`.
# ---------------------------------------------------------------------------------------------------------------

cdef enum:
    CH_APOS = 0x27
    CH_SPACE = 0x20
    CH_SLASH = 0x2F

SCANNERS = {"gpt2": PID_GPT2, "gpt4": PID_GPT4, "llama3": PID_LLAMA3, "qwen2": PID_QWEN2, "o200k": PID_O200K}

cdef bytearray _table = None          # keeps the class table alive; classes.T, S1, S2 point into it

TABLE_BUILD_SECONDS = None            # one-time cost of _build_tables, for reporting
TABLE_SOURCE = None                   # where _build_tables found the tables: "cache" or "regex"


cdef void _or_range(uint8_t* t, Py_ssize_t a, Py_ssize_t b, uint8_t flag) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(a, b):
        t[i] |= flag


def _all_code_points():
    """Return a str of every code point except the surrogates, in order (index i -> cp i, or i + 0x800 past D7FF)."""
    return "".join(_plane_chars(plane) for plane in range(17))


# Bump when the flags or the cached layout change: a cache entry of another format is never read.
_TABLE_FORMAT = 2
_TABLE_SIZE = 0x110000                 # code points 0..0x10FFFF
# The class table's layout (``_compact``), in memory and in the cache: the BMP's flags (kBmp bytes, index = code
# point), stage 1 (kSuppBlocks uint16: the stage-2 block of each 256 code points from U+10000; native order in
# memory, little-endian in the cache), stage 2 (the distinct 256-byte blocks, first seen first).
cdef enum:
    BLOCK = 1 << kBlockShift            # code points a block
    STAGE2 = kBmp + 2 * kSuppBlocks     # offset of stage 2
_BLOCK = BLOCK
_STAGE2 = STAGE2


def _build_tables():
    """Fill the class table and the contraction case-folding map, as the installed ``regex`` module classifies.

    Built from ``regex`` itself (about 0.05 s, ``_compute_tables``) once per ``regex`` build (``_regex_build``) and
    kept in the per-user cache (``hf_bpe.core.disk_cache``): later runs read it (~2 ms) without importing ``regex``.
    Every scanner call checks ``T != NULL`` first. Raises RuntimeError if ``regex`` breaks an invariant the scanners rely on (checked here, on cached tables
    too, so a future Unicode/regex change fails loudly).
    """
    global _table, TABLE_BUILD_SECONDS, TABLE_SOURCE
    from hf_bpe.core import disk_cache

    cdef double t0 = time.perf_counter()
    name = f"scanner-classes-regex-{_regex_build()}-v{_TABLE_FORMAT}.bin"
    # The sizes an entry can have (0 to MAX_FOLD_EXTRA extras): anything else is not read (disk_cache's checks).
    # The sizes an entry can have (1 to kSuppBlocks blocks, 0 to MAX_FOLD_EXTRA extras) bound the read;
    # _unpack_tables and _check_classes check the rest.
    found = _unpack_tables(disk_cache.load(name, sizes=range(_STAGE2 + _BLOCK + 128,
                                                             _STAGE2 + _BLOCK * kSuppBlocks + 129 + 5 * MAX_FOLD_EXTRA)))
    source = "cache"
    if found is not None:
        try:
            _check_classes(found[0])
        except RuntimeError:
            found = None  # an entry that breaks the invariants (another build wrote it?) is rebuilt, not trusted
    if found is None:
        import regex

        found = _compute_tables(regex)
        _check_classes(found[0])  # raises: regex itself breaks an invariant
        disk_cache.store(name, _little_endian_stage1(found[0]) + bytes(found[1]) + b"".join(
            cp.to_bytes(4, "little") + bytes([letter]) for cp, letter in found[2]))
        source = "regex"
    table, fold_ascii, extras = found
    cdef Py_ssize_t cp
    for cp in range(128):
        classes.fold_ascii[cp] = fold_ascii[cp]
    for cp, (a, b) in enumerate(extras):
        classes.fold_extra_cp[cp] = <uint32_t>a
        classes.fold_extra_letter[cp] = <uint8_t>b
    classes.n_fold_extra = len(extras)
    _table = table
    cdef const uint8_t* t = <const uint8_t*><char*>_table
    # Letter runs are read 8 bytes at a time only where T's ASCII letters are A-Z a-z (else T alone is read).
    classes.swar = kLittleEndian and ascii_letters_match(t)
    # ASCII/UTF-8 is scanned 64 bytes a block with AVX2 masks where the CPU has AVX2 (csrc/mask_scanner.hpp).
    classes.mask = cpu_has_avx2() and ascii_classes_match(t)
    classes.S1 = <const uint16_t*>(t + kBmp)  # (bytearray data is malloc-aligned; kBmp is even)
    classes.S2 = t + STAGE2
    classes.T = t  # last: a non-NULL T means the classes are ready
    TABLE_BUILD_SECONDS = time.perf_counter() - t0
    TABLE_SOURCE = source


def _regex_build():
    """Name the installed ``regex`` build without importing it: the size and time of its compiled module.

    Importing ``regex`` (to read its version) was 59M instructions and 1.6 MiB of every small training run, whose
    scanner reads the cached tables and never calls ``regex``. A new ``regex`` install (whose Unicode tables are in
    that file) names a new cache entry. Falls back to the version when the file is not found.
    """
    import importlib.machinery
    import importlib.util

    spec = importlib.util.find_spec("regex")  # a top-level package: found, not imported
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            try:
                info = os.stat(os.path.join(folder, "_regex" + suffix))
            except OSError:
                continue
            return f"{info.st_size}-{info.st_mtime_ns}"
    import regex

    return regex.__version__


def _unpack_tables(payload):
    """(table, fold_ascii, extras) from a cache entry, or None when there is none or it is not one.

    The entry is the table (``_compact``'s layout, stage 1 little-endian), ``fold_ascii`` (128 bytes), then 5 bytes
    per extra; the sizes tell the parts apart (an extras' length, at most 5 * 32, is below one block). Stage 1's
    indices and the classes are checked by ``_check_classes``.
    """
    if payload is None:
        return None
    rest = len(payload) - _STAGE2 - 128
    blocks, extra_bytes = divmod(rest, _BLOCK)
    if rest < 0 or not 1 <= blocks <= kSuppBlocks or extra_bytes % 5:
        return None
    end = _STAGE2 + blocks * _BLOCK
    table = bytearray(payload[:end])
    if sys.byteorder != "little":  # pragma: no cover
        stage1 = array.array("H", bytes(table[kBmp:_STAGE2]))
        stage1.byteswap()
        table[kBmp:_STAGE2] = stage1.tobytes()
    fold_ascii = payload[end:end + 128]
    rest = payload[end + 128:]
    extras = [(int.from_bytes(rest[i:i + 4], "little"), rest[i + 4]) for i in range(0, len(rest), 5)]
    letters = set(b"strevmld")
    if len(extras) > MAX_FOLD_EXTRA or not all(b in letters for _, b in extras) or \
            not all(b == 0 or b in letters for b in fold_ascii):
        return None
    return table, fold_ascii, extras


def _little_endian_stage1(bytearray table):
    """The table as the cache stores it: stage 1 little-endian (as it is in memory on this machine, or swapped)."""
    if sys.byteorder == "little":
        return bytes(table)
    stage1 = array.array("H", bytes(table[kBmp:_STAGE2]))  # pragma: no cover
    stage1.byteswap()  # pragma: no cover
    return bytes(table[:kBmp]) + stage1.tobytes() + bytes(table[_STAGE2:])  # pragma: no cover


def _compact(flat):
    """Return the class table of a flat one (one flag byte per code point, ``_TABLE_SIZE`` bytes): the BMP as it
    is, and the supplementary planes as stage 1 (an index per 256 code points) into stage 2 (each distinct block of
    256 flag bytes once, first seen first). About 96 KB for regex's classes (85 distinct blocks), not 1.1 MB.

    >>> flat = bytearray(_TABLE_SIZE); flat[0x1F600] = 4
    >>> table = _compact(flat); len(table) - _STAGE2, _expand(table) == flat
    (512, True)
    """
    if len(flat) != _TABLE_SIZE:
        raise ValueError(f"_compact expects {_TABLE_SIZE} flag bytes, got {len(flat)}")
    return _assemble(flat[:kBmp], (flat[start:start + BLOCK] for start in range(kBmp, _TABLE_SIZE, BLOCK)))


def _assemble(bmp, blocks):
    """The class table of the BMP's flags and the kSuppBlocks blocks of flags past it, in order (``_compact``)."""
    seen = {}
    stage1 = array.array("H")
    for block in blocks:
        stage1.append(seen.setdefault(bytes(block), len(seen)))
    if len(bmp) != kBmp or len(stage1) != kSuppBlocks:
        raise ValueError(f"_assemble expects {kBmp} BMP flags and {kSuppBlocks} blocks, got {len(bmp)} and "
                         f"{len(stage1)}")
    return bytearray(bmp) + stage1.tobytes() + b"".join(seen)  # dicts keep insertion order


def _expand(bytearray table):
    """Return the flat form (one flag byte per code point) of a class table that ``_check_classes`` accepts."""
    cdef const uint16_t* stage1 = <const uint16_t*>(<const uint8_t*><char*>table + kBmp)
    cdef bytearray flat = bytearray(_TABLE_SIZE)
    cdef Py_ssize_t b, j
    flat[:kBmp] = table[:kBmp]
    for b in range(kSuppBlocks):
        j = STAGE2 + stage1[b] * BLOCK
        flat[kBmp + b * BLOCK:kBmp + (b + 1) * BLOCK] = table[j:j + BLOCK]
    return flat


# The flag of each class and the regex that finds its runs. o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
# [\p{Ll}\p{Lm}\p{Lo}\p{M}] are unions of single properties, which regex scans twice as fast as the sets.
_CLASS_RUNS = (
    (F_L, r"\p{L}+"),
    (F_N, r"\p{N}+"),
    (F_S, r"\s+"),
    (F_UP, r"\p{Lu}+"),
    (F_UP, r"\p{Lt}+"),
    (F_LO, r"\p{Ll}+"),
    (F_UP | F_LO, r"\p{Lm}+"),
    (F_UP | F_LO, r"\p{Lo}+"),
    (F_UP | F_LO, r"\p{M}+"),
)


def _plane_chars(Py_ssize_t plane):
    """Return a str of the code points of one plane (0x10000 of them; plane 0 without the surrogates), in order."""
    cdef Py_ssize_t n = 0x10000 - (0x800 if plane == 0 else 0), i
    cdef uint32_t first = <uint32_t>(plane << 16)
    cdef bytearray raw = bytearray(4 * n)
    cdef uint32_t* cps = <uint32_t*><char*>raw
    for i in range(n):
        cps[i] = first + <uint32_t>(i if plane or i < 0xD800 else i + 0x800)
    return raw.decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def _plane_flags(regex, Py_ssize_t plane, list folding):
    """Return the flags of one plane's code points (bytearray(0x10000), surrogates in no class) as ``regex``
    classifies them; append the plane's characters that (?i:[strevmld]) matches to ``folding``."""
    chars = _plane_chars(plane)
    cdef bytearray flags = bytearray(0x10000)
    cdef uint8_t* t = flags
    cdef Py_ssize_t a, b
    cdef uint8_t flag
    # Runs of each class; in plane 0 an index past the surrogate gap is cp - 0x800.
    for flag, source in _CLASS_RUNS:
        for m in regex.finditer(source, chars):
            a, b = m.span()
            if plane or b <= 0xD800:
                _or_range(t, a, b, flag)
            elif a >= 0xD800:
                _or_range(t, a + 0x800, b + 0x800, flag)
            else:
                _or_range(t, a, 0xD800, flag)
                _or_range(t, 0xE000, b + 0x800, flag)
    if regex.findall(r"(?i:')", chars) != (["'"] if plane == 0 else []):
        raise RuntimeError("regex lets (?i:') match more than the apostrophe; the scanner assumes not")
    folding.extend(regex.findall(r"(?i:[strevmld])", chars))
    return flags


def _compute_tables(regex):
    """Return (table, fold_ascii, extras) as the installed ``regex`` classifies every code point.

    One plane at a time (a 256 KB str of its code points, its 64 KB of flags), each plane's blocks compacted as they
    come: the whole flat table (1.1 MB) and a str of every code point (4.4 MB) never exist.
    """
    folding = []
    # 1. The classes: the BMP flat, the 16 supplementary planes in blocks (_assemble).
    bmp = _plane_flags(regex, 0, folding)
    bmp[0x0A] |= F_NL
    bmp[0x0D] |= F_NL
    table = _assemble(bmp, (flags[start:start + BLOCK] for plane in range(1, 17)
                            for flags in (_plane_flags(regex, plane, folding),) for start in range(0, 0x10000, BLOCK)))
    # 2. Letters that (?i:...) lets stand for s t r e v m l d (e.g. U+017F LONG S for s), per the same regex.
    fold_ascii = bytearray(128)
    extras = []
    for ch in folding:
        letters = [x for x in "strevmld" if regex.fullmatch(f"(?i:{x})", ch)]
        if len(letters) != 1:
            raise RuntimeError(f"regex case-folds {ch!r} to {letters!r}; expected exactly one letter")
        if ord(ch) < 128:
            fold_ascii[ord(ch)] = ord(letters[0])
        else:
            extras.append((ord(ch), ord(letters[0])))
    if len(extras) > MAX_FOLD_EXTRA:
        raise RuntimeError(f"regex case-folds {len(extras)} non-ASCII letters to s t r e v m l d; room for 32")
    return table, bytes(fold_ascii), extras


cdef str _flag_problem(uint8_t f):
    """What a flag byte breaks of the scanners' invariants, or None."""
    if (f & F_L and f & (F_N | F_S)) or (f & F_N and f & F_S):
        return "regex puts {} in two of \\p{{L}}, \\p{{N}}, \\s; the scanner assumes not"
    if f & F_L and not f & (F_UP | F_LO):
        return "{} is \\p{{L}} but in neither o200k letter class"
    if f & (F_UP | F_LO) and f & (F_N | F_S):
        return "{} is in an o200k letter class and in \\p{{N}} or \\s"
    return None


def _check_classes(bytearray table):
    """Raise RuntimeError unless the table has ``_compact``'s layout (every stage-1 index names a stage-2 block,
    every block is named) and the classes hold the invariants the scanners use: L, N, \\s are disjoint; every
    letter is in an o200k run class, and those classes hold no digit or space; \\r, \\n and space are \\s; the
    apostrophe and '/' are "other" ([^\\s\\p{L}\\p{N}]).

    Checking the BMP's bytes and every stage-2 block checks every code point's flags (each is one of them) in
    kBmp + 256 * blocks steps, not 0x110000.
    """
    cdef Py_ssize_t size = len(table), blocks, b, i
    if size < _STAGE2 + _BLOCK or (size - _STAGE2) % _BLOCK or (size - _STAGE2) // _BLOCK > kSuppBlocks:
        raise RuntimeError(f"a class table of {size} bytes is not one of this layout")
    blocks = (size - _STAGE2) // _BLOCK
    cdef const uint8_t* t = <const uint8_t*><char*>table
    cdef const uint16_t* stage1 = <const uint16_t*>(t + kBmp)
    cdef const uint8_t* stage2 = t + STAGE2
    cdef bytearray named = bytearray(blocks)
    # Each flag byte judged once by _flag_problem (the one statement of the rules), then one lookup per byte.
    cdef uint8_t bad[256]
    for i in range(256):
        bad[i] = _flag_problem(<uint8_t>i) is not None
    for b in range(kSuppBlocks):
        if stage1[b] >= blocks:
            raise RuntimeError(f"stage 1 sends U+{kBmp + b * _BLOCK:04X}.. to block {stage1[b]} of {blocks}")
        named[stage1[b]] = 1
    if not all(named):
        raise RuntimeError(f"stage-2 block {named.index(0)} is named by no stage-1 entry")
    for i in range(kBmp):
        if bad[t[i]]:
            raise RuntimeError(_flag_problem(t[i]).format(f"U+{i:04X}"))
    for i in range(blocks * _BLOCK):
        if bad[stage2[i]]:
            b = next(b for b in range(kSuppBlocks) if stage1[b] == i // _BLOCK)
            raise RuntimeError(_flag_problem(stage2[i]).format(f"U+{kBmp + b * _BLOCK + i % _BLOCK:04X}"))
    if not (t[0x0A] & F_S and t[0x0D] & F_S and t[CH_SPACE] & F_S) or t[CH_APOS] & F_LNS or t[CH_SLASH] & F_LNS:
        raise RuntimeError("regex classifies space, \\r, \\n, ' or / unexpectedly; the scanner assumes the usual")


def ascii_fast_path():
    """Return whether letter runs are scanned 8 bytes at a time (T's ASCII letters are A-Z a-z, little-endian).

    >>> ascii_fast_path() in (True, False)
    True
    """
    _ensure_tables()
    return bool(classes.swar)


def _set_ascii_fast_path(bint on):
    """Turn the 8-byte letter runs on (where allowed) or off; return the previous state (tests: both give the same
    pieces). Not thread-safe: only while no scanner runs.

    >>> previous = _set_ascii_fast_path(False)
    >>> split("Hello", SCANNERS["gpt2"]), _set_ascii_fast_path(previous)
    (['Hello'], False)
    """
    _ensure_tables()
    previous = bool(classes.swar)
    classes.swar = on and kLittleEndian and ascii_letters_match(classes.T)
    return previous


def mask_scanner():
    """Return whether ASCII and UTF-8 text is scanned 64 bytes a block with AVX2 masks (this CPU has AVX2).

    >>> mask_scanner() in (True, False)
    True
    """
    _ensure_tables()
    return bool(classes.mask)


def _set_mask_scanner(bint on):
    """Turn the AVX2 mask scanner on (where the CPU has AVX2) or off; return the previous state (tests: both give
    the same pieces). Not thread-safe: only while no scanner runs.

    >>> previous = _set_mask_scanner(False)
    >>> split_utf8("Hello world " * 8, SCANNERS["gpt2"])[:2], _set_mask_scanner(previous)
    ([b'Hello', b' world'], False)
    """
    _ensure_tables()
    previous = bool(classes.mask)
    classes.mask = on and cpu_has_avx2() and ascii_classes_match(classes.T)
    return previous


cdef inline int _ensure_tables() except -1:
    if classes.T == NULL:
        _build_tables()
    return 0


def class_table():
    """Return the classes as a flat table (1.1 MB, made on each call): byte i holds the class flags of code point i
    (see class_flags)."""
    _ensure_tables()
    return bytes(_expand(_table))


def class_flags(str ch):
    """Return the flag byte of one character (bits: 1 L, 2 N, 4 \\s, 8 o200k-upper, 16 o200k-lower, 32 \\r\\n)."""
    _ensure_tables()
    if len(ch) != 1:
        raise ValueError(f"class_flags expects one character, got {ch!r} of length {len(ch)}")
    return flags_of(ord(ch))


# ---------------------------------------------------------------------------------------------------------------
# Pieces as Python objects or counts. The scanners are csrc/scanner.hpp's: next_piece(s, n, p, pid) is the end (> p)
# of the piece that the regex matches at p; the regexes cover every character, so the pieces tile the text.
# ---------------------------------------------------------------------------------------------------------------

ctypedef fused uchar_t:
    uint8_t
    uint16_t
    uint32_t


# Output modes of _scan.
cdef enum:
    OUT_STR = 0       # list of str pieces
    OUT_BYTES = 1     # list of bytes pieces
    OUT_COUNT = 2     # counts in a HfbpePieceCounter


cdef int _scan(
    const uchar_t* s, Py_ssize_t n, bint ascii, int pid, int mode, str text, list out,
    HfbpePieceCounter* counter, string* buf
) except -1:
    cdef Py_ssize_t p = 0, e, m
    while p < n:
        e = next_piece(s, n, p, pid)
        if mode == OUT_STR:
            out.append(text[p:e])
        else:
            if ascii:
                # ASCII str data is its own UTF-8 (and uchar_t is uint8_t here).
                if mode == OUT_BYTES:
                    out.append(PyBytes_FromStringAndSize(<const char*>s + p, e - p))
                else:
                    counter.add(<const char*>s + p, e - p)
            else:
                if <Py_ssize_t>buf.size() < 4 * (e - p):
                    buf.resize(4 * (e - p))    # grows to 4 bytes per code point of the longest piece
                m = utf8_of(s, p, e, <char*>buf.data())
                if m < 0:
                    text.encode("utf-8")      # raises the standard UnicodeEncodeError naming the surrogate
                    raise UnicodeError(f"cannot encode {text!r} to UTF-8")
                if mode == OUT_BYTES:
                    out.append(PyBytes_FromStringAndSize(buf.data(), m))
                else:
                    counter.add(buf.data(), m)
        p = e
    return 0


cdef int _count_nogil(
    const uchar_t* s, Py_ssize_t n, bint ascii, int pid, HfbpePieceCounter* counter, string* buf
) noexcept nogil:
    """_scan's counting mode for a thread: no Python object; -1 for a lone surrogate (reported by the caller)."""
    cdef Py_ssize_t p = 0, e, m
    while p < n:
        e = next_piece(s, n, p, pid)
        if ascii:
            counter.add_in_thread(<const char*>s + p, e - p)
        else:
            if <Py_ssize_t>buf.size() < 4 * (e - p):
                buf.resize(4 * (e - p))
            m = utf8_of(s, p, e, <char*>buf.data())
            if m < 0:
                return -1
            counter.add_in_thread(buf.data(), m)
        p = e
    return 0


cdef int _count_utf8(const char* s, Py_ssize_t n, int pid, HfbpePieceCounter* counter) noexcept nogil:
    """Count the pieces of valid UTF-8 s[0..n) (a file's line read as bytes): each piece is its own UTF-8."""
    cdef Py_ssize_t p = 0, e
    while p < n:
        e = next_piece(s, n, p, pid)
        counter.add_in_thread(s + p, e - p)
        p = e
    return 0


cdef int _count_ref(const TextRef* ref, int pid, HfbpePieceCounter* counter, string* buf) noexcept nogil:
    if ref.utf8:  # checked UTF-8 (csrc/utf8_check.hpp): scanned by byte offsets, nothing to transcode
        return _count_utf8(<const char*>ref.data, ref.length, pid, counter)
    if ref.kind == PyUnicode_1BYTE_KIND:
        return _count_nogil(<const uint8_t*>ref.data, ref.length, ref.ascii, pid, counter, buf)
    if ref.kind == PyUnicode_2BYTE_KIND:
        return _count_nogil(<const uint16_t*>ref.data, ref.length, False, pid, counter, buf)
    return _count_nogil(<const uint32_t*>ref.data, ref.length, False, pid, counter, buf)


cdef int _pieces_ref(const TextRef* ref, int pid, string* utf8, PieceEnds* ends) noexcept nogil:
    # A text's pieces' end offsets, for encoding on a thread: 1 if in its own bytes (ASCII, UTF-8), 0 if in its
    # UTF-8 written to *utf8; -1 for a lone surrogate (csrc/parallel_encode.hpp's PiecesFn).
    if ref.utf8:  # already UTF-8: scanned by byte offsets, nothing to transcode
        return pieces(<const char*>ref.data, ref.length, True, pid, utf8, ends)
    if ref.kind == PyUnicode_1BYTE_KIND:
        return pieces(<const uint8_t*>ref.data, ref.length, ref.ascii, pid, utf8, ends)
    if ref.kind == PyUnicode_2BYTE_KIND:
        return pieces(<const uint16_t*>ref.data, ref.length, False, pid, utf8, ends)
    return pieces(<const uint32_t*>ref.data, ref.length, False, pid, utf8, ends)


cdef const char* _PIECES_CAPSULE = b"hf_bpe.core._scanner.pieces"  # a C literal: outlives every capsule


def split_utf8(str text not None, int pid, *, bint in_utf8=False):
    """Return the UTF-8 pieces of `text` as the encoders' splitter (``pieces_function``) makes them (for tests).

    With ``in_utf8`` the scanner reads the str's UTF-8 form (as long texts are encoded) instead of its code points.

    >>> split_utf8("it's caf\u00e9", SCANNERS["gpt2"]), split_utf8("caf\u00e9 x", SCANNERS["gpt2"], in_utf8=True)
    ([b'it', b"'s", b' caf\\xc3\\xa9'], [b'caf\\xc3\\xa9', b' x'])

    Raises:
        UnicodeEncodeError: the text holds a lone surrogate.
    """
    _check_pid(pid)
    _ensure_tables()
    cdef TextRef ref
    cdef string utf8
    cdef PieceEnds ends
    cdef size_t start = 0, stop, i
    cdef Py_ssize_t size
    hfbpe_text_ref(text, &ref)
    if in_utf8:
        ref.data = PyUnicode_AsUTF8AndSize(text, &size)
        if ref.data == NULL:
            PyErr_Clear()
            text.encode("utf-8")  # raises the standard UnicodeEncodeError naming the surrogate
            raise UnicodeError(f"cannot encode {text!r:.80} to UTF-8")
        ref.length = size
        ref.utf8 = 1
    cdef int found = _pieces_ref(&ref, pid, &utf8, &ends)
    if found < 0:
        text.encode("utf-8")  # raises the standard UnicodeEncodeError naming the surrogate
        raise UnicodeError(f"cannot encode {text!r:.80} to UTF-8")
    cdef const char* data = <const char*>ref.data if found == 1 else utf8.data()  # (1: the text's own bytes)
    out = []
    for i in range(ends.size()):
        stop = ends.data()[i]
        out.append(PyBytes_FromStringAndSize(data + start, stop - start))
        start = stop
    return out


def pieces_function():
    """Return the scanner's threaded splitter as a capsule (``hfbpe::PiecesFn``, parallel_encode.hpp) for
    ``WordEncoder.encode_texts``: the compiled encoder splits texts with it, without the GIL."""
    _ensure_tables()
    return PyCapsule_New(<void*>_pieces_ref, _PIECES_CAPSULE, NULL)


cdef int _dispatch(str text, int pid, int mode, list out, HfbpePieceCounter* counter, string* buf) except -1:
    hfbpe_unicode_ready(text)
    cdef unsigned int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == PyUnicode_1BYTE_KIND:
        return _scan(<const uint8_t*>data, n, PyUnicode_IS_ASCII(text), pid, mode, text, out, counter, buf)
    if kind == PyUnicode_2BYTE_KIND:
        return _scan(<const uint16_t*>data, n, False, pid, mode, text, out, counter, buf)
    return _scan(<const uint32_t*>data, n, False, pid, mode, text, out, counter, buf)


cdef int _check_pid(int pid) except -1:
    if pid < 0 or pid > PID_O200K:
        raise ValueError(f"unknown scanner id {pid!r}; expected one of {SCANNERS!r}")
    return 0


def split(str text not None, int pid):
    """Return the pieces (str) of `text` for scanner `pid` (a value of SCANNERS)."""
    _check_pid(pid)
    _ensure_tables()
    cdef list out = []
    cdef string buf
    _dispatch(text, pid, OUT_STR, out, NULL, &buf)
    return out


def split_bytes(str text not None, int pid):
    """Return the UTF-8 pieces (bytes) of `text` for scanner `pid`."""
    _check_pid(pid)
    _ensure_tables()
    cdef list out = []
    cdef string buf
    _dispatch(text, pid, OUT_BYTES, out, NULL, &buf)
    return out


cdef const char* _COUNT_CAPSULE = b"hf_bpe.core._scanner.count"  # a C literal: outlives every capsule


def count_function(int pid):
    """Return the scanner's threaded counter for scanner `pid` as a capsule (``hfbpe::ScanFn``,
    parallel_count.hpp) for ``hf_bpe.core._tally``: its threads count pieces with it, without the GIL."""
    _check_pid(pid)
    _ensure_tables()
    return PyCapsule_New(<void*>_count_ref, _COUNT_CAPSULE, NULL)
