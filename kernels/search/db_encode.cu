// The database-encoding kernel of db_encode.hpp: one warp per sequence, its
// lanes striding over the padded sequence.
#include "common/fault_injection.hpp"
#include "search/db_encode.hpp"

#include <algorithm>

namespace alignscope::kernels::search {
namespace {

constexpr int kThreads = 256;

__global__ void encode_padded(const char* raw, const std::uint64_t* offsets, const std::uint64_t* starts, int count,
                              CodeTable table, std::uint8_t pad, std::uint8_t* out, unsigned int* unscored) {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const long long warps = static_cast<long long>(gridDim.x) * (kThreads / 32);
    bool bad = false;
    for (long long p = (static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x) / 32; p < count; p += warps) {
        const std::uint64_t from = offsets[p];
        const std::uint64_t length = offsets[p + 1] - from;
        const std::uint64_t padded = (length + 3) & ~std::uint64_t{3};
        std::uint8_t* to = out + starts[p];
        for (std::uint64_t j = static_cast<std::uint64_t>(lane); j < padded; j += 32) {
            std::uint8_t value = pad;
            if (j < length) {
                const int c = table.code[static_cast<unsigned char>(raw[from + j])];
                bad |= c < 0;
                value = c < 0 ? std::uint8_t{0} : static_cast<std::uint8_t>(c);
            }
            to[j] = value;
        }
    }
    if (bad) atomicExch(unscored, 1u);
}

}  // namespace

cudaError_t launch_encode_padded(const char* raw, const std::uint64_t* offsets, const std::uint64_t* starts, int count,
                                 const CodeTable& table, std::uint8_t pad, std::uint8_t* out, unsigned int* unscored,
                                 cudaStream_t stream) {
    if (count <= 0) return cudaSuccess;
    const int blocks = std::max(1, std::min((count + kThreads / 32 - 1) / (kThreads / 32), 8192));
    encode_padded<<<blocks, kThreads, 0, stream>>>(raw, offsets, starts, count, table, pad, out, unscored);
    return fault::after_launch(cudaGetLastError());
}

}  // namespace alignscope::kernels::search
