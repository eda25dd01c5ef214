// What this build is: version, git commit, the CUDA architectures its kernels
// were compiled for, and whether MPI is built in. `--version` of both programs
// and the workbench's About dialog print it. Filled in at build time
// (cmake/AlignScopeBuildIdentity.cmake); plain strings, no CUDA or MPI headers.
#pragma once

#include <string>

namespace alignscope {

struct BuildIdentity {
    const char* version;             // "0.1.0"
    const char* commit;              // git commit (12 hex digits), "-dirty" when the tree had changes; "unknown"
    const char* cuda_architectures;  // CMAKE_CUDA_ARCHITECTURES, e.g. "90"; "" without the CUDA backend
    const char* cuda_toolkit;        // nvcc's version, e.g. "13.0.48"; "" without the CUDA backend
    bool mpi;                        // alignscope-cli has the Open MPI work distribution (allvsall under mpirun)
    const char* mpi_library;         // e.g. "Open MPI v4.1.4"; "" when unknown or not built
};

const BuildIdentity& build_identity();

// The lines `--version` prints: "<program> <version>", then commit, CUDA and
// MPI. `links_mpi` is false for the workbench, which says that MPI lives in
// alignscope-cli instead.
std::string version_text(const std::string& program, bool links_mpi);

}  // namespace alignscope
