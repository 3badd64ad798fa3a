// Bump allocation for the memo caches' entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hfbpe {

// Bump allocation in blocks that never move; freed all at once. One per thread: not thread-safe.
class EntryArena {
public:
    void* allocate(size_t bytes) {
        bytes = (bytes + 7) & ~(size_t)7;
        if (used_ + bytes > size_) {
            size_ = bytes > BLOCK ? bytes : BLOCK;
            blocks_.emplace_back(new uint64_t[size_ / 8]);
            used_ = 0;
        }
        void* at = (char*)blocks_.back().get() + used_;
        used_ += bytes;
        return at;
    }

private:
    static constexpr size_t BLOCK = 1 << 18;
    std::vector<std::unique_ptr<uint64_t[]>> blocks_;
    size_t used_ = 0, size_ = 0;
};

}  // namespace hfbpe
