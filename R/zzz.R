#' clbayes: fast Bayesian computation on OpenCL devices
#'
#' clbayes fits Bayesian models as rstanarm writes them, and samples any
#' density written in R, with many chains advanced together: every chain's
#' point goes to the model (or the R function) in one call, evaluated in
#' one pass over the data on an OpenCL device (a GPU first) or on the CPU,
#' with the same answers on both. The fits plug into rstantools, posterior,
#' loo and bayesplot as rstanarm's do.
#'
#' @section Models:
#' * [glm_model()] and [lm_model()]: a formula, a family and priors as
#'   rstanarm takes them ([normal()], [student_t()], [cauchy()],
#'   [exponential()]), with lme4's group-level terms such as `(x | g)` and
#'   the covariance priors [decov()] and [lkj()];
#' * [gp_model()]: Gaussian-process regression;
#' * any R function returning one log density per row of a matrix of
#'   points (taped for its gradient with RTMB installed).
#'
#' @section Samplers:
#' * [hmc_sample_mv()]: many-chain HMC (ChEES), the first choice for models
#'   with a gradient (it had the higher ES/s on most real data sets; see
#'   the README's "Which sampler");
#' * [slice_sample_mv()]: gradient-free parallel slice sampling.
#'
#' Both take rstan's `iter` (warmup included), `warmup`, `chains`, `thin`,
#' `seed`, `init`, `refresh` and `control`, keep about 4000 draws by
#' default, warn as rstan does, and run chains in groups under
#' [future::plan()] (`chain_groups`, `devices`).
#'
#' @section After the fit:
#' `print()` and `summary()` ([clbayes_fit]), rstantools' generics
#' ([posterior_predict()], [log_lik()], [posterior_interval()],
#' [bayes_R2()], ...: [rstantools-methods]), posterior's `as_draws_*()`,
#' loo's `loo()` and bayesplot's `pp_check()` ([draws-methods]), base R's
#' `fitted()`, `vcov()`, `update()` ... ([base-methods]), and for multilevel
#' models [fixef()], [ranef()], [VarCorr()].
#'
#' @section Devices and backends:
#' At load, clbayes selects the device named by the environment variables
#' `CLBAYES_PLATFORM` and `CLBAYES_DEVICE` (0-based indices, as printed by
#' `clinfo -l` and [gpu_devices()]) or, when they are unset, the first GPU
#' with double precision, then the first device of any type with double
#' precision. [gpu_select()] changes the choice. Numeric functions take a
#' `backend` argument, `"auto"`, `"opencl"` or `"cpu"`, whose default is
#' `getOption("clbayes.backend", "auto")` (see [backends]). The device
#' functions themselves: [gpu_matrix()], [gpu_chol()], [gpu_glm_lp()],
#' [gpu_sum()], [gpu_chol_batched()] and their relatives.
#'
#' @section Options:
#' * `clbayes.backend`: the default `backend`;
#' * `clbayes.threshold.<function>`: sizes above which `"auto"` uses the
#'   device;
#' * `clbayes.memory_limit`: the most bytes a sampler may hold;
#' * `clbayes.check_convergence`: `FALSE` turns off the R-hat and ESS
#'   warnings at the end of a run;
#' * `clbayes.tape`: `FALSE` turns off the taping of R densities.
#'
#' @section Vignettes:
#' `browseVignettes("clbayes")`: "Getting started with clbayes", "Logistic
#' regression on the GPU", "Gaussian-process regression and parallel slice
#' sampling", "Models written in R, without a gradient", "Accurate sums".
#'
#' @useDynLib clbayes, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @import methods
"_PACKAGE"

.onLoad <- function(libname, pkgname) {
  op <- options()
  defaults <- list(clbayes.backend = "auto")
  toset <- !(names(defaults) %in% names(op))
  if (any(toset)) options(defaults[toset])
  .clbayes_state$load_error <- NULL
  tryCatch(.cpp_init_device(), error = function(e) {
    .clbayes_state$load_error <- conditionMessage(e)
  })
  invisible()
}

.onAttach <- function(libname, pkgname) {
  if (!is.null(.clbayes_state$load_error)) {
    packageStartupMessage(
      "clbayes: no OpenCL device selected at load: ",
      .clbayes_state$load_error
    )
  }
}

.clbayes_state <- new.env(parent = emptyenv())
