# The view of a str that the compiled modules hand to threads without the GIL (csrc/parallel_count.hpp), the PEP 393
# accessors that read a str in place, and the scanners' piece ends (csrc/piece_ends.hpp), declared once for
# _scanner.pyx (splitting), _tally.pyx (counting) and _core.pyx (encoding).

cdef extern from "Python.h":
    # PEP 393 accessors (macros); declared so that no Python object is made per character.
    unsigned int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    bint PyUnicode_IS_ASCII(object o)
    enum:
        PyUnicode_1BYTE_KIND
        PyUnicode_2BYTE_KIND
        PyUnicode_4BYTE_KIND


cdef extern from "csrc/py_unicode.hpp":
    int hfbpe_unicode_ready(object s) except -1


cdef extern from "csrc/parallel_count.hpp":
    cdef struct TextRef "hfbpe::TextRef":
        const void* data
        Py_ssize_t length
        int kind
        int ascii
        int utf8
    int hfbpe_text_ref(object text, TextRef* ref) except -1


cdef extern from "csrc/piece_ends.hpp" nogil:
    # A std::vector of size_t whose resize() does not zero-fill (the scanners write every entry they keep).
    cdef cppclass PieceEnds "hfbpe::PieceEnds":
        PieceEnds() except +
        size_t* data()
        size_t size()
        void swap(PieceEnds&)
