// Several GPUs as one backend: the batch is split across them, one host thread
// per GPU, in shares proportional to each GPU's measured throughput, with a
// dynamic tail so a GPU that finishes early takes more (group_plan.hpp).
#pragma once

#include <alignscope/device/backend.hpp>

#include <memory>
#include <vector>

namespace alignscope::kernels {

std::unique_ptr<Backend> make_gpu_group(std::vector<Backend*> members);

}  // namespace alignscope::kernels
