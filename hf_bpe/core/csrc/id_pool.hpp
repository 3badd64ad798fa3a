// One freed buffer of ids, kept for the next long output so that its pages are not faulted in again.
//
// A long text's ids are written into a vector that is handed to Python (TokenBuffer, then numpy) and freed when
// the array dies. glibc maps a block of 128 KiB and more afresh (until a freed mapping happens to raise that
// threshold, which depends on what the process freed before), so every call faulted the next vector's pages in
// again, each zeroed by the kernel: 10 MB of English with GPT-2, ~2,350 faults and ~3 ms of a 13-16 ms call on
// this 2-core VM, in one process and not in another (measured). TokenBuffer gives its ids back here when it dies;
// encode_range and gather_ranges take them: the pages stay resident from call to call, whatever malloc decides.
//
// At most one buffer, of MIN_KEPT to MAX_KEPT ids, is kept (the larger of the kept one and the one given): the
// memory held is bounded by one call's output. Thread-safe (the threads of a call take, Python gives).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace hfbpe {

class IdBufferPool {
public:
    static constexpr size_t MIN_KEPT = (size_t)1 << 16;  // ids (256 KiB): smaller blocks come from malloc's free lists
    static constexpr size_t MAX_KEPT = (size_t)1 << 24;  // ids (64 MiB: the output of a text of up to ~50 MB)

    static IdBufferPool& global() {
        static IdBufferPool pool;
        return pool;
    }
    // `into` cleared, with room for `want` ids: the kept buffer's when it has that room (its pages are resident).
    void take(std::vector<int32_t>& into, size_t want) {
        if (want >= MIN_KEPT && into.capacity() < want) {
            std::lock_guard<std::mutex> hold(mutex_);
            if (kept_.capacity() >= want) into.swap(kept_);  // (kept_ gets into's room, if any)
        }
        into.clear();  // (the kept buffer still holds the ids of the output it was)
        into.reserve(want);
    }
    // Keep from's storage (from is left empty) when it is in bounds and larger than the kept one's (which is freed,
    // after the lock).
    void give(std::vector<int32_t>& from) {
        const size_t room = from.capacity();
        if (room < MIN_KEPT || room > MAX_KEPT) return;
        std::vector<int32_t> old;
        std::lock_guard<std::mutex> hold(mutex_);
        if (room > kept_.capacity()) {
            old.swap(kept_);
            kept_.swap(from);
        }
    }
    // The kept buffer's room in ids (tests).
    size_t kept() {
        std::lock_guard<std::mutex> hold(mutex_);
        return kept_.capacity();
    }

private:
    std::mutex mutex_;
    std::vector<int32_t> kept_;
};

}  // namespace hfbpe
