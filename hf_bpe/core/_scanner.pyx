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
"""

import sys
import time

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from hf_bpe.core._text_ref cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_IS_ASCII, PyUnicode_KIND, TextRef, hfbpe_unicode_ready,
)


cdef extern from "csrc/piece_counter.hpp":
    cppclass HfbpePieceCounter "hfbpe::HfbpePieceCounter":
        void add(const char* p, size_t n) except +
        # The same method for the threads' scans (no GIL, no Python exception): parallel_count.hpp catches
        # what it throws.
        void add_in_thread "add"(const char* p, size_t n) nogil


cdef extern from "csrc/parallel_count.hpp":
    ctypedef int (*HfbpeScanFn "hfbpe::ScanFn")(const TextRef*, int, HfbpePieceCounter*, string*) noexcept nogil


# ---------------------------------------------------------------------------------------------------------------
# Character classes: one flag byte per code point (1.1 MB), filled from `regex` on first use.
# ---------------------------------------------------------------------------------------------------------------

cdef enum:
    F_L = 1      # \p{L}
    F_N = 2      # \p{N}
    F_S = 4      # \s
    F_UP = 8     # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]   (o200k "upper" run)
    F_LO = 16    # [\p{Ll}\p{Lm}\p{Lo}\p{M}]         (o200k "lower" run)
    F_NL = 32    # [\r\n]
    F_LNS = F_L | F_N | F_S

cdef enum:
    CH_APOS = 0x27
    CH_SPACE = 0x20
    CH_SLASH = 0x2F
    CH_d = 0x64
    CH_e = 0x65
    CH_l = 0x6C
    CH_m = 0x6D
    CH_r = 0x72
    CH_s = 0x73
    CH_t = 0x74
    CH_v = 0x76
    MAX_FOLD_EXTRA = 32

SCANNERS = {"gpt2": 0, "gpt4": 1, "llama3": 2, "qwen2": 3, "o200k": 4}
cdef enum:
    PID_GPT2 = 0
    PID_GPT4 = 1
    PID_LLAMA3 = 2
    PID_QWEN2 = 3
    PID_O200K = 4

cdef bytearray _table = None          # keeps the flag table alive; T points into it
cdef const uint8_t* T = NULL
# Case-insensitive contraction letters: code point -> ASCII lower letter of "strevmld", 0 for none.
cdef uint8_t FOLD_ASCII[128]
cdef uint32_t FOLD_EXTRA_CP[MAX_FOLD_EXTRA]
cdef uint8_t FOLD_EXTRA_LETTER[MAX_FOLD_EXTRA]
cdef int n_fold_extra = 0

TABLE_BUILD_SECONDS = None            # one-time cost of _build_tables, for reporting
TABLE_SOURCE = None                   # where _build_tables found the tables: "cache" or "regex"


cdef void _or_range(uint8_t* t, Py_ssize_t a, Py_ssize_t b, uint8_t flag) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(a, b):
        t[i] |= flag


def _all_code_points():
    """Return a str of every code point except the surrogates, in order (index i -> cp i, or i + 0x800 past D7FF)."""
    cdef Py_ssize_t n = 0x110000 - 0x800, i
    cdef bytearray raw = bytearray(4 * n)
    cdef uint32_t* cps = <uint32_t*><char*>raw
    for i in range(n):
        cps[i] = <uint32_t>(i if i < 0xD800 else i + 0x800)
    # Native byte order, so decode with the matching codec (no BOM).
    return raw.decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


# Bump when the flags or the cached layout change: a cache entry of another format is never read.
_TABLE_FORMAT = 1
_TABLE_SIZE = 0x110000


def _build_tables():
    """Fill the class table and the contraction case-folding map, as the installed ``regex`` module classifies.

    Built from ``regex`` itself (about 0.05 s, ``_compute_tables``) once per ``regex`` version and kept in the
    per-user cache (``hf_bpe.core.disk_cache``): later runs read it (~2 ms). Every scanner call checks ``T != NULL``
    first. Raises RuntimeError if ``regex`` breaks an invariant the scanners rely on (checked here, on cached tables
    too, so a future Unicode/regex change fails loudly).
    """
    global _table, T, n_fold_extra, TABLE_BUILD_SECONDS, TABLE_SOURCE
    import regex

    from hf_bpe.core import disk_cache

    cdef double t0 = time.perf_counter()
    name = f"scanner-classes-regex-{regex.__version__}-v{_TABLE_FORMAT}.bin"
    # The sizes an entry can have (0 to MAX_FOLD_EXTRA extras): anything else is not read (disk_cache's checks).
    found = _unpack_tables(disk_cache.load(name, sizes=range(_TABLE_SIZE + 128, _TABLE_SIZE + 129 + 5 * MAX_FOLD_EXTRA,
                                                             5)))
    source = "cache"
    if found is not None:
        try:
            _check_classes(found[0])
        except RuntimeError:
            found = None  # an entry that breaks the invariants (another build wrote it?) is rebuilt, not trusted
    if found is None:
        found = _compute_tables(regex)
        _check_classes(found[0])  # raises: regex itself breaks an invariant
        disk_cache.store(name, bytes(found[0]) + bytes(found[1]) + b"".join(
            cp.to_bytes(4, "little") + bytes([letter]) for cp, letter in found[2]))
        source = "regex"
    table, fold_ascii, extras = found
    cdef Py_ssize_t cp
    for cp in range(128):
        FOLD_ASCII[cp] = fold_ascii[cp]
    for cp, (a, b) in enumerate(extras):
        FOLD_EXTRA_CP[cp] = <uint32_t>a
        FOLD_EXTRA_LETTER[cp] = <uint8_t>b
    n_fold_extra = len(extras)
    _table = table
    T = <const uint8_t*><char*>_table
    TABLE_BUILD_SECONDS = time.perf_counter() - t0
    TABLE_SOURCE = source


def _unpack_tables(payload):
    """(table, fold_ascii, extras) from a cache entry, or None when there is none or it is not one."""
    if payload is None or len(payload) < _TABLE_SIZE + 128 or (len(payload) - _TABLE_SIZE - 128) % 5:
        return None
    fold_ascii = payload[_TABLE_SIZE:_TABLE_SIZE + 128]
    rest = payload[_TABLE_SIZE + 128:]
    extras = [(int.from_bytes(rest[i:i + 4], "little"), rest[i + 4]) for i in range(0, len(rest), 5)]
    letters = set(b"strevmld")
    if len(extras) > MAX_FOLD_EXTRA or not all(b in letters for _, b in extras) or \
            not all(b == 0 or b in letters for b in fold_ascii):
        return None
    return bytearray(payload[:_TABLE_SIZE]), fold_ascii, extras


def _compute_tables(regex):
    """Return (table, fold_ascii, extras) as the installed ``regex`` classifies every code point."""
    cdef bytearray table = bytearray(_TABLE_SIZE)
    cdef uint8_t* t = table
    cdef Py_ssize_t a, b, cp
    cdef uint8_t flag
    allchars = _all_code_points()
    # 1. Runs of each class over all code points; an index past the surrogate gap is cp - 0x800.
    #    o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}] are unions of single properties,
    #    which regex scans twice as fast as the sets.
    for flag, source in (
        (F_L, r"\p{L}+"),
        (F_N, r"\p{N}+"),
        (F_S, r"\s+"),
        (F_UP, r"\p{Lu}+"),
        (F_UP, r"\p{Lt}+"),
        (F_LO, r"\p{Ll}+"),
        (F_UP | F_LO, r"\p{Lm}+"),
        (F_UP | F_LO, r"\p{Lo}+"),
        (F_UP | F_LO, r"\p{M}+"),
    ):
        for m in regex.finditer(source, allchars):
            a, b = m.span()
            if b <= 0xD800:
                _or_range(t, a, b, flag)
            elif a >= 0xD800:
                _or_range(t, a + 0x800, b + 0x800, flag)
            else:
                _or_range(t, a, 0xD800, flag)
                _or_range(t, 0xE000, b + 0x800, flag)
    t[0x0A] |= F_NL
    t[0x0D] |= F_NL
    # 2. Letters that (?i:...) lets stand for s t r e v m l d (e.g. U+017F LONG S for s), per the same regex.
    if regex.findall(r"(?i:')", allchars) != ["'"]:
        raise RuntimeError("regex lets (?i:') match more than the apostrophe; the scanner assumes not")
    fold_ascii = bytearray(128)
    extras = []
    for ch in regex.findall(r"(?i:[strevmld])", allchars):
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


def _check_classes(bytearray table):
    """Raise RuntimeError unless the classes hold the invariants the scanners use: L, N, \\s are disjoint; every
    letter is in an o200k run class, and those classes hold no digit or space; \\r, \\n and space are \\s; the
    apostrophe and '/' are "other" ([^\\s\\p{L}\\p{N}])."""
    cdef const uint8_t* t = <const uint8_t*><char*>table
    cdef Py_ssize_t cp
    cdef uint8_t f
    for cp in range(_TABLE_SIZE):
        f = t[cp]
        if (f & F_L and f & (F_N | F_S)) or (f & F_N and f & F_S):
            raise RuntimeError(f"regex puts U+{cp:04X} in two of \\p{{L}}, \\p{{N}}, \\s; the scanner assumes not")
        if f & F_L and not f & (F_UP | F_LO):
            raise RuntimeError(f"U+{cp:04X} is \\p{{L}} but in neither o200k letter class")
        if f & (F_UP | F_LO) and f & (F_N | F_S):
            raise RuntimeError(f"U+{cp:04X} is in an o200k letter class and in \\p{{N}} or \\s")
    if not (t[0x0A] & F_S and t[0x0D] & F_S and t[CH_SPACE] & F_S) or t[CH_APOS] & F_LNS or t[CH_SLASH] & F_LNS:
        raise RuntimeError("regex classifies space, \\r, \\n, ' or / unexpectedly; the scanner assumes the usual")


cdef inline int _ensure_tables() except -1:
    if T == NULL:
        _build_tables()
    return 0


def class_table():
    """Return a copy of the flag table: byte i holds the class flags of code point i (see class_flags)."""
    _ensure_tables()
    return bytes(_table)


def class_flags(str ch):
    """Return the flag byte of one character (bits: 1 L, 2 N, 4 \\s, 8 o200k-upper, 16 o200k-lower, 32 \\r\\n)."""
    _ensure_tables()
    if len(ch) != 1:
        raise ValueError(f"class_flags expects one character, got {ch!r} of length {len(ch)}")
    return T[ord(ch)]


# ---------------------------------------------------------------------------------------------------------------
# Scanners. Each `_next_*` takes the text (n code points) and a start p < n and returns the end (> p) of the piece
# that the regex matches at p. The regexes cover every character, so the pieces tile the text.
# ---------------------------------------------------------------------------------------------------------------

ctypedef fused uchar_t:
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t _run(const uchar_t* s, Py_ssize_t i, Py_ssize_t n, uint8_t flag) noexcept nogil:
    # End of the run of characters that have `flag`, starting at i.
    while i < n and T[s[i]] & flag:
        i += 1
    return i


cdef inline Py_ssize_t _run_other(const uchar_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # End of the run of [^\s\p{L}\p{N}] starting at i.
    while i < n and not (T[s[i]] & F_LNS):
        i += 1
    return i


cdef inline Py_ssize_t _run_nl(const uchar_t* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # End of the run of [\r\n] starting at i.
    while i < n and (s[i] == 0x0A or s[i] == 0x0D):
        i += 1
    return i


cdef inline uint8_t _fold(uint32_t c) noexcept nogil:
    # The letter of "strevmld" that `c` matches case-insensitively, or 0.
    cdef int i
    if c < 128:
        return FOLD_ASCII[c]
    for i in range(n_fold_extra):
        if FOLD_EXTRA_CP[i] == c:
            return FOLD_EXTRA_LETTER[i]
    return 0


cdef inline Py_ssize_t _contraction_ci(const uchar_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # End of (?i:'s|'t|'re|'ve|'m|'ll|'d) at p, or p when it does not match.
    cdef uint8_t l1, l2
    if s[p] != CH_APOS or p + 1 >= n:
        return p
    l1 = _fold(s[p + 1])
    if l1 == CH_s or l1 == CH_t or l1 == CH_m or l1 == CH_d:
        return p + 2
    if l1 != 0 and p + 2 < n:
        l2 = _fold(s[p + 2])
        if (l2 == CH_e and (l1 == CH_r or l1 == CH_v)) or (l1 == CH_l and l2 == CH_l):
            return p + 3
    return p


cdef inline Py_ssize_t _whitespace(const uchar_t* s, Py_ssize_t n, Py_ssize_t p, bint to_end_first) noexcept nogil:
    # s[p] is \s. Phase 1: the maximal \s run [p, e) and its last [\r\n] (one forward pass).
    cdef Py_ssize_t e = p, last_nl = -1
    cdef uint8_t f
    while e < n:
        f = T[s[e]]
        if not f & F_S:
            break
        if f & F_NL:
            last_nl = e
        e += 1
    # 2. tiktoken cl100k's `\s++$`: a run that reaches the end of the text is one piece.
    if to_end_first and e == n:
        return n
    # 3. `\s*[\r\n]+`: \s* backtracks to the last [\r\n] of the run, which [\r\n]+ then takes alone.
    if last_nl >= 0:
        return last_nl + 1
    # 4. `\s+(?!\S)`: the whole run at the end of the text, else all but its last character (if that leaves one).
    if e == n:
        return n
    if e - p >= 2:
        return e - 1
    # 5. `\s+` (or tiktoken's `\s`): a single whitespace character before a non-space.
    return p + 1


cdef inline Py_ssize_t _whitespace_gpt2(const uchar_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # `\s+(?!\S)|\s+` at a whitespace character p.
    cdef Py_ssize_t e = _run(s, p + 1, n, F_S)
    if e == n:
        return n
    if e - p >= 2:
        return e - 1
    return p + 1


cdef Py_ssize_t _next_gpt2(const uchar_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef uint32_t c = s[p], c1, c2
    cdef uint8_t f, f1
    # 1. 's|'t|'re|'ve|'m|'ll|'d, case-sensitive.
    if c == CH_APOS and p + 1 < n:
        c1 = s[p + 1]
        if c1 == CH_s or c1 == CH_t or c1 == CH_m or c1 == CH_d:
            return p + 2
        if p + 2 < n:
            c2 = s[p + 2]
            if (c2 == CH_e and (c1 == CH_r or c1 == CH_v)) or (c1 == CH_l and c2 == CH_l):
                return p + 3
    # 2. ` ?X+` for X in \p{L}, \p{N}, [^\s\p{L}\p{N}], with the space taken when the next character is X.
    if c == CH_SPACE and p + 1 < n:
        f1 = T[s[p + 1]]
        if f1 & F_L:
            return _run(s, p + 2, n, F_L)
        if f1 & F_N:
            return _run(s, p + 2, n, F_N)
        if not f1 & F_S:
            return _run_other(s, p + 2, n)
    f = T[c]
    if f & F_L:
        return _run(s, p + 1, n, F_L)
    if f & F_N:
        return _run(s, p + 1, n, F_N)
    if not f & F_S:
        return _run_other(s, p + 1, n)
    # 3. Whitespace.
    return _whitespace_gpt2(s, n, p)


cdef Py_ssize_t _next_cl100k(
    const uchar_t* s, Py_ssize_t n, Py_ssize_t p, Py_ssize_t max_digits, bint to_end_first
) noexcept nogil:
    # gpt4 (to_end_first, max_digits 3), llama3 (max_digits 3), qwen2 (max_digits 1).
    cdef uint32_t c = s[p]
    cdef uint8_t f = T[c]
    cdef Py_ssize_t e
    # 1. (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if c == CH_APOS:
        e = _contraction_ci(s, n, p)
        if e != p:
            return e
    # 2. [^\r\n\p{L}\p{N}]?\p{L}+
    if f & F_L:
        return _run(s, p + 1, n, F_L)
    if not f & (F_N | F_NL) and p + 1 < n and T[s[p + 1]] & F_L:
        return _run(s, p + 2, n, F_L)
    # 3. \p{N}{1,3} (or \p{N})
    if f & F_N:
        e = p + 1
        while e < n and e - p < max_digits and T[s[e]] & F_N:
            e += 1
        return e
    # 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    if c == CH_SPACE and p + 1 < n and not T[s[p + 1]] & F_LNS:
        return _run_nl(s, _run_other(s, p + 2, n), n)
    if not f & F_LNS:
        return _run_nl(s, _run_other(s, p + 1, n), n)
    # 5. Whitespace.
    return _whitespace(s, n, p, to_end_first)


cdef inline Py_ssize_t _o200k_lower_tail(const uchar_t* s, Py_ssize_t n, Py_ssize_t q) noexcept nogil:
    # End of [UP]*[LO]+ at q, or -1. UP* is greedy, so the run of UP from q is taken first; LO+ then needs a LO
    # right after it (only an Ll can be there, as UP-and-LO chars would be in the run), else UP* gives back
    # characters until the last LO in the run, which LO+ takes alone (its neighbour is UP-only or the run end).
    cdef Py_ssize_t u, k
    if q >= n:
        return -1
    u = _run(s, q, n, F_UP)
    if u < n and T[s[u]] & F_LO:
        return _run(s, u + 1, n, F_LO)
    k = u - 1
    while k >= q:
        if T[s[k]] & F_LO:
            return k + 1
        k -= 1
    return -1


cdef inline Py_ssize_t _o200k_upper_head(const uchar_t* s, Py_ssize_t n, Py_ssize_t q) noexcept nogil:
    # End of [UP]+[LO]* at q, or -1 (both greedy; nothing after them can fail, so no backtracking).
    cdef Py_ssize_t u
    if q >= n:
        return -1
    u = _run(s, q, n, F_UP)
    if u == q:
        return -1
    return _run(s, u, n, F_LO)


cdef Py_ssize_t _next_o200k(const uchar_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef uint32_t c = s[p]
    cdef uint8_t f = T[c]
    cdef bint can_prefix = not f & (F_L | F_N | F_NL)     # [^\r\n\p{L}\p{N}]
    cdef Py_ssize_t e = -1
    # 1-2. P?[UP]*[LO]+C? | P?[UP]+[LO]*C?, tried in the regex's order: alternative 1 with the optional prefix P
    #      taken, then without; then alternative 2 likewise. C is the optional case-insensitive contraction.
    #      (A mark can be both the prefix and part of a run, hence both tries.)
    if can_prefix:
        e = _o200k_lower_tail(s, n, p + 1)
    if e < 0 and f & (F_UP | F_LO):
        e = _o200k_lower_tail(s, n, p)
    if e < 0 and can_prefix:
        e = _o200k_upper_head(s, n, p + 1)
    if e < 0 and f & F_UP:
        e = _o200k_upper_head(s, n, p)
    if e >= 0:
        if e < n and s[e] == CH_APOS:
            return _contraction_ci(s, n, e)
        return e
    # 3. \p{N}{1,3}
    if f & F_N:
        e = p + 1
        while e < n and e - p < 3 and T[s[e]] & F_N:
            e += 1
        return e
    # 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if c == CH_SPACE and p + 1 < n and not T[s[p + 1]] & F_LNS:
        e = _run_other(s, p + 2, n)
    elif not f & F_LNS:
        e = _run_other(s, p + 1, n)
    if e >= 0:
        while e < n and (s[e] == 0x0A or s[e] == 0x0D or s[e] == CH_SLASH):
            e += 1
        return e
    # 5. Whitespace: \s*[\r\n]+|\s+(?!\S)|\s+
    return _whitespace(s, n, p, False)


cdef inline Py_ssize_t _next(const uchar_t* s, Py_ssize_t n, Py_ssize_t p, int pid) noexcept nogil:
    if pid == PID_GPT2:
        return _next_gpt2(s, n, p)
    if pid == PID_O200K:
        return _next_o200k(s, n, p)
    if pid == PID_QWEN2:
        return _next_cl100k(s, n, p, 1, False)
    return _next_cl100k(s, n, p, 3, pid == PID_GPT4)


cdef inline Py_ssize_t _utf8(const uchar_t* s, Py_ssize_t a, Py_ssize_t b, char* out) noexcept nogil:
    # UTF-8 of s[a:b] into out (room for 4 bytes per code point); -1 on a lone surrogate (not encodable).
    cdef Py_ssize_t i, j = 0
    cdef uint32_t c
    for i in range(a, b):
        c = s[i]
        if c < 0x80:
            out[j] = <char>c
            j += 1
        elif c < 0x800:
            out[j] = <char>(0xC0 | (c >> 6))
            out[j + 1] = <char>(0x80 | (c & 0x3F))
            j += 2
        elif c < 0x10000:
            if 0xD800 <= c < 0xE000:
                return -1
            out[j] = <char>(0xE0 | (c >> 12))
            out[j + 1] = <char>(0x80 | ((c >> 6) & 0x3F))
            out[j + 2] = <char>(0x80 | (c & 0x3F))
            j += 3
        else:
            out[j] = <char>(0xF0 | (c >> 18))
            out[j + 1] = <char>(0x80 | ((c >> 12) & 0x3F))
            out[j + 2] = <char>(0x80 | ((c >> 6) & 0x3F))
            out[j + 3] = <char>(0x80 | (c & 0x3F))
            j += 4
    return j


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
        e = _next(s, n, p, pid)
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
                m = _utf8(s, p, e, <char*>buf.data())
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
        e = _next(s, n, p, pid)
        if ascii:
            counter.add_in_thread(<const char*>s + p, e - p)
        else:
            if <Py_ssize_t>buf.size() < 4 * (e - p):
                buf.resize(4 * (e - p))
            m = _utf8(s, p, e, <char*>buf.data())
            if m < 0:
                return -1
            counter.add_in_thread(buf.data(), m)
        p = e
    return 0


cdef int _count_ref(const TextRef* ref, int pid, HfbpePieceCounter* counter, string* buf) noexcept nogil:
    if ref.kind == PyUnicode_1BYTE_KIND:
        return _count_nogil(<const uint8_t*>ref.data, ref.length, ref.ascii, pid, counter, buf)
    if ref.kind == PyUnicode_2BYTE_KIND:
        return _count_nogil(<const uint16_t*>ref.data, ref.length, False, pid, counter, buf)
    return _count_nogil(<const uint32_t*>ref.data, ref.length, False, pid, counter, buf)


cdef int _pieces_nogil(
    const uchar_t* s, Py_ssize_t n, bint ascii, int pid, string* utf8, vector[size_t]* ends
) noexcept nogil:
    """A text's UTF-8 and its pieces' end offsets, for encoding on a thread; -1 for a lone surrogate."""
    cdef Py_ssize_t p = 0, e, m
    cdef size_t at
    utf8.clear()
    ends.clear()
    if ascii:
        utf8.append(<const char*>s, n)    # ASCII str data is its own UTF-8: piece ends are character offsets
        while p < n:
            p = _next(s, n, p, pid)
            ends.push_back(p)
        return 0
    while p < n:
        e = _next(s, n, p, pid)
        at = utf8.size()
        utf8.resize(at + 4 * (e - p))
        m = _utf8(s, p, e, <char*>utf8.data() + at)
        if m < 0:
            return -1
        utf8.resize(at + m)
        ends.push_back(at + m)
        p = e
    return 0


cdef int _pieces_ref(const TextRef* ref, int pid, string* utf8, vector[size_t]* ends) noexcept nogil:
    if ref.kind == PyUnicode_1BYTE_KIND:
        return _pieces_nogil(<const uint8_t*>ref.data, ref.length, ref.ascii, pid, utf8, ends)
    if ref.kind == PyUnicode_2BYTE_KIND:
        return _pieces_nogil(<const uint16_t*>ref.data, ref.length, False, pid, utf8, ends)
    return _pieces_nogil(<const uint32_t*>ref.data, ref.length, False, pid, utf8, ends)


cdef const char* _PIECES_CAPSULE = b"hf_bpe.core._scanner.pieces"  # a C literal: outlives every capsule


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
