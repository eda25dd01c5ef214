// The CUDA kernel families in the catalog `verify --all-kernels` runs: every
// pairwise variant, the database scanner's kernels and the long-pair strip
// kernel, each of every mode and gap model, checked on every GPU.
#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/kernels/cuda_backend.hpp>

#include "../pairwise/kernel_catalog.hpp"
#include "../search/db_scan_shape.hpp"

namespace alignscope::kernels {

void add_cuda_kernel_families(KernelCatalog& catalog) {
    catalog.add({"pairwise", "gpu", all_pairwise_kernel_names(), check_pairwise_kernel});
    // The scanner picks the cell width itself: two 16-bit queries per
    // register, 32-bit cells where 16 bits could saturate.
    catalog.add({"search", "gpu", kernel_variants({{search::kScanFamily}}, {KernelWidth::S16x2, KernelWidth::S32}),
                 make_search_kernel_check()});
    // The strip kernel runs 8 or 16 query rows a thread (LongRunnerSettings::kernel).
    catalog.add(
        {"long", "gpu", kernel_variants({{"strips", 8}, {"strips", 16}}, {KernelWidth::S32}), check_long_kernel});
}

}  // namespace alignscope::kernels
