"""The compiled core's C++ headers (hf_bpe/core/csrc) stand on their own: each compiles alone, and the shared hash
behaves as its callers assume (equal keys hash equally; a fingerprint and length determine a short key)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CSRC = Path(__file__).resolve().parents[1] / "hf_bpe" / "core" / "csrc"
HEADERS = sorted(p.name for p in CSRC.glob("*.hpp"))
GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")


@pytest.mark.parametrize("header", HEADERS)
def test_csrc_header_compiles_on_its_own(tmp_path, header):
    # Python.h first, as in the Cython modules that include the headers.
    source = tmp_path / "one.cpp"
    source.write_text(f'#include <Python.h>\n#include "{header}"\nint main() {{ return 0; }}\n', encoding="utf-8")
    done = subprocess.run([GXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
                           "-fsyntax-only", f"-I{CSRC}", f"-I{sysconfig.get_paths()['include']}", str(source)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_csrc_shared_hash_properties(tmp_path):
    source = tmp_path / "hash.cpp"
    source.write_text(r'''
#include "hash.hpp"
#include <cstdio>
#include <string>
int main() {
    using namespace hfbpe;
    const std::string keys[] = {"", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "abcdefghi", "x\0y"};
    for (const auto& k : keys) {
        std::string copy = k;  // another buffer, the same bytes
        if (hash_bytes(k.data(), k.size()) != hash_bytes(copy.data(), copy.size())) return 1;
        if (hash_bytes(k.data(), k.size()) != hash_bytes(k.data(), k.size(), fingerprint(k.data(), k.size()))) return 2;
    }
    // Keys of up to 8 bytes: equal (fingerprint, length) means equal bytes.
    if (fingerprint("abc", 3) == fingerprint("abd", 3) || fingerprint("abcdefg", 7) == fingerprint("abcdefh", 7)) return 3;
    if (hash_bytes("ab", 2) == hash_bytes("ba", 2) || mix64(1) == mix64(2)) return 4;
    std::puts("ok");
    return 0;
}
''', encoding="utf-8")
    binary = tmp_path / "hash"
    done = subprocess.run([GXX, "-std=c++17", "-O1", f"-I{CSRC}", str(source), "-o", str(binary)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout.strip()) == (0, "ok")


def test_csrc_shared_word_cache_under_thread_sanitizer(tmp_path):
    # Four threads publish and read the same words at once (the batch encoder's pattern): every hit holds the ids
    # its word was published with, a full table stops taking words, and ThreadSanitizer reports no data race.
    source = tmp_path / "shared.cpp"
    source.write_text(r'''
#include "shared_word_cache.hpp"
#include "hash.hpp"
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
int main() {
    using namespace hfbpe;
    SharedWordCache cache(3000);
    int bad = 0;
    for (int round = 0; round < 3; ++round) {
        cache.prepare(4);
        std::vector<std::thread> threads;
        std::vector<int> wrong(4, 0);
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                std::vector<int32_t> out;
                for (int i = 0; i < 5000; ++i) {
                    int w = (i * 7 + t * 13 + round) % 4000;
                    std::string word = "w" + std::to_string(w);
                    uint64_t h = hash_bytes(word.data(), word.size());
                    int32_t ids[3] = {w, w + 1, -w};
                    out.clear();
                    if (cache.get(word.data(), word.size(), h, out)) {
                        if (out.size() != 3 || out[0] != w || out[1] != w + 1 || out[2] != -w) ++wrong[t];
                    } else {
                        cache.put(word.data(), word.size(), h, ids, 3, cache.arena(t));
                    }
                }
            });
        }
        for (auto& thread : threads) thread.join();
        for (int x : wrong) bad += x;
    }
    std::puts(bad == 0 ? "ok" : "wrong ids");
    return 0;
}
''', encoding="utf-8")
    _run_under_thread_sanitizer(source)


def test_csrc_piece_cache_under_thread_sanitizer(tmp_path):
    # Four threads publish and read the same short pieces at once through one PieceCache (the batch encoder's
    # pattern: CAS-claimed slots published by a release store of the key): every hit holds the ids its piece was
    # published with (1..7 ids: inline and spilled), a full table stops taking pieces, a reset between rounds
    # goes back to the image (whose seeded pieces stay hits), and ThreadSanitizer reports no data race.
    source = tmp_path / "pieces.cpp"
    source.write_text(r"""
