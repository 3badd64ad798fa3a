# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Compiled classic BPE merge loop (C++ in csrc/classic_merge.hpp); the spec is ``_reference_classic.learn_merges``.

The arguments are checked by the very helper the reference uses, so both raise the same errors.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np

_CHUNK = 256

from hf_bpe.core._reference_classic import OBJECTIVES, TIE_BREAKS, check_learn_args

cdef extern from *:
    ctypedef unsigned long long unsigned_int128 "unsigned __int128"

cdef extern from "csrc/classic_merge.hpp" namespace "hfbpe_classic":
    cdef struct Merge:
        int32_t left
        int32_t right
        int32_t id

    cdef cppclass Learner:
        Learner(const int32_t*, int64_t, const int64_t*, int64_t, const int64_t*, vector[string], int, cbool,
                string, int64_t, int) except +
        vector[Merge] run(int64_t, int64_t) except + nogil
        vector[string] vocab()

cdef extern from "csrc/classic_merge.hpp":
    double c_score_ratio "hfbpe_classic::score_ratio"(uint64_t, unsigned_int128) nogil


def score_ratio(count, first_freq, second_freq):
    """Return ``count / (first_freq * second_freq)`` as the compiled loop scores a pair (tests hold it to Python's)."""
    cdef object d = first_freq * second_freq
    if not (0 < count < 2**64 and 0 < d < 2**128):
        raise ValueError(f"need 0 < count < 2**64 and 0 < first_freq * second_freq < 2**128, got {count!r}, {d!r}")
    cdef unsigned_int128 wide = (<unsigned_int128>(<uint64_t>(d >> 64)) << 64) | <uint64_t>(d & 0xFFFFFFFFFFFFFFFF)
    return c_score_ratio(<uint64_t>count, wide)


def learn_merges(symbols, starts, counts, vocab, *, num_merges, min_frequency=0, tie_break="first-seen",
                 reuse_equal=True, strip_prefix=b"", max_vocab=None, objective="count", progress=None):
    """Learn merges over flat symbol sequences; see ``hf_bpe.core._reference_classic.learn_merges``."""
    check_learn_args(vocab, num_merges, min_frequency, tie_break, strip_prefix, max_vocab, objective)
    cdef int32_t[::1] sym = np.ascontiguousarray(symbols, dtype=np.int32)
    cdef int64_t[::1] st = np.ascontiguousarray(starts, dtype=np.int64)
    cdef int64_t[::1] cnt = np.ascontiguousarray(counts, dtype=np.int64)
    if st.shape[0] != cnt.shape[0] + 1:
        raise ValueError(f"starts must hold one offset more than counts ({cnt.shape[0] + 1}), got {st.shape[0]}")
    if sym.shape[0] and (np.min(symbols) < 0 or np.max(symbols) >= len(vocab)):
        raise ValueError(f"every symbol must be an id below len(vocab)={len(vocab)}")
    cdef vector[string] texts
    for token in vocab:
        texts.push_back(token)
    cdef int32_t dummy = 0
    cdef const int32_t* sym_ptr = &sym[0] if sym.shape[0] else &dummy
    cdef Learner* learner = new Learner(sym_ptr, sym.shape[0], &st[0], cnt.shape[0], &cnt[0] if cnt.shape[0] else <int64_t*>&st[0],
                                        texts, TIE_BREAKS.index(tie_break), reuse_equal, strip_prefix,
                                        2**62 if max_vocab is None else max_vocab, OBJECTIVES.index(objective))
    cdef vector[Merge] chunk
    cdef int64_t step
    cdef int64_t min_freq = min_frequency
    merges = []
    try:
        # Chunks of merges: progress and Ctrl-C between them, the loop itself without Python objects.
        while len(merges) < num_merges:
            step = min(_CHUNK, num_merges - len(merges))
            with nogil:
                chunk = learner.run(step, min_freq)
            merges.extend([(m.left, m.right, m.id) for m in chunk])
            if progress is not None:
                progress(chunk.size())
            if <int64_t>chunk.size() < step:
                break
        out_vocab = [bytes(t) for t in learner.vocab()]
    finally:
        del learner
    return out_vocab, merges
