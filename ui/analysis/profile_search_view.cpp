// ProfileSearchView: the controls above, the hits table in the middle, the
// selected hit's domains and their alignments to the model below.
#include "analysis/profile_search_view.hpp"

#include "analysis/saved_analyses.hpp"
#include "file_dialogs.hpp"
#include "project_document.hpp"

#include <alignscope/error.hpp>

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>

namespace alignscope::ui {

namespace {

AlphabetKind alphabet_kind(profile::ResidueAlphabet a) {
    switch (a) {
        case profile::ResidueAlphabet::Dna: return AlphabetKind::Dna;
        case profile::ResidueAlphabet::Rna: return AlphabetKind::Rna;
        case profile::ResidueAlphabet::Amino: break;
    }
    return AlphabetKind::Protein;
}

QTableWidgetItem* number_item(double value, const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setData(Qt::UserRole, value);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QString evalue_text(double e) { return QString::asprintf("%.2g", e); }

QDoubleSpinBox* evalue_box(double value) {
    auto* box = new QDoubleSpinBox;
    box->setDecimals(6);
    box->setRange(0.000001, 1e6);
    box->setValue(value);
    return box;
}

}  // namespace

bool is_profile_file(const QString& path) {
    const QString name = path.toLower();
    if (name.endsWith(QLatin1String(".hmm")) || name.endsWith(QLatin1String(".hmm.gz"))) return true;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return false;
    return file.read(7) == "HMMER3/";
}

ProfileSearchView::ProfileSearchView(ProjectDocument& document, QWidget* parent) : ResultView(document, parent) {
    auto* grid = new QGridLayout;
    addProfileRow(*grid, 0);
    addTargetsRow(*grid, 1);
    addSearchRow(*grid, 2);
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    progress_->setValue(0);
    status_ = new QLabel;
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    grid->addWidget(progress_, 3, 0, 1, 2);
    grid->addWidget(status_, 3, 2, 1, 6);
    grid->setColumnStretch(3, 1);

    makeResultTables();
    auto* bottom = new QSplitter(Qt::Vertical);
    bottom->addWidget(domains_);
    bottom->addWidget(alignment_);
    bottom->setStretchFactor(1, 2);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(makeHitsPanel());
    split->addWidget(bottom);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(grid);
    layout->addWidget(split, 1);
    // The window may be narrower than the controls' row: the tab must not
    // widen the window (the controls then share what there is).
    setMinimumSize(320, 240);

    connect(hits_, &QTableWidget::currentCellChanged, this, [this](int row) { showHit(row); });
    connect(domains_, &QTableWidget::currentCellChanged, this,
            [this](int row) { showDomain(hits_->currentRow(), row); });
    connectJob();
    connect(&document, &ProjectDocument::opened, this, [this] {
        refreshInputs();
        refreshSaved();
    });
    connect(&document, &ProjectDocument::inputsChanged, this, &ProfileSearchView::refreshInputs);
    refreshInputs();
    refreshSaved();
}

void ProfileSearchView::addProfileRow(QGridLayout& grid, int row) {
    profiles_ = new QComboBox;
    profiles_->setObjectName(QStringLiteral("profileChoice"));
    profiles_->setToolTip(tr("The profile file whose models are searched (File › Open reads .hmm files)"));
    auto* open = new QPushButton(tr("Open .hmm…"));
    open->setToolTip(tr("Read a HMMER3 profile file (.hmm) into the project"));
    model_label_ = new QLabel;
    grid.addWidget(new QLabel(tr("Profile")), row, 0);
    grid.addWidget(profiles_, row, 1);
    grid.addWidget(open, row, 2);
    grid.addWidget(model_label_, row, 3, 1, 5);
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open Profile"), QString(),
                                                          tr("HMMER3 profiles (*.hmm *.hmm.gz);;All files (*)"));
        if (!path.isEmpty() && !openProfile(path)) status_->setText(last_error_);
    });
    connect(profiles_, &QComboBox::currentIndexChanged, this, [this] { updateModelLabel(); });
}

