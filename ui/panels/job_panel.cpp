// JobPanel: widgets <-> JobRequest, and the inline checks.
#include "panels/job_panel.hpp"

#include "project_document.hpp"

#include <alignscope/bench/runtime_model.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/search/search_settings.hpp>

#include "file_dialogs.hpp"

#include <QFileDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QStandardItemModel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace alignscope::ui {

namespace {

QString user_number(double value) { return QLocale::c().toString(value, 'g', 8); }

QString human_seconds(double seconds) {
    if (seconds < 1) return QObject::tr("under a second");
    if (seconds < 90) return QObject::tr("about %1 s").arg(std::ceil(seconds));
    if (seconds < 5400) return QObject::tr("about %1 min").arg(std::ceil(seconds / 60));
    return QObject::tr("about %1 h").arg(seconds / 3600, 0, 'f', 1);
}

QString human_count(double value) {
    const char* units[] = {"", " k", " M", " G", " T", " P"};
    int u = 0;
    while (std::fabs(value) >= 1000 && u < 5) {
        value /= 1000;
        ++u;
    }
    return QString::number(value, 'g', 3) + units[u];
}

void set_item_enabled(QComboBox* combo, int index, bool enabled) {
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model()))
        if (auto* item = model->item(index)) item->setEnabled(enabled);
}

}  // namespace

JobPanel::JobPanel(ProjectDocument& document, std::vector<DeviceInfo> devices, const ScannerRegistry* scanners,
                   QWidget* parent)
    : QWidget(parent), document_(document), devices_(std::move(devices)), scanners_(scanners) {
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildSequences());
    layout->addWidget(buildAlgorithm());
    layout->addWidget(buildScoring());
    layout->addWidget(buildDevice());
    buildChecksAndActions(*layout);
    fitNarrowDock();
    connectEdits();
    connectProject();
    setToolTips();
    rebuildInputs();
    updateVisibility();
    revalidate();
}

QGroupBox* JobPanel::buildSequences() {
    queries_ = new QComboBox(this);
    queries_->setObjectName("queries");
    targets_ = new QComboBox(this);
    targets_->setObjectName("targets");
    pairing_ = new QComboBox(this);
    pairing_->setObjectName("pairing");
    pairing_->addItem(tr("All against all"), int(Pairing::AllAgainstAll));
    pairing_->addItem(tr("Record by record (query i with target i)"), int(Pairing::RecordByRecord));
    for (QComboBox* c : {queries_, targets_}) c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    queries_->setMinimumContentsLength(16);
    targets_->setMinimumContentsLength(16);
    auto* box = new QGroupBox(tr("Sequences"), this);
    sequences_form_ = new QFormLayout(box);
    sequences_form_->addRow(tr("&Queries:"), queries_);
    sequences_form_->addRow(tr("&Targets:"), targets_);
    sequences_form_->addRow(tr("&Pairing:"), pairing_);
    return box;
}

