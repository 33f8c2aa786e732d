// Glue for the batched routines (R/batched.R): copy R's arrays (R values are
// never modified), call the core, hand back the result and per-item status.

#include "glue_models.hpp"

#include <clbayes/batched/apply_op.hpp>
#include <clbayes/batched/chol_batched.hpp>
#include <clbayes/batched/gp_loglik.hpp>
#include <clbayes/batched/solve_batched.hpp>

#include <string>
#include <utility>
#include <vector>

namespace {

Rcpp::IntegerVector as_status(const std::vector<int>& info) {
  return Rcpp::IntegerVector(info.begin(), info.end());
}

#ifdef CLBAYES_OPENCL
// The selected device's batched settings with the named `values` in place
// of its own (serial_max_m, team_size_max, blocked_min_m, gp_blocked_min_n,
// blocked_nb, blocked_rows, blocked_tile, blocked_wpt): the tests reach the
// blocked paths at small sizes so (R/batched.R, .chol_batched and
// .gp_loglik_batched). Empty: the device's settings.
clbayes::batched::batched_settings settings_with(const Rcpp::IntegerVector& values) {
  clbayes::batched::batched_settings s = clbayes::batched::tuned_settings();
  if (values.size() == 0) return s;
  const std::vector<std::pair<const char*, int*>> fields = {
      {"serial_max_m", &s.serial_max_m},       {"team_size_max", &s.team_size_max},
      {"blocked_min_m", &s.blocked_min_m},     {"gp_blocked_min_n", &s.gp_blocked_min_n},
      {"blocked_nb", &s.blocked_nb},           {"blocked_rows", &s.blocked_rows},
      {"blocked_tile", &s.blocked_tile},       {"blocked_wpt", &s.blocked_wpt}};
  if (Rf_isNull(values.names())) Rcpp::stop("batched settings must be named");
  const Rcpp::CharacterVector names(values.names());
  for (R_xlen_t k = 0; k < values.size(); ++k) {
    const std::string key = Rcpp::as<std::string>(names[k]);
    int* field = nullptr;
    for (const auto& f : fields)
      if (key == f.first) field = f.second;
    if (field == nullptr) Rcpp::stop("unknown batched setting `%s`", key);
    // blocked_nb 0: the width chosen by size (blocked_width_for)
    const int lowest = key == "blocked_nb" ? 0 : 1;
    if (values[k] == NA_INTEGER || values[k] < lowest)
      Rcpp::stop("batched setting `%s` must be a whole number of at least %d", key, lowest);
    *field = values[k];
  }
  return s;
}
#endif

}  // namespace

// Index (1-based) of the first item of the m x m x B array a that is not
// symmetric, or 0.
// [[Rcpp::export(.cpp_first_asymmetric)]]
int cpp_first_asymmetric(Rcpp::NumericVector a, int m, int B) {
  return static_cast<int>(clbayes::batched::first_asymmetric(a.begin(), m, B) + 1);
}

// settings: named values for settings_with() (the device path only).
// [[Rcpp::export(.cpp_chol_batched)]]
Rcpp::List cpp_chol_batched(Rcpp::NumericVector a, int m, int B, bool device,
                            Rcpp::IntegerVector settings) {
  Rcpp::NumericVector x = Rcpp::clone(a);
  std::vector<int> info;
  if (device) {
#ifdef CLBAYES_OPENCL
    info = clbayes::batched::chol_batched_device(x.begin(), m, B, settings_with(settings));
#else
    (void)settings;
    glue::stop_no_opencl();
#endif
  } else {
    info = clbayes::batched::chol_batched_cpu(x.begin(), m, B);
  }
  return Rcpp::List::create(Rcpp::Named("factor") = x, Rcpp::Named("info") = as_status(info));
}

// [[Rcpp::export(.cpp_solve_batched)]]
Rcpp::List cpp_solve_batched(Rcpp::NumericVector a, Rcpp::NumericVector b, int m, int r,
                             int B, bool device) {
  Rcpp::NumericVector lu = Rcpp::clone(a);
  Rcpp::NumericVector x = Rcpp::clone(b);
  std::vector<int> info;
  if (device) {
#ifdef CLBAYES_OPENCL
    info = clbayes::batched::solve_batched_device(lu.begin(), x.begin(), m, r, B);
#else
    glue::stop_no_opencl();
#endif
  } else {
    info = clbayes::batched::solve_batched_cpu(lu.begin(), x.begin(), m, r, B);
  }
  return Rcpp::List::create(Rcpp::Named("solution") = x, Rcpp::Named("info") = as_status(info));
}

