// Creates and destroys the job's streams.
#include "common/stream_pool.hpp"

#include <alignscope/error.hpp>

#include <string>

namespace alignscope::kernels {

StreamPool::StreamPool(int count, const CudaSite& site) {
    if (count < 1 || count > 64)
        throw Error("--streams " + std::to_string(count) + " on " + site.device + ": expected 1 to 64 streams");
    streams_.reserve(static_cast<std::size_t>(count));
    try {
        for (int k = 0; k < count; ++k) {
            cudaStream_t stream = nullptr;
            check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", site);
            streams_.push_back(stream);
        }
    } catch (...) {
        for (cudaStream_t s : streams_) (void)cudaStreamDestroy(s);
        throw;
    }
}

StreamPool::~StreamPool() {
    for (cudaStream_t s : streams_) (void)cudaStreamDestroy(s);
}

int default_stream_count(int sm_count) { return sm_count >= 64 ? 4 : 2; }

}  // namespace alignscope::kernels
