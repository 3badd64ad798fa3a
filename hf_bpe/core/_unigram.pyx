# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Compiled unigram training loops (C++ in csrc/unigram_lattice.hpp): the E-step, Viterbi counts, second-best
segmentations and unreachable pieces, float32 bit for bit as sentencepiece 0.2.3.

The spec is ``hf_bpe.training.unigram.lattice`` and ``hf_bpe.training.unigram.reference``;
``hf_bpe.training.unigram.trainer`` drives this module with the reference's own seeds, M-step, pruning arithmetic
and finalization, so only the loops differ.
"""

from cpython cimport array
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.pair cimport pair
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from hf_bpe.core._code_points cimport code_points

import array

cdef array.array _FLOATS = array.array("f")
cdef array.array _INT32S = array.array("i")


cdef array.array _float_array(const vector[float]& values):
    # 4 bytes a piece, not a list's 32 (pointer + float object): the E-step's result lives through the M-step.
    cdef array.array out = array.clone(_FLOATS, values.size(), zero=False)
    if values.size():
        memcpy(out.data.as_floats, values.data(), values.size() * sizeof(float))
    return out

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND

cdef extern from "<malloc.h>" nogil:
    int malloc_trim(size_t pad)

cdef extern from "csrc/unigram_lattice.hpp" namespace "hfbpe_unigram":
    cdef cppclass Corpus:
        void add(const uint32_t*, size_t, int64_t) except +
        size_t size()

    cdef cppclass Recorded:
        pass

    cdef cppclass Pieces:
        void push(const uint32_t*, size_t) except +
        size_t size()
        const uint32_t* data(size_t)
        size_t length(size_t)

    cdef cppclass Alternatives:
        vector[uint32_t] offsets
        vector[int32_t] ids

    cdef cppclass Model:
        void set(const Pieces&, const vector[float]&) except +
        size_t size()

    vector[float] e_step(const Model&, const Corpus&, Recorded&, int, int) except + nogil
    vector[float] viterbi_counts(const Model&, const Corpus&, Recorded&, int, int) except + nogil
    void alternatives(const Model&, vector[char]&, Alternatives&) except + nogil
    vector[char] reachable(const Model&) except + nogil

cdef extern from "csrc/sp_piece_check.hpp" namespace "hfbpe_sp":
    cdef struct CharInfo:
        int32_t script
        cbool decimal, forbidden

    cdef struct Options:
        int64_t max_piece_length
        cbool split_by_whitespace, split_by_number, split_by_unicode_script, split_digits, allow_ws_only
        cbool ws_as_suffix

cdef extern from "csrc/unigram_seed.hpp" namespace "hfbpe_unigram":
    cdef cppclass SeedCounter:
        SeedCounter(unordered_map[uint32_t, CharInfo], Options, size_t) except +
        void add_chunk(const uint8_t*, size_t) except + nogil
        vector[pair[string, float]] best() except + nogil

    void sais[T](const T*, int32_t*, int32_t, int32_t) except + nogil

cdef extern from "csrc/unigram_em.hpp" namespace "hfbpe_unigram":
    cdef cppclass Trainer:
        Corpus corpus
        Pieces pieces
        vector[float] scores
        Trainer(int, int)
        void seed(const vector[pair[uint32_t, int64_t]]&, const vector[pair[string, float]]&) except + nogil
        void em_step() except + nogil
        void prune(size_t, float) except + nogil
        void drop_unreachable() except + nogil


cdef class UnigramCorpus:
    """Texts (sentences or words) with their counts, in training order; and the pieces found in them under the
    first model, which later models (subsets of it) read instead of walking their tries."""

    cdef Corpus corpus
    cdef Recorded recorded

    def __init__(self, texts):
        cdef vector[uint32_t] chars
        for text, count in texts:
            chars = code_points(text)
            self.corpus.add(chars.data(), chars.size(), count)

    def __len__(self):
        return self.corpus.size()


cdef class UnigramModel:
    """The trainer's model: pieces with float32 scores; a piece's id is its index."""

    cdef Model model

    def __init__(self, pieces):
        cdef Pieces texts
        cdef vector[float] scores
        cdef vector[uint32_t] chars
        for piece, score in pieces:
            chars = code_points(piece)
            texts.push(chars.data(), chars.size())
            scores.push_back(score)
        self.model.set(texts, scores)

    def __len__(self):
        return self.model.size()

    def e_step(self, UnigramCorpus corpus, int threads, int workers):
        """RunEStep's expected counts (an array('f')), summed per thread as sentencepiece's num_threads split."""
        cdef vector[float] out
        with nogil:
            out = e_step(self.model, corpus.corpus, corpus.recorded, threads, workers)
        return _float_array(out)

    def viterbi_counts(self, UnigramCorpus corpus, int threads, int workers):
        """Each piece's count on the Viterbi paths (an array('f')), summed per thread as above."""
        cdef vector[float] out
        with nogil:
            out = viterbi_counts(self.model, corpus.corpus, corpus.recorded, threads, workers)
        return _float_array(out)

    def alternatives(self):
        """(always_keep, alternatives): per piece, whether its best segmentation is itself (or the only one), and
        the ids of its second-best segmentation (an array('i'); none: one shared empty tuple), compact as the first
        pruning round, the trainer's memory peak, has a few hundred thousand of them."""
        cdef vector[char] keep
        cdef Alternatives alts
        cdef array.array ids
        cdef size_t i, size
        with nogil:
            alternatives(self.model, keep, alts)
        out = []
        for i in range(keep.size()):
            size = alts.offsets[i + 1] - alts.offsets[i]
            if size == 0:
                out.append(())
                continue
            ids = array.clone(_INT32S, size, zero=False)
            memcpy(ids.data.as_ints, alts.ids.data() + alts.offsets[i], size * sizeof(int32_t))
            out.append(ids)
        return [bool(k) for k in keep], out

    def reachable(self):
        """Per piece, whether Viterbi can choose it (no other segmentation outscores it)."""
        cdef vector[char] out
        with nogil:
            out = reachable(self.model)
        return [bool(k) for k in out]


