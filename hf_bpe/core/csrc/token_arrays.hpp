// A batch's ids as two flat arrays instead of one Python list per text: every id end to end (int32) and where each
// text's ids start (int64, one more entry than texts). Built from the chunks an EncodeJob (or encode_range) made,
// without the GIL; the Python side exposes the vectors through the buffer protocol (numpy, pyarrow: no copy).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "id_pool.hpp"
#include "parallel_encode.hpp"

namespace hfbpe {

// Move (one part, no EOS: no copy) or gather parts[0..count) into ids/offsets, appending `eos` after every text when
// it is >= 0. Each part is emptied as it is copied (its buffer kept by the pool when the largest yet, id_pool.hpp,
// else freed), so the peak is the batch's ids once plus one part, plus the pool's buffer when too small to take.
inline void gather_ranges(EncodedRange* parts, size_t count, int32_t eos, std::vector<int32_t>& ids,
                          std::vector<int64_t>& offsets) {
    size_t texts = 0, total = 0;
    for (size_t k = 0; k < count; ++k) {
        texts += parts[k].ends.size();
        total += parts[k].ids.size();
    }
    const bool with_eos = eos >= 0;
    offsets.clear();
    offsets.reserve(texts + 1);
    offsets.push_back(0);
    if (count == 1 && !with_eos) {
        for (size_t end : parts[0].ends) offsets.push_back((int64_t)end);
        ids = std::move(parts[0].ids);
        parts[0] = EncodedRange();
        return;
    }
    const size_t size = total + (with_eos ? texts : 0);
    IdBufferPool::global().take(ids, size);
    ids.resize(size);
    int32_t* at = ids.data();
    for (size_t k = 0; k < count; ++k) {
        const int32_t* from = parts[k].ids.data();
        size_t start = 0;
        for (size_t end : parts[k].ends) {
            // memcpy with a zero length needs valid pointers: an empty part's data() may be null.
            if (end > start) std::memcpy(at, from + start, (end - start) * sizeof(int32_t));
            at += end - start;
            if (with_eos) *at++ = eos;
            offsets.push_back((int64_t)(at - ids.data()));
            start = end;
        }
        IdBufferPool::global().give(parts[k].ids);  // (kept if the largest yet)
        parts[k] = EncodedRange();  // frees what the pool did not keep
    }
}

}  // namespace hfbpe
