# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
# distutils: extra_compile_args = -O3 -std=c++17
"""Compiled BPE merge loop and word encoder: the same API and results as ``hf_bpe.core._reference``.

The algorithms live in the C++ block below; the Python-facing functions check their arguments with the very
helpers of ``hf_bpe.core._reference`` (so both modules start from the same state and raise the same errors; the
common case of training input, lists of bytes and ints, is checked in C and handed to the reference whenever a
check fails), then run without Python objects (and without the GIL) in the loops. Read ``hf_bpe.core._reference``
for the semantics.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.exc cimport PyErr_CheckSignals
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport Py_INCREF

from hf_bpe.core._reference import PROGRESS_EVERY, check_encoder_args, prepare_training

# The C++ lives in csrc/ (one job per header); these declarations are what Cython calls.
cdef extern from "csrc/trainer.hpp":
    cdef cppclass Trainer "hfbpe::Trainer":
        vector[string] keys
        int32_t byte_ids[256]
        int64_t vocab_size
        uint64_t min_frequency
        uint64_t max_len
        cbool bits32
        vector[int32_t] merges
        cbool finished
        void add_id(const char* key, size_t size, cbool spellable) except +
        void reserve_words(size_t count, size_t symbols) except +
        cbool distinct_words() except + nogil
        void add_word(const unsigned char* data, int64_t size, int64_t count) except +
        void init() except + nogil
        int64_t run(int64_t limit) except + nogil


cdef extern from "csrc/encoder.hpp":
    cdef cppclass Encoder "hfbpe::Encoder":
        int32_t byte_ids[256]
        size_t cache_size
        void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) except +
        void add_whole(const char* word, size_t size, int32_t id) except +
        void clear_cache()
        void encode(const char* word, size_t size, vector[int32_t]& out) except +


cdef Trainer* _new_trainer(setup, vocab_size, min_frequency, count_bits) except NULL:
    # Options and the initial ids (specials, alphabet) as prepared by the reference.
    cdef Trainer* trainer = new Trainer()
    cdef bytes key
    cdef int b
    try:
        trainer.vocab_size = min(vocab_size, 2**62)
        trainer.min_frequency = min_frequency  # checked: 0..2**64-1
        trainer.max_len = min(setup.max_len, 2**64 - 1)  # lengths never get near 2**64
        trainer.bits32 = count_bits == 32
        for key in setup.keys:
            if key is None:
                trainer.add_id(b"", 0, False)
            else:
                trainer.add_id(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), True)
        for b in range(256):
            trainer.byte_ids[b] = setup.byte_ids[b]
    except BaseException:
        del trainer
        raise
    return trainer


cdef bint _add_checked_words(Trainer* trainer, list words, list counts, bint bits32) except -1:
    # Add the words and counts to the trainer if they pass the reference's checks (the common case: distinct
    # bytes, exact ints in 1..2**63-1, and sum(count * len(word)) <= 2**61 unless bits32); return False if any
    # may not (the trainer then holds part of them). O(total length); each word object is touched once.
    cdef Py_ssize_t n = len(words), i
    cdef object word, count
    cdef long long value
    cdef int overflow = 0
    cdef int64_t size
    cdef uint64_t weighted = 0
    cdef cbool distinct
    cdef size_t symbols = 0
    if len(counts) != n:
        return False
    for i in range(n):
        word = <object>PyList_GET_ITEM(words, i)
        if type(word) is bytes:
            symbols += <size_t>PyBytes_GET_SIZE(word)
    trainer.reserve_words(<size_t>n, symbols)
    for i in range(n):
        word = <object>PyList_GET_ITEM(words, i)
        count = <object>PyList_GET_ITEM(counts, i)
        if type(word) is not bytes or type(count) is not int:
            return False
        value = PyLong_AsLongLongAndOverflow(count, &overflow)
        if overflow or value < 1:
            return False
        size = PyBytes_GET_SIZE(word)
        if not bits32:
            if size and <uint64_t>value > (<uint64_t>1 << 61) // <uint64_t>size:
                return False
            weighted += <uint64_t>value * <uint64_t>size  # both terms <= 2**61: no overflow
            if weighted > (<uint64_t>1 << 61):
                return False
        else:  # tokenizers' `count as i32`
            value = <int32_t><uint32_t><uint64_t>value
        trainer.add_word(<const unsigned char*>PyBytes_AS_STRING(word), size, value)
    with nogil:
        distinct = trainer.distinct_words()
    return distinct


def train_merges(words, counts, *, vocab_size, min_frequency=0, special_tokens=(), max_token_length=None,
                 count_bits=64, progress=None):
    """Learn byte-level BPE merges exactly as ``tokenizers``' ``BpeTrainer``; see ``hf_bpe.core._reference``.

    Args:
        words: distinct pre-tokens as UTF-8 bytes; their order does not matter.
        counts: the count (1..2**63-1) of each word.
        vocab_size: stop when the vocabulary has this many ids (at least ``len(specials) + 256``).
        min_frequency: only merge pairs whose count is at least this.
        special_tokens: strings that take the first ids (repeats are skipped).
        max_token_length: tokenizers' ``max_token_length`` (in bytes); None for no limit.
        count_bits: 64 for exact counts, 32 to emulate tokenizers' wrapping ``i32`` pair counts.
        progress: called with the number of merges done since its last call, every 1000 merges and once at
            the end (with the rest, possibly 0).

    Returns:
        ``(vocab, merges)`` as ``hf_bpe.core._reference.train_merges``.

    Raises:
        TypeError, ValueError: as ``hf_bpe.core._reference.train_merges``, with the same messages.

    >>> vocab, merges = train_merges([b"aaa"], [3], vocab_size=300)
    >>> [vocab[i] for _, _, i in merges]
    [b'aa', b'aaa']
    """
    options = dict(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
        max_token_length=max_token_length, count_bits=count_bits, progress=progress,
    )
    # 1. Options. The reference checks them before the words: given no words it raises the same errors, or
    # builds the initial vocabulary, which does not depend on the words.
    setup = prepare_training([], [], **options)
    if isinstance(words, (bytes, str)) or isinstance(counts, (bytes, str)):
        prepare_training(words, counts, **options)  # raises the reference's TypeError
    words = words if type(words) is list else list(words)  # what the reference does first, too
    counts = counts if type(counts) is list else list(counts)
    cdef Trainer* trainer = _new_trainer(setup, vocab_size, min_frequency, count_bits)
    cdef int64_t done, total = 0, step = PROGRESS_EVERY
    cdef Py_ssize_t i
    cdef bytes word, key
    cdef list vocab
    try:
        # 2. Words as flat id arrays; `count as i32` when emulating tokenizers' 32-bit counts. Lists of exact
        # bytes and ints are checked in C; anything else goes through the reference, which raises its error or
        # returns the values normalised (e.g. from int subclasses).
        if not _add_checked_words(trainer, words, counts, count_bits == 32):
            setup = prepare_training(words, counts, **options)
            del trainer
            trainer = NULL
            trainer = _new_trainer(setup, vocab_size, min_frequency, count_bits)
            for word, count in zip(setup.words, setup.counts):
                if count_bits == 32:
                    count = (count + 2**31) % 2**32 - 2**31
                trainer.add_word(<const unsigned char*>PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), count)

        # 3. Count pairs, then merge in chunks without the GIL, reporting progress between chunks.
        with nogil:
            trainer.init()
        while True:
            with nogil:
                done = trainer.run(step)
            total += done
            if progress is not None and (done == step or trainer.finished):
                progress(done)
            if trainer.finished:
                break
            PyErr_CheckSignals()  # let Ctrl-C through between chunks

        # 4. Results: the initial vocabulary plus the keys of the ids the merges created.
        vocab = list(setup.vocab)
        for i in range(len(vocab), <Py_ssize_t>trainer.keys.size()):
            key = trainer.keys[i]  # std::string -> bytes
            vocab.append(key)
        merges = [(trainer.merges[3 * i], trainer.merges[3 * i + 1], trainer.merges[3 * i + 2])
                  for i in range(total)]
        return vocab, merges
    finally:
        del trainer


def _rebuild_word_encoder(merges, byte_ids, cache_size, whole_words):
    return WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole_words)


# Ids up to this bound get a table of int objects (at most 4M entries, ~150 MB worst case; 50k ids: ~2 MB).
_MAX_TABLE_ID = 1 << 22


cdef list _to_list(const vector[int32_t]& ids, list ints):
    # Reuse the encoder's int objects (ints[i] is i): building the list then costs no allocation per id, which
    # otherwise dominates encode_words.
    cdef Py_ssize_t i, n = <Py_ssize_t>ids.size()
    if ints is None:
        return [ids[i] for i in range(n)]
    cdef list out = PyList_New(n)
    cdef object item
    for i in range(n):
        item = ints[ids[i]]
        Py_INCREF(item)  # PyList_SET_ITEM steals a reference
        PyList_SET_ITEM(out, i, item)
    return out


cdef class WordEncoder:
    """Encode pre-tokens with ranked merges exactly as ``tokenizers``' ``Word::merge_all`` (no dropout).

    The memo cache is C++ (bounded: cleared when it holds ``cache_size`` words; words over 256 bytes are not
    cached) and is not part of the pickled state, so pickles and ``datasets`` fingerprints are deterministic.

    Args:
        merges: ``(left_id, right_id, new_id)`` in rank order; if a pair repeats, its last rank wins.
        byte_ids: ``byte_ids[b]`` is the id of the single byte ``b``.
        cache_size: how many words to memoise; 0 disables the cache.
        whole_words: if given, a word found in it is that one id, before any merging (``ignore_merges``).

    >>> encoder = WordEncoder([(1, 2, 300), (300, 3, 301)], list(range(256)))
    >>> encoder.encode_word(bytes([1, 2, 3, 1, 2])), encoder.encode_words([b"\\x01", b"\\x01\\x02"])
    ([301, 300], [1, 300])
    """

    cdef Encoder* _encoder
    cdef list _merges
    cdef list _byte_ids
    cdef dict _whole_words
    cdef Py_ssize_t _cache_size
    cdef list _ints  # _ints[i] is the int i, for every id the encoder can output (None if the ids are huge)

    def __cinit__(self, *args, **kwargs):
        self._encoder = new Encoder()

    def __dealloc__(self):
        del self._encoder

    def __init__(self, merges, byte_ids, *, cache_size=65536, whole_words=None):
        cdef Py_ssize_t rank
        cdef bytes word
        checked, ids, cache_size, whole = check_encoder_args(merges, byte_ids, cache_size, whole_words)
        self._merges, self._byte_ids, self._cache_size, self._whole_words = checked, ids, cache_size, whole
        for rank in range(len(checked)):
            left, right, new = checked[rank]
            self._encoder.add_merge(rank, left, right, new)
        for rank in range(256):
            self._encoder.byte_ids[rank] = ids[rank]
        for word, token_id in whole.items():
            self._encoder.add_whole(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), token_id)
        self._encoder.cache_size = cache_size
        largest = max(max(ids), max([merge[2] for merge in checked], default=0), max(whole.values(), default=0))
        self._ints = list(range(largest + 1)) if largest < _MAX_TABLE_ID else None

    def __reduce__(self):
        return _rebuild_word_encoder, (self._merges, self._byte_ids, self._cache_size, self._whole_words)

    def encode_word(self, word):
        """Encode one pre-token.

        Args:
            word: the pre-token's bytes.

        Returns:
            Its token ids.

        >>> WordEncoder([], range(256)).encode_word(b"hi")
        [104, 105]
        """
        cdef vector[int32_t] out
        if type(word) is not bytes:
            raise TypeError(f"word must be bytes, got {word!r} ({type(word).__name__}); encode str as UTF-8")
        self._encoder.encode(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), out)
        return _to_list(out, self._ints)

    def encode_words(self, words):
        """Encode pre-tokens and concatenate their ids (the hot path).

        Args:
            words: the pre-tokens' bytes.

        Returns:
            All their token ids, in order.

        >>> WordEncoder([(104, 105, 256)], range(256)).encode_words([b"hi", b"!"])
        [256, 33]
        """
        cdef vector[int32_t] out  # local: `words` may be a generator that calls this encoder again
        for word in words:
            if type(word) is not bytes:
                raise TypeError(f"words must hold bytes, got {word!r} ({type(word).__name__}); encode str as UTF-8")
            self._encoder.encode(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), out)
        return _to_list(out, self._ints)
