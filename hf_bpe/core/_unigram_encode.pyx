# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Compiled unigram Viterbi (C++ in csrc/unigram_viterbi.hpp): SentencePiece's ``EncodeOptimized``, exactly.

The spec is the pure-Python ``hf_bpe.model.unigram.UnigramModel.viterbi_reference``; ``UnigramModel.viterbi`` calls
this module, and tests/test_unigram.py holds the two equal.
"""

from libc.stdint cimport int32_t
from libcpp.vector cimport vector
from libcpp.string cimport string

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    object PyUnicode_DecodeUTF8(const char* data, Py_ssize_t size, const char* errors)

cdef extern from "csrc/unigram_viterbi.hpp" namespace "hfbpe_unigram":
    cdef cppclass UnigramViterbi:
        UnigramViterbi(int32_t, float) except +
        void add(const string&, int32_t, float, int) except +
        void segment(const char*, size_t, vector[int32_t]&, vector[int32_t]&) except + nogil


cdef class UnigramSegmenter:
    """The trie pieces of a unigram model and its unknown id and score; ``segment`` is ``EncodeOptimized``."""

    cdef UnigramViterbi* viterbi

    def __cinit__(self, pieces, int unk_id, float unk_score):
        self.viterbi = new UnigramViterbi(unk_id, unk_score)
        for text, index, score, kind in pieces:
            self.viterbi.add(text.encode("utf-8"), index, score, kind)

    def __dealloc__(self):
        del self.viterbi

    def segment(self, str text):
        """Return the best segmentation of normalized ``text`` as (piece text, id), unknown characters one by one."""
        cdef Py_ssize_t size
        cdef const char* data = PyUnicode_AsUTF8AndSize(text, &size)
        cdef vector[int32_t] starts
        cdef vector[int32_t] ids
        with nogil:
            self.viterbi.segment(data, <size_t>size, starts, ids)
        cdef Py_ssize_t n = <Py_ssize_t>starts.size()
        cdef Py_ssize_t i, end
        out = []
        for i in range(n):
            end = starts[i + 1] if i + 1 < n else size
            out.append((PyUnicode_DecodeUTF8(data + starts[i], end - starts[i], NULL), ids[i]))
        return out
