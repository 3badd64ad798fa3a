# distutils: language = c++
# distutils: extra_compile_args = -O3 -std=c++17
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Spell token bytes in GPT-2's byte-level alphabet straight into file text: the hot part of the writers.

A 32,000-token model's ``vocab.json``, ``merges.txt`` and ``tokenizer.json`` took ~75 ms to spell and render in
Python (a str and a dict entry per token, then ``json.dumps``), serial time at the end of every training run; here
each file part is one pass over the tokens' bytes. ``hf_bpe.formats.gpt2`` checks the inputs and owns the layout;
this module only writes, exactly as ``token_to_str`` spells and ``json.dumps(..., ensure_ascii=False)`` escapes.
"""

import json

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t
from libcpp.string cimport string

from hf_bpe.core.bytelevel import BYTE_TO_UNICODE

# Each byte's symbol in UTF-8, and the same inside a JSON string (only '"' and '\\' need escaping: the alphabet
# maps every control byte to a printable symbol).
cdef string _PLAIN[256]
cdef string _JSON[256]


def _fill_tables():
    for b in range(256):
        symbol = BYTE_TO_UNICODE[b]
        _PLAIN[b] = symbol.encode("utf-8")
        quoted = json.dumps(symbol, ensure_ascii=False)
        _JSON[b] = quoted[1:len(quoted) - 1].encode("utf-8")


_fill_tables()


cdef inline int _spell(string& out, object token, string* table) except -1:
    if type(token) is not bytes:
        raise TypeError(f"a token must be bytes, got {type(token).__name__} {token!r:.60}")
    cdef const unsigned char* p = <const unsigned char*><const char*><bytes>token
    cdef Py_ssize_t i, n = len(token)
    for i in range(n):
        out.append(table[p[i]])
    return 0


cdef inline void _number(string& out, int64_t value):
    cdef char digits[24]
    cdef int k = 0
    if value == 0:
        out.push_back(b"0")
        return
    while value > 0:
        digits[k] = <char>(48 + value % 10)
        value //= 10
        k += 1
    while k > 0:
        k -= 1
        out.push_back(digits[k])


cdef str _text(string& out):
    return PyUnicode_DecodeUTF8(out.data(), <Py_ssize_t>out.size(), NULL)


def json_object(list keys not None, list ids not None):
    """Return ``'{"k0":i0,"k1":i1,...}'``: a bytes key spelled and escaped, a str key written as given (it must be
    a JSON string literal, quotes included); ``ids`` are ints >= 0.

    >>> json_object([b" a", '"<s>"'], [0, 1])
    '{"\u0120a":0,"<s>":1}'
    """
    if len(keys) != len(ids):
        raise ValueError(f"json_object needs as many ids as keys, got {len(keys)} keys and {len(ids)} ids")
    cdef string out
    cdef Py_ssize_t i
    cdef bytes literal
    cdef int64_t value
    out.reserve(16 * len(keys) + 2)
    out.push_back(b"{")
    for i in range(len(keys)):
        if i:
            out.push_back(b",")
        key = keys[i]
        if type(key) is bytes:
            out.push_back(b'"')
            _spell(out, key, _JSON)
            out.push_back(b'"')
        else:
            literal = (<str>key).encode("utf-8")
            out.append(<const char*>literal, len(literal))
        out.push_back(b":")
        value = <int64_t>ids[i]
        if value < 0:
            raise ValueError(f"ids must be >= 0, got {ids[i]!r}")
        _number(out, value)
    out.push_back(b"}")
    return _text(out)


def merges_text(list lefts not None, list rights not None):
    """Return one ``"A B\\n"`` line per merge (parts spelled), as ``merges.txt`` lists them after its header.

    >>> merges_text([b" ", b"a"], [b"t", b"\\n"])
    '\u0120 t\\na \u010a\\n'
    """
    cdef string out
    cdef Py_ssize_t i
    if len(lefts) != len(rights):
        raise ValueError(f"merges_text needs as many right parts as left parts, got {len(lefts)} and {len(rights)}")
    out.reserve(12 * len(lefts))
    for i in range(len(lefts)):
        _spell(out, lefts[i], _PLAIN)
        out.push_back(b" ")
        _spell(out, rights[i], _PLAIN)
        out.push_back(b"\n")
    return _text(out)


def merges_json(list lefts not None, list rights not None):
    """Return the merges as ``tokenizer.json`` lists them: ``'[["A","B"],...]'`` (parts spelled and escaped).

    >>> merges_json([b'"'], [b"\\\\"])
    '[["\\\\"","\\\\\\\\"]]'
    """
    cdef string out
    cdef Py_ssize_t i
    if len(lefts) != len(rights):
        raise ValueError(f"merges_json needs as many right parts as left parts, got {len(lefts)} and {len(rights)}")
    out.reserve(16 * len(lefts) + 2)
    out.push_back(b"[")
    for i in range(len(lefts)):
        if i:
            out.push_back(b",")
        out.append(b'["')
        _spell(out, lefts[i], _JSON)
        out.append(b'","')
        _spell(out, rights[i], _JSON)
        out.append(b'"]')
    out.push_back(b"]")
    return _text(out)
