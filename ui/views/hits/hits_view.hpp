// Ranked database hits over the alignment of the selected hit. The hit rows
// hold coordinates and scores only, so the selected pair is aligned again here
// with the job's scheme and mode (the reference aligner; database pairs are
// short) and shown in an AlignmentView.
#pragma once

#include "views/alignment/alignment_view.hpp"
#include "views/hits/hit_table_model.hpp"

#include <alignscope/seq/sequence.hpp>

#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QTableView;

namespace alignscope::ui {

class HitsView : public QWidget {
    Q_OBJECT
public:
    explicit HitsView(QWidget* parent = nullptr);
    ~HitsView() override;

    // Hits with the sequences they name (normalised residues) and the scheme
    // and options of the search.
    void setHits(std::vector<store::Hit> hits, std::vector<Sequence> queries, std::vector<Sequence> targets,
                 const ScoringScheme& scheme, const AlignOptions& options);
    // A search job: hits paged from the project, sequences from its inputs.
    // The project must outlive the view's use of it. Throws alignscope::Error.
    void loadFromProject(const store::Project& project, std::int64_t job_id);

    HitTableModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    AlignmentView* alignmentView() const { return alignment_; }
    // Selects a row and shows its alignment.
    void selectHit(int row);
    QString noteText() const;

signals:
    void hitSelected(int row);

private:
    void showHit(int row);
    void setSequences(std::vector<Sequence> queries, std::vector<Sequence> targets);

    HitTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    AlignmentView* alignment_ = nullptr;
    QLabel* note_ = nullptr;
    std::vector<Sequence> queries_, targets_;
    std::map<std::string, std::size_t> query_index_, target_index_;
    ScoringScheme scheme_;
    AlignOptions options_;
};

}  // namespace alignscope::ui
