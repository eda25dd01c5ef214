// The streams a job runs on: batches go round-robin over them so copies of one
// batch overlap the kernels of another. The user sets the count (--streams);
// the default comes from the device.
#pragma once

#include "common/cuda_check.hpp"

#include <vector>

namespace alignscope::kernels {

class StreamPool {
public:
    StreamPool(int count, const CudaSite& site);
    ~StreamPool();
    StreamPool(const StreamPool&) = delete;
    StreamPool& operator=(const StreamPool&) = delete;

    int size() const { return static_cast<int>(streams_.size()); }
    cudaStream_t operator[](int lane) const { return streams_[static_cast<std::size_t>(lane)]; }

private:
    std::vector<cudaStream_t> streams_;
};

// Streams when the job does not say: enough to keep a copy, a kernel and a
// result copy in flight at once, a few more on a big device.
int default_stream_count(int sm_count);

}  // namespace alignscope::kernels
