// The hit table and the alignment of the selected hit.
#include "views/hits/hits_view.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/store/project.hpp>

#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <optional>

namespace alignscope::ui {

HitsView::HitsView(QWidget* parent) : QWidget(parent) {
    model_ = new HitTableModel(this);
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    table_->setSortingEnabled(true);
    table_->sortByColumn(HitTableModel::Rank, Qt::AscendingOrder);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    table_->setAlternatingRowColors(true);
    // UniProt ids are long: one line per hit, cut at the end (the start of
    // an id is what tells it apart), the full id on hover.
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideRight);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(HitTableModel::Description, QHeaderView::Interactive);
    table_->horizontalHeader()->resizeSection(HitTableModel::Description, 220);
    table_->setToolTip(
        tr("The hits, best first; click a hit to see its alignment below, right-click for copy and "
           "export; sort by any column"));
    alignment_ = new AlignmentView;
    note_ = new QLabel;
    // Long sequence ids wrap (or are cut) rather than widen the view.
    note_->setWordWrap(true);
    note_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* below = new QWidget;
    auto* below_layout = new QVBoxLayout(below);
    below_layout->setContentsMargins(0, 0, 0, 0);
    below_layout->addWidget(note_);
    below_layout->addWidget(alignment_, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(below);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({320, 480});
    // Filters above the table.
    max_evalue_ = new QDoubleSpinBox;
    max_evalue_->setObjectName("maxEvalue");
    max_evalue_->setDecimals(6);
    max_evalue_->setRange(0, 1e6);
    max_evalue_->setSpecialValueText(tr("any"));
    max_evalue_->setToolTip(
        tr("Show only hits with an E-value at most this (hits without statistics are hidden "
           "while it is set)"));
    min_score_ = new QDoubleSpinBox;
    min_score_->setObjectName("minScore");
    min_score_->setDecimals(1);
    min_score_->setRange(0, 1e9);
    min_score_->setSpecialValueText(tr("any"));
    min_score_->setToolTip(tr("Show only hits with at least this raw score"));
    min_identity_ = new QDoubleSpinBox;
    min_identity_->setObjectName("minIdentity");
    min_identity_->setDecimals(1);
    min_identity_->setRange(0, 100);
    min_identity_->setSuffix(tr(" %"));
    min_identity_->setSpecialValueText(tr("any"));
    min_identity_->setToolTip(
        tr("Show only hits whose alignment has at least this identity (hits without a "
           "stored alignment are hidden while it is set)"));
    auto* filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("E-value ≤")));
    filters->addWidget(max_evalue_);
    filters->addWidget(new QLabel(tr("Score ≥")));
    filters->addWidget(min_score_);
    filters->addWidget(new QLabel(tr("Identity ≥")));
    filters->addWidget(min_identity_);
    filters->addStretch(1);
    for (QDoubleSpinBox* box : {max_evalue_, min_score_, min_identity_})
        connect(box, &QDoubleSpinBox::valueChanged, this, &HitsView::applyFilters);
    connect(model_, &QAbstractItemModel::modelReset, this, &HitsView::applyFilters);
    connect(model_, &QAbstractItemModel::rowsInserted, this, &HitsView::applyFilters);
    connect(model_, &QAbstractItemModel::layoutChanged, this, &HitsView::applyFilters);
    connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex index = table_->indexAt(at);
        if (!index.isValid()) return;
        std::unique_ptr<QMenu> menu(contextMenu(index.row()));
        menu->exec(table_->viewport()->mapToGlobal(at));
    });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(split);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid()) showHit(current.row());
            });
}

HitsView::~HitsView() = default;

void HitsView::setFilters(double max_evalue, double min_score, double min_identity) {
    max_evalue_->setValue(max_evalue > 0 ? max_evalue : 0);
    min_score_->setValue(min_score > 0 ? min_score : 0);
    min_identity_->setValue(min_identity > 0 ? min_identity : 0);
    applyFilters();
}

bool HitsView::rowShown(int row) const {
    const store::Hit& h = model_->hit(row);
    if (const double e = max_evalue_->value(); e > 0 && (!h.evalue || *h.evalue > e)) return false;
    if (const double s = min_score_->value();
        s > 0 && model_->index(row, HitTableModel::Score).data(Qt::UserRole).toDouble() < s)
        return false;
    if (const double i = min_identity_->value(); i > 0 && (!model_->identity(row) || *model_->identity(row) < i))
        return false;
    return true;
}

void HitsView::applyFilters() {
    for (int row = 0; row < model_->rowCount(); ++row) table_->setRowHidden(row, !rowShown(row));
}

