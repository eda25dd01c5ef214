// SequencesView: filter controls over SequenceFilterModel and a table.
#include "views/sequences_view.hpp"

#include "project_document.hpp"

#include <alignscope/error.hpp>

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace alignscope::ui {

SequencesView::SequencesView(ProjectDocument& document, QWidget* parent) : ResultView(document, parent) {
    filter_.setSourceModel(&model_);
    text_ = new QLineEdit(this);
    text_->setObjectName("sequenceFilter");
    text_->setPlaceholderText(tr("Filter by id or description (* and ? allowed)"));
    text_->setClearButtonEnabled(true);
    alphabet_ = new QComboBox(this);
    alphabet_->addItem(tr("All alphabets"));
    alphabet_->addItem(tr("DNA"), int(AlphabetKind::Dna));
    alphabet_->addItem(tr("RNA"), int(AlphabetKind::Rna));
    alphabet_->addItem(tr("Protein"), int(AlphabetKind::Protein));
    min_length_ = new QSpinBox(this);
    min_length_->setRange(0, 1'000'000'000);
    min_length_->setPrefix(tr("length ≥ "));
    min_length_->setSingleStep(10);
    count_ = new QLabel(this);
    text_->setToolTip(tr("Show only sequences whose id or description matches (* any text, ? one letter)"));
    alphabet_->setToolTip(tr("Show only DNA, RNA or protein sequences"));
    min_length_->setToolTip(tr("Show only sequences at least this long"));
    count_->setToolTip(tr("Sequences shown, of all loaded, and how many are selected"));
    remove_ = new QPushButton(tr("Remove File…"), this);
    remove_->setObjectName("removeFile");
    remove_->setToolTip(
        tr("Remove the files of the selected rows from the project (a file a job used stays: "
           "delete those jobs first)"));
    remove_->setEnabled(false);
    empty_ = new QLabel(this);
    empty_->setObjectName("emptyState");
    empty_->setWordWrap(true);
    empty_->setAlignment(Qt::AlignCenter);

    table_ = new QTableView(this);
    table_->setObjectName("sequencesTable");
    table_->setModel(&filter_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder);  // file order until the user sorts
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setSectionResizeMode(SequenceTableModel::Description, QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(SequenceTableModel::File, QHeaderView::ResizeToContents);

    auto* controls = new QHBoxLayout;
    controls->addWidget(text_, 1);
    controls->addWidget(alphabet_);
    controls->addWidget(min_length_);
    controls->addWidget(count_);
    controls->addWidget(remove_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(empty_);
    layout->addWidget(table_);
    table_->setToolTip(
        tr("Every loaded sequence; select rows to use them as a job's queries or targets "
           "(right-click to remove their files)"));
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        if (selectedInputs().empty()) return;
        QMenu menu(this);
        menu.addAction(remove_->text(), this, &SequencesView::confirmRemoveSelectedFiles);
        menu.exec(table_->viewport()->mapToGlobal(at));
    });
    connect(remove_, &QPushButton::clicked, this, &SequencesView::confirmRemoveSelectedFiles);

    connect(text_, &QLineEdit::textChanged, this, [this](const QString& text) {
        filter_.setText(text);
        updateCount();
    });
    connect(alphabet_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const QVariant kind = alphabet_->itemData(index);
        filter_.setAlphabet(kind.isValid() ? std::optional(AlphabetKind(kind.toInt())) : std::nullopt);
        updateCount();
    });
    connect(min_length_, &QSpinBox::valueChanged, this, [this](int value) {
        filter_.setLengthRange(value, 0);
        updateCount();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateCount();
        emit selectionChanged();
    });
    connect(&document, &ProjectDocument::inputsChanged, this, &SequencesView::rebuild);
    connect(&document, &ProjectDocument::opened, this, &SequencesView::rebuild);
    connect(&document, &ProjectDocument::loadStarted, this, &SequencesView::updateCount);
    connect(&document, &ProjectDocument::loadingIdle, this, &SequencesView::updateCount);
    rebuild();
}

std::vector<qint64> SequencesView::selectedInputs() const {
    std::set<qint64> ids;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows())
        ids.insert(model_.source(filter_.mapToSource(index).row()).input_id);
    return {ids.begin(), ids.end()};
}