QGroupBox* JobPanel::buildAlgorithm() {
    algorithm_ = new QComboBox(this);
    algorithm_->setObjectName("algorithm");
    for (JobAlgorithm a : available_algorithms()) algorithm_->addItem(QString::fromStdString(display_name(a)), int(a));
    free_ends_box_ = new QWidget(this);
    free_ends_box_->setObjectName("freeEnds");
    free_query_begin_ = new QCheckBox(tr("query begin"), free_ends_box_);
    free_query_end_ = new QCheckBox(tr("query end"), free_ends_box_);
    free_target_begin_ = new QCheckBox(tr("target begin"), free_ends_box_);
    free_target_end_ = new QCheckBox(tr("target end"), free_ends_box_);
    free_query_begin_->setToolTip(tr("Target residues before the query's first aligned residue cost nothing"));
    free_query_end_->setToolTip(tr("Target residues after the query's last aligned residue cost nothing"));
    free_target_begin_->setToolTip(tr("Query residues before the target's first aligned residue cost nothing"));
    free_target_end_->setToolTip(tr("Query residues after the target's last aligned residue cost nothing"));
    auto* free_grid = new QGridLayout(free_ends_box_);
    free_grid->setContentsMargins(0, 0, 0, 0);
    free_grid->addWidget(free_query_begin_, 0, 0);
    free_grid->addWidget(free_query_end_, 0, 1);
    free_grid->addWidget(free_target_begin_, 1, 0);
    free_grid->addWidget(free_target_end_, 1, 1);
    for (QCheckBox* c : {free_query_begin_, free_query_end_, free_target_begin_, free_target_end_}) c->setChecked(true);
    top_ = new QSpinBox(this);
    top_->setObjectName("top");
    top_->setRange(1, 100'000);
    top_->setValue(10);
    top_->setToolTip(
        tr("The best hits kept per query (K), ranked by score; each is aligned in full with traceback on"));
    traceback_ = new QCheckBox(tr("Traceback (the aligned residues)"), this);
    traceback_->setObjectName("traceback");
    traceback_->setToolTip(
        tr("Ticked: each alignment is traced back, so its residues, gaps and CIGAR are kept. "
           "Unticked: only scores and end coordinates, which is faster"));
    traceback_->setChecked(true);
    long_mode_ = new QComboBox(this);
    long_mode_->setObjectName("longMode");
    long_mode_->addItem(tr("Global (Needleman-Wunsch)"), int(AlignmentMode::Global));
    long_mode_->addItem(tr("Local (Smith-Waterman)"), int(AlignmentMode::Local));
    long_mode_->addItem(tr("Semi-global (free end gaps)"), int(AlignmentMode::SemiGlobal));
    long_mode_->setToolTip(
        tr("How the long pair is aligned: end to end, its best local alignment, or with free "
           "end gaps"));
    auto* box = new QGroupBox(tr("Algorithm"), this);
    algorithm_form_ = new QFormLayout(box);
    algorithm_form_->addRow(tr("&Mode:"), algorithm_);
    algorithm_form_->addRow(tr("&Alignment:"), long_mode_);
    algorithm_form_->addRow(tr("Free end gaps:"), free_ends_box_);
    algorithm_form_->addRow(tr("Top &hits per query:"), top_);
    algorithm_form_->addRow(traceback_);
    return box;
}

QGroupBox* JobPanel::buildScoring() {
    scoring_kind_ = new QComboBox(this);
    scoring_kind_->setObjectName("scoringKind");
    scoring_kind_->addItem(tr("Substitution matrix"));
    scoring_kind_->addItem(tr("Match / mismatch (nucleotides)"));
    matrix_ = new QComboBox(this);
    matrix_->setObjectName("matrix");
    for (const auto& name : SubstitutionMatrix::builtin_names()) matrix_->addItem(QString::fromStdString(name));
    matrix_->setCurrentText("BLOSUM62");
    auto* matrix_file = new QToolButton(this);
    matrix_file->setText(QStringLiteral("…"));
    matrix_file->setToolTip(tr("Use a matrix file in NCBI/EMBOSS layout"));
    auto* matrix_row = new QWidget(this);
    auto* matrix_layout = new QHBoxLayout(matrix_row);
    matrix_layout->setContentsMargins(0, 0, 0, 0);
    matrix_layout->addWidget(matrix_, 1);
    matrix_layout->addWidget(matrix_file);
    match_ = new QSpinBox(this);
    match_->setObjectName("match");
    match_->setRange(-1000, 1000);
    match_->setValue(2);
    mismatch_ = new QSpinBox(this);
    mismatch_->setObjectName("mismatch");
    mismatch_->setRange(-1000, 1000);
    mismatch_->setValue(-3);
    gap_open_ = new QDoubleSpinBox(this);
    gap_open_->setObjectName("gapOpen");
    gap_extend_ = new QDoubleSpinBox(this);
    gap_extend_->setObjectName("gapExtend");
    for (QDoubleSpinBox* box : {gap_open_, gap_extend_}) {
        box->setRange(0, 1000);
        box->setDecimals(1);
        box->setSingleStep(0.5);
    }
    gap_open_->setValue(10);
    gap_extend_->setValue(0.5);
    gap_open_->setToolTip(tr("Cost of a gap of length 1 (positive)"));
    gap_extend_->setToolTip(tr("Cost of each further position of a gap (positive, at most the open cost)"));
    gap_convention_ = new QLabel(this);
    gap_convention_->setObjectName("gapConvention");
    gap_convention_->setWordWrap(true);
    auto* box = new QGroupBox(tr("Scoring"), this);
    scoring_form_ = new QFormLayout(box);
    scoring_form_->addRow(tr("&Scoring:"), scoring_kind_);
    scoring_form_->addRow(tr("Mat&rix:"), matrix_row);
    scoring_form_->addRow(tr("Match:"), match_);
    scoring_form_->addRow(tr("Mismatch:"), mismatch_);
    scoring_form_->addRow(tr("Gap &open:"), gap_open_);
    scoring_form_->addRow(tr("Gap e&xtend:"), gap_extend_);
    scoring_form_->addRow(gap_convention_);
    connect(matrix_file, &QToolButton::clicked, this, &JobPanel::chooseMatrixFile);
    return box;
}

QGroupBox* JobPanel::buildDevice() {
    device_ = new QComboBox(this);
    device_->setObjectName("device");
    threads_ = new QSpinBox(this);
    threads_->setObjectName("threads");
    threads_->setRange(0, 1024);
    threads_->setSpecialValueText(tr("all cores"));
    streams_ = new QSpinBox(this);
    streams_->setObjectName("streams");
    streams_->setRange(0, 128);
    streams_->setSpecialValueText(tr("automatic"));
    strategy_ = new QComboBox(this);
    strategy_->setObjectName("strategy");
    strategy_->addItem(tr("Strips (one persistent kernel)"), QStringLiteral("strips"));
    strategy_->addItem(tr("Streams (kernels on several streams)"), QStringLiteral("streams"));
    strategy_->setItemData(0,
                           tr("One kernel whose warps take row strips in order, boundaries through a "
                              "global-memory bus"),
                           Qt::ToolTipRole);
    strategy_->setItemData(1,
                           tr("Several row-strip kernels running concurrently on several streams, handing "
                              "boundary columns over through flags in global memory"),
                           Qt::ToolTipRole);
    kernels_ = new QSpinBox(this);
    kernels_->setObjectName("kernels");
    kernels_->setRange(0, 4096);
    kernels_->setSpecialValueText(tr("automatic"));
    kernels_->setToolTip(tr("Concurrent row-strip kernels of the streams strategy"));
    auto* box = new QGroupBox(tr("Device"), this);
    device_form_ = new QFormLayout(box);
    device_form_->addRow(tr("&Device:"), device_);
    device_form_->addRow(tr("T&hreads:"), threads_);
    device_form_->addRow(tr("Long-pair stra&tegy:"), strategy_);
    device_form_->addRow(tr("&Kernels:"), kernels_);
    device_form_->addRow(tr("Str&eams per GPU:"), streams_);
    fillDevices();
    return box;
}

void JobPanel::buildChecksAndActions(QVBoxLayout& layout) {
    problems_label_ = new QLabel(this);
    problems_label_->setObjectName("problems");
    problems_label_->setWordWrap(true);
    problems_label_->setTextFormat(Qt::RichText);
    estimate_ = new QLabel(this);
    estimate_->setObjectName("estimate");
    estimate_->setWordWrap(true);
    run_ = new QPushButton(QIcon(":/icons/run.svg"), tr("Run"), this);
    run_->setObjectName("run");
    run_->setToolTip(tr("Run the job (Ctrl+R)"));
    cancel_ = new QPushButton(QIcon(":/icons/cancel.svg"), tr("Cancel"), this);
    cancel_->setObjectName("cancel");
    cancel_->setToolTip(tr("Cancel the running job; queued jobs stay queued (Esc)"));
    cancel_->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(run_, 1);
    buttons->addWidget(cancel_);
    connect(run_, &QPushButton::clicked, this, &JobPanel::runRequested);
    connect(cancel_, &QPushButton::clicked, this, &JobPanel::cancelRequested);
    layout.addWidget(problems_label_);
    layout.addWidget(estimate_);
    layout.addLayout(buttons);
    layout.addStretch(1);
}

void JobPanel::fitNarrowDock() {
    // The panel lives in a narrow dock: long choices shrink to a readable
    // width (their lists show them in full), labels go above their fields
    // when a row would not fit, and notes wrap.
    for (QComboBox* combo : findChildren<QComboBox*>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(std::max(combo->minimumContentsLength(), 12));
    }
    for (QFormLayout* form : {sequences_form_, algorithm_form_, scoring_form_, device_form_})
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);
}