void ProfileSearchView::addTargetsRow(QGridLayout& grid, int row) {
    targets_ = new QComboBox;
    targets_->setObjectName(QStringLiteral("targetChoice"));
    targets_->setToolTip(tr("The sequences searched: a loaded sequence set, or a FASTA file read for the search"));
    database_edit_ = new QLineEdit;
    database_edit_->setObjectName(QStringLiteral("profileDatabase"));
    database_edit_->setPlaceholderText(tr("database FASTA file"));
    database_edit_->setToolTip(tr("The FASTA (or FASTQ, gzip) file searched when Targets is \"FASTA file\""));
    auto* browse = new QPushButton(tr("Browse…"));
    browse->setToolTip(tr("Choose the FASTA file to search"));
    grid.addWidget(new QLabel(tr("Targets")), row, 0);
    grid.addWidget(targets_, row, 1);
    grid.addWidget(database_edit_, row, 2, 1, 5);
    grid.addWidget(browse, row, 7);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Database"), QString(),
                                         tr("Sequences (*.fa *.fasta *.faa *.fq *.fastq *.gz);;All files (*)"));
        if (!path.isEmpty()) setDatabase(path);
    });
    connect(targets_, &QComboBox::currentIndexChanged, this,
            [this] { database_edit_->setEnabled(targets_->currentData().toLongLong() < 0); });
}

