#ifndef CLBAYES_OPENCL_MATRIX_CL_HPP
#define CLBAYES_OPENCL_MATRIX_CL_HPP

// A column-major matrix of doubles in device memory (stan-opencl.txt,
// section 2.2): the buffer, its dimensions, its triangular view and two event
// lists. Kernels launched through kernel_cl wait on and record these events,
// so that every operation on the matrix is ordered after exactly the earlier
// operations it depends on.
//
// Invariant: the elements outside the view are zero in the buffer as well,
// so a kernel that ignores the view still computes the right thing; a kernel
// that knows the view may skip them.

#include "context.hpp"
#include "matrix_view.hpp"
#include "memory.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

class matrix_cl {
 public:
  matrix_cl() = default;

  /** Allocate rows x cols doubles on the selected device (not initialised). */
  matrix_cl(int rows, int cols, matrix_view view = matrix_view::entire)
      : rows_(rows), cols_(cols), view_(view) {
    if (rows < 0) throw invalid_argument("rows", "must be non-negative");
    if (cols < 0) throw invalid_argument("cols", "must be non-negative");
    if (view != matrix_view::entire && rows != cols)
      throw invalid_argument("view", std::string("\"") + view_name(view) +
                                         "\" needs a square matrix");
    context& ctx = context::instance();
    ctx.require_device();
    generation_ = ctx.generation();
    if (size() > 0) {
      const double bytes = sizeof(double) * static_cast<double>(size());
      const std::string what = "a " + format_dims(rows, cols) + " device matrix";
      check_device_allocation(bytes, what);
      buffer_ = std::make_shared<const device_buffer>(
          sizeof(double) * static_cast<std::size_t>(size()), what);
    }
  }

  matrix_cl(const matrix_cl&) = delete;
  matrix_cl& operator=(const matrix_cl&) = delete;
  matrix_cl(matrix_cl&&) = default;
  matrix_cl& operator=(matrix_cl&&) = default;

  /** A second handle on the same buffer, with its own empty event lists:
   *  for an algorithm that orders its work on disjoint parts of one matrix
   *  itself, on two queues (the look-ahead Cholesky), so that launches on
   *  one part do not wait for the other. The caller must make the alias
   *  wait for this matrix's pending events, and this matrix for the
   *  alias's work when done (linalg/cholesky_panel.hpp). */
  matrix_cl alias() const {
    matrix_cl a;
    a.buffer_ = buffer_;
    a.rows_ = rows_;
    a.cols_ = cols_;
    a.view_ = view_;
    a.generation_ = generation_;
    return a;
  }

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  long long size() const {
    return static_cast<long long>(rows_) * static_cast<long long>(cols_);
  }
  matrix_view view() const { return view_; }
  void set_view(matrix_view v) { view_ = v; }
  const cl::Buffer& buffer() const {
    static const cl::Buffer none;
    return buffer_ ? buffer_->get() : none;
  }
  unsigned generation() const { return generation_; }

  /** True when the matrix was allocated on the device selected now. */
  bool on_current_device() const {
    return generation_ == context::instance().generation();
  }

  /** Throws unless the matrix belongs to the selected device. */
  void check_device(const char* arg) const {
    if (!on_current_device())
      throw invalid_argument(arg, "lives on an OpenCL device that is no longer "
                                  "selected; create it again after gpu_select()");
  }

  const std::vector<cl::Event>& write_events() const { return write_events_; }
  const std::vector<cl::Event>& read_events() const { return read_events_; }

  /** Events a writer must wait for: every pending read and write. */
  std::vector<cl::Event> read_write_events() const {
    std::vector<cl::Event> all(read_events_);
    all.insert(all.end(), write_events_.begin(), write_events_.end());
    return all;
  }

  /** Record a pending read; completed reads are pruned so lists stay short. */
  void add_read_event(const cl::Event& e) const {
    prune(read_events_);
    read_events_.push_back(e);
  }

  /** Record a pending write. The writer waited for every earlier read and
   *  write, so it alone now stands for all of them. */
  void add_write_event(const cl::Event& e) const {
    read_events_.clear();
    write_events_.assign(1, e);
  }

  /** Block the host until every pending operation on the matrix is done. */
  void wait() const {
    std::vector<cl::Event> all = read_write_events();
    if (!all.empty()) cl::Event::waitForEvents(all);
    read_events_.clear();
    write_events_.clear();
  }

 private:
  static void prune(std::vector<cl::Event>& events) {
    events.erase(std::remove_if(events.begin(), events.end(), event_complete), events.end());
  }

  // Shared by aliases; back to the pool with the last of them (memory.hpp).
  std::shared_ptr<const device_buffer> buffer_;
  int rows_ = 0;
  int cols_ = 0;
  matrix_view view_ = matrix_view::entire;
  unsigned generation_ = 0;
  mutable std::vector<cl::Event> write_events_;
  mutable std::vector<cl::Event> read_events_;
};

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
