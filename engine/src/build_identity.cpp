// The text of `--version`, from build_identity() (generated at build time from
// cmake/build_identity.cpp.in).
#include <alignscope/build_identity.hpp>

namespace alignscope {

std::string version_text(const std::string& program, bool links_mpi) {
    const BuildIdentity& b = build_identity();
    std::string text = program + " " + b.version + "\ncommit: " + b.commit + "\nCUDA: ";
    if (*b.cuda_architectures)
        text += std::string("kernels for architectures ") + b.cuda_architectures + " (CUDA " + b.cuda_toolkit +
                ", runtime linked statically; a GPU needs the NVIDIA driver)";
    else
        text += "not built in (CPU devices only)";
    text += "\nMPI: ";
    const std::string library = *b.mpi_library ? std::string(" (") + b.mpi_library + ")" : std::string();
    if (!b.mpi) text += "not built in";
    else if (links_mpi)
        text += "built in" + library;
    else
        text += "built into alignscope-cli" + library + ", not the workbench";
    return text + "\n";
}

}  // namespace alignscope