void JobPanel::connectEdits() {
    auto changed = [this] { revalidate(); };
    connect(queries_, &QComboBox::activated, this, [this] { queries_chosen_ = true; });
    connect(targets_, &QComboBox::activated, this, [this] { targets_chosen_ = true; });
    connect(queries_, &QComboBox::currentIndexChanged, this, &JobPanel::inputChanged);
    connect(targets_, &QComboBox::currentIndexChanged, this, &JobPanel::inputChanged);
    connect(pairing_, &QComboBox::currentIndexChanged, this, changed);
    connect(algorithm_, &QComboBox::currentIndexChanged, this, [this] {
        updateVisibility();
        followDefaultGaps();
        revalidate();
    });
    connect(top_, &QSpinBox::valueChanged, this, changed);
    for (QCheckBox* c : {free_query_begin_, free_query_end_, free_target_begin_, free_target_end_, traceback_})
        connect(c, &QCheckBox::toggled, this, changed);
    connect(scoring_kind_, &QComboBox::currentIndexChanged, this, [this] {
        updateVisibility();
        followDefaultGaps();
        revalidate();
    });
    connect(matrix_, &QComboBox::activated, this, [this] { matrix_chosen_ = true; });
    connect(matrix_, &QComboBox::currentTextChanged, this, [this] {
        followDefaultGaps();
        revalidate();
    });
    for (QSpinBox* box : {threads_, streams_, kernels_}) connect(box, &QSpinBox::valueChanged, this, changed);
    for (QComboBox* combo : {long_mode_, strategy_})
        connect(combo, &QComboBox::currentIndexChanged, this, [this] {
            updateVisibility();
            revalidate();
        });
    for (QSpinBox* box : {match_, mismatch_})
        connect(box, &QSpinBox::valueChanged, this, [this] {
            followDefaultGaps();
            revalidate();
        });
    // Defaults are set with signals blocked: a change seen here is the user's.
    for (QDoubleSpinBox* box : {gap_open_, gap_extend_})
        connect(box, &QDoubleSpinBox::valueChanged, this, [this] {
            gaps_chosen_ = true;
            revalidate();
        });
    connect(device_, &QComboBox::currentIndexChanged, this, [this] {
        updateVisibility();
        revalidate();
        emit deviceChanged(device_->currentData().toString(), device_->currentText());
    });
}

