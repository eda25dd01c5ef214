// The table of compiled database-scan kernels: one entry per tile shape, with
// the kernel for implicit items (the scan) and, for 32-bit cells, for explicit
// items (the rescoring of saturated pairs). The same shape list serves both
// modes; db_scan_launch.cu instantiates it for local alignment and
// db_scan_bounded.cu for global and semi-global. For .cu files only.
#pragma once

#include "search/db_scan_kernel.cuh"
#include "search/db_scan_launch.hpp"

#include <utility>
#include <vector>

namespace alignscope::kernels::search {

using KernelPointer = void (*)(DbScanParams);

struct Entry {
    DbScanShape shape;
    KernelPointer implicit_items = nullptr;
    KernelPointer explicit_items = nullptr;
};

namespace table {

template <bool Local, int G, int R>
Entry narrow() {
    return {{G, R, false}, &device::db_scan<device::Cell16x2, G, R, false, Local>, nullptr};
}
template <bool Local, int G, int R>
Entry wide() {
    return {{G, R, true},
            &device::db_scan<device::Cell32, G, R, false, Local>,
            &device::db_scan<device::Cell32, G, R, true, Local>};
}

template <bool Local, int G, int... R>
void add_narrow(std::vector<Entry>& out, std::integer_sequence<int, R...>) {
    (out.push_back(narrow<Local, G, R>()), ...);
}
template <bool Local, int... G>
void add_narrow_groups(std::vector<Entry>& out, std::integer_sequence<int, G...>) {
    (add_narrow<Local, G>(out, typename ScanPolicy::NarrowRows{}), ...);
}
template <bool Local, int... G>
void add_wide_groups(std::vector<Entry>& out, std::integer_sequence<int, G...>) {
    (out.push_back(wide<Local, G, ScanPolicy::wide_rows>()), ...);
}

// Every compiled shape of one mode (ScanPolicy's), narrow ones by group size
// then rows, then the wide ones.
template <bool Local>
std::vector<Entry> make_entries() {
    std::vector<Entry> t;
    add_narrow_groups<Local>(t, typename ScanPolicy::NarrowGroups{});
    add_wide_groups<Local>(t, typename ScanPolicy::WideGroups{});
    return t;
}

}  // namespace table

namespace detail {
// The bounded kernels (db_scan_bounded.cu).
const std::vector<Entry>& bounded_entries();
}  // namespace detail

}  // namespace alignscope::kernels::search
