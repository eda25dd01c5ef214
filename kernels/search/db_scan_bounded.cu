// Instantiates the bounded (global and semi-global) database-scan kernel for
// every compiled tile shape; db_scan_launch.cu dispatches to them.
#include "search/db_scan_table.hpp"

namespace alignscope::kernels::search::detail {

const std::vector<Entry>& bounded_entries() {
    static const std::vector<Entry> bounded = table::make_entries<false>();
    return bounded;
}

}  // namespace alignscope::kernels::search::detail
