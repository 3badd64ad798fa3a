# The view of a str that the compiled modules hand to threads without the GIL (csrc/parallel_count.hpp), declared
# once for _scanner.pyx (counting, splitting) and _core.pyx (encoding).

cdef extern from "csrc/parallel_count.hpp":
    cdef struct TextRef "hfbpe::TextRef":
        const void* data
        Py_ssize_t length
        int kind
        int ascii
    int hfbpe_text_ref(object text, TextRef* ref) except -1