void JobPanel::connectProject() {
    connect(&document_, &ProjectDocument::inputsChanged, this, &JobPanel::rebuildInputs);
    // The project's saved settings first, then its inputs (ids wait for their sets).
    connect(&document_, &ProjectDocument::opened, this, &JobPanel::restoreFromProject);
    connect(&document_, &ProjectDocument::opened, this, &JobPanel::rebuildInputs);
    save_timer_ = new QTimer(this);
    save_timer_->setSingleShot(true);
    save_timer_->setInterval(400);
    connect(save_timer_, &QTimer::timeout, this, &JobPanel::saveSettings);
    // Each finished job refines the measured speed behind the estimate: the
    // estimate alone is redone (the checks do not depend on the jobs).
    connect(&document_, &ProjectDocument::jobsChanged, this, &JobPanel::updateEstimate);
}

void JobPanel::setToolTips() {
    queries_->setToolTip(
        tr("The sequences aligned as queries: a loaded file, or the rows selected in the "
           "Sequences tab"));
    targets_->setToolTip(tr("The sequences the queries are aligned with (for a database search, the database)"));
    pairing_->setToolTip(tr("Which pairs are aligned: every query with every target, or query i with target i"));
    algorithm_->setToolTip(
        tr("Global aligns end to end, local finds the best matching region, semi-global lets "
           "end gaps cost nothing; a database search ranks targets per query; a long pair "
           "aligns two long sequences in linear space"));
    free_ends_box_->setToolTip(tr("Which end gaps are free in a semi-global alignment"));
    scoring_kind_->setToolTip(
        tr("Score residue pairs by a substitution matrix, or by one match and one mismatch "
           "score (nucleotides)"));
    matrix_->setToolTip(
        tr("The substitution matrix: BLOSUM or PAM for protein, EDNAFULL for nucleotides; or a "
           "file chosen with …"));
    match_->setToolTip(tr("Score of two identical nucleotides"));
    mismatch_->setToolTip(tr("Score of two different nucleotides (usually negative)"));
    gap_convention_->setToolTip(tr("How the two gap costs add up, with the numbers above"));
    device_->setToolTip(tr("Where the job runs: the CPU, one GPU, or all GPUs"));
    threads_->setToolTip(tr("CPU threads for the job (0: all cores)"));
    streams_->setToolTip(tr("CUDA streams per GPU that overlap copies and kernels (0: chosen automatically)"));
    strategy_->setToolTip(
        tr("How a long pair is split on the GPU: one persistent kernel over row strips, or "
           "several kernels on several streams"));
    problems_label_->setToolTip(tr("What stops the job from running (✖) or deserves a look (⚠)"));
    estimate_->setToolTip(
        tr("The job's size, and its time from the speed this project measured for jobs of the "
           "same kind on this device"));
}

