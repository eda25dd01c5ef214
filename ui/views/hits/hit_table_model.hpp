// Ranked database hits as a Qt table model: from memory, or paged in from a
// job's hits table as the view scrolls (canFetchMore/fetchMore), so a search
// with millions of hits opens at once. Identity comes from each hit's stored
// alignment (read with its page), coverage from the hit's coordinates.
#pragma once

#include "models/keyset_page_model.hpp"

#include <alignscope/store/results.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

// Where a row's identity comes from.
enum class HitIdentitySource { None, Stored, Realigned };

// A hit with its place in the job and its identity, when known.
struct HitTableRow {
    store::Hit hit;
    std::int64_t ordinal = 0;
    std::optional<double> identity;
    HitIdentitySource identity_source = HitIdentitySource::None;
};

class HitTableModel : public KeysetPageModel<HitTableRow> {
    Q_OBJECT
public:
    enum Column {
        Rank,
        Query,
        Target,
        Description,  // the target's FASTA description
        Score,
        Bits,
        EValue,
        Identity,  // % identical columns of the hit's alignment (stored, or aligned again here)
        Coverage,  // % of the query between the hit's first and last aligned residue
        QueryRange,
        TargetRange,
        TargetLength,
        ColumnCount
    };
    using IdentitySource = HitIdentitySource;

    explicit HitTableModel(QObject* parent = nullptr);

    // `scale`: stored scores are scaled by it (ScoringScheme::scale).
    void setHits(std::vector<store::Hit> hits, int scale = 1);
    // Pages of `page_size` rows from the project as the view asks; the project
    // must outlive the model (or the next set call).
    void setProject(const store::Project* project, std::int64_t job_id, int scale = 1, int page_size = 500);
    const store::Hit& hit(int row) const { return rows_[static_cast<std::size_t>(row)].hit; }
    // The row's place in the job's hits (Project::hits), or in the vector
    // setHits was given; sorting the table does not change it.
    std::int64_t ordinal(int row) const { return rows_[static_cast<std::size_t>(row)].ordinal; }
    std::int64_t totalHits() const { return total_; }  // in the job, loaded or not
    // The target's description for a hit (empty when unknown).
    void setDescriber(std::function<std::string(const std::string& target_id)> describe);
    // Identity in % (identical columns over alignment columns), when known.
    std::optional<double> identity(int row) const { return rows_[static_cast<std::size_t>(row)].identity; }
    IdentitySource identitySource(int row) const { return rows_[static_cast<std::size_t>(row)].identity_source; }
    // Coverage of the query in %: (query_end - query_begin + 1) / query_length.
    static std::optional<double> coverage(const store::Hit& hit);
    // A hit aligned again here (no stored alignment): its identity from that.
    void setRealignedIdentity(int row, double percent);
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    // Sorts the rows loaded so far (all of them once fetched).
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

private:
    using Row = HitTableRow;
    std::int64_t total_ = 0;
    int scale_ = 1;
    std::function<std::string(const std::string&)> describe_;
};

}  // namespace alignscope::ui
