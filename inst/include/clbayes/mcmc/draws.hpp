#ifndef CLBAYES_MCMC_DRAWS_HPP
#define CLBAYES_MCMC_DRAWS_HPP

// The draws of a run, in one layout. Kept draws are on the target's
// variables x, iteration x chain x variable with the first index fastest
// (R's array, posterior's draws_array). Warmup draws are kept as they come,
// one row per iteration and chain (iteration-major: row i n + c), on the
// unconstrained scale u: warmup can grow (slice's extension), a slow
// window's rows are one contiguous block for the metric (which is
// estimated on u), and x is computed from u only when the warmup draws are
// asked for, in the kept draws' layout.

#include <clbayes/eigen.hpp>
#include <clbayes/mcmc/coordinates.hpp>

#include <cstddef>
#include <vector>

namespace clbayes {
namespace mcmc {

class draws_store {
 public:
  draws_store(int chains, int dim, int n_iter, int warmup)
      : n_(chains), k_(dim), n_iter_(n_iter) {
    kept_.assign(static_cast<std::size_t>(n_iter) * n_ * k_, 0.0);
    warm_.reserve(static_cast<std::size_t>(warmup) * n_ * k_);
  }

  /** Where draw i of chain c, variable j lies in a store of `rows`
   *  iterations (iteration x chain x variable, first index fastest). */
  std::size_t index(int i, int c, int j, int rows) const {
    return static_cast<std::size_t>(i) +
           static_cast<std::size_t>(rows) *
               (static_cast<std::size_t>(c) + static_cast<std::size_t>(n_) * j);
  }

  /** Kept iteration i: the chains' points x (chains x dim). */
  void keep(int i, const Eigen::MatrixXd& x) {
    for (int j = 0; j < k_; ++j)
      for (int c = 0; c < n_; ++c) kept_[index(i, c, j, n_iter_)] = x(c, j);
  }

  /** The next warmup iteration: the chains' points u (chains x dim). */
  void add_warmup(const Eigen::MatrixXd& u) {
    for (int c = 0; c < n_; ++c)
      for (int j = 0; j < k_; ++j) warm_.push_back(u(c, j));
  }

  /** Warmup iterations stored. */
  int warmup_rows() const { return static_cast<int>(warm_.size() / row_size()); }

  /** u of warmup iteration i, chain c, variable j. */
  double warm_u(int i, int c, int j) const {
    return warm_[(static_cast<std::size_t>(i) * n_ + static_cast<std::size_t>(c)) * k_ +
                 static_cast<std::size_t>(j)];
  }

  /** The rows u of warmup iterations [from, to), all chains: row
   *  (i - from) n + c is iteration i of chain c. */
  Eigen::MatrixXd warmup_block(int from, int to) const {
    using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    return Eigen::Map<const row_major>(warm_.data() + static_cast<std::size_t>(from) * row_size(),
                                       static_cast<Eigen::Index>(to - from) * n_, k_);
  }

  const std::vector<double>& kept() const { return kept_; }

  /** The warmup draws on x, in the kept draws' layout. */
  std::vector<double> warmup_on_x(const coordinates& coord) const {
    const int rows = warmup_rows();
    const support& b = coord.bounds();
    std::vector<double> out(warm_.size());
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < n_; ++c)
        for (int j = 0; j < k_; ++j) {
          const double u = warm_u(i, c, j);
          out[index(i, c, j, rows)] = coord.unbounded() ? u : b.to_x(j, u);
        }
    return out;
  }

 private:
  int n_, k_, n_iter_;
  std::vector<double> kept_;
  std::vector<double> warm_;  // row i n + c: warmup iteration i of chain c, on u

  std::size_t row_size() const { return static_cast<std::size_t>(n_) * k_; }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
