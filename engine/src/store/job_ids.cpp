// The job list's cheap reads for views that catch up by polling: the ids of
// the jobs added since the last one seen, and the number of jobs (which tells
// a view that some were deleted).
#include "project_impl.hpp"

namespace alignscope::store {

std::vector<std::int64_t> Project::job_ids(std::int64_t after_id) const {
    auto rows = impl_->db->prepare("SELECT id FROM jobs WHERE id > ? ORDER BY id");
    rows.bind(1, after_id);
    std::vector<std::int64_t> ids;
    while (rows.step()) ids.push_back(rows.int64(0));
    return ids;
}

std::int64_t Project::job_count() const { return impl_->db->query_int("SELECT count(*) FROM jobs"); }

}  // namespace alignscope::store
