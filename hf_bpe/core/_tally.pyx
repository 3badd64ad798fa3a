# distutils: language = c++
# distutils: extra_compile_args = -O3 -std=c++17
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Count pre-token pieces over many batches in compiled memory: the tally, its counting threads, file blocks.

The scanners themselves live in ``hf_bpe.core._scanner``; this module gets their threaded counter as a capsule
(``_scanner.count_function``) and runs it on a pool of threads without the GIL (``csrc/parallel_count.hpp``). Also
here: the framing of texts and of file blocks for the corpus fingerprint (``hf_bpe.formats.manifest``).
"""

from cpython.array cimport array, clone
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_GetItemWithError
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcpy, memset
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector

from hf_bpe.core._text_ref cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_4BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_IS_ASCII, PyUnicode_KIND, TextRef, hfbpe_text_ref, hfbpe_unicode_ready,
)

from hf_bpe.core import _scanner


cdef extern from "csrc/piece_counter.hpp":
    cppclass HfbpePieceCounter "hfbpe::HfbpePieceCounter":
        void absorb(HfbpePieceCounter& other) except +
        vector[size_t] order() except +
        size_t size()
        const char* key_data(size_t i)
        size_t key_size(size_t i)
        int64_t value(size_t i)


cdef extern from "csrc/sha256.hpp" namespace "hfbpe":
    void sha256(const uint8_t* data, size_t n, uint8_t* out) nogil
    cbool set_sha_extensions "hfbpe::sha256_detail::set_sha_extensions"(cbool on)
    cbool sha_extensions_used "hfbpe::sha256_detail::sha_extensions_used"()
    cdef cppclass Sha256Stream "hfbpe::Sha256Stream":
        void update(const uint8_t* data, size_t n) nogil
        size_t update_framed_lines(const char* raw, size_t n) nogil
        void digest(uint8_t* out) nogil
    void add_256(uint8_t* acc, const uint8_t* x) nogil


cdef extern from "csrc/utf8_check.hpp" namespace "hfbpe":
    int64_t utf8_code_points(const char* data, size_t n, size_t* bad) nogil
    cbool all_ascii(const char* data, size_t n) nogil


cdef extern from "csrc/release_memory.hpp":
    void _release_free_memory "hfbpe::release_free_memory"() nogil


cdef extern from "csrc/parallel_count.hpp":
    ctypedef int (*HfbpeScanFn "hfbpe::ScanFn")(const TextRef*, int, HfbpePieceCounter*, string*) noexcept nogil
    cppclass CountJob "hfbpe::CountJob":
        uint64_t start(vector[TextRef]& refs, int pid, int threads, HfbpeScanFn scan, HfbpePieceCounter* counters,
                       uint64_t base) except + nogil
        int finish(Py_ssize_t* failed_at, uint64_t* failed_batch) nogil
        int run_here(vector[TextRef]& refs, int pid, HfbpeScanFn scan, HfbpePieceCounter* counters, uint64_t base,
                     Py_ssize_t* failed_at, uint64_t* failed_batch) nogil
        uint64_t completed() nogil
        cbool failed() nogil
    enum:
        COUNT_OK "hfbpe::COUNT_OK"
        COUNT_BAD_TEXT "hfbpe::COUNT_BAD_TEXT"


# Below this many characters a batch is counted on one thread: starting threads costs more than it saves.
_THREAD_MIN_CHARS = 1 << 16
# A thread's counter is folded into the first once it holds this many pieces (PieceTally._after).
cdef size_t _FOLD_PIECES = 1 << 20
# Characters of an iterable (not a list) read before counting them.
_CHUNK_CHARS = 1 << 22


def count(texts, int pid, bint add_prefix_space, counts not None, int threads=1):
    """Add the UTF-8 piece counts of every str in `texts` to `counts` (a dict or subclass) and return it.

    Counts accumulate in HfbpePieceCounter, keyed by the piece bytes, and are added to `counts` at the end in
    first-seen order, so the result does not depend on hashing. Measured on english_combined.txt (gpt2, CPU time):
    this table ~150 MB/s end to end, std::unordered_map<std::string, int64_t> ~1.4x slower, a dict filled from C
    (one bytes object per piece) ~3x slower; scanning alone runs at ~350 MB/s.
    `add_prefix_space` prepends " " to each non-empty text that does not start with one.
    `threads` > 1 scans contiguous parts of `texts` on that many threads without the GIL (parallel_count.hpp);
    the counts and their order are the same for any number of threads.
    """
    cdef PieceTally tally = PieceTally(pid, add_prefix_space)
    cdef list chunk
    cdef Py_ssize_t chars = 0
    if type(texts) is list:
        tally.add(texts, threads)
        return tally.into(counts)
    chunk = []    # an iterable is read in chunks of a few MB: memory stays flat
    for text in texts:
        chunk.append(text)
        chars += len(text) if type(text) is str else 0
        if chars >= _CHUNK_CHARS:
            tally.add(chunk, threads)
            chunk, chars = [], 0
    tally.add(chunk, threads)
    return tally.into(counts)


cdef void _line_refs(const void* data, Py_ssize_t n, unsigned int kind, bint ascii, const char* raw,
                     Py_ssize_t raw_size, vector[TextRef]& refs):
    """Point refs at each line of a str's data (kind bytes per code point): a line ends after each "\\n".

    When the str is not ASCII, an ASCII line is still scanned as ASCII (the fast path): in the str's own data
    when it has 1 byte per code point, else in `raw` (the str's UTF-8, if not NULL), where its bytes are its code
    points. A line is ASCII iff its UTF-8 is as long as it is (any other character takes 2-4 bytes).
    """
    cdef Py_ssize_t start = 0, i, byte_start = 0, byte_end
    cdef const char* hit
    cdef TextRef ref
    if ascii:    # 1 byte per code point, all ASCII: every line is
        ref.kind = kind
        ref.ascii = 1
        while start < n:
            i = _newline(data, kind, start, n)
            ref.data = <const char*>data + start
            ref.length = i + 1 - start
            refs.push_back(ref)
            start = i + 1
        return
    if kind == PyUnicode_1BYTE_KIND and raw == NULL:
        raw, raw_size = <const char*>data, n    # no UTF-8 given: Latin-1 lines are told apart by their bytes
    while start < n:
        i = _newline(data, kind, start, n)
        ref.length = i + 1 - start
        ref.kind = kind
        ref.ascii = 0
        ref.data = <const char*>data + start * kind
        if raw != NULL and byte_start < raw_size:
            hit = <const char*>memchr(raw + byte_start, 10, raw_size - byte_start)
            byte_end = raw_size if hit == NULL else hit - raw + 1
            if byte_end - byte_start == ref.length:
                if kind != PyUnicode_1BYTE_KIND or raw == <const char*>data:
                    ref.data = raw + byte_start
                else:
                    ref.data = <const char*>data + start
                ref.kind = PyUnicode_1BYTE_KIND
                ref.ascii = 1 if raw != <const char*>data else all_ascii(raw + byte_start, <size_t>ref.length)
            byte_start = byte_end
        refs.push_back(ref)
        start = i + 1


cdef void _utf8_line_refs(const char* raw, Py_ssize_t n, vector[TextRef]& refs):
    """Point refs at each line of checked UTF-8 `raw` (a line ends after each "\\n"): an ASCII line as 1-byte
    ASCII data (the scanners' fast path), any other as UTF-8 read in place (no str, nothing transcoded)."""
    cdef Py_ssize_t start = 0, end
    cdef const char* hit
    cdef TextRef ref
    ref.kind = PyUnicode_1BYTE_KIND
    while start < n:
        hit = <const char*>memchr(raw + start, 10, n - start)
        end = n if hit == NULL else hit - raw + 1
        ref.data = raw + start
        ref.length = end - start
        ref.ascii = all_ascii(raw + start, <size_t>ref.length)
        ref.utf8 = not ref.ascii
        refs.push_back(ref)
        start = end


cdef class Utf8Block:
    """Bytes checked to be UTF-8 exactly as Python's strict decoder accepts it, with their code points counted.

    What a file's block of lines is counted from (:meth:`PieceTally.add_lines`) instead of a str decoded from it
    (1, 2 or 4 bytes a character, alive while the block is counted). Only this check makes one, so the counting
    threads may read its bytes as valid UTF-8 (csrc/utf8_check.hpp: no overlong form, no surrogate, nothing above
    U+10FFFF, no sequence cut short).

    >>> block = Utf8Block("caf\\u00e9 \\U0001F600\\n".encode()); block.characters, len(block.raw)
    (7, 11)
    >>> Utf8Block(b"ok \\xed\\xa0\\x80")
    Traceback (most recent call last):
    UnicodeDecodeError: 'utf-8' codec can't decode byte 0xed in position 3: invalid UTF-8
    """

    cdef readonly bytes raw
    cdef readonly Py_ssize_t characters

    def __cinit__(self, bytes raw not None):
        cdef const char* data = raw
        cdef size_t n = len(raw), bad = 0
        cdef int64_t count
        with nogil:
            count = utf8_code_points(data, n, &bad)
        if count < 0:
            raise UnicodeDecodeError("utf-8", raw, bad, bad + 1, "invalid UTF-8")
        self.raw = raw
        self.characters = count

    def __len__(self):
        return self.characters

    def decode(self):
        """Return the text (a str: made only on demand)."""
        return self.raw.decode("utf-8")


cdef inline Py_ssize_t _newline(const void* data, unsigned int kind, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
    """The index of the first "\\n" at or after start in a str's data, or n - 1 (the last line has none).

    memchr on the bytes for every kind (a code-unit loop took ~1 ms per MB, serial time before each batch): a
    0x0A byte is the newline iff it starts a code unit whose other bytes are zero (native byte order).
    """
    cdef const char* base = <const char*>data
    cdef const char* p = base + start * kind
    cdef const char* end = base + n * kind
    cdef const char* hit
    cdef Py_ssize_t unit
    while p < end:
        hit = <const char*>memchr(p, 10, end - p)
        if hit == NULL:
            return n - 1
        unit = (hit - base) // kind
        if kind == 1:
            return unit
        if kind == 2 and (<const uint16_t*>data)[unit] == 10:
            return unit
        if kind == 4 and (<const uint32_t*>data)[unit] == 10:
            return unit
        p = hit + 1
    return n - 1


cdef class PieceTally:
    """Piece counts accumulated over many batches of texts in compiled memory, added to a dict once at the end.

    A corpus counted batch by batch into a dict pays one bytes object and one dict update per distinct piece of
    every batch; a tally pays them once. :meth:`add` counts a batch (on `threads` threads without the GIL);
    :meth:`start` / :meth:`start_lines` begin counting one in the background and return (the caller reads the next
    batch meanwhile; while two batches wait, and in :meth:`finish`, the calling thread counts too: `threads` is
    the number of busy threads, this one included; every other method finishes first).
    """

    # One counter per thread, kept from batch to batch (each piece stamped with its position in the stream:
    # parallel_count.hpp); _fold() adds them into counters[0].
    cdef vector[HfbpePieceCounter] counters
    # Characters (a Utf8Block's bytes) counted so far: where the next text starts in the stream.
    cdef uint64_t position
    cdef CountJob job
    cdef HfbpeScanFn scan     # the scanner's counter for `pid` (_scanner.count_function)
    cdef dict pending         # batch number -> what it reads (list of str, str of lines, Utf8Block), until complete
    cdef bint here            # add()/add_lines(): one thread counts on the calling thread, at once
    cdef readonly int pid
    cdef readonly bint add_prefix_space

    def __init__(self, int pid, bint add_prefix_space):
        self.scan = <HfbpeScanFn>PyCapsule_GetPointer(_scanner.count_function(pid), b"hf_bpe.core._scanner.count")
        self.pid = pid
        self.add_prefix_space = add_prefix_space
        self.pending = {}

    def __dealloc__(self):
        cdef Py_ssize_t ignored
        cdef uint64_t batch
        with nogil:
            self.job.finish(&ignored, &batch)    # before the texts it reads are released

    def __len__(self):
        self._fold()
        return self.counters[0].size()

    def add(self, texts, int threads=1):
        """Count the pieces of every str in `texts` (an iterable; a list is read without copying)."""
        self.here = True    # one thread: the calling one (see CountJob::run_here)
        try:
            self.start(texts, threads)
        finally:
            self.here = False
        self.finish()

    def add_lines(self, block not None, int threads=1, bytes raw=None):
        """Count every line of `block` as one text, as :meth:`add` counts ``block``'s lines; return how many.

        `block` is a str or a :class:`Utf8Block` (a file's bytes, counted without a str: its ASCII lines as ASCII,
        the others as UTF-8 in place). A line ends after each "\\n" (a last line without one is a line too). No str
        is made per line: the threads scan the lines in place (the serial part of counting a file was making ~100 ns
        of str per line).
        """
        self.here = True
        try:
            lines = self.start_lines(block, threads, raw)
        finally:
            self.here = False
        self.finish()
        return lines

    def start(self, texts, int threads=1):
        """Begin counting `texts` as :meth:`add` does, in the background; :meth:`finish` waits."""
        cdef list batch = texts if type(texts) is list else list(texts)
        cdef vector[TextRef] refs
        cdef list kept = batch    # the texts read, alive until the threads are done (copies when prefixed)
        cdef Py_ssize_t i, n = len(batch), chars = 0
        cdef object text
        if self.add_prefix_space:
            kept = [(" " + t if type(t) is str and PyUnicode_GET_LENGTH(t) and not (<str>t).startswith(" ")
                     else t) for t in batch]
        refs.resize(n)
        # ~20 ns per text: the serial part of a threaded count of short lines.
        for i in range(n):
            text = kept[i]
            if type(text) is not str and not isinstance(text, str):
                raise TypeError(
                    f"texts[{i}] is {type(text).__name__} {text!r:.80}; expected str (decode bytes first)"
                )
            hfbpe_text_ref(text, &refs[i])
            chars += refs[i].length
        self._start(refs, chars, threads, kept)    # while the threads count the previous batches

    def start_lines(self, block not None, int threads=1, bytes raw=None):
        """Begin counting the lines of `block` as :meth:`add_lines` does, in the background; return how many.

        For a str `block`, `raw`, if given, must be ``block.encode("utf-8")``: its ASCII lines are then scanned by
        the ASCII fast path even when `block` holds wider characters elsewhere.
        """
        cdef vector[TextRef] refs
        cdef Py_ssize_t lines_found
        if type(block) is Utf8Block:
            if self.add_prefix_space:  # each line needs a prefixed copy: the str path
                return self.start_lines((<Utf8Block>block).decode(), threads)
            raw = (<Utf8Block>block).raw
            _utf8_line_refs(raw, len(raw), refs)
            lines_found = refs.size()
            # Stamps advance by bytes here (>= the pieces of each line, like characters): the same first-seen order.
            self._start(refs, len(raw), threads, block)
            return lines_found
        if type(block) is not str:
            raise TypeError(f"block is {type(block).__name__} {block!r:.80}; expected str or Utf8Block")
        if self.add_prefix_space:  # each line needs a prefixed copy: the str path
            parts = block.split("\n")
            last = parts.pop()    # after the last "\n": a line only if not empty
            lines = [part + "\n" for part in parts]
            if last:
                lines.append(last)
            self.start(lines, threads)
            return len(lines)
        cdef const char* raw_data = NULL
        cdef Py_ssize_t raw_size = 0
        if raw is not None:
            raw_data, raw_size = raw, len(raw)
        hfbpe_unicode_ready(block)
        _line_refs(PyUnicode_DATA(block), PyUnicode_GET_LENGTH(block), PyUnicode_KIND(block),
                   PyUnicode_IS_ASCII(block), raw_data, raw_size, refs)
        lines_found = refs.size()
        self._start(refs, PyUnicode_GET_LENGTH(block), threads, block if raw is None else (block, raw))
        return lines_found

    def finish(self):
        """Wait for the counts :meth:`start` began (if any); raise what they met (a lone surrogate: UnicodeError)."""
        cdef Py_ssize_t failed_at = -1
        cdef uint64_t failed_batch = 0
        cdef int status
        if not self.pending:
            return
        with nogil:
            status = self.job.finish(&failed_at, &failed_batch)
        pending, self.pending = self.pending, {}
        self._after(status, failed_at, pending.get(failed_batch))

    cdef int _after(self, int status, Py_ssize_t failed_at, object kept) except -1:
        """Fold large thread counters; raise the failure of the batch that read `kept`, if any."""
        cdef size_t t
        for t in range(1, self.counters.size()):
            # A thread's counter holds (mostly) the same pieces as counters[0]: fold it in once it is large, so
            # that memory stays about one counter's even for corpora with many distinct pieces.
            if self.counters[t].size() >= _FOLD_PIECES:
                self.counters[0].absorb(self.counters[t])
        if status == COUNT_BAD_TEXT:
            # (A Utf8Block never fails: checked UTF-8 has no surrogate.)
            text = kept if type(kept) is list else (kept if type(kept) is str else kept[0]).split("\n")
            bad = text[failed_at]
            bad.encode("utf-8")    # raises the standard UnicodeEncodeError naming the surrogate
            raise UnicodeError(f"cannot encode {bad!r} to UTF-8")
        if status != COUNT_OK:
            raise MemoryError("counting pre-tokens ran out of memory (or past 4e9 distinct pieces)")
        PyErr_CheckSignals()    # a long batch runs without Python code: let Ctrl-C through
        return 0

    cdef int _start(self, vector[TextRef]& refs, Py_ssize_t chars, int threads, object kept) except -1:
        cdef Py_ssize_t failed_at = -1
        cdef uint64_t failed_batch = 0, number, completed
        cdef int status
        if self.job.failed():
            self.finish()    # raises now, instead of after reading (and holding) the rest of the corpus
        if chars < _THREAD_MIN_CHARS:
            threads = 1
        if self.counters.size() < <size_t>threads:
            self.finish()    # no batch may run while the counters move
            self.counters.resize(threads)
        if self.here and threads == 1:
            with nogil:
                status = self.job.run_here(refs, self.pid, self.scan, self.counters.data(), self.position,
                                           &failed_at, &failed_batch)
            pending, self.pending = self.pending, {}
            self.position += <uint64_t>chars
            self._after(status, failed_at, pending.get(failed_batch, kept))
            return 0
        with nogil:    # waits while two batches are queued: the threads must be free to finish them
            number = self.job.start(refs, self.pid, threads, self.scan, self.counters.data(), self.position)
        self.pending[number] = kept    # until the batch is complete (or failed: finish() names the text)
        self.position += <uint64_t>chars
        if not self.job.failed():
            completed = self.job.completed()
            for done in [n for n in self.pending if n < completed]:
                del self.pending[done]
        return 0

    cdef void _fold(self) except *:
        cdef size_t t
        self.finish()
        if self.counters.empty():
            self.counters.resize(1)
        for t in range(1, self.counters.size()):
            self.counters[0].absorb(self.counters[t])

    def into(self, counts not None):
        """Add the tally to `counts` (a dict or subclass) in first-seen order and return `counts`."""
        self._fold()
        return _emit(&self.counters[0], counts)

    def flat(self):
        """Return the tally as a :class:`FlatCounts`, in the order :meth:`into` adds it: no object per piece."""
        self._fold()
        return _flatten(&self.counters[0])


# The int64 array the flat buffers are cloned from.
cdef array _INT64 = array("q")


cdef class FlatCounts:
    """Distinct pre-tokens and their counts as three flat buffers, in first-seen order (no object per pre-token).

    ``blob`` holds the pre-tokens' bytes end to end; pre-token i is ``blob[ends[i - 1]:ends[i]]`` (from 0 for the
    first); ``counts[i]`` is its count. ``ends`` and ``counts`` are int64 ``array("q")``. Made by
    :meth:`PieceTally.flat` (distinct, non-empty pre-tokens, counts >= 1); ``_core.train_merges_flat`` trains on
    it, :meth:`to_dict` gives the dict :meth:`PieceTally.into` would fill. ~16 bytes a pre-token plus its bytes,
    where the dict costs ~120.

    >>> from hf_bpe.core.pretokenize import Pretokenizer
    >>> tally = Pretokenizer("gpt2").tally(); tally.add(["a b", "a"]); flat = tally.flat()
    >>> flat.blob, list(flat.ends), list(flat.counts), len(flat), flat.to_dict()
    (b'a b', [1, 3], [2, 1], 2, {b'a': 2, b' b': 1})
    """

    cdef readonly bytes blob
    cdef readonly array ends
    cdef readonly array counts

    def __cinit__(self):
        self.blob, self.ends, self.counts = b"", clone(_INT64, 0, False), clone(_INT64, 0, False)

    def __len__(self):
        return len(self.counts)

    @staticmethod
    def from_dict(dict counts not None):
        """Return ``counts`` (non-empty bytes -> int in 1..2**63-1) flat, in its order: :meth:`to_dict`'s inverse.

        Raises:
            TypeError, ValueError: naming the first pre-token or count that is not one.
        """
        cdef FlatCounts flat = FlatCounts.__new__(FlatCounts)
        for token, count in counts.items():
            if type(token) is not bytes or not token:
                raise TypeError(f"pre-tokens must be non-empty bytes, got {token!r:.80}")
            if type(count) is not int or not 0 < count < 2**63:
                raise ValueError(f"the count of {token!r:.80} is {count!r}; counts must be ints in 1..2**63-1")
        flat.blob = b"".join(counts)
        flat.counts = array("q", counts.values())
        flat.ends = array("q", [0]) * len(counts)
        cdef int64_t* ends = <int64_t*>flat.ends.data.as_voidptr
        cdef int64_t at = 0
        cdef Py_ssize_t i = 0
        for token in counts:
            at += len(<bytes>token)
            ends[i] = at
            i += 1
        return flat

    def to_dict(self):
        """Return ``{pre-token: count}`` in first-seen order: one bytes and one int object per pre-token."""
        cdef dict out = {}
        cdef const char* data = PyBytes_AS_STRING(self.blob)
        cdef const int64_t* ends = <const int64_t*>self.ends.data.as_voidptr
        cdef const int64_t* counts = <const int64_t*>self.counts.data.as_voidptr
        cdef Py_ssize_t i, start = 0, n = len(self.counts)
        for i in range(n):
            out[PyBytes_FromStringAndSize(data + start, ends[i] - start)] = counts[i]
            start = ends[i]
        return out

    def release(self):
        """Empty it, dropping its buffers: what a consumer does once it has copied them (``consume=True``)."""
        self.blob, self.ends, self.counts = b"", clone(_INT64, 0, False), clone(_INT64, 0, False)


cdef FlatCounts _flatten(HfbpePieceCounter* counter):
    """A counter's pieces as a FlatCounts, in first-seen order. O(pieces + their bytes), three allocations."""
    cdef vector[size_t] order = counter.order()
    cdef size_t n = order.size(), k, j, size, total = 0
    for k in range(n):
        total += counter.key_size(order[k])
    cdef FlatCounts flat = FlatCounts.__new__(FlatCounts)
    flat.blob = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>total)
    flat.ends = clone(_INT64, <Py_ssize_t>n, False)
    flat.counts = clone(_INT64, <Py_ssize_t>n, False)
    cdef char* out = PyBytes_AS_STRING(flat.blob)
    cdef int64_t* ends = <int64_t*>flat.ends.data.as_voidptr
    cdef int64_t* counts = <int64_t*>flat.counts.data.as_voidptr
    cdef int64_t at = 0
    for k in range(n):
        j = order[k]
        size = counter.key_size(j)
        memcpy(out + at, counter.key_data(j), size)
        at += <int64_t>size
        ends[k] = at
        counts[k] = counter.value(j)
    return flat


cdef object _emit(HfbpePieceCounter* counter, counts):
    """Add a counter's pieces to `counts`, in first-seen order: one bytes object per distinct piece."""
    cdef vector[size_t] order = counter.order()
    cdef size_t j
    cdef bytes key
    cdef dict exact
    cdef PyObject* old
    if type(counts) is dict:
        exact = <dict>counts
        if not exact:
            for j in order:
                exact[PyBytes_FromStringAndSize(counter.key_data(j), counter.key_size(j))] = counter.value(j)
            return counts
        for j in order:
            key = PyBytes_FromStringAndSize(counter.key_data(j), counter.key_size(j))
            old = PyDict_GetItemWithError(exact, key)
            exact[key] = counter.value(j) if old == NULL else <object>old + counter.value(j)
        return counts
    for j in order:
        key = PyBytes_FromStringAndSize(counter.key_data(j), counter.key_size(j))
        counts[key] = counts.get(key, 0) + counter.value(j)
    return counts


cdef inline void _append_framed(string& out, const char* data, Py_ssize_t n):
    """Append the fingerprint's framing of one text: its UTF-8 length (8 bytes, little-endian), then its bytes."""
    cdef uint64_t size = <uint64_t>n
    cdef char head[8]
    cdef int k
    for k in range(8):
        head[k] = <char>((size >> (8 * k)) & 0xFF)
    out.append(head, 8)
    out.append(data, n)


def release_free_memory():
    """Give the pages of freed C memory back to the system (glibc's ``malloc_trim(0)``; elsewhere nothing).

    Called between the phases of training, so that what counting freed does not stay resident under the merge
    loop (csrc/release_memory.hpp).

    >>> release_free_memory()
    """
    with nogil:
        _release_free_memory()


def frame_utf8(list texts):
    """Return every text of `texts` as its UTF-8 length (8 bytes, little-endian) then its UTF-8 bytes, end to end.

    The framing of the corpus fingerprint (hf_bpe.formats.manifest), built in one buffer: an ASCII str is copied
    from its own data, others are encoded with "surrogatepass" (a lone surrogate is hashed, not an error).
    """
    cdef string out
    cdef bytes data
    for text in texts:
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"each text must be str, got {type(text).__name__} {text!r:.60}")
        hfbpe_unicode_ready(text)
        if PyUnicode_IS_ASCII(text):
            _append_framed(out, <const char*>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text))
        else:
            data = (<str>text).encode("utf-8", "surrogatepass")
            _append_framed(out, <const char*>data, len(data))
    return PyBytes_FromStringAndSize(out.data(), out.size())


