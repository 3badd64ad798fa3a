// Large growing blocks straight from the system, so that freeing one gives its pages back at once.
// The trainer's tables (text counters while counting; pair map, queue, word lists under the merge loop) grow by
// doubling and free the old block each time. Through malloc those freed blocks stay resident: glibc raises its mmap
// threshold to the size of the first large block freed (up to 32 MiB) and from then on serves and keeps large
// blocks in its heaps, which raised the peak RSS of training on 10 MB by ~7 MB while counting and ~4 MB while
// merging. Pinning glibc's threshold (mallopt) would do it for the whole host process (a library must not change
// how the user's torch or numpy allocate), so these containers map their own large blocks instead: mmap at
// LARGE bytes and up (glibc's initial threshold), the global operator new below. The mapping's page faults are paid
// once per block as malloc pays them for a fresh block; a block is touched once per use either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define HFBPE_HAVE_MMAP 1
#endif

namespace hfbpe {

static constexpr size_t LARGE_BLOCK = 128 * 1024;

// Raw storage of `bytes` aligned to `align`: mapped when large, else from operator new. Throws std::bad_alloc.
static inline void* large_allocate(size_t bytes, size_t align) {
#if defined(HFBPE_HAVE_MMAP)
    if (bytes >= LARGE_BLOCK) {  // page-aligned: any alignment a type can ask for
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        return p;
    }
#endif
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) return ::operator new(bytes, std::align_val_t(align));
    return ::operator new(bytes);
}

// Free what large_allocate(bytes, align) returned; `bytes` and `align` must be the same.
static inline void large_deallocate(void* p, size_t bytes, size_t align) noexcept {
#if defined(HFBPE_HAVE_MMAP)
    if (bytes >= LARGE_BLOCK) {
        munmap(p, bytes);
        return;
    }
#endif
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
        ::operator delete(p, std::align_val_t(align));
        return;
    }
    ::operator delete(p);
}

// A stateless standard allocator over large_allocate: every instance equals every other.
template <typename T>
struct LargePageAllocator {
    using value_type = T;
    LargePageAllocator() noexcept = default;
    template <typename U>
    LargePageAllocator(const LargePageAllocator<U>&) noexcept {}
    T* allocate(size_t n) {
        if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(large_allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, size_t n) noexcept { large_deallocate(p, n * sizeof(T), alignof(T)); }
    template <typename U>
    bool operator==(const LargePageAllocator<U>&) const noexcept { return true; }
    template <typename U>
    bool operator!=(const LargePageAllocator<U>&) const noexcept { return false; }
};

template <typename T>
using big_vector = std::vector<T, LargePageAllocator<T>>;
using big_string = std::basic_string<char, std::char_traits<char>, LargePageAllocator<char>>;

// A growable table of trivial T whose bytes are all zero until written. Mapped pages are zero and become resident
// only once touched, so a table reserved for every id a run may make (vocab_size) costs only the ids it uses, and
// never copies itself as a doubling vector does (old and new side by side at each growth).
template <typename T>
class ZeroTable {
public:
    ZeroTable() = default;
    ZeroTable(const ZeroTable&) = delete;
    ZeroTable& operator=(const ZeroTable&) = delete;
    ~ZeroTable() { release(); }
    size_t size() const noexcept { return n_; }
    T& operator[](size_t i) noexcept { return p_[i]; }
    const T& operator[](size_t i) const noexcept { return p_[i]; }
    // At least n entries, the old ones kept and the new ones zero. O(n) only when the table moves.
    void grow_zeroed(size_t n) {
        if (n <= n_) return;
        if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        T* q = static_cast<T*>(large_allocate(n * sizeof(T), alignof(T)));
#if defined(HFBPE_HAVE_MMAP)
        if (n * sizeof(T) < LARGE_BLOCK) std::memset(static_cast<void*>(q), 0, n * sizeof(T));  // mapped: zero
#else
        std::memset(static_cast<void*>(q), 0, n * sizeof(T));
#endif
        if (n_) std::memcpy(static_cast<void*>(q), static_cast<const void*>(p_), n_ * sizeof(T));
        release();
        p_ = q;
        n_ = n;
    }
    void release() noexcept {
        if (p_) large_deallocate(p_, n_ * sizeof(T), alignof(T));
        p_ = nullptr;
        n_ = 0;
    }

private:
    T* p_ = nullptr;
    size_t n_ = 0;
};

// An uninitialised array of n trivial T that never moves, freed with its owner (a pool's block).
template <typename T>
class LargeArray {
public:
    explicit LargeArray(size_t n) : n_(n), p_(LargePageAllocator<T>().allocate(n)) {}
    LargeArray(LargeArray&& other) noexcept : n_(other.n_), p_(other.p_) { other.p_ = nullptr; }
    LargeArray& operator=(LargeArray&& other) noexcept {
        std::swap(n_, other.n_);
        std::swap(p_, other.p_);
        return *this;
    }
    LargeArray(const LargeArray&) = delete;
    LargeArray& operator=(const LargeArray&) = delete;
    ~LargeArray() {
        if (p_) LargePageAllocator<T>().deallocate(p_, n_);
    }
    T* get() const noexcept { return p_; }

private:
    size_t n_;
    T* p_;
};

}  // namespace hfbpe
