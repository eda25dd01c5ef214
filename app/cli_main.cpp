// alignscope-cli: the headless face of the engine. Wiring only: each command
// lives in its own cli_<name>.cpp; errors become one line on stderr and exit 2.
#include "cli_commands.hpp"

#include <alignscope/error.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#endif

#include <iostream>
#include <string>

int main(int argc, char** argv) {
    using namespace alignscope;
    CLI::App app{"AlignScope: pairwise and database sequence alignment on GPUs and CPUs"};
    app.name("alignscope-cli");
    app.set_version_flag("--version", std::string("alignscope-cli ") + ALIGNSCOPE_VERSION);
    app.require_subcommand(1);

    cli::CliContext context;
    for (int i = 0; i < argc; ++i) context.command_line += (i ? " " : "") + std::string(argv[i]);
    try {
        context.registry = make_cpu_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
        kernels::register_cuda_backends(*context.registry);
#else
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
    cli::add_devices_command(app, context);
    cli::add_verify_command(app, context);
    cli::add_bench_command(app, context);
    cli::add_project_command(app, context);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string message = e.what();
        for (auto& c : message)
            if (c == '\n') c = ' ';
        std::cerr << "alignscope-cli: error: " << message << " (see alignscope-cli --help)\n";
        return 2;
    }
    if (!context.action) return 0;
    try {
        return context.action();
    } catch (const Cancelled&) {
        std::cerr << "alignscope-cli: cancelled\n";
        return 130;
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