void HitsView::exportTable(const QString& path, bool selected_only) {
    while (model_->canFetchMore({})) model_->fetchMore({});
    std::vector<int> rows;
    if (selected_only) {
        for (const QModelIndex& index : table_->selectionModel()->selectedRows()) rows.push_back(index.row());
        std::sort(rows.begin(), rows.end());
    } else {
        for (int row = 0; row < model_->rowCount(); ++row) rows.push_back(row);
    }
    const bool csv = path.endsWith(".csv", Qt::CaseInsensitive);
    auto field = [csv](QString text) {
        if (!csv) return text.replace('\t', ' ').replace('\n', ' ');
        if (text.contains(',') || text.contains('"') || text.contains('\n'))
            text = '"' + text.replace("\"", "\"\"") + '"';
        return text;
    };
    QString out;
    QStringList header;
    for (int c = 0; c < HitTableModel::ColumnCount; ++c)
        header << field(model_->headerData(c, Qt::Horizontal).toString());
    const QString separator = csv ? "," : "\t";
    out += header.join(separator) + '\n';
    for (int row : rows) {
        if (!rowShown(row)) continue;
        QStringList line;
        for (int c = 0; c < HitTableModel::ColumnCount; ++c) line << field(model_->index(row, c).data().toString());
        out += line.join(separator) + '\n';
    }
    AtomicOutput file(path.toStdString());
    file.stream() << out.toStdString();
    file.commit();
}

QMenu* HitsView::contextMenu(int row) {
    auto* menu = new QMenu(this);
    menu->setObjectName("hitMenu");
    const store::Hit h = model_->hit(row);
    menu->addAction(tr("Copy target id"), this,
                    [h] { QApplication::clipboard()->setText(QString::fromStdString(h.target_id)); })
        ->setObjectName("copyId");
    QAction* sequence = menu->addAction(tr("Copy target sequence (FASTA)"), this, [this, h] {
        auto it = target_index_.find(h.target_id);
        if (it == target_index_.end()) return;
        QApplication::clipboard()->setText(
            QStringLiteral(">%1\n%2\n")
                .arg(QString::fromStdString(h.target_id), QString::fromStdString(targets_[it->second].residues)));
    });
    sequence->setObjectName("copySequence");
    sequence->setEnabled(target_index_.count(h.target_id) > 0);
    menu->addAction(tr("Open alignment"), this, [this, row] { selectHit(row); })->setObjectName("openAlignment");
    menu->addAction(tr("Export selection (CSV or TSV)…"), this, [this] { exportDialog(true); })
        ->setObjectName("exportSelection");
    menu->addAction(tr("Export all shown hits (CSV or TSV)…"), this, [this] { exportDialog(false); })
        ->setObjectName("exportAll");
    return menu;
}

void HitsView::exportDialog(bool selected_only) {
    // The folder last used for hit tables (the window's file dialogs keep
    // theirs under the same settings group).
    const QString folder = QSettings().value("folders/hits", QDir::homePath()).toString();
    const QString path = QFileDialog::getSaveFileName(this, tr("Export hits"), QDir(folder).filePath("hits.tsv"),
                                                      tr("TSV (*.tsv);;CSV (*.csv)"));
    if (path.isEmpty()) return;
    QSettings().setValue("folders/hits", QFileInfo(path).absolutePath());
    try {
        exportTable(path, selected_only);
    } catch (const std::exception& e) {
        note_->setText(QString::fromUtf8(e.what()));
    }
}

void HitsView::setSequences(std::vector<Sequence> queries, std::vector<Sequence> targets) {
    queries_ = std::move(queries);
    targets_ = std::move(targets);
    query_index_.clear();
    target_index_.clear();
    for (std::size_t k = 0; k < queries_.size(); ++k) query_index_.emplace(queries_[k].id, k);
    for (std::size_t k = 0; k < targets_.size(); ++k) target_index_.emplace(targets_[k].id, k);
    model_->setDescriber([this](const std::string& id) {
        const auto it = target_index_.find(id);
        return it == target_index_.end() ? std::string() : targets_[it->second].description;
    });
}

void HitsView::setHits(std::vector<store::Hit> hits, std::vector<Sequence> queries, std::vector<Sequence> targets,
                       const ScoringScheme& scheme, const AlignOptions& options) {
    scheme_ = scheme;
    options_ = options;
    options_.traceback = true;
    setSequences(std::move(queries), std::move(targets));
    project_ = nullptr;
    job_id_ = 0;
    source_ = Source::None;
    model_->setHits(std::move(hits), scheme.scale);
    // A reset model keeps no order: sort it as the header says (rank by default).
    model_->sort(table_->horizontalHeader()->sortIndicatorSection(), table_->horizontalHeader()->sortIndicatorOrder());
    alignment_->clear();
    note_->setText(tr("%1 hits").arg(model_->totalHits()));
}

