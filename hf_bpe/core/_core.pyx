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

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.exc cimport PyErr_CheckSignals
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport Py_INCREF
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_READ_CHAR
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES

from hf_bpe.core._text_ref cimport PieceEnds, PyUnicode_1BYTE_KIND, PyUnicode_GET_LENGTH, TextRef, hfbpe_text_ref
from array import array

from hf_bpe.core._reference import PROGRESS_EVERY, check_encoder_args, prepare_training

# The C++ lives in csrc/ (one job per header); these declarations are what Cython calls.
cdef extern from "csrc/release_memory.hpp" namespace "hfbpe":
    void release_free_memory() nogil


cdef extern from "csrc/trainer.hpp":
    cdef cppclass Trainer "hfbpe::Trainer":
        vector[string] keys
        int32_t byte_ids[256]
        int64_t vocab_size
        uint64_t min_frequency
        uint64_t max_len
        uint64_t max_words
        string forbidden
        cbool bits32
        vector[int32_t] merges
        cbool finished
        void add_id(const char* key, size_t size, cbool spellable) except +
        void reserve_words(size_t count, size_t symbols) except +
        cbool distinct_words() except + nogil
        void add_word(const unsigned char* data, int64_t size, int64_t count) except +
        void init() except + nogil
        void add_symbols(const int32_t* ids, int32_t size, int64_t count) except +
        void init_seeded() except + nogil
        int64_t run(int64_t limit) except + nogil
        void release_work() noexcept nogil


cdef extern from "csrc/entry_arena.hpp":
    cdef cppclass EntryArena "hfbpe::EntryArena":
        pass


cdef extern from "csrc/shared_word_cache.hpp":
    cdef cppclass SharedWordCache "hfbpe::SharedWordCache":
        SharedWordCache(size_t words)
        void prepare(int threads) except +
        uint64_t wipes()


cdef extern from "csrc/encoder.hpp":
    cdef cppclass Encoder "hfbpe::Encoder":
        Encoder()
        Encoder(const Encoder&) except +
        int32_t byte_ids[256]
        void set_cache_size(size_t words) except +
        void reserve_merges(size_t merges) except +
        void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) except +
        void add_whole(const char* word, size_t size, int32_t id) except +
        void clear_cache()
        uint64_t stat_hits, stat_misses, stat_uncached, long_steps
        uint64_t wipes()
        void set_long_min(size_t size)
        cbool long_usable() except +
        void build_piece_image(cbool seeded) except +
        size_t seeded_pieces()
        cbool scan_merges()
        void share_pieces(SharedWordCache& shared) except +
        void encode(const char* word, size_t size, vector[int32_t]& out) except +
        void encode_pieces(const char* text, const size_t* ends, size_t n, vector[int32_t]& out,
                           SharedWordCache* shared, EntryArena* arena) except +


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object o)
    # No exception value declared: NULL (a lone surrogate) is handled by the caller, which clears the error.
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size)
    void PyErr_Clear()
    ctypedef struct PyObject
    ctypedef struct PyListObject:
        PyObject** ob_item
        Py_ssize_t allocated
    void _incref "Py_INCREF"(PyObject* o)
    void Py_SET_SIZE(object o, Py_ssize_t size)
    void* PyMem_Malloc(size_t size)
    int PyGC_Disable()
    int PyGC_Enable()


cdef extern from "csrc/parallel_encode.hpp":
    ctypedef int (*PiecesFn "hfbpe::PiecesFn")(const TextRef*, int, string*, PieceEnds*) noexcept nogil
    cdef cppclass EncodedRange "hfbpe::EncodedRange":
        vector[int32_t] ids
        vector[size_t] ends
    int encode_range "hfbpe::encode_range"(
        const TextRef* refs, size_t begin, size_t end, int pid, PiecesFn pieces, Encoder& encoder,
        EncodedRange& out, Py_ssize_t* failed_at) nogil
    const char* pieces_bytes "hfbpe::piece_bytes"(const TextRef* ref, const string& utf8, int found) nogil
    cdef cppclass EncodeJob "hfbpe::EncodeJob":
        EncodeJob(const TextRef* refs, size_t n, int pid, PiecesFn pieces, Encoder* const* encoders, int threads,
                  int chunks, SharedWordCache* shared) except +
        size_t chunks()
        size_t chunk_begin(size_t k)
        EncodedRange& chunk(size_t k)
        void start() except +
        int wait(size_t k, Py_ssize_t* failed_at) nogil
        void join() nogil
    enum:
        ENCODE_OK "hfbpe::ENCODE_OK"
        ENCODE_BAD_TEXT "hfbpe::ENCODE_BAD_TEXT"


cdef extern from "csrc/token_arrays.hpp":
    void gather_ranges "hfbpe::gather_ranges"(EncodedRange* parts, size_t count, int32_t eos, vector[int32_t]& ids,
                                               vector[int64_t]& offsets) except + nogil


cdef extern from "csrc/file_encode.hpp":
    int64_t c_last_document_end "hfbpe::last_document_end"(const char* buf, size_t size, const char* sep,
                                                            size_t sep_len) nogil
    int64_t c_last_safe_cut "hfbpe::last_safe_cut"(const char* buf, size_t size) nogil
    void pack_token_ids "hfbpe::pack_token_ids"(const int32_t* ids, size_t n, int width, unsigned char* out,
                                                int32_t& low, int32_t& high) nogil
    void pack_offsets "hfbpe::pack_offsets"(const int64_t* values, size_t n, int64_t base, unsigned char* out) nogil
    enum:
        DOC_INVALID "hfbpe::DOC_INVALID"
        DOC_ASCII "hfbpe::DOC_ASCII"
        DOC_UTF8 "hfbpe::DOC_UTF8"
    void document_bounds "hfbpe::document_bounds"(const char* buf, size_t size, const char* sep, size_t sep_len,
                                                  cbool skip_empty, vector[int64_t]& bounds, vector[uint8_t]& forms) \
        except + nogil


# Below this many characters a batch is encoded on one thread (as the scanner's counting does).
cdef Py_ssize_t _THREAD_MIN_CHARS = 1 << 16
# encode_text keeps its scratch buffers between calls for texts up to this many characters.
cdef Py_ssize_t _SCRATCH_KEEP = 1 << 16
cdef const char* _PIECES_CAPSULE = b"hf_bpe.core._scanner.pieces"
# ShortTextEncoder's surrogate modes (interned, as the callers' literals: an identity test finds them).
cdef str _REPLACE = "replace"
cdef str _STRICT = "strict"


def last_document_end(const unsigned char[::1] raw not None, bytes separator not None):
    """Return where the last whole document of ``raw`` ends (after its last separator), or -1 if none ends in it.

    Separators are matched leftmost first without overlap, as ``bytes.split`` does (csrc/file_encode.hpp).

    >>> last_document_end(b"a\\nbc\\nd", b"\\n"), last_document_end(b"abc", b"\\n")
    (5, -1)
    """
    cdef size_t size = raw.shape[0], sep_len = len(separator)
    cdef const char* sep = separator
    cdef const char* data = <const char*>&raw[0] if size else sep
    cdef int64_t end
    if not sep_len:
        raise ValueError("separator must not be empty")
    with nogil:
        end = c_last_document_end(data, size, sep, sep_len)
    return end


def last_safe_cut(const unsigned char[::1] raw not None):
    """Return the last place where a document may be cut without changing its pieces, or -1 (file_encode.hpp).

    It is a space after an ASCII letter or digit: every named pattern ends a piece there.

    >>> last_safe_cut(b"ab cd  e"), last_safe_cut(b"  !  ")
    (5, -1)
    """
    cdef size_t size = raw.shape[0]
    cdef int64_t cut = -1
    if size:
        with nogil:
            cut = c_last_safe_cut(<const char*>&raw[0], size)
    return cut


