# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
# distutils: extra_compile_args = -O3 -std=c++17
"""Compiled BPE merge loop and word encoder: the same API and results as ``hf_bpe._reference``.

The algorithms live in the C++ block below; the Python-facing functions check their arguments with the very
helpers of ``hf_bpe._reference`` (so both modules start from the same state and raise the same errors), then run
without Python objects (and without the GIL) in the loops. Read ``hf_bpe._reference`` for the semantics.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.exc cimport PyErr_CheckSignals
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF

from hf_bpe._reference import PROGRESS_EVERY, check_encoder_args, prepare_training

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <cstring>
    #include <queue>
    #include <string>
    #include <unordered_map>
    #include <utility>
    #include <vector>

    namespace hfbpe {

    // A pair of ids (left, right) as one key; comparing keys compares pairs lexicographically.
    static inline uint64_t pair_key(uint32_t left, uint32_t right) { return ((uint64_t)left << 32) | right; }

    static inline uint64_t mix64(uint64_t x) {  // splitmix64 finaliser: spreads sequential ids over the table
        x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27; x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    }

    // Open-addressing hash map from a pair key to V (linear probing, load <= 1/2, no deletion).
    // Pair keys are < 2**63 (ids < 2**31), so ~0 is free to mark empty slots.
    template <typename V>
    struct PairMap {
        static constexpr uint64_t EMPTY = ~0ULL;
        std::vector<uint64_t> keys;
        std::vector<V> vals;
        uint64_t mask = 0;
        size_t used = 0;

        PairMap() { reset(8); }
        void reset(size_t expected) {
            size_t cap = 16;
            while (cap < expected * 2) cap <<= 1;
            keys.assign(cap, EMPTY);
            vals.assign(cap, V());
            mask = cap - 1;
            used = 0;
        }
        V* find(uint64_t key) {
            uint64_t i = mix64(key) & mask;
            for (;;) {
                if (keys[i] == key) return &vals[i];
                if (keys[i] == EMPTY) return nullptr;
                i = (i + 1) & mask;
            }
        }
        // The reference stays valid until the next insertion.
        V& get_or_insert(uint64_t key, const V& init) {
            if ((used + 1) * 2 > keys.size()) grow();
            uint64_t i = mix64(key) & mask;
            for (;;) {
                if (keys[i] == key) return vals[i];
                if (keys[i] == EMPTY) {
                    keys[i] = key;
                    vals[i] = init;
                    ++used;
                    return vals[i];
                }
                i = (i + 1) & mask;
            }
        }
        void grow() {
            std::vector<uint64_t> old_keys;
            std::vector<V> old_vals;
            old_keys.swap(keys);
            old_vals.swap(vals);
            reset(old_keys.size());
            for (size_t j = 0; j < old_keys.size(); ++j) {
                if (old_keys[j] == EMPTY) continue;
                uint64_t i = mix64(old_keys[j]) & mask;
                while (keys[i] != EMPTY) i = (i + 1) & mask;
                keys[i] = old_keys[j];
                vals[i] = old_vals[j];
                ++used;
            }
        }
    };

    // ---------------------------------------------------------------------------------------------------------
    // Training: tokenizers' BpeTrainer::do_train (phases 3-5), see hf_bpe/_reference.py for the spec.
    // ---------------------------------------------------------------------------------------------------------

    // A heap entry: the count it was pushed with, its pair, a push sequence number (our tie rule: equal
    // (count, pair) pop in push order) and the index of its word list in Trainer::lists.
    struct Entry {
        uint64_t count;
        uint64_t pair;
        uint64_t seq;
        uint32_t list;
    };
    struct EntryLess {  // priority_queue pops the greatest: highest count, then smallest pair, then oldest push
        bool operator()(const Entry& x, const Entry& y) const {
            if (x.count != y.count) return x.count < y.count;
            if (x.pair != y.pair) return x.pair > y.pair;
            return x.seq > y.seq;
        }
    };

    class Trainer {
    public:
        // Inputs, filled by the Python wrapper before init().
        std::vector<std::string> keys;                      // byte-level key (raw bytes) of each id
        std::vector<int32_t> token_len;                     // len(key) of each id, in bytes (= byte-level chars)
        std::unordered_map<std::string, int32_t> key_to_id; // tokenizers' word_to_id, minus unspellable specials
        int32_t byte_ids[256];
        int64_t vocab_size = 0;
        uint64_t min_frequency = 0;
        uint64_t max_len = ~0ULL;                           // usize::MAX when there is no max_token_length
        bool bits32 = false;
        // Output.
        std::vector<int32_t> merges;                        // flat (left, right, new) triples
        bool finished = false;

        void add_id(const char* key, size_t size, bool spellable) {
            keys.emplace_back(key, size);
            token_len.push_back((int32_t)size);
            if (spellable) key_to_id.emplace(keys.back(), (int32_t)(keys.size() - 1));
        }
        // Words are stored flat: word w is sym[words[w].offset ..][.. words[w].length], compacted in place by
        // merges (and the whole array is repacked when it is mostly holes, for memory locality).
        void add_word(const unsigned char* bytes, int64_t size, int64_t count) {
            words.push_back(WordInfo{(int64_t)sym.size(), count, (int32_t)size});
            live += size;
            for (int64_t i = 0; i < size; ++i) sym.push_back(byte_ids[bytes[i]]);
        }

        // Phase 4: pair counts and, per pair, the list of words holding it (count_pairs); push the entries.
        void init() {
            counts.reset(1 << 16);
            stamp = 1;  // every pair seen in this phase belongs to the same "step"
            for (size_t w = 0; w < words.size(); ++w) {
                const int32_t* s = &sym[words[w].offset];
                for (int32_t j = 0; j + 1 < words[w].length; ++j) {
                    note_new(pair_key(s[j], s[j + 1]), words[w].count, (int32_t)w);
                }
            }
            push_touched();
        }

        // Phase 5: run the loop until `limit` merges are recorded or a stop rule fires (then finished = true).
        // One merge costs O(total length of the entry's words) plus O(log heap) per new pair; early merges of a
        // large corpus touch most words and dominate (memory-bound scans of `sym`).
        int64_t run(int64_t limit) {
            int64_t done = 0;
            while (done < limit) {
                if ((int64_t)keys.size() >= vocab_size || heap.empty()) {
                    finished = true;
                    break;
                }
                Entry top = heap.top();
                heap.pop();
                uint64_t current = (uint64_t)counts.find(top.pair)->count;  // i32 -> u64 sign-extends (bits32)
                if (top.count != current) {  // stale entry: back with the current count, as a new push
                    top.count = current;
                    top.seq = seq++;
                    heap.push(top);
                    continue;
                }
                if (current < 1 || min_frequency > current) {
                    finished = true;
                    break;
                }
                int32_t left = (int32_t)(top.pair >> 32), right = (int32_t)(top.pair & 0xffffffffULL);
                std::string new_key = keys[left] + keys[right];
                int32_t new_id;
                auto found = key_to_id.find(new_key);
                if (found == key_to_id.end()) {  // a new token; else the existing id is reused
                    new_id = (int32_t)keys.size();
                    key_to_id.emplace(new_key, new_id);
                    token_len.push_back((int32_t)new_key.size());
                    keys.push_back(std::move(new_key));
                } else {
                    new_id = found->second;
                }
                merges.push_back(left);
                merges.push_back(right);
                merges.push_back(new_id);
                ++done;

                // Merge only in this entry's words; its list is consumed. Every pair with a +1 change gets one new
                // entry carrying only this step's words (tokenizers' where_to_update).
                std::vector<int32_t> where;
                where.swap(lists[top.list]);
                free_lists.push_back(top.list);
                ++stamp;
                for (int32_t w : where) merge_word(w, left, right, new_id);
                push_touched();
                if (live * 2 < (int64_t)sym.size() && sym.size() > (1u << 16)) repack();
            }
            return done;
        }

    private:
        struct WordInfo {
            int64_t offset;  // into sym
            int64_t count;   // wrapped to i32 when bits32 (tokenizers' `count as i32`)
            int32_t length;  // current number of symbols
        };
        std::vector<WordInfo> words;
        std::vector<int32_t> sym;
        int64_t live = 0;  // sum of the words' current lengths

        void repack() {  // O(live): copy every word to the front, in order
            int64_t to = 0;
            for (WordInfo& word : words) {
                std::memmove(sym.data() + to, sym.data() + word.offset, sizeof(int32_t) * (size_t)word.length);
                word.offset = to;
                to += word.length;
            }
            sym.resize(to);
            sym.shrink_to_fit();
        }
        // Per pair: its count (i32 values when bits32) and, for the step `stamp`, the list of words where it
        // got a +1 change. One hash lookup serves both.
        struct PairState {
            int64_t count = 0;
            uint64_t stamp = 0;
            uint32_t list = 0;
        };
        PairMap<PairState> counts;
        uint64_t stamp = 0;
        std::vector<uint64_t> touched;  // pairs with a +1 change in this step, in first-seen order
        std::vector<std::vector<int32_t>> lists;
        std::vector<uint32_t> free_lists;
        std::priority_queue<Entry, std::vector<Entry>, EntryLess> heap;
        uint64_t seq = 0;

        uint32_t new_list() {
            if (!free_lists.empty()) {
                uint32_t list = free_lists.back();
                free_lists.pop_back();
                return list;
            }
            lists.emplace_back();
            return (uint32_t)(lists.size() - 1);
        }
        // Counts never overflow int64 before wrapping: |count| <= 3 * 2**61 (checked upstream), or i32 values.
        int64_t wrap(int64_t sum) const {
            return bits32 ? (int64_t)(int32_t)(uint32_t)(uint64_t)sum : sum;
        }
        void add_change(uint64_t key, int64_t delta) {
            PairState& state = counts.get_or_insert(key, PairState());
            state.count = wrap(state.count + delta);
        }
        // A +1 change of `key` in word w: count it and remember w for this step's entry of `key`.
        void note_new(uint64_t key, int64_t delta, int32_t w) {
            PairState& state = counts.get_or_insert(key, PairState());
            state.count = wrap(state.count + delta);
            if (state.stamp != stamp) {
                state.stamp = stamp;
                state.list = new_list();
                touched.push_back(key);
            }
            std::vector<int32_t>& words = lists[state.list];
            if (words.empty() || words.back() != w) words.push_back(w);  // a word's changes are contiguous
        }
        // Push one entry per touched pair whose count is > 0 (distinct pairs never tie, so order is free).
        void push_touched() {
            for (uint64_t key : touched) {
                PairState& state = *counts.find(key);
                if (state.count > 0) {
                    heap.push(Entry{(uint64_t)state.count, key, seq++, state.list});
                } else {
                    std::vector<int32_t>().swap(lists[state.list]);
                    free_lists.push_back(state.list);
                }
            }
            touched.clear();
        }
        // Word::merge on word w, compacting in place (read index r, write index o); changes are applied to the
        // counts at once (their sum is order-free) and +1 changes are remembered for this step's entries.
        void merge_word(int32_t w, int32_t left, int32_t right, int32_t new_id) {
            WordInfo& word = words[w];
            int32_t* s = &sym[word.offset];
            const int32_t n = word.length;
            const int64_t count = word.count;
            const uint64_t new_len = (uint64_t)token_len[new_id];
            int32_t r = 0, o = 0;
            while (r < n) {
                if (s[r] == left && r + 1 < n && s[r + 1] == right) {
                    if (o > 0) {
                        int32_t prev = s[o - 1];  // may be a symbol this scan already merged
                        add_change(pair_key(prev, left), -count);
                        if ((uint64_t)token_len[prev] + new_len < max_len) {
                            note_new(pair_key(prev, new_id), count, w);
                        }
                    }
                    if (r + 2 < n) {
                        int32_t next = s[r + 2];
                        add_change(pair_key(right, next), -count);
                        if ((uint64_t)token_len[next] + new_len < max_len) {
                            note_new(pair_key(new_id, next), count, w);
                        }
                    }
                    s[o++] = new_id;
                    r += 2;
                } else {
                    s[o++] = s[r++];
                }
            }
            live -= n - o;
            word.length = o;
        }
    };

    // ---------------------------------------------------------------------------------------------------------
    // Encoding: tokenizers' Word::merge_all without dropout, plus a bounded memo cache.
    // ---------------------------------------------------------------------------------------------------------

    struct RankValue {
        int32_t rank = 0;
        int32_t new_id = 0;
    };

    class Encoder {
    public:
        static constexpr size_t MAX_CACHED_WORD = 256;  // longer words are rare; keeps the cache pool bounded
        int32_t byte_ids[256];
        size_t cache_size = 0;
        std::unordered_map<std::string, int32_t> whole;

        void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) {
            ranks.get_or_insert(pair_key(left, right), RankValue()) = RankValue{rank, new_id};  // last rank wins
        }
        void add_whole(const char* word, size_t size, int32_t id) { whole[std::string(word, size)] = id; }
        void clear_cache() {
            cache.clear();
            pool.clear();
        }

        void encode(const char* word, size_t size, std::vector<int32_t>& out) {
            const unsigned char* bytes = (const unsigned char*)word;
            if (!whole.empty()) {
                auto it = whole.find(std::string(word, size));
                if (it != whole.end()) {
                    out.push_back(it->second);
                    return;
                }
            }
            // Small-word fast paths (same result as merge_all: at most one pair).
            if (size <= 1) {
                if (size == 1) out.push_back(byte_ids[bytes[0]]);
                return;
            }
            if (size == 2) {
                int32_t a = byte_ids[bytes[0]], b = byte_ids[bytes[1]];
                RankValue* found = ranks.find(pair_key(a, b));
                if (found) {
                    out.push_back(found->new_id);
                } else {
                    out.push_back(a);
                    out.push_back(b);
                }
                return;
            }
            if (cache_size == 0 || size > MAX_CACHED_WORD) {
                merge_all(bytes, size, out);
                return;
            }
            std::string key(word, size);
            auto hit = cache.find(key);
            if (hit != cache.end()) {
                out.insert(out.end(), pool.begin() + hit->second.first,
                           pool.begin() + hit->second.first + hit->second.second);
                return;
            }
            size_t start = out.size();
            merge_all(bytes, size, out);
            if (cache.size() >= cache_size) clear_cache();  // bounded: drop everything when full
            cache.emplace(std::move(key), std::make_pair(pool.size(), out.size() - start));
            pool.insert(pool.end(), out.begin() + start, out.end());
        }

    private:
        struct Symbol {
            int32_t c, prev, next, len;
        };
        struct Item {
            int32_t rank, pos, new_id;
        };
        struct ItemAfter {  // std heap functions keep the greatest on top: make it the lowest (rank, pos)
            bool operator()(const Item& x, const Item& y) const {
                return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
            }
        };
        PairMap<RankValue> ranks;
        std::unordered_map<std::string, std::pair<size_t, size_t>> cache;  // word -> (start, size) in pool
        std::vector<int32_t> pool;
        std::vector<Symbol> symbols;
        std::vector<Item> heap;

        void push(const Item& item) {
            heap.push_back(item);
            std::push_heap(heap.begin(), heap.end(), ItemAfter());
        }
        // O(n log n) for a word of n bytes: each merge pops one entry and pushes at most two.
        void merge_all(const unsigned char* bytes, size_t size, std::vector<int32_t>& out) {
            const int32_t n = (int32_t)size;
            symbols.resize(size);
            heap.clear();
            for (int32_t i = 0; i < n; ++i) symbols[i] = Symbol{byte_ids[bytes[i]], i - 1, i + 1 < n ? i + 1 : -1, 1};
            for (int32_t i = 0; i + 1 < n; ++i) {
                RankValue* found = ranks.find(pair_key(symbols[i].c, symbols[i + 1].c));
                if (found) heap.push_back(Item{found->rank, i, found->new_id});
            }
            std::make_heap(heap.begin(), heap.end(), ItemAfter());
            while (!heap.empty()) {
                std::pop_heap(heap.begin(), heap.end(), ItemAfter());
                Item top = heap.back();
                heap.pop_back();
                Symbol& current = symbols[top.pos];
                if (current.len == 0 || current.next == -1) continue;  // absorbed, or last symbol
                const int32_t next_pos = current.next;
                const Symbol right = symbols[next_pos];
                RankValue* found = ranks.find(pair_key(current.c, right.c));
                if (!found || found->new_id != top.new_id) continue;  // expired (tokenizers compares new ids)
                current.c = top.new_id;
                current.len += right.len;
                current.next = right.next;
                symbols[next_pos].len = 0;
                if (right.next > -1) symbols[right.next].prev = top.pos;
                if (current.prev >= 0) {
                    found = ranks.find(pair_key(symbols[current.prev].c, current.c));
                    if (found) push(Item{found->rank, current.prev, found->new_id});
                }
                if (current.next > -1) {
                    found = ranks.find(pair_key(current.c, symbols[current.next].c));
                    if (found) push(Item{found->rank, top.pos, found->new_id});
                }
            }
            for (int32_t i = 0; i < n; ++i) {
                if (symbols[i].len != 0) out.push_back(symbols[i].c);
            }
        }
    };

    }  // namespace hfbpe
    """
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
        void add_word(const unsigned char* data, int64_t size, int64_t count) except +
        void init() except + nogil
        int64_t run(int64_t limit) except + nogil

    cdef cppclass Encoder "hfbpe::Encoder":
        int32_t byte_ids[256]
        size_t cache_size
        void add_merge(int32_t rank, uint32_t left, uint32_t right, int32_t new_id) except +
        void add_whole(const char* word, size_t size, int32_t id) except +
        void clear_cache()
        void encode(const char* word, size_t size, vector[int32_t]& out) except +


