// Project settings (key -> text, schema version 3) and the removal of inputs
// no job used: what the workbench changes in a project besides its jobs.
#include "project_impl.hpp"

#include <alignscope/error.hpp>

namespace alignscope::store {

std::optional<std::string> Project::setting(std::string_view key) const {
    auto row = impl_->db->prepare("SELECT value FROM settings WHERE key = ?");
    row.bind(1, key);
    if (!row.step()) return std::nullopt;
    return row.text(0);
}

void Project::set_setting(std::string_view key, std::string_view value) {
    impl_->require_writable("save a setting");
    auto& db = *impl_->db;
    db.write("saving the setting " + std::string(key), [&] {
        auto put = db.prepare(
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
        put.bind(1, key).bind(2, value);
        put.run();
    });
}

void Project::delete_input(std::int64_t id) {
    impl_->require_writable("remove an input");
    auto& db = *impl_->db;
    db.write("removing input " + std::to_string(id), [&] {
        {
            auto row = db.prepare("SELECT path FROM inputs WHERE id = ?");
            row.bind(1, id);
            if (!row.step())
                throw Error(impl_->path + ": there is no input " + std::to_string(id) + " in this project");
        }
        std::string users;
        {
            auto jobs = db.prepare("SELECT DISTINCT job_id FROM job_inputs WHERE input_id = ? ORDER BY job_id");
            jobs.bind(1, id);
            while (jobs.step()) users += (users.empty() ? "" : ", ") + std::to_string(jobs.int64(0));
        }
        if (!users.empty())
            throw Error(impl_->path + ": input " + std::to_string(id) + " is used by job" +
                        (users.find(',') == std::string::npos ? " " : "s ") + users + "; delete those jobs first");
        auto erase = db.prepare("DELETE FROM inputs WHERE id = ?");
        erase.bind(1, id);
        erase.run();
    });
    impl_->input_status.erase(id);
}

}  // namespace alignscope::store