// [[Rcpp::export(.cpp_gp_data)]]
SEXP cpp_gp_data(Rcpp::NumericVector y, Rcpp::NumericMatrix X, Rcpp::NumericMatrix coords) {
  if (X.nrow() != y.size()) Rcpp::stop("`X` must have one row per value of `y`");
  if (coords.nrow() != y.size()) Rcpp::stop("`coords` must have one row per value of `y`");
  Rcpp::XPtr<clbayes::batched::gp_loglik> ptr(
      new clbayes::batched::gp_loglik(y.begin(), X.begin(), y.size(), X.ncol(),
                                      coords.begin(), coords.ncol()),
      true);
  return ptr;
}

// settings: named values for settings_with() (the device path only).
// [[Rcpp::export(.cpp_gp_loglik)]]
Rcpp::NumericVector cpp_gp_loglik(SEXP data, Rcpp::NumericVector beta,
                                  Rcpp::NumericMatrix theta, std::string cov, bool device,
                                  Rcpp::IntegerVector settings) {
  clbayes::batched::gp_loglik* model = &glue::as_gp_loglik(data, "y");
  if (beta.size() != model->p())
    Rcpp::stop("`beta` must have length ncol(X) = %d", model->p());
  if (theta.ncol() != 3) Rcpp::stop("`theta` must have 3 columns (kappa, psi, phi)");
  const clbayes::batched::covariance kind =
      cov == "exponential" ? clbayes::batched::covariance::exponential
                           : clbayes::batched::covariance::squared_exponential;
  std::vector<double> out;
  if (device) {
#ifdef CLBAYES_OPENCL
    model->check_arguments(beta.begin(), theta.begin(), theta.nrow());
    out = model->evaluate_device(beta.begin(), theta.begin(), theta.nrow(), kind,
                                 settings_with(settings));
#else
    (void)settings;
    glue::stop_no_opencl();
#endif
  } else {
    out = model->evaluate(beta.begin(), theta.begin(), theta.nrow(), kind, false);
  }
  return Rcpp::NumericVector(out.begin(), out.end());
}

// [[Rcpp::export(.cpp_gp_data_dims)]]
Rcpp::IntegerVector cpp_gp_data_dims(SEXP data) {
  const clbayes::batched::gp_loglik& model = glue::as_gp_loglik(data, "x");
  return Rcpp::IntegerVector::create(model.n(), model.p(), model.d());
}

// One batched device function over a batch, for the tests (R/batched.R,
// batched_device_op). Returns the new a and c, the status and the pivots.
// [[Rcpp::export(.cpp_batched_op)]]
Rcpp::List cpp_batched_op(std::string op, Rcpp::NumericVector a, Rcpp::NumericVector b,
                          Rcpp::NumericVector c, int m, int r, int B, bool team,
                          bool interleaved, bool use_local, bool unit, double alpha,
                          double beta) {
#ifdef CLBAYES_OPENCL
  clbayes::batched::op_options o;
  o.team = team;
  o.interleaved = interleaved;
  o.use_local = use_local;
  o.unit = unit;
  o.alpha = alpha;
  o.beta = beta;
  Rcpp::NumericVector ra = Rcpp::clone(a), rc = Rcpp::clone(c);
  std::vector<int> res = clbayes::batched::apply_op_device(op, o, m, r, B, ra.begin(),
                                                           b.begin(), rc.begin());
  return Rcpp::List::create(
      Rcpp::Named("a") = ra, Rcpp::Named("c") = rc,
      Rcpp::Named("info") = Rcpp::IntegerVector(res.begin(), res.begin() + B),
      Rcpp::Named("piv") = Rcpp::IntegerVector(res.begin() + B, res.end()));
#else
  (void)op; (void)a; (void)b; (void)c; (void)m; (void)r; (void)B; (void)team;
  (void)interleaved; (void)use_local; (void)unit; (void)alpha; (void)beta;
  glue::stop_no_opencl();
#endif
}