QString JobPanel::settingsJson() const {
    QJsonObject o;
    o["algorithm"] = QString::fromUtf8(to_string(JobAlgorithm(algorithm_->currentData().toInt())).data());
    o["long_mode"] = QString::fromUtf8(to_string(AlignmentMode(long_mode_->currentData().toInt())).data());
    o["free_query_begin"] = free_query_begin_->isChecked();
    o["free_query_end"] = free_query_end_->isChecked();
    o["free_target_begin"] = free_target_begin_->isChecked();
    o["free_target_end"] = free_target_end_->isChecked();
    o["top"] = top_->value();
    o["traceback"] = traceback_->isChecked();
    o["scoring"] = scoring_kind_->currentIndex() == 1 ? "match_mismatch" : "matrix";
    o["matrix"] = matrix_->currentText();
    o["matrix_chosen"] = matrix_chosen_;
    o["match"] = match_->value();
    o["mismatch"] = mismatch_->value();
    o["gap_open"] = gap_open_->value();
    o["gap_extend"] = gap_extend_->value();
    o["gaps_chosen"] = gaps_chosen_;
    o["device"] = device_->currentData().toString();
    o["threads"] = threads_->value();
    o["streams"] = streams_->value();
    o["strategy"] = strategy_->currentData().toString();
    o["kernels"] = kernels_->value();
    o["pairing"] = Pairing(pairing_->currentData().toInt()) == Pairing::RecordByRecord ? "record" : "all";
    // Inputs still waiting for their sets are kept as they were saved.
    if (wanted_queries_) o["queries"] = *wanted_queries_;
    else if (queries_chosen_)
        o["queries"] = queries_->currentData().toLongLong();
    if (wanted_targets_) o["targets"] = *wanted_targets_;
    else if (targets_chosen_)
        o["targets"] = targets_->currentData().toLongLong();
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

void JobPanel::applySettingsJson(const QString& json) {
    const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
    if (o.isEmpty()) return;
    restoring_ = true;
    auto pick = [](QComboBox* combo, auto&& matches) {
        for (int k = 0; k < combo->count(); ++k)
            if (matches(combo->itemData(k))) {
                combo->setCurrentIndex(k);
                return;
            }
    };
    if (o.contains("algorithm")) {
        const std::string name = o["algorithm"].toString().toStdString();
        pick(algorithm_, [&](const QVariant& v) { return to_string(JobAlgorithm(v.toInt())) == name; });
    }
    if (o.contains("long_mode")) {
        const std::string name = o["long_mode"].toString().toStdString();
        pick(long_mode_, [&](const QVariant& v) { return to_string(AlignmentMode(v.toInt())) == name; });
    }
    const std::pair<const char*, QCheckBox*> boxes[] = {{"free_query_begin", free_query_begin_},
                                                        {"free_query_end", free_query_end_},
                                                        {"free_target_begin", free_target_begin_},
                                                        {"free_target_end", free_target_end_},
                                                        {"traceback", traceback_}};
    for (const auto& [key, box] : boxes)
        if (o.contains(key)) box->setChecked(o[key].toBool());
    if (o.contains("top")) top_->setValue(o["top"].toInt());
    if (o.contains("scoring")) scoring_kind_->setCurrentIndex(o["scoring"].toString() == "match_mismatch" ? 1 : 0);
    if (o.contains("matrix")) {
        const QString matrix = o["matrix"].toString();
        if (matrix_->findText(matrix) < 0) matrix_->addItem(matrix);
        const QSignalBlocker block(matrix_);
        matrix_->setCurrentText(matrix);
    }
    matrix_chosen_ = o["matrix_chosen"].toBool(matrix_chosen_);
    if (o.contains("match")) match_->setValue(o["match"].toInt());
    if (o.contains("mismatch")) mismatch_->setValue(o["mismatch"].toInt());
    {
        const QSignalBlocker block_open(gap_open_), block_extend(gap_extend_);
        if (o.contains("gap_open")) gap_open_->setValue(o["gap_open"].toDouble());
        if (o.contains("gap_extend")) gap_extend_->setValue(o["gap_extend"].toDouble());
    }
    gaps_chosen_ = o["gaps_chosen"].toBool(gaps_chosen_);
    if (o.contains("device")) setDevice(o["device"].toString());
    if (o.contains("threads")) threads_->setValue(o["threads"].toInt());
    if (o.contains("streams")) streams_->setValue(o["streams"].toInt());
    if (o.contains("strategy")) setStrategy(o["strategy"].toString());
    if (o.contains("kernels")) kernels_->setValue(o["kernels"].toInt());
    if (o.contains("pairing"))
        setPairing(o["pairing"].toString() == "record" ? Pairing::RecordByRecord : Pairing::AllAgainstAll);
    wanted_queries_.reset();
    wanted_targets_.reset();
    if (o.contains("queries")) wanted_queries_ = qint64(o["queries"].toInteger());
    if (o.contains("targets")) wanted_targets_ = qint64(o["targets"].toInteger());
    restoring_ = false;
    rebuildInputs();
    updateVisibility();
    if (!gaps_chosen_) followDefaultGaps();
    revalidate();
}

void JobPanel::restoreFromProject() {
    saved_settings_ = document_.setting(settings_key);
    applySettingsJson(saved_settings_);
    saved_settings_ = settingsJson();  // as applied: no write back for nothing
    if (document_.setting(settings_key).isEmpty()) saved_settings_.clear();
}

void JobPanel::saveSettings() {
    save_timer_->stop();
    if (!document_.isOpen()) return;
    const QString json = settingsJson();
    if (json == saved_settings_) return;
    document_.setSetting(settings_key, json);
    saved_settings_ = json;
}

void JobPanel::chooseMatrixFile() {
    // EMBOSS matrices usually have no extension (EBLOSUM62): every file is
    // offered; the reader says what is wrong with one that is not a matrix.
    auto* dialog = open_file_dialog(
        this, FileKind::Matrices, tr("Substitution matrix"),
        tr("Matrix files, any name (NCBI or EMBOSS layout) (*);;Matrix files named .mat or .txt (*.mat *.txt)"),
        QFileDialog::AcceptOpen, QFileDialog::ExistingFile, [this](const QStringList& paths) {
            matrix_chosen_ = true;
            if (matrix_->findText(paths.first()) < 0) matrix_->addItem(paths.first());
            matrix_->setCurrentText(paths.first());
        });
    dialog->setObjectName("matrixDialog");
}

void JobPanel::setSelectionProvider(std::function<SequenceList(bool*)> provider) {
    selection_ = std::move(provider);
    revalidate();
}

void JobPanel::fillDevices() {
    device_->clear();
    int gpus = 0;
    for (const auto& d : devices_) {
        QString text = QString::fromStdString(d.name);
        if (d.kind == "gpu") text = QString::fromStdString(d.id) + " — " + text;
        if (!d.available) text += tr(" (unavailable)");
        device_->addItem(text, QString::fromStdString(d.id));
        const int index = device_->count() - 1;
        QString tip = QString::fromStdString(d.available ? d.description : d.unavailable_reason);
        device_->setItemData(index, tip, Qt::ToolTipRole);
        set_item_enabled(device_, index, d.available);
        if (d.kind == "gpu" && d.available) ++gpus;
    }
    if (gpus > 1) device_->addItem(tr("All GPUs (%1)").arg(gpus), QStringLiteral("gpu"));
    // The fastest device there is, as the CLI's "auto" would pick.
    if (gpus > 1) device_->setCurrentIndex(device_->count() - 1);
    else if (int i = device_->findData(QStringLiteral("gpu:0")); gpus == 1 && i >= 0)
        device_->setCurrentIndex(i);
    else if (int c = device_->findData(QStringLiteral("cpu")); c >= 0)
        device_->setCurrentIndex(c);
}

void JobPanel::rebuildInputs() {
    for (QComboBox* combo : {queries_, targets_}) {
        // Until the user picks, the defaults follow the sets as they arrive.
        const bool chosen = combo == queries_ ? queries_chosen_ : targets_chosen_;
        const QVariant current = chosen ? combo->currentData() : QVariant();
        const QSignalBlocker block(combo);
        combo->clear();
        for (const auto& input : document_.inputs()) {
            if (!input.set) continue;
            combo->addItem(tr("%1 (%2 %3)")
                               .arg(input.label())
                               .arg(input.set->records.size())
                               .arg(QString::fromUtf8(to_string(input.set->alphabet).data())),
                           qint64(input.info.id));
            combo->setItemData(combo->count() - 1, QString::fromStdString(input.info.path), Qt::ToolTipRole);
        }
        combo->addItem(tr("Selected in the Sequences table"), selection_source);
        std::optional<qint64>& wanted = combo == queries_ ? wanted_queries_ : wanted_targets_;
        int index = current.isValid() ? combo->findData(current) : -1;
        if (wanted) {
            if (const int w = combo->findData(*wanted); w >= 0) {
                index = w;
                (combo == queries_ ? queries_chosen_ : targets_chosen_) = true;
                wanted.reset();
            }
        }
        if (index < 0) {
            // New project or first load: queries from the first set, targets
            // from the second if there is one.
            const int sets = combo->count() - 1;
            index = combo == targets_ && sets > 1 ? 1 : 0;
        }
        combo->setCurrentIndex(index);
    }
    inputChanged();
}

void JobPanel::inputChanged() {
    // Until the user picks a matrix, follow the sequences' alphabet.
    if (!matrix_chosen_) {
        const SequenceList q = listFor(*queries_, nullptr);
        if (q.size() > 0) {
            const QSignalBlocker block(matrix_);
            matrix_->setCurrentText(q.alphabet == AlphabetKind::Protein ? "BLOSUM62" : "EDNAFULL");
        }
    }
    followDefaultGaps();
    revalidate();
}

void JobPanel::followDefaultGaps() {
    if (gaps_chosen_) return;
    const JobRequest r = request();
    GapCosts gaps;  // the pairwise default, EMBOSS needle/water's
    if (r.is_search()) {
        const AlphabetKind alphabet = r.queries.size() > 0 ? r.queries.alphabet : r.targets.alphabet;
        gaps = search_default_gaps(r.scoring, alphabet);
    }
    const QSignalBlocker block_open(gap_open_), block_extend(gap_extend_);
    gap_open_->setValue(gaps.open);
    gap_extend_->setValue(gaps.extend);
}

void JobPanel::updateVisibility() {
    const auto algorithm = JobAlgorithm(algorithm_->currentData().toInt());
    const bool search = algorithm == JobAlgorithm::DatabaseSearch;
    const bool long_pair = algorithm == JobAlgorithm::LongPair;
    const bool long_semi = long_pair && AlignmentMode(long_mode_->currentData().toInt()) == AlignmentMode::SemiGlobal;
    algorithm_form_->setRowVisible(long_mode_, long_pair);
    algorithm_form_->setRowVisible(free_ends_box_, algorithm == JobAlgorithm::SemiGlobal || long_semi);
    algorithm_form_->setRowVisible(top_, search);
    // A long pair is the first query with the first target: no pairing to choose.
    sequences_form_->setRowVisible(pairing_, !search && !long_pair);
    if (auto* label = qobject_cast<QLabel*>(sequences_form_->labelForField(targets_)))
        label->setText(search ? tr("&Database:") : tr("&Targets:"));
    const bool match_mismatch = scoring_kind_->currentIndex() == 1;
    scoring_form_->setRowVisible(matrix_->parentWidget(), !match_mismatch);
    scoring_form_->setRowVisible(match_, match_mismatch);
    scoring_form_->setRowVisible(mismatch_, match_mismatch);
    const QString device = device_->currentData().toString();
    const bool gpu = device.startsWith("gpu");
    const bool streams_strategy = strategy_->currentData().toString() == "streams";
    // On CPU devices a long pair is Myers-Miller on one core: no threads to
    // choose; on GPUs the strategy, and its kernel and stream counts for the
    // streams strategy (the strips strategy is one kernel on one stream).
    device_form_->setRowVisible(threads_, !gpu && !long_pair);
    device_form_->setRowVisible(strategy_, gpu && long_pair);
    device_form_->setRowVisible(kernels_, gpu && long_pair && streams_strategy);
    device_form_->setRowVisible(streams_, gpu && (!long_pair || streams_strategy));
}

SequenceList JobPanel::listFor(const QComboBox& combo, bool* mixed) const {
    if (mixed) *mixed = false;
    const qint64 id = combo.currentData().toLongLong();
    if (id == selection_source) {
        SequenceList list = selection_ ? selection_(mixed) : SequenceList{};
        if (list.size() == 0) list.label = "the selection in the Sequences table";
        return list;
    }
    const SequenceInput* input = document_.input(id);
    SequenceList list;
    if (!input || !input->set) return list;
    // Aliasing pointer: shares the set's ownership, copies nothing.
    list.records = std::shared_ptr<const std::vector<Sequence>>(input->set, &input->set->records);
    list.alphabet = input->set->alphabet;
    list.label = input->label().toStdString();
    list.set_ids = {input->info.id};
    return list;
}

JobRequest JobPanel::request() const {
    JobRequest r;
    r.algorithm = JobAlgorithm(algorithm_->currentData().toInt());
    r.top = std::size_t(top_->value());
    r.free_ends = FreeEndGaps{free_query_begin_->isChecked(), free_query_end_->isChecked(),
                              free_target_begin_->isChecked(), free_target_end_->isChecked()};
    r.scoring.match_mismatch = scoring_kind_->currentIndex() == 1;
    r.scoring.matrix = matrix_->currentText().toStdString();
    r.scoring.match = match_->value();
    r.scoring.mismatch = mismatch_->value();
    r.scoring.gap_open = gap_open_->value();
    r.scoring.gap_extend = gap_extend_->value();
    r.device = device_->currentData().toString().toStdString();
    const bool gpu = r.device.rfind("gpu", 0) == 0;
    const bool long_pair = r.algorithm == JobAlgorithm::LongPair;
    r.long_mode = AlignmentMode(long_mode_->currentData().toInt());
    r.strategy = strategy_->currentData().toString().toStdString();
    const bool streams_strategy = r.strategy == "streams";
    r.threads = gpu || long_pair ? 0 : threads_->value();
    r.streams = gpu && (!long_pair || streams_strategy) ? streams_->value() : 0;
    r.kernels = gpu && long_pair && streams_strategy ? kernels_->value() : 0;
    r.traceback = traceback_->isChecked();
    r.pairing = Pairing(pairing_->currentData().toInt());
    r.queries = listFor(*queries_, nullptr);
    r.targets = listFor(*targets_, nullptr);
    return r;
}

void JobPanel::revalidate() {
    const JobRequest r = request();
    problems_ = check_request(r, devices_, scanners_);
    bool mixed = false;
    for (QComboBox* combo : {queries_, targets_}) {
        listFor(*combo, &mixed);
        if (mixed) {
            problems_.push_back(
                {JobProblem::Severity::Error, "The selection mixes protein and nucleotide sequences: select one kind"});
            break;
        }
    }

    const double open = gap_open_->value(), extend = gap_extend_->value();
    gap_convention_->setText(tr("A gap of length k costs open + (k−1)·extend: here a gap of 1 costs %1, "
                                "a gap of 3 costs %2.")
                                 .arg(user_number(open), user_number(open + 2 * extend)));
    problems_label_->setText(problemText());
    problems_label_->setVisible(!problems_.empty());
    estimate_->setText(estimateText());
    run_->setEnabled(canRun());
    emit validityChanged(canRun());
    if (!restoring_ && save_timer_ && document_.isOpen() && settingsJson() != saved_settings_) save_timer_->start();
}

void JobPanel::updateEstimate() { estimate_->setText(estimateText()); }

QString JobPanel::problemText() const {
    QStringList lines;
    for (const auto& p : problems_) {
        const bool error = p.severity == JobProblem::Severity::Error;
        lines << QStringLiteral("<span style=\"color:%1\">%2 %3</span>")
                     .arg(error ? "#b02020" : "#9a6400", error ? "✖" : "⚠",
                          QString::fromStdString(p.message).toHtmlEscaped());
    }
    return lines.join("<br>");
}

QString JobPanel::estimateText() const {
    if (!canRun()) return {};
    const JobRequest r = request();
    const double cells = double(r.cell_count());
    if (r.is_long_pair()) {
        // The long-pair path's own speed: bench --long points or earlier long
        // jobs of the project on the device that will run it. All GPUs is the
        // set of the available ones ("gpu:0,1"), which splits the pair over
        // them: its own model, not one GPU's.
        std::string device = r.device;
        int gpus = 0;
        if (device == "gpu") {
            std::string set;
            for (const auto& d : devices_)
                if (d.kind == "gpu" && d.available && d.id.rfind("gpu:", 0) == 0) {
                    set += (gpus++ ? "," : "") + d.id;
                    if (gpus == 1) device = d.id;
                }
            if (gpus > 1) device = device_set_id(set);
        }
        const bool gpu = device.rfind("gpu", 0) == 0;
        const auto estimate = document_.longPairModel(device, gpu ? r.strategy : std::string(), r.traceback);
        const QString size = tr("1 pair, %1 cells").arg(human_count(cells));
        if (!estimate.model.valid() && gpus > 1)
            return tr("%1. No time estimate: no run-time model for the %2 GPUs %3 together (no bench --long point "
                      "or earlier long-pair job on that set in this project; one GPU's model does not predict a "
                      "split). Run alignscope-cli bench --long --device %3 --project to measure it.")
                .arg(size)
                .arg(gpus)
                .arg(QString::fromStdString(device));
        if (!estimate.model.valid())
            return tr("%1. No time estimate: no bench --long point or earlier long-pair job on %2 in this project "
                      "(run alignscope-cli bench --long --project to measure it).")
                .arg(size, QString::fromStdString(device));
        // The pair aligned: the first query and the first target.
        double m = std::sqrt(cells), n = m;
        if (r.queries.size() > 0 && r.targets.size() > 0) {
            m = double(r.queries.records->front().residues.size());
            n = double(r.targets.records->front().residues.size());
        }
        return tr("%1: %2 (%3).").arg(size, human_seconds(estimate.model.predict(m, n)), estimate.source);
    }
    const QString size =
        r.is_search() ? tr("%1 pairs to scan, %2 cells").arg(human_count(double(r.pair_count())), human_count(cells))
                      : tr("%1 pairs, %2 cells").arg(human_count(double(r.pair_count())), human_count(cells));
    // Only the speed of finished jobs of the same kind (a search's, or a
    // pairwise job's of the same mode, with or without traceback) predicts.
    const auto measured = document_.throughput(r.device, ProjectDocument::measuredKind(r));
    const QString kind = r.is_search()
                             ? (r.traceback ? tr("searches with traceback") : tr("searches without traceback"))
                             : tr("%1 alignments %2")
                                   .arg(QString::fromUtf8(to_string(r.align_options().mode).data()),
                                        r.traceback ? tr("with traceback") : tr("without traceback"));
    if (measured.jobs == 0 || measured.cells_per_second <= 0)
        return tr("%1. No time estimate yet: no finished job of this kind (%2) on %3 in this project to measure "
                  "its speed.")
            .arg(size, kind, QString::fromStdString(r.device));
    return tr("%1: %2 at %3 cells/s (measured by %n earlier job(s) of this kind, %4, on %5).", nullptr, measured.jobs)
        .arg(size, human_seconds(cells / measured.cells_per_second), human_count(measured.cells_per_second), kind,
             QString::fromStdString(r.device));
}

void JobPanel::setInputs(qint64 queries, qint64 targets) {
    if (int i = queries_->findData(queries); i >= 0) {
        queries_chosen_ = true;
        queries_->setCurrentIndex(i);
    }
    if (int i = targets_->findData(targets); i >= 0) {
        targets_chosen_ = true;
        targets_->setCurrentIndex(i);
    }
}

void JobPanel::setPairing(Pairing pairing) { pairing_->setCurrentIndex(pairing_->findData(int(pairing))); }

void JobPanel::setAlgorithm(JobAlgorithm algorithm) {
    algorithm_->setCurrentIndex(algorithm_->findData(int(algorithm)));
}

void JobPanel::setFreeEnds(const FreeEndGaps& free_ends) {
    free_query_begin_->setChecked(free_ends.query_begin);
    free_query_end_->setChecked(free_ends.query_end);
    free_target_begin_->setChecked(free_ends.target_begin);
    free_target_end_->setChecked(free_ends.target_end);
}

void JobPanel::setLongPairMode(AlignmentMode mode) { long_mode_->setCurrentIndex(long_mode_->findData(int(mode))); }

void JobPanel::setStrategy(const QString& strategy) {
    if (int i = strategy_->findData(strategy); i >= 0) strategy_->setCurrentIndex(i);
}

void JobPanel::setKernels(int kernels) { kernels_->setValue(kernels); }

void JobPanel::setMatrix(const QString& name) {
    matrix_chosen_ = true;
    scoring_kind_->setCurrentIndex(0);
    if (matrix_->findText(name) < 0) matrix_->addItem(name);
    matrix_->setCurrentText(name);
}

void JobPanel::setMatchMismatch(int match, int mismatch) {
    scoring_kind_->setCurrentIndex(1);
    match_->setValue(match);
    mismatch_->setValue(mismatch);
}

void JobPanel::setGaps(double open, double extend) {
    gaps_chosen_ = true;
    gap_open_->setValue(open);
    gap_extend_->setValue(extend);
}

void JobPanel::setTop(int hits) { top_->setValue(hits); }

bool JobPanel::setDevice(const QString& id) {
    const int i = device_->findData(id);
    if (i < 0) return false;
    device_->setCurrentIndex(i);
    return true;
}

void JobPanel::setThreads(int threads) { threads_->setValue(threads); }
void JobPanel::setStreams(int streams) { streams_->setValue(streams); }
void JobPanel::setTraceback(bool on) { traceback_->setChecked(on); }

void JobPanel::setRunning(bool running) {
    cancel_->setEnabled(running);
    // Run while a job runs queues the new one behind it, and says so.
    run_->setText(running ? tr("Queue") : tr("Run"));
    run_->setToolTip(running ? tr("Queue this job: it runs when the jobs before it end (Ctrl+R)")
                             : tr("Run the job (Ctrl+R)"));
}

}  // namespace alignscope::ui