def token_file_chunk(const int32_t[::1] ids not None, const int64_t[::1] offsets not None, int64_t base,
                     int width):
    """Return a window's bytes for a token file and its id range: ``(ids, ends, low, high)``.

    ``ids`` packed as little-endian unsigned ints of ``width`` bytes (2 or 4; ``tokens.bin``), ``offsets[1:] + base``
    as little-endian int64 (``offsets.bin``), and the smallest and largest id (0 and -1 when there is none): the
    caller refuses an id that does not fit before writing. Without numpy (0.1 s of import in every
    ``hf-bpe tokenize --format bin``); csrc/file_encode.hpp.

    >>> from array import array
    >>> token_file_chunk(array("i", [1, 258]), array("q", [0, 2]), 5, 2)
    (b'\\x01\\x00\\x02\\x01', b'\\x07\\x00\\x00\\x00\\x00\\x00\\x00\\x00', 1, 258)
    """
    if width != 2 and width != 4:
        raise ValueError(f"width must be 2 or 4, got {width!r}")
    cdef size_t n = ids.shape[0], m = offsets.shape[0] - 1 if offsets.shape[0] else 0
    cdef bytes packed = PyBytes_FromStringAndSize(NULL, n * width)
    cdef bytes ends = PyBytes_FromStringAndSize(NULL, m * 8)
    cdef unsigned char* out = <unsigned char*>PyBytes_AS_STRING(packed)
    cdef unsigned char* out_ends = <unsigned char*>PyBytes_AS_STRING(ends)
    cdef int32_t low = 0x7FFFFFFF, high = -0x7FFFFFFF - 1
    with nogil:
        if n:
            pack_token_ids(&ids[0], n, width, out, low, high)
        if m:
            pack_offsets(&offsets[1], m, base, out_ends)
    return packed, ends, (low if n else 0), (high if n else -1)


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


cdef inline bint _count_fits(int64_t* value, int64_t size, uint64_t* weighted, bint bits32) noexcept nogil:
    # The reference's checks of one word's count, for both word adders: 1 <= count and, unless bits32,
    # sum(count * len(word)) <= 2**61 so far (in *weighted); with bits32 the count becomes tokenizers' `count as i32`.
    if value[0] < 1:
        return False
    if bits32:
        value[0] = <int32_t><uint32_t><uint64_t>value[0]
        return True
    if size and <uint64_t>value[0] > (<uint64_t>1 << 61) // <uint64_t>size:
        return False
    weighted[0] += <uint64_t>value[0] * <uint64_t>size  # both terms <= 2**61: no overflow
    return weighted[0] <= (<uint64_t>1 << 61)


cdef bint _add_checked_words(Trainer* trainer, list words, list counts, bint bits32) except -1:
    # Add the words and counts to the trainer if they pass the reference's checks (the common case: distinct
    # bytes, exact ints in 1..2**63-1, and sum(count * len(word)) <= 2**61 unless bits32); return False if any
    # may not (the trainer then holds part of them). O(total length); each word object is touched once.
    cdef Py_ssize_t n = len(words), i
    cdef object word, count
    cdef int64_t value
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
        size = PyBytes_GET_SIZE(word)
        if overflow or not _count_fits(&value, size, &weighted, bits32):
            return False
        trainer.add_word(<const unsigned char*>PyBytes_AS_STRING(word), size, value)
    with nogil:
        distinct = trainer.distinct_words()
    return distinct


cdef int64_t _run_trainer(Trainer* trainer, progress) except -1:
    # Phase 5 in chunks without the GIL, reporting progress between chunks; returns the number of merges.
    cdef int64_t done, total = 0, step = PROGRESS_EVERY
    while True:
        with nogil:
            done = trainer.run(step)
        total += done
        if progress is not None and (done == step or trainer.finished):
            progress(done)
        if trainer.finished:
            return total
        PyErr_CheckSignals()  # let Ctrl-C through between chunks


def train_merges(words, counts, *, vocab_size, min_frequency=0, special_tokens=(), max_token_length=None,
                 count_bits=64, progress=None, consume=False):
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
        consume: empty ``words`` and ``counts`` (lists) once they are copied, before the merge loop: a caller that
            made them for this call alone does not hold them (~80 bytes a word) under the loop.

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
    cdef bytes word
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

        if consume:
            words.clear()
            counts.clear()
        return _learn(trainer, setup, progress)
    finally:
        del trainer
        # The pair map, heap and word lists just freed stay resident otherwise, under the model built next.
        with nogil:
            release_free_memory()


def train_merges_flat(flat, *, vocab_size, min_frequency=0, special_tokens=(), max_token_length=None,
                      count_bits=64, progress=None, consume=False):
    """Learn merges as :func:`train_merges` from counts held flat: no Python object per word is read or made.

    Args:
        flat: a ``hf_bpe.core._tally.FlatCounts`` (distinct, non-empty words; counts 1..2**63-1), as
            ``PieceTally.flat()`` makes it.
        vocab_size, min_frequency, special_tokens, max_token_length, count_bits, progress: as :func:`train_merges`.
        consume: empty ``flat`` (``flat.release()``) once its words are copied, before the merge loop.

    Returns:
        ``(vocab, merges)``: ``vocab`` as :func:`train_merges`'s, ``merges`` its triples end to end in one
        ``array("i")`` (12 bytes a merge, not a tuple and three ints each); equal to ``train_merges(list(d),
        list(d.values()), ...)`` with ``d = flat.to_dict()`` (the merge loop does not depend on the order of the
        words).

    Raises:
        TypeError, ValueError: as :func:`train_merges`.

    >>> from hf_bpe.core.pretokenize import Pretokenizer
    >>> tally = Pretokenizer("gpt2").tally(); tally.add(["aaa"] * 3)
    >>> vocab, merges = train_merges_flat(tally.flat(), vocab_size=300)
    >>> merges, [vocab[i] for i in merges[2::3]]
    (array('i', [97, 97, 256, 256, 97, 257]), [b'aa', b'aaa'])
    """
    options = dict(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
        max_token_length=max_token_length, count_bits=count_bits, progress=progress,
    )
    setup = prepare_training([], [], **options)  # 1. Options, checked and raised as train_merges does.
    cdef Trainer* trainer = _new_trainer(setup, vocab_size, min_frequency, count_bits)
    try:
        # 2. Words straight from the buffers; a count the checks refuse (sum(count * len) above 2**61) goes the
        # lists' way, where the reference raises its error.
        if not _add_flat_words(trainer, flat.blob, flat.ends, flat.counts, count_bits == 32):
            del trainer
            trainer = NULL
            words = [flat.blob[start:end] for start, end in zip([0, *flat.ends], flat.ends)]
            vocab, triples = train_merges(words, list(flat.counts), consume=consume, **options)
            return vocab, array("i", [i for triple in triples for i in triple])
        if consume:
            flat.release()
        return _learn(trainer, setup, progress, True)
    finally:
        del trainer
        with nogil:
            release_free_memory()


cdef bint _add_flat_words(Trainer* trainer, const unsigned char[::1] blob, const int64_t[::1] ends,
                          const int64_t[::1] counts, bint bits32) except -1:
    # _add_checked_words over FlatCounts' buffers: word i is blob[ends[i - 1]:ends[i]]. False if a check fails.
    # O(total length), no Python object touched.
    cdef Py_ssize_t n = ends.shape[0], i
    cdef int64_t start = 0, end, size, value
    cdef uint64_t weighted = 0
    cdef const unsigned char* data = &blob[0] if blob.shape[0] else NULL
    cdef cbool distinct
    if counts.shape[0] != n:
        raise ValueError(f"{n} words but {counts.shape[0]} counts; expected one count per word")
    trainer.reserve_words(<size_t>n, <size_t>blob.shape[0])
    for i in range(n):
        end = ends[i]
        value = counts[i]
        if end <= start or end > blob.shape[0]:
            raise ValueError(f"word {i} ends at {end}, after {start} and within {blob.shape[0]} bytes expected")
        size = end - start
        if not _count_fits(&value, size, &weighted, bits32):
            return False
        trainer.add_word(data + start, size, value)
        start = end
    with nogil:
        distinct = trainer.distinct_words()
    return distinct


