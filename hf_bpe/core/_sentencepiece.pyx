# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Compiled SentencePiece-mode BPE (C++ in csrc/sp_trainer.hpp): sentence store, counts and the merge loop.

The spec is the pure-Python ``hf_bpe.training.sentencepiece.bpe.train_sentencepiece_reference``;
``hf_bpe.training.sentencepiece.trainer`` drives this module with the reference's own option checks, coverage
arithmetic and serialization, so only the loops differ. Normalization is SentencePiece's own (csrc/sp_normalizer.hpp,
spec: ``hf_bpe.core.sentencepiece_normalize``), over the precompiled charsmap a model carries.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t
from libcpp cimport bool as cbool
from libcpp.utility cimport pair
from libcpp.vector cimport vector
from libcpp.string cimport string
from cpython.exc cimport PyErr_CheckSignals

from hf_bpe.core._code_points cimport code_points

from hf_bpe.core.sentencepiece_normalize import forms_not_utf8

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    bint PyUnicode_IS_ASCII(object)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    object PyUnicode_DecodeUTF8(const char* data, Py_ssize_t size, const char* errors)

cdef extern from "csrc/sp_normalizer.hpp" namespace "hfbpe_sp":
    cdef cppclass Normalizer:
        Normalizer(const string&, cbool, cbool, cbool, vector[string], cbool) except +
        void normalize(const char*, size_t, string&) except +

cdef extern from "csrc/sp_trainer.hpp" namespace "hfbpe_sp":
    cdef cppclass Words:
        vector[uint32_t] chars
        vector[int64_t] start
        vector[int64_t] counts

    cdef cppclass Corpus:
        Corpus(const string&, cbool, cbool, cbool, const vector[vector[uint32_t]]&, cbool) except +
        void add(const char*, size_t) except +
        size_t finish()
        vector[pair[uint32_t, int64_t]] char_counts() except +
        Words words(const vector[uint32_t]&, cbool) except +

    cdef cppclass Seed:
        vector[vector[uint32_t]] atoms
        vector[cbool] mergeable
        vector[int32_t] rows
        vector[int64_t] start
        vector[int64_t] counts
        vector[vector[uint32_t]] known

    cdef struct CharInfo:
        int32_t script
        cbool decimal
        cbool forbidden

    cdef struct Options:
        int64_t max_piece_length
        cbool split_by_whitespace, split_by_number, split_by_unicode_script, split_digits, allow_ws_only
        cbool ws_as_suffix

    cdef cppclass Trainer:
        int64_t run(int64_t) except + nogil
        size_t size()
        vector[uint32_t] piece(size_t) except +

    Trainer* make_trainer(Corpus&, const vector[uint32_t]&, const vector[int64_t]&, const vector[CharInfo]&,
                          Options) except + nogil
    Trainer* make_seeded_trainer(Seed&, const vector[uint32_t]&, const vector[CharInfo]&, Options) except + nogil

_CHUNK = 512


cdef str _text(const vector[uint32_t]& cps):
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, cps.data(), cps.size())


cdef class SentencePieceNormalizer:
    """SentencePiece's ``Normalizer::Normalize``, compiled; the same API and results as
    ``hf_bpe.core.sentencepiece_normalize.SentencePieceNormalizer``."""

    cdef Normalizer* normalizer

    def __cinit__(self, spec, user_symbols=()):
        cdef vector[string] symbols
        for symbol in user_symbols:
            if symbol:
                symbols.push_back(symbol.encode("utf-8"))
        self.normalizer = new Normalizer(bytes(spec["precompiled_charsmap"]), bool(spec["add_dummy_prefix"]),
                                         bool(spec["remove_extra_whitespaces"]), bool(spec["escape_whitespaces"]),
                                         symbols, bool(spec.get("treat_whitespace_as_suffix", False)))

    def __dealloc__(self):
        del self.normalizer

    def normalize(self, str text not None) -> str:
        """Return the normalized text."""
        cdef Py_ssize_t size
        cdef const char* data = PyUnicode_AsUTF8AndSize(text, &size)
        cdef string out
        self.normalizer.normalize(data, size, out)
        try:
            return PyUnicode_DecodeUTF8(out.data(), out.size(), NULL)
        except UnicodeDecodeError as exc:
            raise ValueError(forms_not_utf8(exc)) from None


