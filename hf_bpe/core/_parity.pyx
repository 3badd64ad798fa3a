# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Compiled back end of parity-aware BPE (C++ in csrc/parity_counts.hpp): the pair counts, heaps and words of
every language, kept up to date merge by merge. ``hf_bpe.training.parity.trainer`` drives it with the reference's
loop (``training.parity.reference.run_parity``); its pure-Python twin there is the spec the tests hold it to.
"""

from libc.stdint cimport int32_t, int64_t
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "csrc/parity_counts.hpp" namespace "hfbpe_parity":
    cdef struct Entry:
        int64_t count
        int32_t left
        int32_t right

    cdef cppclass ParityCounts:
        ParityCounts(vector[string], vector[int32_t]) except +
        void add_corpus(cbool, const char*, int64_t, const int64_t*, const int64_t*, int64_t) except + nogil
        void start(cbool) except + nogil
        cbool best_pair(size_t, Entry&) except +
        cbool best_global_pair(Entry&) except +
        void apply(int32_t, int32_t, int32_t) except + nogil
        vector[int64_t] lengths(cbool)


cdef class CompiledCounts:
    """Pair counts of several languages' training (and dev) words, for ``run_parity``.

    Args:
        spellings: every token's byte-level string, by id (the vocabulary before any merge).
        byte_ids: 256 ints, the id of each byte's token (-1 for a byte never seen).
    """

    cdef ParityCounts* c

    def __cinit__(self, list spellings, byte_ids):
        cdef vector[string] spell
        cdef vector[int32_t] table
        for token in spellings:
            spell.push_back(token.encode("utf-16-be", "surrogatepass"))
        for i in byte_ids:
            table.push_back(i)
        self.c = new ParityCounts(spell, table)

    def __dealloc__(self):
        del self.c

    def add_corpus(self, bint dev, bytes blob, const int64_t[::1] ends, const int64_t[::1] counts):
        """Add one language's words: their bytes end to end, each word's end offset and count."""
        if ends.shape[0] != counts.shape[0]:
            raise ValueError(f"ends and counts differ in length: {ends.shape[0]} and {counts.shape[0]}")
        cdef const char* data = blob
        cdef int64_t size = len(blob)
        cdef int64_t n = ends.shape[0]
        cdef const int64_t* e = &ends[0] if n else NULL
        cdef const int64_t* k = &counts[0] if n else NULL
        with nogil:
            self.c.add_corpus(dev, data, size, e, k, n)

    def start(self, bint global_merges):
        """Build the heaps (and the summed counts when global merges come first)."""
        with nogil:
            self.c.start(global_merges)

    def best_pair(self, int lang):
        cdef Entry e
        if not self.c.best_pair(lang, e):
            return None
        return (e.left, e.right), e.count

    def best_global_pair(self):
        cdef Entry e
        if not self.c.best_global_pair(e):
            return None
        return (e.left, e.right), e.count

    def apply(self, tuple pair, int new):
        cdef int32_t a = pair[0]
        cdef int32_t b = pair[1]
        with nogil:
            self.c.apply(a, b, new)

    def lengths(self, bint dev):
        return list(self.c.lengths(dev))