cdef tuple _learn(Trainer* trainer, setup, progress, bint flat_merges=False):
    # Phases 3-4 of train_merges and train_merges_flat (the one merge loop), on a trainer holding its words (its
    # caller frees it): count pairs, merge, read the results. `flat_merges`: the merges as one array("i") of
    # (left, right, new) triples end to end (12 bytes a merge) instead of a list of int tuples (~170).
    cdef int64_t total
    cdef Py_ssize_t i
    cdef bytes key
    cdef list vocab
    # The words' Python (or flat) form was dropped by a consuming caller: its pages, in glibc's heap rather than
    # mapped, go back before the merge loop's tables grow (~2.5 MB of a 10 MB corpus's peak).
    with nogil:
        release_free_memory()
        # 3. Count pairs, then merge in chunks without the GIL, reporting progress between chunks.
        trainer.init()
    total = _run_trainer(trainer, progress)
    # Only the keys and merges are read from here on: the words, pair counts and queue are freed (and their
    # pages given back) before the Python lists below are built, instead of under them.
    with nogil:
        trainer.release_work()
        release_free_memory()

    # 4. Results: the initial vocabulary plus the keys of the ids the merges created.
    vocab = list(setup.vocab)
    for i in range(len(vocab), <Py_ssize_t>trainer.keys.size()):
        key = trainer.keys[i]  # std::string -> bytes
        vocab.append(key)
    if flat_merges:
        merges = array("i")
        merges.frombytes(PyBytes_FromStringAndSize(<const char*>trainer.merges.data(), 3 * total * sizeof(int32_t)))
        return vocab, merges
    merges = [(trainer.merges[3 * i], trainer.merges[3 * i + 1], trainer.merges[3 * i + 2])
              for i in range(total)]
    return vocab, merges


cdef Trainer* _seeded_trainer(setup, vocab_size, min_frequency, vector[char]* valid) except NULL:
    # A trainer with the options and the seeded vocabulary (setup: the reference's ContinuationSetup); `valid[id]`
    # says whether an id has bytes.
    cdef Trainer* trainer = new Trainer()
    cdef bytes key
    cdef Py_ssize_t i
    try:
        trainer.vocab_size = min(vocab_size, 2**62)
        trainer.min_frequency = min_frequency
        trainer.max_len = min(setup.max_len, 2**64 - 1)
        trainer.max_words = setup.max_words
        trainer.forbidden = setup.forbidden
        valid.resize(len(setup.keys), 0)
        for i, key in enumerate(setup.keys):
            if key is None:
                trainer.add_id(b"", 0, False)
            else:
                valid[0][i] = 1
                trainer.add_id(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), True)
    except BaseException:
        del trainer
        raise
    return trainer


cdef tuple _run_seeded(Trainer* trainer, setup, progress):
    # Phases 4-5 from the seeded words; the keys of every id and the merges.
    cdef Py_ssize_t i, total
    cdef bytes key
    with nogil:
        trainer.init_seeded()
    total = _run_trainer(trainer, progress)
    with nogil:
        trainer.release_work()  # as in train_merges: not held under the lists built next
    vocab = list(setup.keys)
    for i in range(len(vocab), <Py_ssize_t>trainer.keys.size()):
        key = trainer.keys[i]
        vocab.append(key)
    return vocab, [(trainer.merges[3 * i], trainer.merges[3 * i + 1], trainer.merges[3 * i + 2]) for i in range(total)]


def continue_merges(sequences, counts, *, keys, vocab_size, min_frequency=0, max_token_length=None, progress=None,
                    max_words=None, forbidden=b""):
    """Continue the merge loop from words segmented into an existing vocabulary; see ``hf_bpe.core._reference_continue``.

    Args:
        sequences: each word as a sequence of ids.
        counts: the count (1..2**63-1) of each word.
        keys: the bytes of each existing id, or None.
        vocab_size: stop when the vocabulary has this many ids (at least ``len(keys)``).
        min_frequency, max_token_length, progress: as :func:`train_merges`.
        max_words, forbidden: SuperBPE's stage-2 rules, as ``hf_bpe.core._reference_continue.continue_merges``.

    Returns:
        ``(keys, merges)`` as ``hf_bpe.core._reference_continue.continue_merges``.

    Raises:
        TypeError, ValueError: as ``hf_bpe.core._reference_continue.continue_merges``, with the same messages.

    >>> keys = [bytes([b]) for b in range(256)] + [b"ab"]
    >>> continue_merges([[256, 99], [97, 98, 99]], [2, 1], keys=keys, vocab_size=258)[1]
    [(256, 99, 257)]
    """
    # 1. The checks are the reference's (words given as lists of ints are checked there too: one pass, in C-level
    # builtins for the common case). Imported here: training from scratch does not load the extending spec.
    from hf_bpe.core._reference_continue import prepare_continuation

    setup = prepare_continuation(sequences, counts, keys=keys, vocab_size=vocab_size, min_frequency=min_frequency,
                                 max_token_length=max_token_length, progress=progress, max_words=max_words,
                                 forbidden=forbidden)
    cdef vector[char] valid
    cdef Trainer* trainer = _seeded_trainer(setup, vocab_size, min_frequency, &valid)
    cdef list word
    cdef vector[int32_t] ids
    cdef Py_ssize_t j
    cdef size_t symbols = 0
    try:
        for word in setup.symbols:
            symbols += len(word)
        trainer.reserve_words(len(setup.symbols), symbols)
        for word, count in zip(setup.symbols, setup.counts):
            ids.resize(len(word))
            for j in range(len(word)):
                ids[j] = word[j]
            trainer.add_symbols(ids.data(), <int32_t>ids.size(), count)
        # 2. Pairs as the loop would count them, then the loop.
        return _run_seeded(trainer, setup, progress)
    finally:
        del trainer


def _rebuild_word_encoder(merges, byte_ids, cache_size, whole_words):
    return WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole_words)


# Ids up to this bound get a table of int objects (at most 4M entries, ~150 MB worst case; 50k ids: ~2 MB).
_MAX_TABLE_ID = 1 << 22


cdef list _to_list(const vector[int32_t]& ids, list ints):
    return _slice_to_list(ids, 0, ids.size(), ints)


cdef int _encode_refs(vector[TextRef]& refs, int pid, PiecesFn split, vector[Encoder*]& encoders, int threads,
                      Py_ssize_t chars, list result, list ints, SharedWordCache* shared,
                      Py_ssize_t* failed_at) except -1:
    """Encode the texts into `result` (one list per text) with encoders[0..threads), more than one sharing the
    memo cache `shared` (if not null, prepared for `threads`); return an EncodeFailure."""
    cdef EncodedRange single
    cdef EncodeJob* job
    cdef size_t chunk, n = refs.size()
    cdef int status
    if threads == 1:
        with nogil:
            status = encode_range(refs.data(), 0, n, pid, split, encoders[0][0], single, failed_at)
        if status == ENCODE_OK:
            _emit_lists(result, 0, single, ints)
            id_pool().give(single.ids)  # made into lists: its pages for the next call (csrc/id_pool.hpp)
        return status
    # Chunks of >= 4K characters, ~64 per thread: converting chunk k to lists (the GIL's serial part) overlaps
    # the encoding of the next ones, and the threads' last chunks end close together (16 per thread left ~1 ms of
    # a 5 MB batch idle at the end).
    job = new EncodeJob(refs.data(), n, pid, split, encoders.data(), threads,
                        <int>max(threads, min(64 * threads, chars >> 12)), shared)
    try:
        job.start()
        for chunk in range(job.chunks()):
            with nogil:
                status = job.wait(chunk, failed_at)
            if status != ENCODE_OK:
                return status
            _emit_lists(result, job.chunk_begin(chunk), job.chunk(chunk), ints)
        return ENCODE_OK
    finally:
        with nogil:
            job.join()
        del job