def line_stats(bytes raw not None):
    """Return ``(longest, newlines)``: the length in bytes of the longest line of `raw` without its "\\n", and how
    many "\\n" it holds (one memchr pass, no bytes per line: what a file's block is checked and numbered with)."""
    cdef const char* data = raw
    cdef Py_ssize_t n = len(raw), start = 0, end, longest = 0, newlines = 0
    cdef const char* hit
    with nogil:
        while start < n:
            hit = <const char*>memchr(data + start, 10, n - start)
            end = n if hit == NULL else hit - data
            if end - start > longest:
                longest = end - start
            newlines += hit != NULL
            start = end + 1
    return longest, newlines


def frame_lines(bytes raw not None):
    """Return ``frame_utf8`` of the lines of `raw` (UTF-8; a line ends after each "\\n", a last line without one
    is a line too), without making a str or bytes per line: how a file read in blocks is fingerprinted."""
    cdef const char* data = raw
    cdef Py_ssize_t n = len(raw), start = 0, end
    cdef const char* hit
    cdef string out
    out.reserve(n + 8 * (n // 40 + 1))
    while start < n:
        hit = <const char*>memchr(data + start, 10, n - start)
        end = n if hit == NULL else hit - data + 1
        _append_framed(out, data + start, end - start)
        start = end
    return PyBytes_FromStringAndSize(out.data(), out.size())


# Updates at least this long run without the GIL (the counting threads and the reader go on meanwhile).
cdef Py_ssize_t _SHA_NOGIL_BYTES = 1 << 16


cdef class Sha256:
    """SHA-256 as ``hashlib.sha256`` gives it, without importing hashlib (OpenSSL): see ``csrc/sha256.hpp``.

    What training hashes with (the corpus fingerprint, the files a save writes, the disk cache): hashlib's
    libcrypto alone was 3.6 MiB of a 1 MB training run's resident memory. Uses the CPU's SHA extensions when
    present, as OpenSSL does.

    >>> import hashlib
    >>> h = Sha256(b"ab"); h.update(bytearray(b"c" * 100))
    >>> h.hexdigest() == hashlib.sha256(b"ab" + b"c" * 100).hexdigest()
    True
    """

    cdef Sha256Stream stream

    def __init__(self, data=b""):
        self.update(data)

    def update(self, data):
        """Add the bytes of ``data`` (bytes, bytearray, memoryview or any contiguous buffer)."""
        cdef const uint8_t[::1] view = memoryview(data).cast("B")
        cdef Py_ssize_t n = view.shape[0]
        if n == 0:
            return
        if n >= _SHA_NOGIL_BYTES:
            with nogil:
                self.stream.update(&view[0], <size_t>n)
        else:
            self.stream.update(&view[0], <size_t>n)

    def update_framed_lines(self, bytes raw not None):
        """Add ``frame_lines(raw)`` (each line's length in 8 little-endian bytes, then the line) without building
        it; return the number of lines.

        >>> a = Sha256(frame_lines(b"a\\nbc")); b = Sha256(); b.update_framed_lines(b"a\\nbc")
        2
        >>> a.digest() == b.digest()
        True
        """
        cdef const char* data = raw
        cdef size_t n = <size_t>len(raw), lines
        with nogil:
            lines = self.stream.update_framed_lines(data, n)
        return lines

    def digest(self):
        """Return the digest of what was added so far (32 bytes); more may be added afterwards."""
        cdef uint8_t out[32]
        self.stream.digest(out)
        return PyBytes_FromStringAndSize(<char*>out, 32)

    def hexdigest(self):
        """Return :meth:`digest` as 64 lowercase hex digits."""
        return self.digest().hex()

    def copy(self):
        """Return an independent copy of this hash's state."""
        cdef Sha256 other = Sha256.__new__(Sha256)
        other.stream = self.stream
        return other


def sha_extensions():
    """Return whether :class:`Sha256` runs on the CPU's SHA extensions (SHA-NI), as fast as OpenSSL; without them
    it runs portable rounds, ~1.8x the instructions of OpenSSL's vector code (what bulk hashing then prefers).

    >>> sha_extensions() in (True, False)
    True
    """
    return sha_extensions_used()


def _set_sha_extensions(bint on):
    """Let SHA-256 use the CPU's SHA extensions (where present) or not; return the previous setting (tests run the
    portable code with it off: both give hashlib's digests).

    >>> _set_sha_extensions(_set_sha_extensions(False))
    False
    """
    return set_sha_extensions(on)


def sum_line_digests(bytes raw not None):
    """Return ``(total, lines)``: the sha256 digests of the lines of `raw` (a line ends after each "\\n"; a last
    line without one is a line too) added as 256-bit big-endian numbers modulo 2**256 (32 bytes, big-endian), and
    how many lines: the order-free corpus fingerprint of a file's block, without a bytes object per line.

    >>> import hashlib
    >>> total, lines = sum_line_digests(b"a\\nbc\\n")
    >>> lines, int.from_bytes(total, "big") == sum(int.from_bytes(hashlib.sha256(x).digest(), "big") for x in
    ...                                           [b"a\\n", b"bc\\n"]) % 2**256
    (2, True)
    """
    cdef const char* data = raw
    cdef Py_ssize_t n = len(raw), start = 0, end, lines = 0
    cdef const char* hit
    cdef uint8_t acc[32]
    cdef uint8_t digest[32]
    memset(acc, 0, 32)
    with nogil:
        while start < n:
            hit = <const char*>memchr(data + start, 10, n - start)
            end = n if hit == NULL else hit - data + 1
            sha256(<const uint8_t*>data + start, <size_t>(end - start), digest)
            add_256(acc, digest)
            lines += 1
            start = end
    return PyBytes_FromStringAndSize(<char*>acc, 32), lines


def sum_digests(list datas not None):
    """Return the sha256 digests of the bytes in `datas` added as 256-bit big-endian numbers modulo 2**256
    (32 bytes, big-endian): the order-free corpus fingerprint of a batch of texts (their UTF-8)."""
    cdef uint8_t acc[32]
    cdef uint8_t digest[32]
    cdef bytes data
    memset(acc, 0, 32)
    for item in datas:
        if type(item) is not bytes:
            raise TypeError(f"each item must be bytes, got {type(item).__name__} {item!r:.60}")
        data = <bytes>item
        sha256(<const uint8_t*><const char*>data, <size_t>len(data), digest)
        add_256(acc, digest)
    return PyBytes_FromStringAndSize(<char*>acc, 32)
