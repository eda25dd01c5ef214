// The long-pair pass runner of one CUDA GPU (see align/long_pair.hpp).
#pragma once

#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>

#include <memory>

namespace alignscope::kernels {

std::unique_ptr<longpair::PassRunner> make_cuda_long_runner(int device_index, const DeviceInfo& info,
                                                            const LongRunnerSettings& settings);

}  // namespace alignscope::kernels
