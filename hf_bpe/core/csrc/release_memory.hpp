// Give the pages of freed memory back to the system between the phases of training.
// glibc keeps freed memory for reuse: after counting (blocks of text, the threads' piece counters) and after the
// merge loop (pair map, heap, word lists) it kept 12-25 MB resident that the next phase could not use (fragmented
// by the Python objects allocated in between), which raised the peak RSS of training a 10 MB corpus by as much.
// malloc_trim(0) returns every whole free page of every arena (madvise), in O(free chunks): about a millisecond.
// A no-op where the C library has no malloc_trim (macOS, musl keep their own policies). The trainer's large growing
// tables do not wait for it: they map their own blocks (large_alloc.hpp), which go back when freed; nothing here
// changes the host process's malloc settings (no mallopt).
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hfbpe {

static inline void release_free_memory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

}  // namespace hfbpe
