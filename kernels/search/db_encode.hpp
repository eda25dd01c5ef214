// The database laid out for the scan kernels on the device itself: the
// residue letters go up as they are (a copy from memory the host already
// holds) and a small kernel turns them into padded matrix codes, so the host
// writes no fresh buffer of the database's size on the load's path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace alignscope::kernels::search {

// Per byte its matrix code, or -1 where the matrix does not score it.
struct CodeTable {
    std::int16_t code[256];
};

// Sequence p (letters raw[offsets[p] .. offsets[p + 1])) becomes codes at
// out[starts[p] ..], padded with `pad` to a multiple of 4. Sets *unscored to
// 1 when a letter has no code (it is written as 0). Asynchronous on `stream`.
cudaError_t launch_encode_padded(const char* raw, const std::uint64_t* offsets, const std::uint64_t* starts, int count,
                                 const CodeTable& table, std::uint8_t pad, std::uint8_t* out, unsigned int* unscored,
                                 cudaStream_t stream);

}  // namespace alignscope::kernels::search