cdef int _encode_arrays(vector[TextRef]& refs, int pid, PiecesFn split, vector[Encoder*]& encoders, int threads,
                        Py_ssize_t chars, SharedWordCache* shared, Py_ssize_t* failed_at, int eos_id,
                        TokenBuffer ids, TokenBuffer offsets) except -1:
    """_encode_refs into flat arrays: the ids into `ids`, each text's start into `offsets` (eos_id >= 0: appended
    to every text). Nothing is converted while the chunks encode, so the caller only encodes and gathers."""
    cdef EncodedRange single
    cdef EncodeJob* job
    cdef size_t chunk
    cdef int status = ENCODE_OK
    ids._check_unexported()
    offsets._check_unexported()
    offsets._wide = True
    if threads == 1:
        with nogil:
            status = encode_range(refs.data(), 0, refs.size(), pid, split, encoders[0][0], single, failed_at)
            if status == ENCODE_OK:
                gather_ranges(&single, 1, eos_id, ids._i32, offsets._i64)
        return status
    # The same chunking as _encode_refs: with nothing to convert, the caller encodes chunks too (EncodeJob.wait).
    job = new EncodeJob(refs.data(), refs.size(), pid, split, encoders.data(), threads,
                        <int>max(threads, min(64 * threads, chars >> 12)), shared)
    cdef size_t count = job.chunks()
    cdef EncodedRange* parts = &job.chunk(0)  # the chunks' outputs, side by side, made with the job
    try:
        job.start()
        with nogil:
            for chunk in range(count):
                status = job.wait(chunk, failed_at)
                if status != ENCODE_OK:
                    break
            job.join()
            if status == ENCODE_OK:
                gather_ranges(parts, count, eos_id, ids._i32, offsets._i64)
        return status
    finally:
        with nogil:
            job.join()
        del job


cdef extern from "csrc/id_pool.hpp" nogil:
    cdef cppclass IdBufferPool "hfbpe::IdBufferPool":
        void give(vector[int32_t]& ids)
        size_t kept()
    IdBufferPool& id_pool "hfbpe::IdBufferPool::global"()


def _kept_id_buffer():
    """The room, in ids, of the one freed id buffer kept for the next long output (csrc/id_pool.hpp; tests)."""
    return id_pool().kept()


cdef int64_t _EMPTY = 0  # what an empty TokenBuffer's view points at (a buffer's pointer must not be null)


cdef class TokenBuffer:
    """A flat array the encoder made: ids (int32) or offsets (int64), read without a copy by the buffer protocol.

    ``numpy.frombuffer(buffer, dtype=numpy.int32)`` (or ``int64`` for offsets) and ``pyarrow.py_buffer(buffer)`` view
    its memory and keep it alive; it never changes size once made (it refuses to be refilled while viewed).
    """

    cdef vector[int32_t] _i32
    cdef vector[int64_t] _i64
    cdef bint _wide
    cdef Py_ssize_t _exports
    cdef Py_ssize_t _shape  # the view's shape and strides (one dimension) point here
    cdef Py_ssize_t _stride

    @property
    def itemsize(self):
        """4 (int32 ids) or 8 (int64 offsets)."""
        return 8 if self._wide else 4

    def __len__(self):
        return self._i64.size() if self._wide else self._i32.size()

    cdef int _check_unexported(self) except -1:
        if self._exports:
            raise BufferError("a TokenBuffer cannot be refilled while a view of it exists")
        return 0

    def __getbuffer__(self, Py_buffer* view, int flags):
        cdef Py_ssize_t itemsize = 8 if self._wide else 4
        cdef void* data = <void*>(self._i64.data() if self._wide else self._i32.data())
        self._shape = len(self)
        self._stride = itemsize
        view.buf = data if self._shape else <void*>&_EMPTY
        view.obj = self
        view.len = self._shape * itemsize
        view.readonly = 0
        view.itemsize = itemsize
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = <char*>(b"q" if self._wide else b"i")  # int64_t is long long, int32_t int, on every target
        view.ndim = 1
        view.shape = &self._shape if flags & PyBUF_ND else NULL
        view.strides = &self._stride if flags & PyBUF_STRIDES == PyBUF_STRIDES else NULL
        view.suboffsets = NULL
        view.internal = NULL
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        self._exports -= 1

    def __dealloc__(self):
        id_pool().give(self._i32)  # its pages, resident, for the next long output (csrc/id_pool.hpp)

    def __reduce__(self):
        raise TypeError("a TokenBuffer is not picklable; pickle numpy.frombuffer(buffer, ...) (a copy) instead")


cdef int _emit_lists(list result, Py_ssize_t first, EncodedRange& part, list ints) except -1:
    """Set result[first + k] to the ids of the part's k-th text, for every text of the part."""
    # The cyclic GC off meanwhile (this holds the GIL throughout): every 700 new lists it would run a young
    # collection that traverses `result` (tracked, as big as the batch) for nothing: the new lists are untracked.
    cdef int was_enabled = PyGC_Disable()
    try:
        _emit_range(result, first, part, ints)
    finally:
        if was_enabled:
            PyGC_Enable()
    return 0


cdef int _emit_range(list result, Py_ssize_t first, EncodedRange& part, list ints) except -1:
    cdef size_t k, start = 0, end
    cdef list ids
    for k in range(part.ends.size()):
        end = part.ends[k]
        ids = _slice_to_list(part.ids, start, end, ints)
        # A list of ints cannot be part of a reference cycle: untracked, it costs the cyclic GC nothing (batches
        # make hundreds of thousands of lists; tracked, collections took a third of the time). Lists stay
        # untracked if the caller later puts containers in them (as CPython's own untracked containers do).
        PyObject_GC_UnTrack(ids)
        Py_INCREF(ids)  # PyList_SET_ITEM steals a reference
        PyList_SET_ITEM(result, first + <Py_ssize_t>k, ids)
        start = end
    return 0


cdef list _slice_to_list(const vector[int32_t]& ids, size_t start, size_t end, list ints):
    # Reuse the encoder's int objects (ints[i] is i): building the list then costs no allocation per id, which
    # otherwise dominates encoding.
    cdef size_t i
    if ints is None:
        return [ids[i] for i in range(start, end)]
    cdef list out = PyList_New(0)
    cdef PyObject** items = NULL
    # The items array allocated here, not zero-filled by PyList_New(n) first (as CPython's own list_new_prealloc):
    # every slot is set below before anything can see the list.
    if end > start:
        items = <PyObject**>PyMem_Malloc((end - start) * sizeof(PyObject*))
        if items == NULL:
            raise MemoryError()
        (<PyListObject*>out).ob_item = items
        (<PyListObject*>out).allocated = <Py_ssize_t>(end - start)
    # Raw item pointers: one reference added per id, none taken and dropped (a per-text loop makes ~7 per line).
    cdef PyObject** table = (<PyListObject*>ints).ob_item
    cdef PyObject* item
    for i in range(start, end):
        item = table[ids[i]]
        _incref(item)  # the new list owns it
        items[i - start] = item
    Py_SET_SIZE(out, <Py_ssize_t>(end - start))
    return out


