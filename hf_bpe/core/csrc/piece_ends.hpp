// Where a text's pieces end, as the scanners write them (scanner.hpp, mask_scanner.hpp) and the encoders read
// them: a vector of byte offsets whose resize() leaves what it adds unwritten.
//
// The mask scanner makes room ahead and writes a block's ends 8 a step into it (EndsWriter); std::vector's resize()
// zero-fills the room first, 8 bytes a piece written twice. Callgrind on 2 MB of ASCII English (GPT-2, warm): that
// memset was 8 % of the call's instructions and more than half of its store misses. Every entry below size() is
// written by the scanner before anything reads it.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace hfbpe {

// std::allocator whose argument-less construct() default-initialises (leaves a trivial T unwritten).
template <typename T>
struct UninitAllocator : std::allocator<T> {
    using std::allocator<T>::allocator;
    template <typename U>
    struct rebind {
        using other = UninitAllocator<U>;
    };
    template <typename U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

using PieceEnds = std::vector<size_t, UninitAllocator<size_t>>;

}  // namespace hfbpe
