// alignscope-cli: the headless face of the engine. Wiring only: each command
// lives in its own cli_<name>.cpp; errors become one line on stderr and exit 2.
#include "cli_commands.hpp"
#include "cli_exit.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"

#include <alignscope/build_identity.hpp>
#include <alignscope/error.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

// Output that never reached standard output (a full disk, a closed pipe's
// reader gone, /dev/full) is an error, not a success with nothing said.
int with_output_checked(int status) {
    std::cout.flush();
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    const int error = errno;
    if (flushed && std::cout.good() && !std::ferror(stdout)) return status;
    std::cerr << "alignscope-cli: error: could not write to standard output"
              << (!flushed && error ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace alignscope;
    CLI::App app{"AlignScope: pairwise and database sequence alignment on GPUs and CPUs"};
    app.name("alignscope-cli");
#ifdef ALIGNSCOPE_WITH_MPI
    constexpr bool links_mpi = true;
#else
    constexpr bool links_mpi = false;
#endif
    std::string version = version_text("alignscope-cli", links_mpi);
    version.pop_back();  // CLI11 ends the line itself
    app.set_version_flag("--version", version);
    app.require_subcommand(1);

    cli::CliContext context;
    for (int i = 0; i < argc; ++i) context.command_line += (i ? " " : "") + std::string(argv[i]);
    try {
        context.registry = make_cpu_registry();
#ifndef ALIGNSCOPE_WITH_CUDA
        DeviceInfo gpu;
        gpu.id = "gpu";
        gpu.kind = "gpu";
        gpu.name = "CUDA GPUs";
        gpu.available = false;
        gpu.unavailable_reason = "this build has no CUDA backend (nvcc was not found, or ALIGNSCOPE_CUDA=OFF)";
        context.registry->add_unavailable(gpu);
#endif
    } catch (const std::exception& e) {
        std::cerr << "alignscope-cli: error: " << e.what() << '\n';
        return 2;
    }
    cli::add_align_command(app, context);
    cli::add_search_command(app, context);
    cli::add_allvsall_command(app, context);
    cli::add_hmmsearch_command(app, context);
    cli::add_devices_command(app, context);
    cli::add_verify_command(app, context);
    cli::add_bench_command(app, context);
    cli::add_project_command(app, context);
    cli::make_numbers_strict(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return with_output_checked(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::string message = e.what();
        for (auto& c : message)
            if (c == '\n') c = ' ';
        std::cerr << "alignscope-cli: error: " << message << " (see alignscope-cli --help)\n";
        return 2;
    }
    if (!context.action) return with_output_checked(0);
    // Under mpirun only allvsall and search share their work among the ranks;
    // any other command would run once per rank, each writing the same outputs.
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
        const char* size = std::getenv(name);
        if (size && std::atoi(size) > 1 && !app.get_subcommand("allvsall")->parsed() &&
            !app.get_subcommand("search")->parsed()) {
            for (CLI::App* command : app.get_subcommands())
                std::cerr << "alignscope-cli: error: " << command->get_name()
                          << " does not run under mpirun (only allvsall and search share their work among ranks); "
                             "run it once, without mpirun\n";
            return 2;
        }
    }
    try {
#ifdef ALIGNSCOPE_WITH_CUDA
        // The driver starts in the background (a fifth of a second on an H100
        // host) once a command is known to run, so --version, --help and usage
        // errors never wait for it, and a streamed align reads its input meanwhile.
        context.registry->defer([](DeviceRegistry& registry) { kernels::register_cuda_backends(registry); });
#endif
        // verify's --reference names a device as --device does; checked before
        // the run so that an unknown one is blamed on its own flag.
        if (CLI::App* verify = app.get_subcommand("verify"); verify->parsed()) {
            const CLI::Option* reference = verify->get_option("--reference");
            if (reference->count()) context.registry->select(reference->as<std::string>(), "--reference");
        }
        const int status = with_output_checked(context.action());
        // Outputs in place and flushed: the GPU's buffers and context, the
        // registry and the heap go back with the process, not one by one.
        if (status == 0 && cli::teardown_left_to_exit() && cli::can_skip_teardown()) {
            std::cerr.flush();
            std::_Exit(status);
        }
        return status;
    } catch (const Cancelled&) {
        std::cout.flush();
        std::cerr << "alignscope-cli: cancelled\n";
        return cli::interrupt_exit_status();
    } catch (const std::bad_alloc&) {
        std::cerr << "alignscope-cli: error: out of memory\n";
        return 2;
    } catch (const std::exception& e) {
        std::string message = e.what();
        for (auto& c : message)
            if (c == '\n') c = ' ';
        std::cerr << "alignscope-cli: error: " << message << '\n';
        return 2;
    }
}
