// Ranked database hits over the alignment of the selected hit. A search job
// in a project keeps each hit's alignment as its search made it (on the CPU
// or the GPU), and that stored alignment is what the view shows. Only a hit
// the project holds no alignment for (a search without traceback, hits given
// from memory) is aligned again here with the job's scheme and mode (the
// reference aligner; database pairs are short), and the view says so.
#pragma once

#include "views/alignment/alignment_view.hpp"
#include "views/hits/hit_table_model.hpp"

#include <alignscope/seq/sequence.hpp>

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QDoubleSpinBox;
class QLabel;
class QMenu;
class QTableView;

namespace alignscope::ui {

class HitsView : public QWidget {
    Q_OBJECT
public:
    explicit HitsView(QWidget* parent = nullptr);
    ~HitsView() override;

    // Hits with the sequences they name (normalised residues) and the scheme
    // and options of the search; a selected hit is aligned again.
    void setHits(std::vector<store::Hit> hits, std::vector<Sequence> queries, std::vector<Sequence> targets,
                 const ScoringScheme& scheme, const AlignOptions& options);
    // A search job: hits paged from the project, sequences from its inputs, a
    // selected hit's alignment from the project. The project must outlive the
    // view's use of it. Throws alignscope::Error.
    void loadFromProject(const store::Project& project, std::int64_t job_id);

    HitTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }

    // Filters: rows outside them are hidden (and left out of exports). A
    // maximum E-value hides hits without one; 0 or less means no filter.
    // A minimum identity hides hits whose identity is unknown.
    void setFilters(double max_evalue, double min_score, double min_identity = 0);
    bool rowShown(int row) const;
    // The shown rows (all of the job's hits, fetched), or only the selected
    // ones, as CSV (.csv, RFC 4180 quoting) or TSV (any other name). Throws
    // alignscope::Error naming the file.
    void exportTable(const QString& path, bool selected_only = false);
    // The right-click menu of a row: copy id, copy sequence, open alignment,
    // export selection. Owned by the caller.
    QMenu* contextMenu(int row);
    AlignmentView* alignmentView() const { return alignment_; }
    // Selects a row and shows its alignment.
    void selectHit(int row);
    QString noteText() const;

    // Where the shown alignment came from.
    enum class Source { None, Stored, Realigned };
    Source shownSource() const { return source_; }
    // How many times this view aligned a hit again (none for a hit whose
    // alignment the project holds).
    int realignmentCount() const { return realignments_; }

signals:
    void hitSelected(int row);

private:
    void showHit(int row);
    void setSequences(std::vector<Sequence> queries, std::vector<Sequence> targets);

    void applyFilters();
    void exportDialog(bool selected_only);

    HitTableModel* model_ = nullptr;
    QDoubleSpinBox* max_evalue_ = nullptr;
    QDoubleSpinBox* min_score_ = nullptr;
    QDoubleSpinBox* min_identity_ = nullptr;
    QTableView* table_ = nullptr;
    AlignmentView* alignment_ = nullptr;
    QLabel* note_ = nullptr;
    std::vector<Sequence> queries_, targets_;
    std::map<std::string, std::size_t> query_index_, target_index_;
    ScoringScheme scheme_;
    AlignOptions options_;
    const store::Project* project_ = nullptr;  // where the hits came from, if they did
    std::int64_t job_id_ = 0;
    Source source_ = Source::None;
    int realignments_ = 0;
};

}  // namespace alignscope::ui
