# A str's code points as a C++ vector, read in place (PEP 393), for _sentencepiece.pyx and _unigram.pyx.

from libc.stdint cimport uint32_t
from libcpp.vector cimport vector

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil


cdef inline vector[uint32_t] code_points(str text):
    cdef vector[uint32_t] out
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    out.reserve(n)
    for i in range(n):
        out.push_back(PyUnicode_READ(kind, data, i))
    return out
