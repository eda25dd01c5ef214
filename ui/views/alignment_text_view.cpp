// AlignmentTextView: a page of store alignments through the pair writer.
#include "views/alignment_text_view.hpp"

#include "models/jobs_model.hpp"
#include "project_document.hpp"

#include <alignscope/io/alignment_format.hpp>

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include <sstream>

namespace alignscope::ui {

AlignmentTextView::AlignmentTextView(ProjectDocument& document, QWidget* parent) : ResultView(document, parent) {
    title_ = new QLabel(this);
    title_->setObjectName("alignmentTitle");
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    range_ = new QLabel(this);
    previous_ = new QToolButton(this);
    previous_->setArrowType(Qt::LeftArrow);
    previous_->setToolTip(tr("Previous %1 alignments").arg(page_size));
    next_ = new QToolButton(this);
    next_->setArrowType(Qt::RightArrow);
    next_->setToolTip(tr("Next %1 alignments").arg(page_size));
    text_ = new QPlainTextEdit(this);
    text_->setObjectName("alignmentText");
    text_->setReadOnly(true);
    text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    text_->setFont(mono);

    auto* bar = new QHBoxLayout;
    bar->addWidget(title_, 1);
    bar->addWidget(previous_);
    bar->addWidget(range_);
    bar->addWidget(next_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(text_);

    connect(previous_, &QToolButton::clicked, this, [this] { showPage(std::max<qint64>(0, first_ - page_size)); });
    connect(next_, &QToolButton::clicked, this, [this] { showPage(first_ + std::max<qint64>(1, page_shown_)); });
    // A running job's alignments appear as the project records them.
    connect(&document, &ProjectDocument::jobsChanged, this, [this] {
        const store::JobInfo* job = this->document().job(job_id_);
        if (job && job->counts.alignments != shown_count_) refresh();
    });
    connect(&document, &ProjectDocument::opened, this, [this] { showJob(0); });
    showJob(0);
}

void AlignmentTextView::showJob(qint64 jobId) {
    job_id_ = jobId;
    first_ = 0;
    refresh();
}

void AlignmentTextView::showPage(qint64 first) {
    first_ = first;
    refresh();
}

void AlignmentTextView::refresh() {
    const store::JobInfo* job = job_id_ ? document().job(job_id_) : nullptr;
    store::Project* project = document().project();
    previous_->setEnabled(false);
    next_->setEnabled(false);
    range_->clear();
    shown_count_ = job ? job->counts.alignments : -1;
    if (!job || !project) {
        title_->setText(tr("No job chosen: double-click a job in the Jobs list."));
        text_->clear();
        return;
    }
    std::map<qint64, QString> names;
    for (const auto& input : document().inputs()) names[input.info.id] = input.label();
    title_->setText(tr("Job %1: %2 %3, %4 on %5")
                        .arg(job->id)
                        .arg(QString::fromStdString(job->spec.mode), JobsModel::scoringText(job->spec),
                             JobsModel::inputsText(*job, names), QString::fromStdString(job->spec.devices)));
    if (job->counts.alignments == 0) {
        text_->setPlainText(tr("Job %1 holds no alignments (%2).")
                                .arg(job->id)
                                .arg(QString::fromUtf8(store::to_string(job->state).data())));
        return;
    }
    first_ = std::clamp<qint64>(first_, 0, job->counts.alignments - 1);
    std::ostringstream out;
    try {
        const store::Page<Alignment> page = project->alignments(job->id, first_, page_size);
        WriterContext context;
        context.program = "alignscope";
        context.scheme = job->spec.scheme();
        auto writer = AlignmentWriter::create(OutputFormat::Pair, out, std::move(context));
        qint64 shown = 0;
        for (const Alignment& a : page.rows) {
            // The pair writer prints what the alignment carries; the records
            // only name the sequences.
            Sequence query, target;
            query.id = a.query_id;
            target.id = a.target_id;
            writer->write(a, query, target);
            ++shown;
            // Laying out text is the GUI thread's work: long alignments make
            // shorter pages, so a page never holds up the window.
            if (out.tellp() > page_characters) break;
        }
        writer->end();
        page_shown_ = shown;
        range_->setText(tr("%1–%2 of %3").arg(first_ + 1).arg(first_ + shown).arg(job->counts.alignments));
        previous_->setEnabled(first_ > 0);
        next_->setEnabled(first_ + shown < job->counts.alignments);
    } catch (const std::exception& e) {
        out << "The alignments of job " << job->id << " cannot be read: " << e.what() << "\n";
    }
    text_->setPlainText(QString::fromStdString(out.str()));
}

}  // namespace alignscope::ui
