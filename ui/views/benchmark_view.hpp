// The window's GCUPS view (id "gcups"): the GCUPS curves (views/gcups) of a
// bench job, or, when the chosen job has no benchmark points (and for
// --screenshot without --job), the project's whole benchmark series. Its
// "Compare CPU and GPU" action runs on the application's devices, and every
// point it measures is recorded in the project as a bench job, so it outlives
// the window like any other result.
#pragma once

#include "views/job_result_view.hpp"

#include "views/gcups/gcups_view.hpp"

#include <alignscope/store/job_recording.hpp>

#include <memory>

namespace alignscope {
class DeviceRegistry;
}

namespace alignscope::ui {

class BenchmarkView : public JobResultView {
    Q_OBJECT
public:
    BenchmarkView(ProjectDocument& document, QWidget* parent = nullptr);
    ~BenchmarkView() override;

    bool canShow(const store::JobInfo& job) const override { return job.counts.bench_points > 0; }
    qint64 defaultJob(const std::vector<store::JobInfo>& jobs) const override;

    // The devices "Compare CPU and GPU" measures; the registry outlives the view.
    void setDeviceRegistry(DeviceRegistry* registry);
    GcupsView& gcups() const { return *gcups_; }
    bool comparing() const;
    // "Compare CPU and GPU" with these settings (the button uses the defaults);
    // nothing happens without a device registry.
    void compare(const BenchOptions& options = default_comparison_options());
    // The project job the running (or last) comparison is recorded as; 0 when none.
    qint64 comparisonJob() const { return comparison_job_; }

signals:
    void comparingChanged(bool comparing);

protected:
    void load(const store::JobInfo* job) override;
    QString projectSignature() const override;

private:
    void comparisonStarted(const BenchOptions& options);
    void comparisonEnded(store::JobState state, const QString& message);

    GcupsView* gcups_ = nullptr;
    DeviceRegistry* registry_ = nullptr;
    std::unique_ptr<store::JobRecording> recording_;
    qint64 comparison_job_ = 0;
};

}  // namespace alignscope::ui
