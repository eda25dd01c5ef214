// A table model whose rows come from the project a page at a time as the view
// scrolls (canFetchMore/fetchMore): keyset reads from the row after the last
// one read, so a job of millions of rows opens at once. The job's alignment
// list and hit table are two of these; they say how a page is read and how a
// row is shown.
#pragma once

#include <alignscope/store/results.hpp>

#include <QAbstractTableModel>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace alignscope::ui {

template <class Row>
class KeysetPageModel : public QAbstractTableModel {
public:
    // Rows [from, from + limit) of the source as the model keeps them, with
    // whether more follow (store::Project's paged reads, rows converted).
    using PageReader = std::function<store::Page<Row>(std::int64_t from, int limit)>;

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : static_cast<int>(rows_.size());
    }

    bool canFetchMore(const QModelIndex& parent) const override { return !parent.isValid() && read_ && more_; }

    void fetchMore(const QModelIndex& parent) override {
        if (!canFetchMore(parent)) return;
        store::Page<Row> page = read_(next_, page_size_);
        more_ = page.more;
        next_ = page.next();
        if (page.rows.empty()) {
            more_ = false;
            return;
        }
        const int first = rowCount();
        beginInsertRows({}, first, first + static_cast<int>(page.rows.size()) - 1);
        rows_.reserve(rows_.size() + page.rows.size());
        for (Row& row : page.rows) rows_.push_back(std::move(row));
        endInsertRows();
    }

    // Loads pages until `row` is in the model (false when the source has no such row).
    bool ensureRow(std::int64_t row) {
        while (row >= static_cast<std::int64_t>(rows_.size()) && canFetchMore({})) fetchMore({});
        return row >= 0 && row < static_cast<std::int64_t>(rows_.size());
    }

protected:
    // Inside beginResetModel/endResetModel: no rows, and pages of `page_size`
    // from `read` when `any` (the source holds rows), from its first row on.
    void startPaging(PageReader read, bool any, int page_size) {
        rows_.clear();
        read_ = std::move(read);
        next_ = 0;
        more_ = any && read_;
        page_size_ = std::max(page_size, 1);
    }
    // Inside beginResetModel/endResetModel: rows given whole, no pages to read.
    void setAllRows(std::vector<Row> rows) {
        read_ = nullptr;
        more_ = false;
        rows_ = std::move(rows);
    }

    std::vector<Row> rows_;

private:
    PageReader read_;
    std::int64_t next_ = 0;
    bool more_ = false;
    int page_size_ = 500;
};

}  // namespace alignscope::ui