def seed_candidates(chunks, char_info, opts, Py_ssize_t keep):
    """The seed step's strings (phases 2-4 of ``hf_bpe.training.unigram.seed``): the best ``keep`` byte strings of
    the ``chunks`` (bytes of NUL-terminated sentences) with their float32 scores, best first, as (str, float).

    ``char_info``: ``{character: (script code, decimal, forbidden)}`` for every character of the chunks
    (``hf_bpe.training.sentencepiece.bpe.char_info``); ``opts``: the checked options."""
    cdef vector[pair[string, float]] best = _best_candidates(chunks, char_info, opts, keep)
    return [(p.first.decode("utf-8"), p.second) for p in best]


cdef vector[pair[string, float]] _best_candidates(chunks, char_info, opts, Py_ssize_t keep) except *:
    cdef unordered_map[uint32_t, CharInfo] info
    cdef CharInfo one
    for c, (script, decimal, forbidden) in char_info.items():
        one.script, one.decimal, one.forbidden = script, decimal, forbidden
        info[ord(c)] = one
    cdef Options options
    options.max_piece_length = opts["max_sentencepiece_length"]
    options.split_by_whitespace = opts["split_by_whitespace"]
    options.split_by_number = opts["split_by_number"]
    options.split_by_unicode_script = opts["split_by_unicode_script"]
    options.split_digits = opts["split_digits"]
    options.allow_ws_only = opts["allow_whitespace_only_pieces"]
    options.ws_as_suffix = opts.get("treat_whitespace_as_suffix", False)
    cdef SeedCounter* counter = new SeedCounter(info, options, keep)
    cdef const uint8_t[:] chunk
    cdef vector[pair[string, float]] best
    try:
        for data in chunks:
            chunk = data  # read in place: no copy of the chunk
            if chunk.shape[0]:
                with nogil:
                    counter.add_chunk(&chunk[0], chunk.shape[0])
        with nogil:
            best = counter.best()
    finally:
        del counter
        with nogil:
            malloc_trim(0)  # the tables' nodes, freed on two threads' heaps: back to the system before EM
    return best


