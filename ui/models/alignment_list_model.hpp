// A job's alignments as a list (number, query, target, score, identity,
// length, ranges), paged in from the project as the view scrolls, so a job of
// a million pairs opens at once. Row k is the job's alignment k (0-based), the
// number the other views use to show one pair.
#pragma once

#include "models/keyset_page_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

// What a row of the list shows; the aligned strings stay in the project.
struct AlignmentListRow {
    std::string query_id, target_id;
    std::int64_t score = 0;
    std::int64_t query_begin = 0, query_end = 0, target_begin = 0, target_end = 0;
    std::int64_t length = 0;
    double identity = 0;
    bool traceback = false;
};

class AlignmentListModel : public KeysetPageModel<AlignmentListRow> {
    Q_OBJECT
public:
    enum Column { Number, Query, Target, Score, Identity, Length, QueryRange, TargetRange, ColumnCount };

    explicit AlignmentListModel(QObject* parent = nullptr);

    // Pages of `page_size` from the job; the project must outlive the model's
    // use of it (or the next call). `scale`: stored scores are scaled by it.
    void setJob(const store::Project* project, std::int64_t job_id, int scale, int page_size = 500);
    void clear();
    std::int64_t totalAlignments() const { return total_; }

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::int64_t total_ = 0;
    int scale_ = 1;
};

}  // namespace alignscope::ui