#include "piece_cache.hpp"
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
using namespace hfbpe;
static std::vector<int32_t> ids_of(int w) {
    std::vector<int32_t> ids;
    for (int k = 0; k <= w % 7; ++k) ids.push_back(w * 8 + k);
    return ids;
}
int main() {
    auto image = std::make_shared<PieceImage>();
    image->limit = 1500;
    image->slots.assign(4096, PieceSlot{0, 0, 0, 0});
    image->mask = 4095;
    for (int w = 0; w < 50; ++w) {  // seeded: words 0..49
        std::string word = "p" + std::to_string(w);
        std::vector<int32_t> ids = ids_of(w);
        PieceSlot slot;
        piece_key(word.data(), word.size(), slot.k0, slot.k1);
        pack_piece_ids(ids.data(), ids.size(), image->spill, slot.k1, slot.v0, slot.v1);
        image->seeded += insert_piece_unshared(image->slots, image->mask, slot);
    }
    PieceCache cache;
    int bad = 0;
    for (int round = 0; round < 3; ++round) {
        cache.reset(image);
        std::vector<EntryArena> arenas(4);
        std::vector<std::thread> threads;
        std::vector<int> wrong(4, 0);
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                std::vector<int32_t> out;
                for (int i = 0; i < 5000; ++i) {
                    int w = (i * 7 + t * 13 + round) % 2000;
                    std::string word = "p" + std::to_string(w) + std::string(w % 9, 'x');  // 2..13 bytes
                    if (w >= 50 && w < 100) word += "0123";  // up to 15 bytes
                    uint64_t k0, k1;
                    piece_key(word.data(), word.size(), k0, k1);
                    uint64_t h = piece_hash(k0, k1);
                    std::vector<int32_t> ids = ids_of(w);
                    out.clear();
                    if (cache.get(k0, k1, h, out)) {
                        if (out != ids) ++wrong[t];
                    } else {
                        if (w < 50 && w % 9 == 0) ++wrong[t];  // seeded pieces are always there
                        cache.put(k0, k1, h, ids.data(), ids.size(), arenas[t]);
                    }
                }
            });
        }
        for (auto& thread : threads) thread.join();
        for (int x : wrong) bad += x;
        if (!cache.full()) ++bad;  // 2000 distinct pieces, room for 1500
    }
    std::puts(bad == 0 ? "ok" : "wrong ids");
    return 0;
}
""", encoding="utf-8")
    _run_under_thread_sanitizer(source)


def test_csrc_id_pool_under_thread_sanitizer(tmp_path):
    # Four threads take the kept id buffer, fill it and give it back at once (a batch's workers take it in
    # encode_range while Python gives back dead TokenBuffers): every taken vector is empty with the room asked for,
    # whatever it held before; the kept room never shrinks below the largest given, never exceeds MAX_KEPT, and
    # small or huge buffers are not kept; ThreadSanitizer reports no data race.
    source = tmp_path / "id_pool.cpp"
    source.write_text(r"""
