// JobResultView: deferred loading, reloads of a changing job, and alignments
// paired with the sequences the window already holds.
#include "views/job_result_view.hpp"

#include "models/jobs_model.hpp"
#include "project_document.hpp"

#include <alignscope/error.hpp>

#include <QLabel>
#include <QShowEvent>
#include <QTimer>

namespace alignscope::ui {

namespace {

// A running job is drawn again at most this often.
constexpr qint64 running_reload_ms = 2000;

bool same_counts(const store::ResultCounts& a, const store::ResultCounts& b) {
    return a.alignments == b.alignments && a.hits == b.hits && a.long_alignments == b.long_alignments &&
           a.heatmaps == b.heatmaps && a.timeline_events == b.timeline_events && a.bench_points == b.bench_points;
}

}  // namespace

JobResultView::JobResultView(ProjectDocument& document, QWidget* parent) : ResultView(document, parent) {
    note_ = new QLabel(this);
    note_->setObjectName("note");
    note_->setWordWrap(true);
    note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    recheck_ = new QTimer(this);
    recheck_->setSingleShot(true);
    connect(recheck_, &QTimer::timeout, this, &JobResultView::jobsChanged);
    connect(&document, &ProjectDocument::jobsChanged, this, &JobResultView::jobsChanged);
    connect(&document, &ProjectDocument::opened, this, [this] { showJob(0); });
    since_load_.start();
}

void JobResultView::showJob(qint64 jobId) {
    job_id_ = jobId;
    reload();
}

QString JobResultView::noteText() const { return note_text_; }

void JobResultView::setNote(const QString& text) {
    note_text_ = text;
    showNote();
}

void JobResultView::setStaleCheck(std::function<QStringList(const store::JobInfo&)> check) {
    stale_check_ = std::move(check);
    updateStale();
}

void JobResultView::updateStale() {
    const store::JobInfo* job = job_id_ ? document().job(job_id_) : nullptr;
    QStringList reasons;
    if (job && stale_check_ && store::is_final(job->state)) reasons = stale_check_(*job);
    if (reasons == stale_) return;
    stale_ = reasons;
    showNote();
}

void JobResultView::showNote() {
    if (stale_.isEmpty()) {
        note_->setTextFormat(Qt::PlainText);
        note_->setText(note_text_);
        note_->setStyleSheet({});
        note_->setToolTip({});
        return;
    }
    // Stale: said first, with what changed; the results stay as they ran.
    note_->setTextFormat(Qt::RichText);
    note_->setText(tr("<b>Stale:</b> %1 changed since job %2 ran (%3). It shows job %2 as it ran; Run makes a new "
                      "job with the settings now.<br>%4")
                       .arg(stale_.size() == 1 ? tr("one setting") : tr("%1 settings").arg(stale_.size()))
                       .arg(job_id_)
                       .arg(stale_.join("; ").toHtmlEscaped(), note_text_.toHtmlEscaped()));
    note_->setStyleSheet(
        QStringLiteral("QLabel#note { background: #fff3c4; border: 1px solid #e0c050; padding: 3px; }"));
    note_->setToolTip(tr("Changed since the job ran:\n%1").arg(stale_.join('\n')));
}

QString JobResultView::noJobText() const {
    if (!document().isOpen())
        return tr("No project is open: File › New Project… or Open Project…, or start with alignscope --demo.");
    if (document().jobs().empty())
        return tr("No job in this project yet: load sequences, set up the Job panel and press Run (Ctrl+R).");
    return tr("No job chosen: double-click a job in the Jobs tab, or run one from the Job panel (Ctrl+R).");
}

void JobResultView::reload() {
    pending_ = true;
    if (isVisible()) loadNow();
}

void JobResultView::forgetJob() {
    job_id_ = 0;
    pending_ = false;
    loaded_.reset();
}

void JobResultView::showEvent(QShowEvent* event) {
    ResultView::showEvent(event);
    if (pending_) loadNow();
}

bool JobResultView::changed(const store::JobInfo& before, const store::JobInfo& now) const {
    return before.state != now.state || !same_counts(before.counts, now.counts);
}

void JobResultView::loadNow() {
    pending_ = false;
    const store::JobInfo* job = job_id_ ? document().job(job_id_) : nullptr;
    if (job) loaded_ = *job;
    else
        loaded_.reset();
    signature_ = projectSignature();
    since_load_.restart();
    stale_.clear();
    try {
        load(job);
        updateStale();
    } catch (const std::exception& e) {
        setNote(tr("Cannot show job %1: %2").arg(job_id_).arg(QString::fromUtf8(e.what())));
    }
}

void JobResultView::jobsChanged() {
    const store::JobInfo* now = job_id_ ? document().job(job_id_) : nullptr;
    if (job_id_ && !now) {
        showJob(0);  // deleted
        return;
    }
    const bool job_changed = now && (!loaded_ || changed(*loaded_, *now));
    const bool project_changed = projectSignature() != signature_;
    if (!job_changed && !project_changed) return;
    const bool growing = project_changed || !store::is_final(now->state);
    if (growing && since_load_.elapsed() < running_reload_ms) {
        // Come back when the interval is over; the job may not change again.
        if (!recheck_->isActive()) recheck_->start(int(running_reload_ms - since_load_.elapsed()) + 10);
        return;
    }
    reload();
}

AlignedPair JobResultView::alignedPair(const store::JobInfo& job, qint64 row) const {
    store::Project* project = document().project();
    if (!project) throw Error("no project is open");
    const auto page = project->alignments(job.id, row, 1);
    if (page.rows.empty())
        throw Error("job " + std::to_string(job.id) + " has no alignment number " + std::to_string(row + 1));
    AlignedPair pair;
    pair.alignment = page.rows.front();
    pair.scheme = document().scheme(job.id);
    pair.options.mode = parse_mode(job.spec.mode.empty() ? std::string(to_string(pair.alignment.mode)) : job.spec.mode);
    if (pair.options.mode == AlignmentMode::SemiGlobal && !job.spec.free_ends.empty())
        pair.options.free_ends = FreeEndGaps::parse(job.spec.free_ends);

    // The sets this window has read are normalised already (read_sequences).
    auto find = [&](const std::string& id, std::initializer_list<const char*> roles) -> const Sequence* {
        std::vector<store::JobInput> order;
        for (const char* role : roles)
            for (const auto& in : job.inputs)
                if (in.role == role) order.push_back(in);
        for (const auto& in : job.inputs) order.push_back(in);
        for (const auto& in : order) {
            const SequenceInput* input = document().input(in.input_id);
            if (!input || !input->set) continue;
            for (const Sequence& s : input->set->records)
                if (s.id == id) return &s;
        }
        return nullptr;
    };
    const Sequence* query = find(pair.alignment.query_id, {"query"});
    const Sequence* target = find(pair.alignment.target_id, {"target", "database"});
    if (!query || !target) {
        // Not read yet (or not found): the project's own copy, or its error.
        return aligned_pair_from_project(*project, job.id, row);
    }
    pair.query = *query;
    pair.target = *target;
    return pair;
}

QString JobResultView::jobTitle(const store::JobInfo& job) const {
    QString what = JobsModel::scoringText(job.spec);
    if (job.spec.parameters.count("search")) what = tr("database search, ") + what;
    else if (job.spec.parameters.count("long") && job.spec.command != "bench")
        what = tr("long pair, ") + QString::fromStdString(job.spec.mode) + ", " + what;
    else if (!job.spec.mode.empty())
        what = QString::fromStdString(job.spec.mode) + ", " + what;
    return tr("Job %1 (%2, %3)").arg(job.id).arg(what, QString::fromStdString(job.spec.devices));
}

}  // namespace alignscope::ui
