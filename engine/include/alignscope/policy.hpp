// Policy: the thresholds and sizes that decide how a job runs, each said once
// so that the CLI and the GUI take the same path for the same input.
#pragma once

#include <cstdint>

namespace alignscope::policy {

// One pair whose shorter sequence has at least this many residues takes the
// long-pair path (linear memory, special rows) by itself.
inline constexpr std::int64_t long_pair_residues = 20'000;

// A long pair whose longer sequence has at least this many residues is
// written to its output file as it is traced back (streamed) by itself.
inline constexpr std::int64_t stream_residues = 1'000'000;

// The DP overview a long-pair job keeps in a project: this many blocks a
// side (the heatmap shows cell maxima per block).
inline constexpr int long_pair_overview_blocks = 512;

}  // namespace alignscope::policy
