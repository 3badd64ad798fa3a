// Python C-API helpers for the scanner (Python.h is included before this header by the Cython module).
#pragma once

// Before 3.12 a str made by legacy C APIs may not be in PEP 393 form until PyUnicode_READY.
static inline int hfbpe_unicode_ready(PyObject* s) {
#if PY_VERSION_HEX < 0x030C0000
    return PyUnicode_READY(s);
#else
    (void)s;
    return 0;
#endif
}