cdef class WordEncoder:
    """Encode pre-tokens with ranked merges exactly as ``tokenizers``' ``Word::merge_all`` (no dropout).

    The memo cache is C++ (bounded: full at ``cache_size`` words, it grows up to 16 times that, at most 262,144
    words, then it is emptied; words over 255 bytes are not cached; words of up to 15 bytes live in a table of
    their own, csrc/piece_cache.hpp) and is not part of the pickled state, so pickles and ``datasets``
    fingerprints are deterministic.

    Args:
        merges: ``(left_id, right_id, new_id)`` in rank order; if a pair repeats, its last rank wins.
        byte_ids: ``byte_ids[b]`` is the id of the single byte ``b``.
        cache_size: how many words to memoise; 0 disables the cache. Each table (words of <= 15 bytes, longer
            ones) grows when full, up to 16 times this (at most 262,144 words), before it is emptied.
        whole_words: if given, a word found in it is that one id, before any merging (``ignore_merges``).

    >>> encoder = WordEncoder([(1, 2, 300), (300, 3, 301)], list(range(256)))
    >>> encoder.encode_word(bytes([1, 2, 3, 1, 2])), encoder.encode_words([b"\\x01", b"\\x01\\x02"])
    ([301, 300], [1, 300])
    """

    cdef Encoder* _encoder
    # _encoder runs with the GIL held (encode_word/encode_words). encode_texts runs without it, on copies of its
    # tables (_threads, one per thread, kept between calls; one thread uses its copy's own cache, more share
    # _shared, also kept); _busy marks them in use, so that a second Python thread calling encode_texts meanwhile
    # gets copies (and a shared cache) of its own instead of sharing their caches.
    cdef vector[Encoder*] _threads
    cdef SharedWordCache* _shared
    cdef bint _busy
    cdef list _merges  # None when built by _from_flat (then _flat_merges holds them)
    cdef bytes _flat_merges
    cdef list _byte_ids
    cdef dict _whole_words
    cdef Py_ssize_t _cache_size
    cdef list _ints  # _ints[i] is the int i, for every id the encoder can output (None if the ids are huge)
    # encode_text's scratch for short texts (used with the GIL held, nothing in between calls back into Python):
    # kept, so that a call costs no allocation once they have grown.
    cdef string _utf8
    cdef PieceEnds _ends
    cdef vector[int32_t] _out
    # The short-piece cache's image is built by the first encoding call, before any thread copy runs. Unseeded by
    # default: seeding GPT-2's 48K short spellings merges each of them (~0.2 s) where a cold batch of 1.6 MB of
    # English merges 20K distinct pieces, 13.5K of them vocabulary words (measured): the seed costs more than the
    # misses it saves unless one encoder wipes its cache many times.
    cdef bint _pieces_built
    cdef bint _seeded

    cdef inline void _build_pieces(self) except *:
        if not self._pieces_built:
            self._encoder.build_piece_image(self._seeded)
            self._pieces_built = True

    def __cinit__(self, *args, **kwargs):
        self._encoder = new Encoder()

    def __dealloc__(self):
        cdef Encoder* copy
        for copy in self._threads:
            del copy
        del self._shared
        del self._encoder

    def __init__(self, merges, byte_ids, *, cache_size=65536, whole_words=None):
        cdef Py_ssize_t rank
        checked, ids, cache_size, whole = check_encoder_args(merges, byte_ids, cache_size, whole_words)
        self._merges = checked
        self._encoder.reserve_merges(len(checked))
        for rank in range(len(checked)):
            left, right, new = checked[rank]
            self._encoder.add_merge(rank, left, right, new)
        self._set_up(ids, cache_size, whole, max([merge[2] for merge in checked], default=0))

    @staticmethod
    def _from_flat(triples, byte_ids, *, cache_size=65536, whole_words=None):
        """Build what ``WordEncoder(merges, ...)`` builds from the merges as one int32 buffer (left, right, new, ...).

        No tuple per merge is made, checked and unpacked (~0.15 s of each process loading Llama 3's 280,147 merges
        from the per-user cache, model/load_cache.py, which keeps them so); they are made only if it is pickled.

        >>> from array import array
        >>> WordEncoder._from_flat(array("i", [1, 2, 300]), range(256)).encode_word(bytes([1, 2, 1]))
        [300, 1]
        """
        cdef const int32_t[::1] flat = triples
        cdef Py_ssize_t n = flat.shape[0], i
        cdef int32_t largest = 0
        cdef WordEncoder encoder
        if n % 3 != 0:
            raise ValueError(f"triples must hold 3 ids per merge (left, right, new), got {n!r} ids")
        for i in range(n):
            if flat[i] < 0:
                raise ValueError(f"merge {i // 3} has an id outside 0..2**31-1: {flat[i]!r}")
            if i % 3 == 2 and flat[i] > largest:
                largest = flat[i]
        _, ids, cache_size, whole = check_encoder_args([], byte_ids, cache_size, whole_words)
        encoder = WordEncoder.__new__(WordEncoder)
        encoder._merges = None
        encoder._flat_merges = memoryview(triples).tobytes()  # native int32, for __reduce__
        encoder._encoder.reserve_merges(<size_t>(n // 3))
        for i in range(0, n, 3):
            encoder._encoder.add_merge(<int32_t>(i // 3), <uint32_t>flat[i], <uint32_t>flat[i + 1], flat[i + 2])
        encoder._set_up(ids, cache_size, whole, largest)
        return encoder

    cdef _set_up(self, list ids, Py_ssize_t cache_size, dict whole, largest_new):
        # What both constructors do once the merges are in: byte ids, whole words, cache size, the int table.
        cdef Py_ssize_t b
        cdef bytes word
        self._byte_ids, self._cache_size, self._whole_words = ids, cache_size, whole
        for b in range(256):
            self._encoder.byte_ids[b] = ids[b]
        for word, token_id in whole.items():
            self._encoder.add_whole(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), token_id)
        self._encoder.set_cache_size(cache_size)
        largest = max(max(ids), largest_new, max(whole.values(), default=0))
        self._ints = list(range(largest + 1)) if largest < _MAX_TABLE_ID else None

    def __reduce__(self):
        if self._merges is None:  # built by _from_flat
            from array import array
            flat = array("i")
            flat.frombytes(self._flat_merges)
            self._merges = list(zip(flat[0::3], flat[1::3], flat[2::3]))
        return _rebuild_word_encoder, (self._merges, self._byte_ids, self._cache_size, self._whole_words)

    def _cache_stats(self):
        """Count what the memo caches did since this encoder was built (for measuring, not part of the API).

        Returns:
            A dict: ``hits`` and ``misses`` (pieces looked up), ``uncached`` (pieces no cache sees: <= 2 bytes,
            whole words, too long, or no cache), ``wipes`` (times a full cache was emptied), ``seeded`` (short
            spellings in the cache's image).
        """
        cdef Encoder* copy
        stats = {"hits": self._encoder.stat_hits, "misses": self._encoder.stat_misses,
                 "uncached": self._encoder.stat_uncached, "wipes": self._encoder.wipes()}
        for copy in self._threads:
            stats["hits"] += copy.stat_hits
            stats["misses"] += copy.stat_misses
            stats["uncached"] += copy.stat_uncached
            stats["wipes"] += copy.wipes()
        if self._shared != NULL:
            stats["wipes"] += self._shared.wipes()
        stats["seeded"] = self._encoder.seeded_pieces()
        return stats

    def _long_pieces(self, *, min_bytes=None):
        """Say whether long pieces use the linear-time encoder, and count its steps (for tests, not the API).

        Args:
            min_bytes: if given, pieces of at least this many bytes take the long-piece encoder from now on, on
                this encoder and its thread copies (default 65: the longer ones); None leaves it as it is.

        Returns:
            A dict: ``usable`` (the merges allow it: csrc/long_piece.hpp, (M) and (S)) and ``steps`` (tokens it
            tried, summed over every call since this encoder was built: what grows linearly with a piece).

        >>> WordEncoder([(97, 97, 256)], range(256))._long_pieces()["usable"]
        True
        """
        cdef Encoder* copy
        if min_bytes is not None:
            if type(min_bytes) is not int or min_bytes < 1:
                raise ValueError(f"min_bytes must be an int >= 1 or None, got {min_bytes!r}")
            if self._busy:
                raise RuntimeError("_long_pieces called while this encoder encodes a batch; call it between batches")
            self._encoder.set_long_min(<size_t>min(min_bytes, 2**62))
        steps = self._encoder.long_steps
        for copy in self._threads:
            steps += copy.long_steps
        return {"usable": bool(self._encoder.long_usable()), "steps": steps}

    def _merges_by_scan(self):
        """Say whether words of <= 64 bytes merge by the min-scan (csrc/encoder.hpp: scan_is_exact; for tests)."""
        self._build_pieces()
        return bool(self._encoder.scan_merges())

    def _seed_cache(self, seeded):
        """Rebuild the short-piece cache's image, seeded with the vocabulary or empty (for tests; ids never change).

        Args:
            seeded: whether the image holds every short spelling of the vocabulary with its encoding.
        """
        if self._busy:
            raise RuntimeError("_seed_cache called while this encoder encodes a batch; call it between batches")
        self._seeded = bool(seeded)
        self._encoder.build_piece_image(self._seeded)
        self._encoder.clear_cache()
        self._pieces_built = True

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
        self._build_pieces()
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
        self._build_pieces()
        for word in words:
            if type(word) is not bytes:
                raise TypeError(f"words must hold bytes, got {word!r} ({type(word).__name__}); encode str as UTF-8")
            self._encoder.encode(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), out)
        return _to_list(out, self._ints)

    cdef int _run_refs(self, vector[TextRef]& refs, int pid, PiecesFn split, int threads, Py_ssize_t chars,
                       list result, Py_ssize_t* failed_at, tuple arrays=None, int eos_id=-1) except -1:
        """Encode `refs` on `threads` threads without the GIL into `result` (one list per ref) or, when `arrays`
        is given, into its two TokenBuffers (ids, offsets; `eos_id` >= 0 after each ref); an EncodeFailure."""
        cdef int status, t
        self._build_pieces()  # before any thread copies the encoder
        cdef vector[Encoder*] own  # the copies this call uses: the kept ones, or its own while they are busy
        cdef bint borrowed = not self._busy
        cdef bint sharing = threads > 1 and self._cache_size > 0
        cdef Encoder* copy
        cdef SharedWordCache* shared = NULL
        cdef SharedWordCache* temporary = NULL
        if borrowed:
            while <int>self._threads.size() < threads:
                self._threads.push_back(new Encoder(self._encoder[0]))
            own = self._threads
            if sharing and self._shared == NULL:
                self._shared = new SharedWordCache(self._cache_size)
            shared = self._shared if sharing else NULL
            self._busy = True
        else:
            for t in range(threads):
                own.push_back(new Encoder(self._encoder[0]))
            if sharing:
                temporary = shared = new SharedWordCache(self._cache_size)
        try:
            if shared != NULL:
                self._encoder.share_pieces(shared[0])
                shared.prepare(threads)
            if arrays is None:
                status = _encode_refs(refs, pid, split, own, threads, chars, result, self._ints, shared, failed_at)
            else:
                status = _encode_arrays(refs, pid, split, own, threads, chars, shared, failed_at, eos_id,
                                        arrays[0], arrays[1])
        finally:
            if borrowed:
                self._busy = False
            else:
                for copy in own:
                    del copy
                del temporary
        return status

    def encode_texts(self, list texts not None, pieces not None, int pid, int threads=1):
        """Split each text with the scanner and encode it: one list of ids per text (the batch hot path).

        Args:
            texts: the texts (str).
            pieces: ``hf_bpe.core._scanner.pieces_function()``: the scanner's splitter.
            pid: the scanner id (a value of ``hf_bpe.core._scanner.SCANNERS``).
            threads: split and encode contiguous parts of ``texts`` on this many threads without the GIL, each with
                an encoder of its own (one thread for batches under 64K characters); the ids are the same for any
                number.

        Raises:
            TypeError: a text is not a str (naming its index).
            UnicodeEncodeError: a text holds a lone surrogate.
        """
        return self._encode_texts(texts, pieces, pid, threads, None, -1)

    def encode_texts_arrays(self, list texts not None, pieces not None, int pid, int threads=1, *, int eos_id=-1):
        """Split and encode each text as :meth:`encode_texts` does, into two flat arrays instead of lists.

        Args:
            texts, pieces, pid, threads: as :meth:`encode_texts`.
            eos_id: when >= 0, this id is appended after every text's ids (and counted in its length).

        Returns:
            ``(ids, offsets)``, two :class:`TokenBuffer`: every text's ids end to end (int32), and where each text's
            ids start (int64; ``len(texts) + 1`` entries, the last one ``len(ids)``). ``numpy.frombuffer`` and
            ``pyarrow.py_buffer`` read them without a copy.

        Raises:
            as :meth:`encode_texts`.
        """
        arrays = (TokenBuffer(), TokenBuffer())
        self._encode_texts(texts, pieces, pid, threads, arrays, eos_id)
        return arrays

    cdef object _encode_texts(self, list texts, pieces, int pid, int threads, tuple arrays, int eos_id):
        """encode_texts (arrays None: a list of lists) or encode_texts_arrays (into arrays' two buffers)."""
        cdef PiecesFn split = <PiecesFn>PyCapsule_GetPointer(pieces, _PIECES_CAPSULE)
        cdef Py_ssize_t i, n = len(texts), failed_at = -1, chars = 0
        cdef vector[TextRef] refs
        cdef int status, t
        cdef object text
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads!r}")
        refs.resize(n)
        for i in range(n):
            text = texts[i]
            if type(text) is not str and not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__} {text!r:.80}; expected str")
            hfbpe_text_ref(text, &refs[i])
            chars += refs[i].length
        if chars < _THREAD_MIN_CHARS or n < 2:
            threads = 1  # starting threads costs more than a small batch
        cdef list result = PyList_New(n) if arrays is None else None
        status = self._run_refs(refs, pid, split, threads, chars, result, &failed_at, arrays, eos_id)
        if status == ENCODE_BAD_TEXT:
            texts[failed_at].encode("utf-8")  # raises the standard UnicodeEncodeError naming the surrogate
            raise UnicodeError(f"cannot encode {texts[failed_at]!r} to UTF-8")
        if status != ENCODE_OK:
            raise MemoryError("encoding ran out of memory")
        return result

    def encode_documents(self, const unsigned char[::1] raw not None, bytes separator not None, pieces not None,
                         int pid, int threads=1, *, int eos_id=-1, bint skip_empty=False):
        """Encode the documents of a window of a UTF-8 file where they lie: no str for a valid UTF-8 document.

        Args:
            raw: UTF-8 bytes that end at a document's end (after a separator, or at the end of the file); kept
                alive (and unchanged) by the caller during the call.
            separator: what ends a document (UTF-8, not empty); documents are the text between separators (left
                out), the empty piece after a final separator is no document (csrc/file_encode.hpp).
            pieces, pid, threads: as :meth:`encode_texts`.
            eos_id: when >= 0, appended after every document.
            skip_empty: leave out empty documents.

        Returns:
            ``(ids, offsets)`` as :meth:`encode_texts_arrays`, one offset per document kept plus one.

        Raises:
            ValueError: ``separator`` empty.
            UnicodeDecodeError: a document is not UTF-8 (``start`` and ``end`` are offsets in ``raw``).
        """
        cdef PiecesFn split = <PiecesFn>PyCapsule_GetPointer(pieces, _PIECES_CAPSULE)
        cdef size_t size = raw.shape[0], sep_len = len(separator), i, n
        cdef const char* sep = separator
        cdef const char* data = <const char*>&raw[0] if size else sep
        cdef vector[int64_t] bounds
        cdef vector[uint8_t] forms
        cdef vector[TextRef] refs
        cdef int64_t a, b
        cdef Py_ssize_t total = 0, failed_at = -1
        cdef int status
        cdef list decoded = []  # the str of each document that is not UTF-8 (it raises), alive until it is encoded
        if not sep_len:
            raise ValueError("separator must not be empty")
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads!r}")
        with nogil:
            document_bounds(data, size, sep, sep_len, skip_empty, bounds, forms)
        n = forms.size()
        refs.resize(n)
        for i in range(n):
            a, b = bounds[2 * i], bounds[2 * i + 1]
            if forms[i] != DOC_INVALID:  # ASCII: its one-byte PEP 393 text; other valid UTF-8: scanned as such
                refs[i].data = data + a
                refs[i].length = b - a
                refs[i].kind = PyUnicode_1BYTE_KIND
                refs[i].ascii = forms[i] == DOC_ASCII
                refs[i].utf8 = forms[i] == DOC_UTF8
            else:
                try:
                    text = PyUnicode_DecodeUTF8(data + a, b - a, b"strict")
                except UnicodeDecodeError as exc:
                    raise UnicodeDecodeError("utf-8", data[:size], a + exc.start, a + exc.end, exc.reason) from None
                decoded.append(text)
                hfbpe_text_ref(text, &refs[i])
            total += refs[i].length
        if total < _THREAD_MIN_CHARS or n < 2:
            threads = 1
        arrays = (TokenBuffer(), TokenBuffer())
        status = self._run_refs(refs, pid, split, threads, total, None, &failed_at, arrays, eos_id)
        if status != ENCODE_OK:  # valid UTF-8 holds no lone surrogate: only memory can fail
            raise MemoryError("encoding ran out of memory")
        return arrays

    cdef list _encode_whole(self, str text, PiecesFn split, int pid):
        """Scan and encode one text holding the GIL in the kept scratch: its ids, or None if it has no UTF-8."""
        cdef TextRef whole
        cdef vector[int32_t] out
        cdef PieceEnds released
        cdef list flat
        self._build_pieces()
        hfbpe_text_ref(text, &whole)
        cdef int found = split(&whole, pid, &self._utf8, &self._ends)
        if found < 0:
            return None
        out.swap(self._out)  # a local while Python objects are made (a finalizer could call this encoder)
        out.clear()
        self._encoder.encode_pieces(pieces_bytes(&whole, self._utf8, found), self._ends.data(), self._ends.size(),
                                    out, NULL, NULL)
        flat = _to_list(out, self._ints)
        # Ints only, no cycle: untracked as _emit_lists does (a per-text loop's collections cost ~30 % of its
        # instructions, counted with callgrind).
        PyObject_GC_UnTrack(flat)
        if whole.length > _SCRATCH_KEEP:  # do not hold a long text's buffers for good
            self._utf8 = string()
            released.swap(self._ends)
        else:
            out.swap(self._out)
        return flat

    def encode_text(self, str text not None, pieces not None, int pid, bounds=None, int threads=1):
        """Split one text with the scanner and encode it: its ids (the single-text hot path, no object per piece).

        Args:
            text: the text.
            pieces: ``hf_bpe.core._scanner.pieces_function()``.
            pid: the scanner id.
            bounds: None to encode the text whole, holding the GIL (short texts); or increasing cut positions
                ``[0, c1, ..., len(text)]`` where the scanner ends a piece whether or not the text goes on
                (``hf_bpe.core.fragment.next_safe_cut``): the parts are encoded without the GIL on ``threads``
                threads and their ids concatenated (the caller's duty: a cut elsewhere changes the pieces).
            threads: threads for the parts (used as given: the caller chose the cuts for them).

        Raises:
            ValueError: ``bounds`` not increasing from 0 to ``len(text)``, or ``threads < 1``.
            UnicodeEncodeError: the text holds a lone surrogate.
        """
        cdef PiecesFn split = _splitter(pieces, threads)
        cdef TextRef whole
        cdef vector[TextRef] refs
        cdef list flat
        if bounds is None:
            flat = self._encode_whole(text, split, pid)
            if flat is None:
                text.encode("utf-8")  # raises the standard UnicodeEncodeError naming the surrogate
                raise UnicodeError(f"cannot encode {text!r:.80} to UTF-8")
            return flat
        hfbpe_text_ref(text, &whole)
        _cut_refs(whole, bounds, refs, whole.kind)
        return self._encode_parts(text, refs, split, pid, threads, False)

    def encode_text_array(self, str text not None, pieces not None, int pid, bounds=None, int threads=1):
        """Split and encode one text as :meth:`encode_text` does, into a :class:`TokenBuffer` of ids (int32).

        The ids are built without a Python object each, without the GIL (a short text on this thread, ``bounds``
        None; cut parts on ``threads`` threads).

        Raises:
            as :meth:`encode_text`.
        """
        cdef PiecesFn split = _splitter(pieces, threads)
        cdef TextRef whole
        cdef vector[TextRef] refs
        hfbpe_text_ref(text, &whole)
        if bounds is None:  # whole (an empty text too), on this thread
            refs.push_back(whole)
            threads = 1
        else:
            _cut_refs(whole, bounds, refs, whole.kind)
        return self._encode_parts(text, refs, split, pid, threads, True)

    cdef object _encode_parts(self, str text, vector[TextRef]& refs, PiecesFn split, int pid, int threads,
                              bint array):
        """The parts of one text on `threads` threads: its ids as one list, or a TokenBuffer when `array`."""
        cdef Py_ssize_t i, j, k, n = refs.size(), chars = 0, failed_at = -1
        cdef list parts = None, part, flat
        cdef int status
        cdef tuple arrays = None
        for i in range(n):
            chars += refs[i].length
        # One thread: the parts' ids end to end in one buffer, made into one list (no list per part to join).
        # Several: a list per part, made while the threads encode the next parts, then joined.
        if array or threads == 1:
            arrays = (TokenBuffer(), TokenBuffer())
        else:
            parts = PyList_New(n)
        status = self._run_refs(refs, pid, split, threads, chars, parts, &failed_at, arrays)
        if status == ENCODE_BAD_TEXT:
            text.encode("utf-8")
            raise UnicodeError(f"cannot encode {text!r:.80} to UTF-8")
        if status != ENCODE_OK:
            raise MemoryError("encoding ran out of memory")
        if array:
            return arrays[0]  # the parts' ids end to end (their offsets are not needed)
        if arrays is not None:
            flat = _to_list((<TokenBuffer>arrays[0])._i32, self._ints)
            PyObject_GC_UnTrack(flat)
            return flat
        if n == 1:
            return parts[0]
        # One list: the parts' references moved over, a memcpy per part, and each part emptied so that dropping it
        # releases none (was an INCREF per id here and a DECREF per id when the parts were dropped).
        k = 0
        for i in range(n):
            k += len(<list>PyList_GET_ITEM(parts, i))
        flat = PyList_New(k)
        k = 0
        for i in range(n):
            part = <list>PyList_GET_ITEM(parts, i)
            j = len(part)
            if j:
                memcpy((<PyListObject*>flat).ob_item + k, (<PyListObject*>part).ob_item, j * sizeof(PyObject*))
                Py_SET_SIZE(part, 0)  # (its items array is freed with it, its references are flat's now)
                k += j
        PyObject_GC_UnTrack(flat)
        return flat