def train_merges(words, counts, *, vocab_size, min_frequency=0, special_tokens=(), max_token_length=None,
                 count_bits=64, progress=None):
    """Learn byte-level BPE merges exactly as ``tokenizers``' ``BpeTrainer``; see ``hf_bpe._reference``.

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
        ``(vocab, merges)`` as ``hf_bpe._reference.train_merges``.

    >>> vocab, merges = train_merges([b"aaa"], [3], vocab_size=300)
    >>> [vocab[i] for _, _, i in merges]
    [b'aa', b'aaa']
    """
    setup = prepare_training(
        words, counts, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
        max_token_length=max_token_length, count_bits=count_bits, progress=progress,
    )
    cdef Trainer* trainer = new Trainer()
    cdef int64_t done, total = 0, step = PROGRESS_EVERY
    cdef Py_ssize_t i
    cdef bytes word, key
    cdef list vocab
    try:
        # 1. Options and the initial ids (specials, alphabet) prepared by the reference.
        trainer.vocab_size = min(vocab_size, 2**62)
        trainer.min_frequency = min_frequency  # checked: 0..2**64-1
        trainer.max_len = min(setup.max_len, 2**64 - 1)  # lengths never get near 2**64
        trainer.bits32 = count_bits == 32
        for key in setup.keys:
            if key is None:
                trainer.add_id(b"", 0, False)
            else:
                trainer.add_id(PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), True)
        for i in range(256):
            trainer.byte_ids[i] = setup.byte_ids[i]

        # 2. Words as flat id arrays; `count as i32` when emulating tokenizers' 32-bit counts.
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