void HitsView::loadFromProject(const store::Project& project, std::int64_t job_id) {
    const store::JobInfo job = project.job(job_id);
    scheme_ = job.spec.scheme();
    options_ = AlignOptions();
    if (!job.spec.mode.empty()) options_.mode = parse_mode(job.spec.mode);
    if (options_.mode == AlignmentMode::SemiGlobal && !job.spec.free_ends.empty())
        options_.free_ends = FreeEndGaps::parse(job.spec.free_ends);
    options_.traceback = true;
    std::vector<Sequence> queries, targets;
    for (const store::JobInput& in : job.inputs) {
        const store::InputInfo info = project.input(in.input_id);
        if (info.kind != store::InputKind::SequenceSet) continue;
        std::vector<Sequence> records = project.input_sequences(in.input_id);
        for (Sequence& s : records) normalise_residues(s.residues, parse_alphabet(info.alphabet));
        auto& side = in.role == "query" ? queries : targets;
        side.insert(side.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
    }
    setSequences(std::move(queries), std::move(targets));
    project_ = &project;
    job_id_ = job_id;
    source_ = Source::None;
    model_->setProject(&project, job_id, scheme_.scale);
    alignment_->clear();
    note_->setText(tr("%1 hits in job %2").arg(model_->totalHits()).arg(job_id));
}

void HitsView::selectHit(int row) {
    if (row < 0 || row >= model_->rowCount()) return;
    // A new current row shows itself (currentRowChanged); the current one is
    // shown again here. Either way the hit is shown once.
    const bool current = table_->currentIndex().isValid() && table_->currentIndex().row() == row;
    table_->selectRow(row);
    table_->setCurrentIndex(model_->index(row, 0));
    if (current) showHit(row);
}

QString HitsView::noteText() const { return note_->text(); }

void HitsView::showHit(int row) {
    const store::Hit& hit = model_->hit(row);
    source_ = Source::None;
    const QString pair_name = tr("Rank %1: %2 vs %3")
                                  .arg(hit.rank)
                                  .arg(QString::fromStdString(hit.query_id), QString::fromStdString(hit.target_id));
    const auto q = query_index_.find(hit.query_id);
    const auto t = target_index_.find(hit.target_id);
    if (q == query_index_.end() || t == target_index_.end()) {
        alignment_->clear();
        note_->setText(tr("The sequences of %1 vs %2 are not available")
                           .arg(QString::fromStdString(hit.query_id), QString::fromStdString(hit.target_id)));
        emit hitSelected(row);
        return;
    }
    const Sequence& query = queries_[q->second];
    const Sequence& target = targets_[t->second];
    try {
        // The search's own alignment when the project keeps it: one keyed read.
        std::optional<Alignment> stored;
        if (project_) stored = project_->hit_alignment(job_id_, model_->ordinal(row));
        if (stored && stored->has_traceback()) {
            QString made_by = QString::fromStdString(stored->device);
            if (!stored->kernel.empty())
                made_by += (made_by.isEmpty() ? "" : ", ") + QString::fromStdString(stored->kernel);
            note_->setText(pair_name + ", " +
                           (made_by.isEmpty() ? tr("the search's alignment from the project")
                                              : tr("the search's alignment from the project (%1)").arg(made_by)));
            alignment_->setAlignment(*stored, query, target, scheme_);
            source_ = Source::Stored;
            emit hitSelected(row);
            return;
        }
        ++realignments_;
        Alignment a = align_reference(query.residues, target.residues, scheme_, options_);
        a.query_id = query.id;
        a.target_id = target.id;
        a.device = "cpu-ref";
        QString note =
            pair_name + ", " +
            (project_ ? tr("aligned again here (reference aligner): the project holds no alignment for this hit")
                      : tr("aligned again here (reference aligner)"));
        if (a.score != hit.score)
            note += tr("; its score %1 differs from the search's %2 (a heuristic or a different kernel found another)")
                        .arg(QString::fromStdString(format_score(scheme_.to_user(a.score))),
                             QString::fromStdString(format_score(scheme_.to_user(hit.score))));
        note_->setText(note);
        source_ = Source::Realigned;
        if (a.stats.length > 0)
            model_->setRealignedIdentity(row, 100.0 * double(a.stats.identities) / double(a.stats.length));
        if (a.has_traceback()) alignment_->setAlignment(a, query, target, scheme_);
        else
            alignment_->clear();  // an empty local alignment: nothing to show
    } catch (const Error& e) {
        alignment_->clear();
        source_ = Source::None;
        note_->setText(QString::fromStdString(e.what()));
    }
    emit hitSelected(row);
}

}  // namespace alignscope::ui