cdef PiecesFn _splitter(pieces, int threads) except NULL:
    """The scanner's splitter from its capsule, after checking the thread count of a single-text call."""
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads!r}")
    return <PiecesFn>PyCapsule_GetPointer(pieces, _PIECES_CAPSULE)


cdef int _cut_refs(TextRef& whole, bounds, vector[TextRef]& refs, int unit) except -1:
    """refs = the parts of `whole` between `bounds` (0, ..., whole.length; increasing), `unit` bytes a position."""
    cdef Py_ssize_t i, at, prev = 0, n = len(bounds) - 1
    if n < 1 or bounds[0] != 0 or bounds[n] != whole.length:
        raise ValueError(f"bounds must run from 0 to len(text) = {whole.length}, got {bounds!r:.80}")
    refs.resize(n)
    for i in range(n):
        at = bounds[i + 1]
        if at <= prev:
            raise ValueError(f"bounds must increase, got {bounds!r:.80} (index {i + 1})")
        refs[i] = whole
        refs[i].data = <const char*>whole.data + prev * unit
        refs[i].length = at - prev
        prev = at
    return 0


def continue_merges_from_words(WordEncoder encoder, list words, list counts, *, keys, vocab_size, min_frequency=0,
                                max_token_length=None, progress=None, max_words=None, forbidden=b""):
    """Segment each word with ``encoder``, then continue the merge loop from those ids (``continue_merges``).

    Equal to ``continue_merges([encoder.encode_word(w) for w in words], counts, ...)``, without a Python list per
    word: each word is encoded straight into the trainer (extending GPT-2 on 100 MB segments over a million words).

    Args:
        encoder: the base's word encoder.
        words: distinct pre-tokens (bytes).
        counts: the count (1..2**63-1) of each word.
        keys, vocab_size, min_frequency, max_token_length, progress, max_words, forbidden: as
            :func:`continue_merges`.

    Returns:
        ``(keys, merges)`` as :func:`continue_merges`.

    Raises:
        TypeError, ValueError: as :func:`continue_merges` (a word the encoder gives an id without bytes, a bad count).

    >>> keys = [bytes([b]) for b in range(256)] + [b"ab"]
    >>> continue_merges_from_words(WordEncoder([(97, 98, 256)], range(256)), [b"abc", b"abab"], [2, 1], keys=keys,
    ...                            vocab_size=258)[1]
    [(256, 99, 257)]
    """
    # 1. Options, checked by the reference (given no words).
    from hf_bpe.core._reference_continue import prepare_continuation

    setup = prepare_continuation([], [], keys=keys, vocab_size=vocab_size, min_frequency=min_frequency,
                                 max_token_length=max_token_length, progress=progress, max_words=max_words,
                                 forbidden=forbidden)
    if len(words) != len(counts):
        raise ValueError(f"words and counts must have the same length, got {len(words)} and {len(counts)}")
    cdef vector[char] valid
    cdef Trainer* trainer = _seeded_trainer(setup, vocab_size, min_frequency, &valid)
    cdef bytes word
    cdef object count
    cdef vector[int32_t] ids
    cdef Py_ssize_t i, n = len(words)
    cdef size_t j
    cdef long long value
    cdef int overflow = 0
    cdef uint64_t weighted = 0
    try:
        encoder._build_pieces()
        # 2. Each word as the encoder segments it (the checks of prepare_continuation, in C).
        for i in range(n):
            word = <object>PyList_GET_ITEM(words, i)
            count = <object>PyList_GET_ITEM(counts, i)
            if type(count) is not int:
                raise TypeError(f"each count must be an int, got {count!r} ({type(count).__name__}); pass a whole "
                                "number")
            value = PyLong_AsLongLongAndOverflow(count, &overflow)
            if overflow or value < 1:
                raise ValueError(f"the count of {word!r:.80} is {count!r}; counts must be in 1..2**63-1")
            ids.clear()
            encoder._encoder.encode(PyBytes_AS_STRING(word), PyBytes_GET_SIZE(word), ids)
            for j in range(ids.size()):
                if ids[j] < 0 or <size_t>ids[j] >= valid.size() or not valid[ids[j]]:
                    raise ValueError(f"word {word!r:.80} holds id {ids[j]!r}, which the seeded vocabulary has no "
                                     f"bytes for (it has ids 0..{valid.size() - 1}); encode words with the base's "
                                     "own ids")
            if ids.size() and <uint64_t>value > (<uint64_t>1 << 61) // <uint64_t>ids.size():
                weighted = (<uint64_t>1 << 62)
            else:
                weighted += <uint64_t>value * <uint64_t>ids.size()
            if weighted > (<uint64_t>1 << 61):
                raise ValueError("sum(count * len(word)) is above 2**61: pair counts could overflow 64 bits; "
                                 "scale the counts down")
            if ids.size() >= 2:
                trainer.add_symbols(ids.data(), <int32_t>ids.size(), value)
        # 3. Pairs as the loop would count them, then the loop.
        return _run_seeded(trainer, setup, progress)
    finally:
        del trainer