void ProfileSearchView::addSearchRow(QGridLayout& grid, int row) {
    report_e_ = evalue_box(10.0);
    report_e_->setToolTip(tr("Report sequences with an E-value at most this (hmmsearch -E)"));
    domain_e_ = evalue_box(10.0);
    domain_e_->setToolTip(tr("Report domains with a conditional E-value at most this (hmmsearch --domE)"));
    device_ = new QComboBox;
    device_->setObjectName(QStringLiteral("profileDevice"));
    for (const auto& d : profile_scanners().devices())
        if (d.available) device_->addItem(QString::fromStdString(d.id + "  " + d.name), QString::fromStdString(d.id));
    device_->setToolTip(
        tr("Where the MSV and Viterbi filters run: the CPU (SSE2 striped), its scalar reference, "
           "or a GPU"));
    if (const int cpu = device_->findData(QStringLiteral("cpu")); cpu >= 0) device_->setCurrentIndex(cpu);
    run_ = new QPushButton(tr("Search"));
    run_->setToolTip(tr("Search every model of the profile against the targets, on a worker thread"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setToolTip(tr("Stop the running profile search"));
    cancel_->setEnabled(false);
    grid.addWidget(new QLabel(tr("Report E ≤")), row, 0);
    grid.addWidget(report_e_, row, 1);
    grid.addWidget(new QLabel(tr("Domain E ≤")), row, 2);
    grid.addWidget(domain_e_, row, 3);
    grid.addWidget(new QLabel(tr("Device")), row, 4);
    grid.addWidget(device_, row, 5);
    grid.addWidget(run_, row, 6);
    grid.addWidget(cancel_, row, 7);
    connect(run_, &QPushButton::clicked, this, [this] {
        if (!runSearch()) status_->setText(last_error_);
    });
    connect(cancel_, &QPushButton::clicked, this, [this] { job_.cancel(); });
}

void ProfileSearchView::makeResultTables() {
    hits_ = new QTableWidget(0, 8);
    hits_->setObjectName(QStringLiteral("profileHits"));
    hits_->setHorizontalHeaderLabels({tr("Model"), tr("Target"), tr("E-value"), tr("Score (bits)"), tr("Bias"),
                                      tr("Domains"), tr("Exp"), tr("Description")});
    hits_->horizontalHeader()->setStretchLastSection(true);
    domains_ = new QTableWidget(0, 12);
    domains_->setObjectName(QStringLiteral("profileDomains"));
    domains_->setHorizontalHeaderLabels({tr("#"), tr("Score"), tr("Bias"), tr("c-Evalue"), tr("i-Evalue"),
                                         tr("hmm from"), tr("hmm to"), tr("ali from"), tr("ali to"), tr("env from"),
                                         tr("env to"), tr("acc")});
    for (QTableWidget* table : {hits_, domains_}) {
        table->setSelectionBehavior(QAbstractItemView::SelectRows);
        table->setSelectionMode(QAbstractItemView::SingleSelection);
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->verticalHeader()->hide();
    }
    alignment_ = new QPlainTextEdit;
    alignment_->setObjectName(QStringLiteral("domainAlignment"));
    alignment_->setReadOnly(true);
    alignment_->setLineWrapMode(QPlainTextEdit::NoWrap);
    alignment_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
}

QWidget* ProfileSearchView::makeHitsPanel() {
    // The kept searches and the exports of the shown one, what the pipeline
    // passed, then the hits.
    saved_ = new QComboBox;
    saved_->setObjectName(QStringLiteral("savedSearches"));
    saved_->setToolTip(tr("Profile searches kept in the project"));
    pipeline_ = new QLabel;
    pipeline_->setWordWrap(true);
    auto* panel = new QWidget;
    auto* panel_layout = new QVBoxLayout(panel);
    panel_layout->setContentsMargins(0, 0, 0, 0);
    auto* saved_row = new QHBoxLayout;
    saved_row->addWidget(new QLabel(tr("Search")));
    saved_row->addWidget(saved_, 1);
    auto* tblout = new QPushButton(tr("tblout…"));
    tblout->setToolTip(tr("Export the per-sequence table as hmmsearch --tblout writes it"));
    auto* domtblout = new QPushButton(tr("domtblout…"));
    domtblout->setToolTip(tr("Export the per-domain table as hmmsearch --domtblout writes it"));
    saved_row->addWidget(tblout);
    saved_row->addWidget(domtblout);
    for (auto [b, domains] : {std::pair{tblout, false}, std::pair{domtblout, true}})
        connect(b, &QPushButton::clicked, this, [this, domains = domains] {
            const QString path =
                QFileDialog::getSaveFileName(this, tr("Export Table"),
                                             domains ? QStringLiteral("hits.domtbl") : QStringLiteral("hits.tbl"));
            if (!path.isEmpty() && !exportTable(path, domains)) status_->setText(last_error_);
        });
    connect(saved_, &QComboBox::activated, this, [this](int index) {
        const qint64 id = saved_->itemData(index).toLongLong();
        if (id > 0 && id != shown_analysis_) showAnalysis(id);
    });
    panel_layout->addLayout(saved_row);
    panel_layout->addWidget(pipeline_);
    panel_layout->addWidget(hits_, 1);
    return panel;
}

void ProfileSearchView::connectJob() {
    connect(&job_, &AnalysisJob::progressed, this,
            [this](quint64 done, quint64 total, quint64, quint64, double seconds) {
                if (total) progress_->setValue(int(100 * done / total));
                QString text = tr("searching: %1 of %2 targets, %3 s").arg(done).arg(total).arg(seconds, 0, 'f', 1);
                if (done > 0 && total > done)
                    text += tr(", about %1 s left").arg(seconds * double(total - done) / double(done), 0, 'f', 0);
                status_->setText(text);
            });
    connect(&job_, &AnalysisJob::finished, this, &ProfileSearchView::finished);
}

void ProfileSearchView::refreshInputs() {
    // Profiles recorded in the project (read from its embedded copy or the file).
    if (store::Project* project = document().project()) {
        for (const auto& in : project->inputs()) {
            if (in.kind != store::InputKind::Profile) continue;
            bool known = false;
            for (const auto& l : loaded_) known = known || l.input_id == in.id;
            if (known) continue;
            try {
                LoadedProfile l;
                l.models = profile::parse_hmm_text(project->input_content(in.id), in.path);
                l.label = QFileInfo(QString::fromStdString(in.path)).fileName();
                l.input_id = in.id;
                loaded_.push_back(std::move(l));
            } catch (const std::exception& e) {
                status_->setText(QString::fromStdString(e.what()));
            }
        }
    }
    const int profile = profiles_->currentIndex();
    profiles_->clear();
    for (std::size_t i = 0; i < loaded_.size(); ++i) profiles_->addItem(loaded_[i].label, int(i));
    if (profile >= 0 && profile < profiles_->count()) profiles_->setCurrentIndex(profile);
    else
        profiles_->setCurrentIndex(profiles_->count() - 1);
    updateModelLabel();

    const qint64 target = targets_->currentData().toLongLong();
    targets_->clear();
    for (const auto& in : document().inputs()) {
        if (!in.set) continue;
        targets_->addItem(tr("%1 (%2 sequences)").arg(in.label()).arg(in.set->records.size()), qint64(in.info.id));
    }
    targets_->addItem(tr("FASTA file"), qint64(-1));
    const int keep = targets_->findData(target);
    targets_->setCurrentIndex(keep >= 0 ? keep : 0);
    database_edit_->setEnabled(targets_->currentData().toLongLong() < 0);
}

void ProfileSearchView::updateModelLabel() {
    const int i = profiles_->currentData().isValid() ? profiles_->currentData().toInt() : -1;
    if (i < 0 || i >= int(loaded_.size())) {
        model_label_->setText(tr("no profile: open a .hmm file"));
        return;
    }
    const auto& models = loaded_[std::size_t(i)].models;
    QStringList names;
    for (const auto& m : models)
        names << QStringLiteral("%1 (M=%2%3)")
                     .arg(QString::fromStdString(m.name))
                     .arg(m.length)
                     .arg(m.accession.empty() ? QString() : ", " + QString::fromStdString(m.accession));
    if (names.size() > 4) names = names.mid(0, 4) << tr("…");
    model_label_->setText(
        tr("%n model(s), %1: %2", nullptr, int(models.size()))
            .arg(QString::fromStdString(std::string(profile::ResidueCode::of(models.front().alphabet).name())))
            .arg(names.join(QStringLiteral(", "))));
}

bool ProfileSearchView::openProfile(const QString& path) {
    try {
        LoadedProfile l;
        l.models = profile::read_hmm_file(path.toStdString());
        l.label = QFileInfo(path).fileName();
        if (store::Project* project = document().project(); project && !project->read_only()) {
            std::uint64_t states = 0;
            for (const auto& m : l.models) states += std::uint64_t(m.length);
            l.input_id = project->add_profile(QFileInfo(path).absoluteFilePath().toStdString(),
                                              alphabet_kind(l.models.front().alphabet), l.models.size(), states);
        }
        for (std::size_t i = 0; i < loaded_.size(); ++i)
            if ((l.input_id && loaded_[i].input_id == l.input_id) || (!l.input_id && loaded_[i].label == l.label)) {
                loaded_.erase(loaded_.begin() + std::ptrdiff_t(i));
                break;
            }
        loaded_.push_back(std::move(l));
        refreshInputs();
        profiles_->setCurrentIndex(profiles_->count() - 1);
        status_->setText(tr("opened %1").arg(QFileInfo(path).fileName()));
        return true;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        return false;
    }
}

void ProfileSearchView::setDatabase(const QString& path) {
    database_edit_->setText(path);
    targets_->setCurrentIndex(targets_->findData(qint64(-1)));
}

bool ProfileSearchView::runSearch() {
    if (job_.running()) {
        last_error_ = tr("a profile search is running; cancel it or wait");
        return false;
    }
    const int p = profiles_->currentData().isValid() ? profiles_->currentData().toInt() : -1;
    if (p < 0 || p >= int(loaded_.size())) {
        last_error_ = tr("no profile chosen: open a .hmm file first");
        return false;
    }
    auto request = std::make_shared<ProfileSearchRequest>();
    request->models = loaded_[std::size_t(p)].models;
    request->profile_label = loaded_[std::size_t(p)].label.toStdString();
    const qint64 target = targets_->currentData().toLongLong();
    if (target >= 0) {
        const SequenceInput* in = document().input(target);
        if (!in || !in->set) {
            last_error_ = tr("the chosen sequence set is not loaded");
            return false;
        }
        request->records = std::shared_ptr<const std::vector<Sequence>>(in->set, &in->set->records);
        request->targets_label = in->label().toStdString();
    } else {
        const QString path = database_edit_->text().trimmed();
        if (path.isEmpty()) {
            last_error_ = tr("Targets: choose a FASTA file to search");
            return false;
        }
        if (const QString problem = path_text_problem(path); !problem.isEmpty()) {
            last_error_ = tr("Targets: the FASTA file field %1").arg(problem);
            return false;
        }
        request->database_path = path.toStdString();
        request->targets_label = QFileInfo(path).fileName().toStdString();
    }
    request->settings.report_E = report_e_->value();
    request->settings.domain_E = domain_e_->value();
    request->device = device_->currentData().toString().toStdString();
    if (request->device.empty()) request->device = "cpu";
    auto out = std::make_shared<ProfileSearchResults>();
    running_results_ = out;
    job_.start([request, out](JobContext& context) { *out = run_profile_search(*request, context); });
    run_->setEnabled(false);
    cancel_->setEnabled(true);
    progress_->setValue(0);
    status_->setText(tr("searching %1 against %2 on %3")
                         .arg(QString::fromStdString(request->profile_label),
                              QString::fromStdString(request->targets_label), QString::fromStdString(request->device)));
    return true;
}

void ProfileSearchView::finished(AnalysisJob::State state, const QString& message, double seconds) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    if (state == AnalysisJob::State::Cancelled) {
        status_->setText(tr("profile search cancelled after %1 s").arg(seconds, 0, 'f', 1));
        progress_->setValue(0);
    } else if (state == AnalysisJob::State::Failed) {
        status_->setText(tr("profile search failed: %1").arg(message));
        progress_->setValue(0);
    } else {
        results_ = *running_results_;
        shown_analysis_ = 0;
        progress_->setValue(100);
        int reported = 0;
        for (const auto& m : results_->models) reported += int(m.search.hits.size());
        QString note = tr("%n sequence(s) reported in %1 s on %2", nullptr, reported)
                           .arg(results_->seconds, 0, 'f', 2)
                           .arg(QString::fromStdString(results_->device));
        if (store::Project* project = document().project(); project && !project->read_only()) {
            try {
                const std::string title = results_->profile_label + " against " + results_->targets_label;
                shown_analysis_ =
                    project->add_analysis("profile_search", title, parameters_json(*results_).toStdString(),
                                          to_json(*results_).toStdString());
            } catch (const std::exception& e) {
                note += tr("; not kept in the project: %1").arg(QString::fromStdString(e.what()));
            }
        }
        status_->setText(note);
        refreshSaved();
        showResults();
    }
    running_results_.reset();
    emit searchFinished(int(state), message);
}

void ProfileSearchView::refreshSaved() {
    const store::Project* project = document().project();
    const QString error = list_saved_analyses(*saved_, project, "profile_search");
    if (!error.isEmpty()) status_->setText(error);
    if (!project) return;
    // A project opened with searches in it shows its latest one.
    if (!shown_analysis_ && !results_ && saved_->count() && !job_.running()) {
        showAnalysis(saved_->itemData(saved_->count() - 1).toLongLong());
        return;
    }
    const int i = saved_->findData(shown_analysis_);
    if (i >= 0) saved_->setCurrentIndex(i);
    else
        saved_->setCurrentIndex(-1);
}

bool ProfileSearchView::showAnalysis(qint64 id) {
    store::Project* project = document().project();
    if (!project) return false;
    try {
        results_ = profile_results_from_json(QByteArray::fromStdString(project->analysis_results(id)));
        shown_analysis_ = id;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        status_->setText(last_error_);
        return false;
    }
    const int i = saved_->findData(id);
    if (i >= 0) saved_->setCurrentIndex(i);
    showResults();
    return true;
}

void ProfileSearchView::showResults() {
    hits_->setRowCount(0);
    domains_->setRowCount(0);
    alignment_->clear();
    if (!results_) return;
    QStringList counts;
    int rows = 0;
    for (const auto& m : results_->models) rows += int(m.search.hits.size());
    hits_->setRowCount(rows);
    int row = 0;
    for (std::size_t mi = 0; mi < results_->models.size(); ++mi) {
        const auto& m = results_->models[mi];
        const auto& c = m.search.counts;
        counts << tr("%1 (M=%2): %3 targets; passed MSV %4, bias %5, Vit %6, Fwd %7; %8 reported, %9 included")
                      .arg(QString::fromStdString(m.name))
                      .arg(m.length)
                      .arg(c.targets)
                      .arg(c.past_msv)
                      .arg(c.past_bias)
                      .arg(c.past_viterbi)
                      .arg(c.past_forward)
                      .arg(m.search.reported)
                      .arg(m.search.included);
        for (std::size_t hi = 0; hi < m.search.hits.size(); ++hi, ++row) {
            const auto& h = m.search.hits[hi];
            auto* model = new QTableWidgetItem(QString::fromStdString(m.name));
            model->setData(Qt::UserRole, int(mi));
            model->setData(Qt::UserRole + 1, int(hi));
            hits_->setItem(row, 0, model);
            auto* name = new QTableWidgetItem(QString::fromStdString(h.name));
            if (!h.included) name->setToolTip(tr("reported, not included (E-value above the inclusion threshold)"));
            hits_->setItem(row, 1, name);
            const double e = sequence_evalue(m.search, h);
            hits_->setItem(row, 2, number_item(e, evalue_text(e)));
            hits_->setItem(row, 3, number_item(h.score, QString::number(h.score, 'f', 1)));
            hits_->setItem(row, 4, number_item(h.pre_score - h.score, QString::number(h.pre_score - h.score, 'f', 1)));
            const auto reported = reported_domains(h).size();
            hits_->setItem(row, 5, number_item(double(reported), QString::number(reported)));
            hits_->setItem(row, 6, number_item(h.expected_domains, QString::number(h.expected_domains, 'f', 1)));
            hits_->setItem(row, 7, new QTableWidgetItem(QString::fromStdString(h.description)));
        }
    }
    pipeline_->setText(tr("%1 against %2 on %3. %4")
                           .arg(QString::fromStdString(results_->profile_label),
                                QString::fromStdString(results_->targets_label),
                                QString::fromStdString(results_->device), counts.join(QStringLiteral("; "))));
    hits_->resizeColumnsToContents();
    if (rows) hits_->setCurrentCell(0, 1);
}

void ProfileSearchView::showHit(int row) {
    domains_->setRowCount(0);
    alignment_->clear();
    if (!results_ || row < 0 || !hits_->item(row, 0)) return;
    const auto& m = results_->models.at(std::size_t(hits_->item(row, 0)->data(Qt::UserRole).toInt()));
    const auto& h = m.search.hits.at(std::size_t(hits_->item(row, 0)->data(Qt::UserRole + 1).toInt()));
    const std::vector<int> shown = reported_domains(h);
    domains_->setRowCount(int(shown.size()));
    QString text =
        QStringLiteral(">> %1  %2\n").arg(QString::fromStdString(h.name), QString::fromStdString(h.description));
    for (std::size_t k = 0; k < shown.size(); ++k) {
        const auto& d = h.domains[std::size_t(shown[k])];
        const int r = int(k);
        auto* n = number_item(double(k + 1), QString::number(k + 1) + (d.included ? " !" : " ?"));
        n->setData(Qt::UserRole + 1, shown[k]);
        domains_->setItem(r, 0, n);
        domains_->setItem(r, 1, number_item(d.score, QString::number(d.score, 'f', 1)));
        domains_->setItem(r, 2, number_item(d.bias, QString::number(d.bias, 'f', 1)));
        domains_->setItem(r, 3, number_item(domain_c_evalue(m.search, d), evalue_text(domain_c_evalue(m.search, d))));
        domains_->setItem(r, 4, number_item(domain_i_evalue(m.search, d), evalue_text(domain_i_evalue(m.search, d))));
        const int values[] = {d.alignment.hmm_from,  d.alignment.hmm_to, d.alignment.target_from,
                              d.alignment.target_to, d.env_from,         d.env_to};
        for (int c = 0; c < 6; ++c) domains_->setItem(r, 5 + c, number_item(values[c], QString::number(values[c])));
        domains_->setItem(r, 11, number_item(domain_accuracy(d), QString::number(domain_accuracy(d), 'f', 2)));
        text += domain_alignment_text(m, h, shown[k], int(k + 1));
    }
    domains_->resizeColumnsToContents();
    alignment_->setPlainText(text);
}

void ProfileSearchView::showDomain(int hitRow, int domainRow) {
    if (!results_ || hitRow < 0 || domainRow < 0 || !hits_->item(hitRow, 0) || !domains_->item(domainRow, 0)) return;
    const auto& m = results_->models.at(std::size_t(hits_->item(hitRow, 0)->data(Qt::UserRole).toInt()));
    const auto& h = m.search.hits.at(std::size_t(hits_->item(hitRow, 0)->data(Qt::UserRole + 1).toInt()));
    const int index = domains_->item(domainRow, 0)->data(Qt::UserRole + 1).toInt();
    alignment_->setPlainText(
        QStringLiteral(">> %1  %2\n").arg(QString::fromStdString(h.name), QString::fromStdString(h.description)) +
        domain_alignment_text(m, h, index, domainRow + 1));
}

bool ProfileSearchView::exportTable(const QString& path, bool domains) {
    if (!results_) {
        last_error_ = tr("nothing to export: run a profile search first");
        return false;
    }
    try {
        write_tables(*results_, path.toStdString(), domains);
        status_->setText(tr("wrote %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        return false;
    }
}

}  // namespace alignscope::ui
