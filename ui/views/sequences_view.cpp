// SequencesView: filter controls over SequenceFilterModel and a table.
#include "views/sequences_view.hpp"

#include "project_document.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
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
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(table_);

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
    rebuild();
}

void SequencesView::rebuild() {
    std::vector<SequenceTableModel::Source> sources;
    for (const auto& input : document().inputs())
        if (input.set) sources.push_back({input.set, input.label(), input.info.id});
    // Same sets as shown: keep the selection and scroll position.
    bool same = sources.size() == model_.sources().size();
    for (std::size_t k = 0; same && k < sources.size(); ++k) same = sources[k].set == model_.sources()[k].set;
    if (same) return;
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
        else if ((kind == AlphabetKind::Protein) != (list.alphabet == AlphabetKind::Protein)) mixed = true;
    }
    if (mixedAlphabets) *mixedAlphabets = mixed;
    list.records = std::move(records);
    list.set_ids.assign(sets.begin(), sets.end());
    list.label = rows.size() == 1 ? "1 selected sequence" : std::to_string(rows.size()) + " selected sequences";
    return list;
}

}  // namespace alignscope::ui
