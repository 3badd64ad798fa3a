// Give the pages of freed memory back to the system between the phases of training.
// glibc keeps freed memory for reuse: after counting (blocks of text, the threads' piece counters) and after the
// merge loop (pair map, heap, word lists) it kept 12-25 MB resident that the next phase could not use (fragmented
// by the Python objects allocated in between), which raised the peak RSS of training a 10 MB corpus by as much.
// malloc_trim(0) returns every whole free page of every arena (madvise), in O(free chunks): about a millisecond.
// A no-op where the C library has no malloc_trim (macOS, musl keep their own policies).
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hfbpe {

// Keep large blocks (128 KiB and up, glibc's initial threshold) on mmap for the rest of the process, so that freeing
// one gives its pages back at once. glibc otherwise raises that threshold to the size of the first large block freed
// (up to 32 MiB) and from then on keeps large freed blocks in its heaps: the text blocks read and the threads' counters
// growing while counting, the pair map, queue and word lists growing under the merge loop. They stayed resident
// until the next malloc_trim, raising the peak of training on 10 MB by ~7 MB while counting and ~4 MB while merging
// (on 1 MB by ~2 MB each), for no measurable gain in speed (a block is touched once per use either way).
// Called when training starts; idempotent. A no-op outside glibc.
static inline void bound_freed_memory() {
#if defined(__GLIBC__)
    static const bool pinned = mallopt(M_MMAP_THRESHOLD, 128 * 1024) != 0;
    (void)pinned;
#endif
}

static inline void release_free_memory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

}  // namespace hfbpe