cdef class SentencePieceCorpus:
    """Sentences, normalized as they are added (empty, too long and ``"▅"``-holding ones skipped, as
    LoadSentences does); then their characters' counts and the merge loop over their words."""

    cdef Corpus* corpus
    cdef Py_ssize_t max_bytes
    cdef Py_ssize_t seen
    cdef Py_ssize_t sentences
    cdef bint trained
    cdef bint ws_as_suffix

    def __cinit__(self, *, bytes charsmap not None, bint remove_extra_whitespaces, bint add_dummy_prefix,
                  bint allow_whitespace_only_pieces, meta_pieces, Py_ssize_t max_sentence_length,
                  bint treat_whitespace_as_suffix=False):
        cdef vector[vector[uint32_t]] meta
        for piece in meta_pieces:
            meta.push_back(code_points(piece))
        self.max_bytes = max_sentence_length
        self.ws_as_suffix = treat_whitespace_as_suffix
        self.corpus = new Corpus(charsmap, remove_extra_whitespaces, add_dummy_prefix, allow_whitespace_only_pieces,
                                 meta, treat_whitespace_as_suffix)

    def __dealloc__(self):
        del self.corpus

    def add(self, texts) -> None:
        """Add sentences (str each; items are numbered across calls in errors)."""
        if self.trained:
            raise RuntimeError("this corpus has been trained on; make a new one to add sentences")
        cdef Py_ssize_t size
        cdef const char* data
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"corpus item {self.seen} is {type(text).__name__} {text!r:.60}; expected str")
            self.seen += 1
            if PyUnicode_GET_LENGTH(text) == 0:
                continue
            data = PyUnicode_AsUTF8AndSize(text, &size)
            if size > self.max_bytes or (not PyUnicode_IS_ASCII(text) and "\u2585" in text):
                continue
            self.corpus.add(data, size)
            self.sentences += 1
            if self.sentences % 65536 == 0:
                PyErr_CheckSignals()

    def finish(self) -> int:
        """Drop the sentences that normalized to nothing; return how many are left."""
        return self.corpus.finish()

    def char_counts(self) -> dict[str, int]:
        """Every character's count (U+0000 and U+0020 left out), in code point order."""
        return {chr(entry.first): entry.second for entry in self.corpus.char_counts()}

    def texts(self, required, bint split_by_whitespace) -> list[list]:
        """Return ``[text, count]`` lists, characters outside ``required`` written as ``"▅"``: the sentences in
        order, count 1 each (``split_by_whitespace`` false), or their distinct words, by count, then string.

        What ``hf_bpe.training.sentencepiece.bpe.load_sentences`` gives (and its words, as the unigram trainer
        counts them). Call after ``char_counts`` (the store's text is rewritten); may be called again.
        """
        if self.trained:
            raise RuntimeError("this corpus has been trained on already (training rewrites its text)")
        cdef vector[uint32_t] chars
        for char in required:
            chars.push_back(ord(char))
        cdef Words words = self.corpus.words(chars, split_by_whitespace)
        cdef size_t w, n = words.counts.size()
        cdef const uint32_t* data = words.chars.data()
        out = []
        for w in range(n):
            out.append([PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, data + words.start[w],
                                                  words.start[w + 1] - words.start[w]), words.counts[w]])
        return out

    def train(self, required, char_info, *, int64_t merges, int64_t max_sentencepiece_length,
              bint split_by_whitespace, bint split_by_number, bint split_by_unicode_script, bint split_digits,
              bint allow_whitespace_only_pieces, progress=None) -> list[str]:
        """Run the merge loop for up to ``merges`` pieces over the words of the corpus.

        Args:
            required: the kept characters and their counts (``{char: count}``, in the reference's order).
            char_info: per required character ``(script, decimal, forbidden)`` (see ``CharInfo`` in the header).
        """
        cdef vector[uint32_t] chars
        cdef vector[int64_t] counts
        cdef vector[CharInfo] info
        _char_table(required, char_info, chars, info)
        for count in required.values():
            counts.push_back(count)
        cdef Options options = _options(max_sentencepiece_length, split_by_whitespace, split_by_number,
                                        split_by_unicode_script, split_digits, allow_whitespace_only_pieces)
        options.ws_as_suffix = self.ws_as_suffix
        self._start_training()
        cdef Trainer* trainer
        with nogil:
            trainer = make_trainer(self.corpus[0], chars, counts, info, options)
        return _run(trainer, merges, progress)

    def train_seeded(self, chars, char_info, segment, mergeable, known, *, int64_t merges,
                     int64_t max_sentencepiece_length, bint split_by_whitespace, bint split_by_number,
                     bint split_by_unicode_script, bint split_digits, bint allow_whitespace_only_pieces,
                     progress=None) -> list[str]:
        """Continue the merge loop from given segmentations of the corpus's words (``extend_sentencepiece``).

        Args:
            chars: the characters that may merge, in order (the others are the unknown character in the words).
            char_info: per character of ``chars`` ``(script, decimal, forbidden)``.
            segment: called once with the distinct words (a list of str, in the trainer's order: count, then
                string) and their counts (a list of int); returns each word's atoms (a list of str that join to
                the word).
            mergeable: the atoms that may pair (the others never do); known: strings never made again.
        """
        cdef vector[uint32_t] char_vec
        cdef vector[CharInfo] info
        _char_table(dict.fromkeys(chars, 0), char_info, char_vec, info)
        cdef Options options = _options(max_sentencepiece_length, split_by_whitespace, split_by_number,
                                        split_by_unicode_script, split_digits, allow_whitespace_only_pieces)
        options.ws_as_suffix = self.ws_as_suffix
        self._start_training()
        cdef Words words = self.corpus.words(char_vec, split_by_whitespace)
        cdef Seed seed
        cdef size_t w, n = words.counts.size()
        cdef vector[uint32_t] cps
        texts = []
        for w in range(n):
            cps.assign(words.chars.begin() + words.start[w], words.chars.begin() + words.start[w + 1])
            texts.append(_text(cps))
        segmented = segment(texts, list(words.counts))
        if len(segmented) != n:
            raise ValueError(f"segment returned {len(segmented)} segmentations for {n} words")
        atom_ids = {}
        for w in range(n):
            total = 0
            for atom in segmented[w]:
                index = atom_ids.get(atom)
                if index is None:
                    index = atom_ids[atom] = len(atom_ids)
                    seed.atoms.push_back(code_points(atom))
                    seed.mergeable.push_back(atom in mergeable)
                seed.rows.push_back(index)
                total += len(atom)
            if total != words.start[w + 1] - words.start[w]:
                raise ValueError(f"the atoms of word {w} ({texts[w]!r:.60}) do not join to it")
            seed.start.push_back(seed.rows.size())
            seed.counts.push_back(words.counts[w])
        for piece in known:
            seed.known.push_back(code_points(piece))
        del texts, segmented, atom_ids
        cdef Trainer* trainer
        with nogil:
            trainer = make_seeded_trainer(seed, char_vec, info, options)
        return _run(trainer, merges, progress)

    def _start_training(self) -> None:
        if self.trained:
            raise RuntimeError("this corpus has been trained on already (training rewrites its text)")
        self.trained = True


