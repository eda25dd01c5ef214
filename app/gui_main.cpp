// alignscope: the desktop workbench. Wiring only: the device and scanner
// registries (with the CUDA backends when this build has them), the command
// line, then the window or an off-screen screenshot (ui/launch.hpp).
#include <launch.hpp>

#include <alignscope/device/backend.hpp>
#include <alignscope/search/scan.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#include <alignscope/kernels/search_scanners.hpp>
#endif

#include <QApplication>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    using namespace alignscope;
    ui::prepare_platform(argc, argv);
    QApplication app(argc, argv);
    ui::set_application_identity();

    std::unique_ptr<DeviceRegistry> registry;
    std::unique_ptr<ScannerRegistry> scanners;
    try {
        registry = make_cpu_registry();
        scanners = make_cpu_scanner_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
        kernels::register_cuda_backends(*registry);
        kernels::register_cuda_scanners(*scanners);
#else
        DeviceInfo gpu;
        gpu.id = "gpu";
        gpu.kind = "gpu";
        gpu.name = "CUDA GPUs";
        gpu.available = false;
        gpu.unavailable_reason = "this build has no CUDA backend (nvcc was not found, or ALIGNSCOPE_CUDA=OFF)";
        registry->add_unavailable(gpu);
        scanners->add_unavailable(gpu);
#endif
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alignscope: error: %s\n", e.what());
        return 2;
    }
    return ui::run(app, *registry, *scanners);
}
