// The table of compiled database-scan kernels: one entry per tile shape, with
// the kernel for implicit items (the scan) and, for 32-bit cells, for explicit
// items (the rescoring of saturated pairs). The same shape list serves both
// modes; dbscan_launch.cu instantiates it for local alignment and
// dbscan_bounded.cu for global and semi-global. For .cu files only.
#pragma once

#include "search/dbscan_kernel.cuh"
#include "search/dbscan_launch.hpp"

#include <utility>
#include <vector>

namespace alignscope::kernels::search {

using KernelPointer = void (*)(DbscanParams);

struct Entry {
    DbscanShape shape;
    KernelPointer implicit_items = nullptr;
    KernelPointer explicit_items = nullptr;
};

namespace table {

template <bool Local, int G, int R>
Entry narrow() {
    return {{G, R, false}, &device::dbscan<device::Cell16x2, G, R, false, Local>, nullptr};
}
template <bool Local, int G, int R>
Entry wide() {
    return {{G, R, true},
            &device::dbscan<device::Cell32, G, R, false, Local>,
            &device::dbscan<device::Cell32, G, R, true, Local>};
}

template <bool Local, int G, int... R>
void add_narrow(std::vector<Entry>& out, std::integer_sequence<int, R...>) {
    (out.push_back(narrow<Local, G, R>()), ...);
}

// Every compiled shape of one mode.
template <bool Local>
std::vector<Entry> make_entries() {
    std::vector<Entry> t;
    using Rows = std::integer_sequence<int, 8, 12, 16, 20, 24, 28, 32>;
    add_narrow<Local, 4>(t, Rows{});
    add_narrow<Local, 8>(t, Rows{});
    add_narrow<Local, 16>(t, Rows{});
    add_narrow<Local, 32>(t, Rows{});
    t.push_back(wide<Local, 8, 16>());
    t.push_back(wide<Local, 32, 16>());
    return t;
}

}  // namespace table

namespace detail {
// The bounded kernels (dbscan_bounded.cu).
const std::vector<Entry>& bounded_entries();
}  // namespace detail

}  // namespace alignscope::kernels::search
