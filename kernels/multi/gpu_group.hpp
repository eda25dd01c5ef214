// Several GPUs as one backend: the batch is split across them, one host thread
// per GPU, in shares proportional to each GPU's measured throughput, with a
// dynamic tail so a GPU that finishes early takes more.
#pragma once

#include <alignscope/device/backend.hpp>

#include <memory>
#include <vector>

namespace alignscope::kernels {

std::unique_ptr<Backend> make_gpu_group(std::vector<Backend*> members);

// How a job's cells are shared: the first `static_fraction` of the work goes
// to the members in proportion to `throughput`, the rest in `tail_chunks`
// chunks that any member may take. Returns, per member, the cells of its share.
// Plain logic, exposed for the tests.
std::vector<double> static_shares(const std::vector<double>& throughput, double static_fraction);

}  // namespace alignscope::kernels
