#ifndef CLBAYES_BATCHED_THREAD_SCRATCH_HPP
#define CLBAYES_BATCHED_THREAD_SCRATCH_HPP

// Scratch matrices for CPU paths that run items in parallel
// (for_each_item), one set per OpenMP thread, kept between calls. A sampler
// calls the same evaluator thousands of times; a fresh n x n matrix per
// item costs the page faults of mapping it, which on the dev machine took
// longer than factoring it (about 6 ms against 2.5 ms at n = 500,
// RESULTS.md, "GP gradient on the CPU"). Not for concurrent calls from
// threads of one's own: one owner, one call at a time.

#include "../eigen.hpp"

#include <cstddef>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace clbayes {
namespace batched {

class thread_scratch {
 public:
  /** `per_thread` matrices for each thread. */
  explicit thread_scratch(int per_thread) : per_thread_(per_thread) {}

  /** Room for every thread of the next parallel loop; call outside it. */
  void prepare() {
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    const std::size_t want = static_cast<std::size_t>(threads) * per_thread_;
    if (sets_.size() < want) sets_.resize(want);
  }

  /** Matrix k of the calling thread, rows x cols (contents undefined). */
  Eigen::MatrixXd& get(int k, Eigen::Index rows, Eigen::Index cols) {
#ifdef _OPENMP
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    Eigen::MatrixXd& m = sets_[static_cast<std::size_t>(t) * per_thread_ + k];
    if (m.rows() != rows || m.cols() != cols) m.resize(rows, cols);
    return m;
  }

 private:
  int per_thread_;
  std::vector<Eigen::MatrixXd> sets_;
};

}  // namespace batched
}  // namespace clbayes

#endif