cdef class ShortTextEncoder:
    """One model's single-text hot path: a short str with default options, scanned and encoded in one call.

    ``BPEModel.encode_ordinary`` calls :meth:`encode` first and takes its full Python path when it returns None, so
    that every check, error message, surrogate repair and the cutting of long texts stay in one place
    (``model/single_text.py``); this only skips the Python frames between the caller and the compiled code.

    Args:
        encoder: the model's word encoder.
        pid: the scanner id of the model's named pattern (a value of ``hf_bpe.core._scanner.SCANNERS``).
        add_prefix_space: prepend a space to a text that does not start with one (``Pretokenizer._prefixed``).
        long_chars: texts of this many characters or more are left to the caller (it cuts them for threads).

    >>> from hf_bpe.core._scanner import SCANNERS
    >>> short = ShortTextEncoder(WordEncoder([], range(256)), SCANNERS["gpt2"], False, 1 << 18)
    >>> short.encode("hi", None, "replace"), short.encode(b"hi", None, "replace"), short.encode("hi", 2, "replace")
    ([104, 105], None, None)
    """

    cdef WordEncoder _words
    cdef PiecesFn _split  # the scanner's splitter, taken from its capsule by the first call (it builds the tables)
    cdef int _pid
    cdef bint _prefix
    cdef Py_ssize_t _long

    def __init__(self, WordEncoder encoder not None, int pid, bint add_prefix_space, Py_ssize_t long_chars):
        self._words, self._pid, self._prefix, self._long = encoder, pid, add_prefix_space, long_chars

    def encode(self, text, num_threads, surrogates):
        """Return the ids of ``text``, or None when the caller must take its full path.

        None when: ``text`` is not exactly a str, ``num_threads`` is not None, ``surrogates`` is not ``"replace"``
        or ``"strict"`` (the caller checks and names it), the text is ``long_chars`` or longer, or it holds a
        surrogate (no UTF-8 form: the caller raises or repairs it). Otherwise the ids are those of
        ``Pretokenizer.encode_text``.
        """
        return self._try(text, num_threads, surrogates)

    cdef object _try(self, object text, object num_threads, object surrogates):
        cdef Py_ssize_t n
        if type(text) is not str or num_threads is not None:
            return None
        if surrogates is not _REPLACE and surrogates is not _STRICT and not (
                type(surrogates) is str and (surrogates == _REPLACE or surrogates == _STRICT)):
            return None
        n = PyUnicode_GET_LENGTH(text)
        if n >= self._long:
            return None
        if self._prefix and n and PyUnicode_READ_CHAR(text, 0) != 32:
            text = " " + text
        if self._split == NULL:
            from hf_bpe.core._scanner import pieces_function
            self._split = <PiecesFn>PyCapsule_GetPointer(pieces_function(), _PIECES_CAPSULE)
        return self._words._encode_whole(<str>text, self._split, self._pid)


