// The GPU scorer of all-against-all jobs: the CLI asks for one when a job
// runs on a single CUDA GPU, and run_tiles then takes every tile's scores
// from it (the set and its query profiles stay on the GPU; a tile is a list
// of work items for the database-scan recurrence), keeping the backend for
// traceback and for the few pairs whose 16-bit score is not proven exact.
#pragma once

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/device/backend.hpp>

#include <memory>
#include <string>

namespace alignscope::kernels {

// A scorer for `problem` on `backend`'s GPU, or null (and why, in `why_not`)
// when `backend` is not one CUDA GPU or the job is one the scan kernels do not
// take (then run_tiles scores with the backend alone). The scorer keeps
// references to `problem` and `backend`. Throws Error on a CUDA failure.
std::unique_ptr<allvsall::TileScorer> make_cuda_tile_scorer(const allvsall::Problem& problem, Backend& backend,
                                                            JobContext& context, std::string* why_not = nullptr);

}  // namespace alignscope::kernels