QMessageBox* SequencesView::confirmRemoveSelectedFiles() {
    const std::vector<qint64> ids = selectedInputs();
    if (ids.empty()) return nullptr;
    QStringList names;
    for (qint64 id : ids)
        if (const SequenceInput* input = document().input(id))
            names
                << (input->set && input->set->records.size() == 1
                        ? tr("%1 (1 sequence)").arg(input->label())
                        : tr("%1 (%2 sequences)").arg(input->label()).arg(input->set ? input->set->records.size() : 0));
    auto* box =
        new QMessageBox(QMessageBox::Question, tr("Remove files"),
                        tr("Remove from the project:\n%1\n\nThe files on disk stay as they are.").arg(names.join('\n')),
                        QMessageBox::NoButton, this);
    box->setObjectName("removeFilesBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton* yes = box->addButton(tr("Remove"), QMessageBox::DestructiveRole);
    yes->setObjectName("removeFilesYes");
    box->addButton(tr("Keep"), QMessageBox::RejectRole);
    connect(box, &QMessageBox::finished, this, [this, box, yes, ids] {
        if (box->clickedButton() != yes) return;
        if (!removeInputs(ids)) QMessageBox::warning(this, tr("Cannot remove the file"), last_error_);
    });
    box->setWindowModality(Qt::WindowModal);
    box->open();
    return box;
}

bool SequencesView::removeInputs(const std::vector<qint64>& ids) {
    last_error_.clear();
    QStringList errors;
    for (qint64 id : ids) {
        try {
            document().removeInput(id);
        } catch (const std::exception& e) {
            errors << QString::fromUtf8(e.what());
        }
    }
    last_error_ = errors.join('\n');
    return errors.isEmpty();
}

QString SequencesView::emptyText() const { return empty_->isVisibleTo(this) ? empty_->text() : QString(); }

void SequencesView::rebuild() {
    std::vector<SequenceTableModel::Source> sources;
    for (const auto& input : document().inputs())
        if (input.set) sources.push_back({input.set, input.label(), input.info.id});
    // Same sets as shown: keep the selection and scroll position.
    bool same = sources.size() == model_.sources().size();
    for (std::size_t k = 0; same && k < sources.size(); ++k) same = sources[k].set == model_.sources()[k].set;
    if (same) {
        updateCount();
        return;
    }
    model_.setSources(std::move(sources));
    table_->resizeColumnToContents(SequenceTableModel::Id);
    table_->resizeColumnToContents(SequenceTableModel::Length);
    table_->resizeColumnToContents(SequenceTableModel::Alphabet);
    updateCount();
    emit selectionChanged();
}

int SequencesView::selectedCount() const { return int(table_->selectionModel()->selectedRows().size()); }

void SequencesView::updateCount() {
    const int shown = filter_.rowCount(), total = model_.rowCount(), selected = selectedCount();
    remove_->setEnabled(selected > 0);
    // An empty table says what would fill it.
    QString empty;
    if (!document().isOpen())
        empty =
            tr("No project is open: File › New Project… or Open Project…, or start with "
               "alignscope --demo.");
    else if (total == 0 && document().loading())
        empty = tr("Reading the sequences…");
    else if (total == 0)
        empty =
            tr("No sequences loaded: File › Load Sequences… (Ctrl+L), drag FASTA or FASTQ files here, or "
               "File › Paste Sequences….");
    else if (shown == 0)
        empty = tr("No sequence matches the filters above: clear them to see all %1.").arg(total);
    empty_->setText(empty);
    empty_->setVisible(!empty.isEmpty());
    QString text = shown == total ? tr("%n sequence(s)", nullptr, total) : tr("%1 of %2 shown").arg(shown).arg(total);
    if (selected) text += tr(", %1 selected").arg(selected);
    count_->setText(text);
}

SequenceList SequencesView::selection(bool* mixedAlphabets) const {
    std::vector<int> rows;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows())
        rows.push_back(filter_.mapToSource(index).row());
    std::sort(rows.begin(), rows.end());
    auto records = std::make_shared<std::vector<Sequence>>();
    records->reserve(rows.size());
    std::set<qint64> sets;
    SequenceList list;
    bool mixed = false;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        records->push_back(model_.record(rows[k]));
        sets.insert(model_.source(rows[k]).input_id);
        const AlphabetKind kind = model_.alphabet(rows[k]);
        if (k == 0) list.alphabet = kind;
        else if ((kind == AlphabetKind::Protein) != (list.alphabet == AlphabetKind::Protein))
            mixed = true;
    }
    if (mixedAlphabets) *mixedAlphabets = mixed;
    list.records = std::move(records);
    list.set_ids.assign(sets.begin(), sets.end());
    list.label = rows.size() == 1 ? "1 selected sequence" : std::to_string(rows.size()) + " selected sequences";
    return list;
}

}  // namespace alignscope::ui