cdef class OrdinaryEncoder:
    """One model's ``encode_ordinary`` as a compiled callable: :class:`ShortTextEncoder`'s try, else ``full``.

    ``BPEModel.encode_ordinary`` stores one in the instance on its first call (an instance attribute is found before
    the class's method), so a per-text loop pays one compiled call instead of a Python frame and a second call; the
    arguments and results are the method's: ``full(text, num_threads, surrogates)`` is the model's full Python
    path (checks, errors, surrogate repair, long texts), which it takes whenever ``short`` declines.

    >>> from hf_bpe.core._scanner import SCANNERS
    >>> short = ShortTextEncoder(WordEncoder([], range(256)), SCANNERS["gpt2"], False, 1 << 18)
    >>> encode = OrdinaryEncoder(short, lambda text, threads, surrogates: ["full path", text])
    >>> encode("hi"), encode("hi", num_threads=2)
    ([104, 105], ['full path', 'hi'])
    """

    cdef ShortTextEncoder _short
    cdef object _full

    def __init__(self, ShortTextEncoder short not None, full):
        self._short, self._full = short, full

    def __call__(self, text, *, num_threads=None, surrogates=_REPLACE):
        ids = self._short._try(text, num_threads, surrogates)
        return self._full(text, num_threads, surrogates) if ids is None else ids
