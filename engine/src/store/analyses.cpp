// Workbench analyses kept whole in the project (schema version 4): a profile
// search or an all-against-all matrix, its parameters and its results.
#include "columns.hpp"
#include "project_impl.hpp"

#include <alignscope/error.hpp>

namespace alignscope::store {

namespace {

// The results are read on their own (analysis_results): they may be large.
constexpr std::array<columns::Column<AnalysisInfo>, 5> analysis_columns{{
    columns::field<&AnalysisInfo::id>("id"),
    columns::field<&AnalysisInfo::kind>("kind"),
    columns::field<&AnalysisInfo::title>("title"),
    columns::field<&AnalysisInfo::created_ms>("created_ms"),
    columns::field<&AnalysisInfo::parameters>("parameters"),
}};

}  // namespace

std::vector<AnalysisInfo> Project::analyses() const {
    static const std::string sql = "SELECT " + columns::list(analysis_columns) + " FROM analyses ORDER BY id";
    auto rows = impl_->db->prepare(sql);
    return columns::all_rows<AnalysisInfo>(rows, [](const sqlite::Statement& r) {
        return columns::read(analysis_columns, r);
    });
}

std::string Project::analysis_results(std::int64_t id) const {
    auto row = impl_->db->prepare("SELECT results FROM analyses WHERE id = ?");
    row.bind(1, id);
    if (!row.step()) throw Error(impl_->path + ": there is no analysis " + std::to_string(id) + " in this project");
    const std::vector<std::uint8_t> bytes = row.blob(0);
    return std::string(bytes.begin(), bytes.end());
}

std::int64_t Project::add_analysis(const std::string& kind, const std::string& title, const std::string& parameters,
                                   const std::string& results) {
    impl_->require_writable("save an analysis");
    if (kind != "profile_search" && kind != "allvsall")
        throw Error("analysis kind must be profile_search or allvsall, not '" + kind + "'");
    auto& db = *impl_->db;
    std::int64_t id = 0;
    db.write("saving the " + kind + " analysis", [&] {
        {
            auto valid = db.prepare("SELECT CASE WHEN json_valid(?) THEN json_type(?) = 'object' ELSE 0 END");
            valid.bind(1, parameters).bind(2, parameters);
            if (!valid.step() || valid.int64(0) != 1)
                throw Error("the parameters of an analysis must be a JSON object");
        }
        auto put =
            db.prepare("INSERT INTO analyses (kind, title, created_ms, parameters, results) VALUES (?, ?, ?, ?, ?)");
        put.bind(1, kind).bind(2, title).bind(3, now_ms()).bind(4, parameters);
        put.bind_blob(5, results.data(), results.size());
        put.run();
        id = db.last_insert_rowid();
    });
    return id;
}

void Project::delete_analysis(std::int64_t id) {
    impl_->require_writable("delete an analysis");
    auto& db = *impl_->db;
    db.write("deleting analysis " + std::to_string(id), [&] {
        auto erase = db.prepare("DELETE FROM analyses WHERE id = ?");
        erase.bind(1, id);
        erase.run();
        if (db.changes() != 1)
            throw Error(impl_->path + ": there is no analysis " + std::to_string(id) + " in this project");
    });
}

}  // namespace alignscope::store