def suffix_array(const uint8_t[:] data):
    """The suffix array of ``data`` (bytes) by the seed step's induced sorting (``sais`` in csrc/unigram_seed.hpp),
    equal to ``hf_bpe.training.unigram.seed.suffix_array``'s."""
    cdef int32_t n = data.shape[0]
    cdef vector[int32_t] sa = vector[int32_t](n)
    if n:
        with nogil:
            sais[uint8_t](&data[0], sa.data(), n, 256)
    return sa


def char_counts(sentences):
    """Each character's count in the ``[text, count]`` sentences, as a dict (``hf_bpe.training.unigram.seed.
    count_characters``'s)."""
    cdef unordered_map[uint32_t, int64_t] counts
    cdef vector[uint32_t] chars
    cdef int64_t times
    cdef size_t i
    for text, count in sentences:
        chars = code_points(text)
        times = count
        for i in range(chars.size()):
            counts[chars[i]] += times
    return {chr(p.first): p.second for p in counts}


cdef class UnigramTrainer:
    """The trainer's state between the hot loops, in C++ (``csrc/unigram_em.hpp``): the texts, the pieces with
    their float32 scores (never a Python list: the seed model has hundreds of thousands), the seeds' log
    probabilities, the M-step, pruning and the unreachable pieces' removal, as ``hf_bpe.training.unigram.reference``
    computes them. ``threads``: spm_train's num_threads (the float sums' split); ``workers``: the real threads."""

    cdef Trainer* trainer

    def __cinit__(self, int threads, int workers):
        self.trainer = new Trainer(threads, workers)

    def __dealloc__(self):
        del self.trainer

    def add_texts(self, texts):
        """Add ``[text, count]`` pairs (sentences or words), in training order."""
        cdef vector[uint32_t] chars
        for text, count in texts:
            chars = code_points(text)
            self.trainer.corpus.add(chars.data(), chars.size(), count)

    def seed(self, chars, chunks, char_info, opts, Py_ssize_t keep):
        """Set the pieces to the seeds: ``chars`` (``(character, count)`` in seed order), then the best ``keep``
        strings of the ``chunks`` (as :func:`seed_candidates`), scored as ``seed_pieces`` scores them."""
        cdef vector[pair[uint32_t, int64_t]] counted
        with nogil:
            malloc_trim(0)  # what Python freed before (the store, the texts' lists) back to the system first
        for c, n in chars:
            counted.push_back(pair[uint32_t, int64_t](ord(c), n))
        cdef vector[pair[string, float]] best = _best_candidates(chunks, char_info, opts, keep)
        if counted.empty() and best.empty():
            # The E-step needs a piece (the driver refuses such corpora first, naming them; this keeps a direct
            # call from crashing).
            raise ValueError("no seed pieces: the corpus has no character outside the user-defined symbols")
        with nogil:
            self.trainer.seed(counted, best)
            best.clear()
            best.shrink_to_fit()
            malloc_trim(0)

    def em_step(self):
        """An E-step on the current pieces, then the M-step."""
        with nogil:
            self.trainer.em_step()

    def prune(self, size_t desired, float shrinking_factor):
        """PruneSentencePieces: keep at most max(desired, shrinking_factor * len(self)) pieces."""
        with nogil:
            self.trainer.prune(desired, shrinking_factor)
            malloc_trim(0)

    def drop_unreachable(self):
        """Drop the pieces Viterbi can never choose."""
        with nogil:
            self.trainer.drop_unreachable()

    def __len__(self):
        return self.trainer.pieces.size()

    def pieces(self):
        """The pieces with their scores, as ``[(str, float)]`` in order."""
        cdef Pieces* pieces = &self.trainer.pieces
        return [(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, pieces.data(i), pieces.length(i)),
                 self.trainer.scores[i]) for i in range(pieces.size())]