#include "id_pool.hpp"
#include <cstdio>
#include <thread>
#include <vector>
using namespace hfbpe;
int main() {
    IdBufferPool pool;
    int bad = 0;
    std::vector<int> wrong(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                const size_t want = IdBufferPool::MIN_KEPT + (size_t)((i * 7 + t * 13) % 5) * 1000;
                std::vector<int32_t> ids;
                pool.take(ids, want);
                if (!ids.empty() || ids.capacity() < want) ++wrong[t];
                ids.assign(want, t);  // an output's ids, left in the buffer given back
                pool.give(ids);
            }
        });
    }
    for (auto& thread : threads) thread.join();
    for (int x : wrong) bad += x;
    if (pool.kept() < IdBufferPool::MIN_KEPT + 4000) ++bad;
    std::vector<int32_t> small(100), huge;
    huge.reserve(IdBufferPool::MAX_KEPT + 1);
    const size_t before = pool.kept();
    pool.give(small);
    pool.give(huge);
    if (pool.kept() != before || small.capacity() != 100 || huge.capacity() <= IdBufferPool::MAX_KEPT) ++bad;
    std::puts(bad == 0 ? "ok" : "wrong");
    return 0;
}
""", encoding="utf-8")
    _run_under_thread_sanitizer(source)


def test_csrc_count_job_with_the_caller_counting_under_thread_sanitizer(tmp_path):
    # CountJob as the tally drives it: batches queued faster than one pool thread counts them, the caller counting
    # chunks while two wait and in finish(); a batch only the caller may count (threads = 1); a failing text. The
    # counts and their first-seen order equal one thread's, and ThreadSanitizer reports no data race.
    source = tmp_path / "count.cpp"
    source.write_text(r'''
#include <Python.h>
#include "parallel_count.hpp"
#include <cstdio>
#include <string>
#include <vector>
using namespace hfbpe;
static int scan(const TextRef* ref, int pid, HfbpePieceCounter* counter, std::string*) {
    const char* s = (const char*)ref->data;
    Py_ssize_t n = ref->length, i = 0;
    if (pid == 1 && n > 0 && s[0] == '!') return -1;
    while (i < n) {
        Py_ssize_t j = i + 1;
        while (j < n && s[j] != ' ') ++j;
        counter->add(s + i, (size_t)(j - i));
        i = j;
    }
    return 0;
}
static std::vector<std::string> dump(HfbpePieceCounter& c) {
    std::vector<std::string> out;
    for (size_t k : c.order()) out.push_back(std::string(c.key_data(k), c.key_size(k)) + "=" + std::to_string(c.value(k)));
    return out;
}
int main() {
    std::vector<std::string> texts;
    for (int i = 0; i < 30000; ++i) {
        std::string t;
        for (int w = 0; w < 8; ++w) t += " w" + std::to_string((i * 31 + w * 17) % (1000 + i / 10));
        texts.push_back(t);
    }
    auto refs = [&](size_t a, size_t b, uint64_t* chars) {
        std::vector<TextRef> r;
        for (size_t i = a; i < b; ++i) {
            r.push_back(TextRef{texts[i].data(), (Py_ssize_t)texts[i].size(), 1, 1});
            *chars += texts[i].size();
        }
        return r;
    };
    Py_ssize_t at; uint64_t batch;
    std::vector<HfbpePieceCounter> one(1);
    {
        CountJob job;
        uint64_t chars = 0;
        auto all = refs(0, texts.size(), &chars);
        if (job.run_here(all, 0, scan, one.data(), 0, &at, &batch) != COUNT_OK) { std::puts("one failed"); return 0; }
    }
    std::vector<HfbpePieceCounter> many(2);
    {
        CountJob job;
        uint64_t base = 0;
        for (size_t a = 0; a < texts.size(); a += 1500) {
            uint64_t chars = 0;
            auto r = refs(a, std::min(texts.size(), a + 1500), &chars);
            job.start(r, 0, (a / 1500) % 5 == 3 ? 1 : 2, scan, many.data(), base);
            base += chars;
        }
        if (job.finish(&at, &batch) != COUNT_OK) { std::puts("many failed"); return 0; }
        std::vector<std::string> bad = {"ok", "!bad", "fine"};
        std::vector<TextRef> r;
        for (auto& t : bad) r.push_back(TextRef{t.data(), (Py_ssize_t)t.size(), 1, 1});
        job.start(r, 1, 2, scan, many.data(), base);
        int status = job.finish(&at, &batch);
        if (status != COUNT_BAD_TEXT || at != 1) { std::puts("failure not reported"); return 0; }
    }
    many[0].absorb(many[1]);
    std::vector<HfbpePieceCounter> again(1);
    again[0].absorb(many[0]);
    std::vector<std::string> a = dump(one[0]), b = dump(again[0]);
    b.resize(std::min(b.size(), a.size()));  // the failing batch added "ok" (and maybe more) at the end
    std::puts(a == b ? "ok" : "different counts");
    return 0;
}
''', encoding="utf-8")
    _run_under_thread_sanitizer(source)


def test_csrc_long_pieces_under_thread_sanitizer(tmp_path):
    # Four copies of one encoder (shared tables) encode long pieces at once: the long-piece tables are built by
    # whichever copy first passes 256 KB of long pieces (std::call_once), the others wait or read them; every
    # result equals a heap-only encoder's, and ThreadSanitizer reports no data race.
    source = tmp_path / "long_pieces.cpp"
    source.write_text(r'''
#include "encoder.hpp"
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
using namespace hfbpe;
static void set_up(Encoder& e) {
    for (int b = 0; b < 256; ++b) e.byte_ids[b] = b;
    e.set_cache_size(0);
    // a-runs (2, 4, 8, 16), "ab", "ba", "aba", digits in pairs: monotone, one spelling each.
    e.add_merge(0, 97, 97, 256); e.add_merge(1, 256, 256, 257); e.add_merge(2, 257, 257, 258);
    e.add_merge(3, 258, 258, 259); e.add_merge(4, 97, 98, 260); e.add_merge(5, 98, 97, 261);
    e.add_merge(6, 260, 97, 262); e.add_merge(7, 49, 50, 263); e.add_merge(8, 263, 51, 264);
}
int main() {
    std::vector<std::string> pieces;
    for (int k = 0; k < 3; ++k) {
        std::string p;
        unsigned x = 12345u + k;
        while (p.size() < 100000) {
            x = x * 1103515245u + 12345u;
            const char* parts[] = {"a", "aaaaaaa", "ab", "ba", "b", "123", "12", "3"};
            p += parts[(x >> 16) % 8];
        }
        pieces.push_back(p);
    }
    Encoder heap;
    set_up(heap);
    heap.set_long_min(SIZE_MAX);
    std::vector<std::vector<int32_t>> expected(pieces.size());
    for (size_t i = 0; i < pieces.size(); ++i) heap.encode(pieces[i].data(), pieces[i].size(), expected[i]);
    Encoder base;
    set_up(base);
    std::vector<Encoder*> copies;
    for (int t = 0; t < 4; ++t) copies.push_back(new Encoder(base));
    std::vector<int> bad(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 2; ++round) {
                for (size_t i = 0; i < pieces.size(); ++i) {
                    std::vector<int32_t> out;
                    copies[t]->encode(pieces[i].data(), pieces[i].size(), out);
                    if (out != expected[i]) ++bad[t];
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    uint64_t steps = 0;
    for (Encoder* c : copies) { steps += c->long_steps; delete c; }
    std::puts(bad[0] + bad[1] + bad[2] + bad[3] == 0 && steps > 0 ? "ok" : "wrong ids");
    return 0;
}
''', encoding="utf-8")
    _run_under_thread_sanitizer(source)


def _run_under_thread_sanitizer(source: Path) -> None:
    """Build `source` with ThreadSanitizer and run it: it must print "ok" with no race reported (skip without TSan)."""
    binary = source.with_suffix("")
    done = subprocess.run([GXX, "-std=c++17", "-O1", "-g", "-fsanitize=thread", "-pthread", f"-I{CSRC}",
                           f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(binary)],
                          capture_output=True, text=True, timeout=180)
    if done.returncode != 0 and "tsan" in done.stderr:
        pytest.skip(f"g++ cannot link ThreadSanitizer here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=180,
                         env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66"})
    assert (run.returncode, run.stdout.strip()) == (0, "ok"), run.stderr[-3000:]


@settings(deadline=None, derandomize=True, max_examples=300)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=4))
def test_csrc_sha256_equals_hashlib(datas):
    # csrc/sha256.hpp through its one caller (every length around the 55/56/64-byte padding boundaries and several
    # blocks), summed as the multiset fingerprint sums: modulo 2**256, big-endian.
    from hf_bpe.core._tally import sum_digests

    expected = sum(int.from_bytes(hashlib.sha256(d).digest(), "big") for d in datas) % 2**256
    assert int.from_bytes(sum_digests(datas), "big") == expected
    assert sum_digests([datas[0]]) == hashlib.sha256(datas[0]).digest()


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.lists(st.binary(max_size=300), max_size=6), st.booleans())
def test_csrc_sha256_stream_equals_hashlib_in_any_chunks(parts, big):
    # csrc/sha256.hpp's Sha256Stream (the CPU's SHA extensions when present, else portable code) fed in pieces of
    # every size around the 64-byte block, and a large update (one without the GIL); digest() leaves the stream as
    # it was, as hashlib's does.
    from hf_bpe.core._tally import Sha256

    ours, theirs = Sha256(), hashlib.sha256()
    for part in parts + ([bytes(range(256)) * 300] if big else []):
        ours.update(part)
        theirs.update(part)
        assert ours.digest() == theirs.digest()
    copy = ours.copy()
    ours.update(b"x")
    assert copy.hexdigest() == theirs.hexdigest() and ours.digest() == hashlib.sha256(b"".join(parts) + (
        bytes(range(256)) * 300 if big else b"") + b"x").digest()
    assert Sha256(memoryview(b"abc")).digest() == Sha256(bytearray(b"abc")).digest() == hashlib.sha256(b"abc").digest()


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.lists(st.binary(max_size=100).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=8), st.booleans())
def test_csrc_sha256_framed_lines_equal_frame_lines(lines, last_newline):
    # update_framed_lines hashes frame_lines(raw) (the corpus fingerprint's framing) without building it.
    from hf_bpe.core._tally import Sha256, frame_lines

    raw = b"".join(lines)
    if not last_newline and raw:
        raw = raw[:-1]
    stream = Sha256(b"head")
    assert stream.update_framed_lines(raw) == len(raw.split(b"\n")) - (raw.endswith(b"\n") or not raw)
    assert stream.digest() == hashlib.sha256(b"head" + frame_lines(raw)).digest()


def test_csrc_sha256_rejects_str():
    from hf_bpe.core._tally import Sha256

    with pytest.raises(TypeError):
        Sha256("text")


@settings(deadline=None, derandomize=True, max_examples=100)
@given(st.binary(max_size=700))
def test_csrc_sha256_portable_and_sha_extensions_agree(data):
    # The portable rounds (CPUs without SHA-NI, and valgrind) and the SHA-NI ones (where the CPU has them) both give
    # hashlib's digest; on a CPU without the extensions both runs take the portable code.
    from hf_bpe.core._tally import Sha256, _set_sha_extensions, sum_digests

    previous = _set_sha_extensions(False)
    try:
        portable = (Sha256(data).digest(), sum_digests([data]))
    finally:
        _set_sha_extensions(previous)
    assert portable == (Sha256(data).digest(), sum_digests([data])) == (hashlib.sha256(data).digest(),) * 2