cdef void _char_table(required, char_info, vector[uint32_t]& chars, vector[CharInfo]& info) except *:
    cdef CharInfo ci
    for char in required:
        chars.push_back(ord(char))
        ci.script, ci.decimal, ci.forbidden = char_info[char]
        info.push_back(ci)


cdef Options _options(int64_t max_sentencepiece_length, bint split_by_whitespace, bint split_by_number,
                      bint split_by_unicode_script, bint split_digits, bint allow_whitespace_only_pieces):
    cdef Options options
    options.max_piece_length = max_sentencepiece_length
    options.split_by_whitespace = split_by_whitespace
    options.split_by_number = split_by_number
    options.split_by_unicode_script = split_by_unicode_script
    options.split_digits = split_digits
    options.allow_ws_only = allow_whitespace_only_pieces
    options.ws_as_suffix = False
    return options


cdef list _run(Trainer* trainer, int64_t merges, progress):
    """Run ``trainer`` for up to ``merges`` pieces and free it; return the pieces."""
    cdef int64_t step, done = 0, added
    try:
        # Chunks of merges: progress and Ctrl-C between them, the loop itself without the GIL.
        while done < merges:
            step = min(_CHUNK, merges - done)
            with nogil:
                added = trainer.run(step)
            done += added
            if progress is not None:
                progress(added)
            PyErr_CheckSignals()
            if added < step:
                break
        return [_text(trainer.piece(i)) for i in range(trainer.size())]
    finally:
        del trainer
