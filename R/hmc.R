#' Many-chain Hamiltonian Monte Carlo (ChEES-HMC)
#'
#' Draws from a density known up to a constant, given its gradient, with
#' ChEES-HMC (Hoffman, Radul and Sountsov 2021): many chains advance
#' together with one step size and one trajectory length, so every leapfrog
#' step asks for the log density and gradient of all chains in ONE call of
#' `log_density` and `gradient` (or one batched pass of a model over its
#' data). The step size, trajectory length and metric are adapted across
#' the chains in warmup and then fixed.
#'
#' @section Algorithm:
#' Each iteration draws fresh standard normal momenta for every chain, runs
#' `L` leapfrog steps of size `step_size` and accepts each chain's end point
#' with the Metropolis probability `min(1, exp(-energy error))`. The
#' trajectory length of iteration `i` is `h_i * trajectory_length`, with
#' `h_i` the base-2 Halton sequence in (0, 1) (the same for every chain),
#' and `L = ceiling(h_i * trajectory_length / step_size)`, at most
#' `max_leapfrog`. Warmup follows Stan's windows (an initial fast buffer of
#' 75 iterations, slow windows that double from 25, a terminal buffer of
#' 50; 15% / 75% / 10% of a shorter warmup):
#' * step size: dual averaging (Hoffman and Gelman 2014, Algorithm 5, with
#'   Stan's constants) of the acceptance probability averaged over the
#'   chains towards `adapt_delta`, restarted after each new metric from
#'   Stan's initial step size search; the averaged step size is kept.
#' * trajectory length: gradient ascent on the ChEES criterion (the change
#'   in the centred squared norm, `1/4 E[(|q' - E q|^2 - |q - E q|^2)^2]`,
#'   with `E q` the mean over the chains), by RMSProp in `log` length with
#'   learning rate 0.025 and the iterate average kept, as in the paper's
#'   reference implementation (TensorFlow Probability's
#'   `GradientBasedTrajectoryLengthAdaptation`).
#' * metric: at the end of each slow window, the (diagonal, or with
#'   `metric = "dense"` full) covariance of that window's draws pooled over
#'   all chains, on the unconstrained scale; with many chains even the first
#'   25-iteration window gives a usable estimate.
#'
#' @section Divergences:
#' A trajectory whose energy error exceeds 1000 or becomes non-finite (as in
#' Stan) is divergent: that chain stops moving for the rest of the
#' trajectory and its proposal is rejected. Divergences after warmup are
#' counted per chain (`n_divergent`) and reported with rstan's warning
#' (see "Warnings at the end of a run"); they mean
#' that the draws may miss part of the posterior (a funnel, a hard
#' boundary), and a higher `adapt_delta` (a smaller step size) or a
#' reparameterisation may help.
#'
#' @section Warnings at the end of a run:
#' As rstan's, with its wording and thresholds, for both samplers (one
#' function, `R/diagnostics.R`): divergent transitions after warmup;
#' transitions after warmup cut by `max_leapfrog` (the counterpart of
#' NUTS's `max_treedepth`); split R-hat above 1.05; bulk or tail ESS below
#' 100 per chain, at most 400 (rstan's bound for its 4 chains: the
#' defaults keep about 4000 draws whatever the number of chains, so 100 per
#' chain of 16 or 64 chains would flag every run).
#' `options(clbayes.check_convergence = FALSE)` turns the R-hat and ESS
#' warnings off (not those on divergences and the cap).
#'
#' @section Gradients and bounds:
#' For an R function, `gradient(points, ...)` must return a matrix with
#' one row per row of `points` and one column per variable: d log f / d x
#' on the variables' own scale. On the first call it is compared with
#' central finite differences of `log_density` at the initial points; a
#' mismatch is an error naming `gradient`, and so is a gradient that is NaN
#' or infinite at an initial point where the log density is finite (the
#' message gives the point and the variable). Later in the run such a
#' gradient ends that chain's trajectory as a divergence: the points are
#' counted (`n_bad_gradient` in the fit) and a warning names `gradient`.
#' Variables with `lower` or
#' `upper` bounds are sampled on an unconstrained scale (as in
#' [slice_sample_mv()]); the chain rule and the gradient of the log-Jacobian
#' are applied by the sampler, so `gradient` stays on the variables' scale.
#' Model objects supply their own gradient: [glm_model()] (and the formula
#' form of [lm_model()]) with the value in one pass over the data, on the
#' device where the model runs there; the matrix form of [lm_model()] from
#' `X'X`; [gp_model()] from one Cholesky factor per point, always on the
#' CPU (there is no device path for the GP gradient, so `backend` does not
#' move this model to the device). A function `log_density` without
#' `gradient` is taped (next section) when the RTMB package is installed,
#' and is otherwise an error that says so.
#'
#' @section Taped densities:
#' With the RTMB package installed, an R function `log_density` given
#' without `gradient` is recorded once by RTMB's automatic differentiation
#' (a tape, `RTMB::MakeTape()`), and every leapfrog step then evaluates the
#' value and gradient of all chains' points in one compiled pass: the tape
#' of the batch's sum, whose reverse pass gives each point's gradient. The
#' function may be written for the samplers (a points matrix in, one value
#' per row out, with `rowSums()`, `%*%`, `sweep()`, indexing) or, as in
#' Stan, of one parameter vector returning one number; data come through
#' its closure or `...`. What tapes: arithmetic and the Math functions,
#' matrix products, `chol()`, `solve()`, `diag()`, indexing and assignment
#' into vectors, `for` loops, `sapply()`/`apply()`, and RTMB's versions of
#' `dnorm()`, `dpois()`, `dbinom()`, `dgamma()`, `dbeta()`, `dt()`,
#' `plogis()`, `lgamma()` and the others RTMB documents (a function written
#' with them finds RTMB's versions by itself, as do the user's own
#' functions it calls). What does not: a branch on a parameter's value
#' (`if`, `ifelse()`, `max()`, `pmax()`: the tape would follow one branch
#' only), `vapply()` over parameters (use `sapply()` or a loop), a function
#' called as `stats::dnorm()` (call `dnorm()`), and functions with no AD
#' version. Such a function gets an error that names the construct, and
#' asks for `gradient`. Bounds need no branch: give `lower`/`upper`; the
#' transform and its Jacobian stay outside the tape. Before sampling the
#' tape's values are compared with the R function's, and its gradient with
#' central finite differences of the R function, at the initial points: a
#' tape that disagrees is never used. A point where the tape fails (a
#' Cholesky factor of a matrix that is not positive definite, far out in
#' an early trajectory) is read as `NaN`, so outside the support, with a
#' warning naming the first such point. The R function runs only while it
#' is taped and checked (a few calls), never per point after: what it does
#' besides computing (printing, counting calls) happens then only. The
#' tape is made again in each
#' chain group's worker (an external pointer does not travel). The fit
#' says `taped = TRUE`; `options(clbayes.tape = FALSE)` turns taping off.
#' On eight schools and three larger models see `bench/RESULTS-taped.md`.
#'
#' @section Choices and evidence:
#' * `chains = 16`: the adaptation averages over chains, and 16 chains give
#'   400 draws in the first 25-iteration metric window; each chain costs one
#'   more row in every call, so with a vectorised density more chains mostly
#'   buy more draws.
#' * `n_iter = ceiling(4000 / chains)` (16 x 250): about 4000 kept draws
#'   in all, rstanarm's size, so that `log_lik()` and `loo()` of a fit need
#'   what rstanarm's need (at 16 x 1000, `log_lik()` on rstanarm's `wells`
#'   took 369 MB; issue 47). On a 10-d Gaussian with correlation
#'   0.5^|i - j| (seed 1) the defaults gave bulk ESS 2050-2680 and tail
#'   ESS 2020-2360, above rstan's bound of 400.
#' * `adapt_delta = 0.75`: the target of TensorFlow Probability's dual
#'   averaging, which the ChEES paper's implementation uses.
#' * `metric = "diagonal"`, as in Stan: on the 10^4 x 100 logistic
#'   regression of `bench/bench_hmc.R` it gave 13.0 gradients per
#'   effective sample overall against 14.0 for `"dense"`; `"dense"` pays on
#'   strongly correlated posteriors (41 against 2.5 after warmup on a
#'   10-dimensional Gaussian with correlation 0.5 and sds from 0.1 to 10).
#' * On that logistic regression (R density and gradient, one matrix
#'   product for all chains) ChEES-HMC needed 15 gradients per effective
#'   sample against 19 for rstan's NUTS in the same run, but each gradient
#'   through R's reference BLAS cost several times Stan's, so NUTS had the
#'   higher ES/s there; see the project's `bench/RESULTS.md`, "Sampling".
#' * On the Gaussian-process posterior of [gp_model()] (Example 2, 500
#'   locations, dev CPU, one thread) ChEES-HMC with the model's gradient, at
#'   about 2.5 densities' cost each, reached 1.1 times the slice sampler's
#'   minimum ES/s in the same run; see the project's `bench/RESULTS.md`,
#'   "GP gradient on the CPU".
#'
#' @references
#' Hoffman, M. D., Radul, A. and Sountsov, P. (2021). An adaptive MCMC
#' scheme for setting trajectory lengths in Hamiltonian Monte Carlo.
#' *AISTATS*, PMLR 130, 3907-3915.
#'
#' Hoffman, M. D. and Gelman, A. (2014). The No-U-Turn sampler. *JMLR* 15,
#' 1593-1623.
#'
#' Stan Reference Manual, "HMC algorithm parameters" (adaptation windows,
#' step size search, divergences).
#'
#' @inheritParams slice_sample_mv
#' @param log_density An R function of a numeric matrix (one point per row)
#'   returning one log density per row, or of one parameter vector
#'   returning one number (taped: see "Taped densities"); or a model
#'   object: [glm_model()], [lm_model()] or [gp_model()].
#' @param init Initial point, in any of rstan's forms: `"random"` (as
#'   `NULL`), `0` or `"0"` for a model (every coordinate 0 on the
#'   unconstrained scale), a function of `chain_id` returning one chain's
#'   values (a named list or vector), a list with one such element per
#'   chain; or a numeric vector (every chain starts there,
#'   moved by a uniform draw on (-0.1, 0.1) per variable on the
#'   unconstrained scale so that chains differ; a moved point without a
#'   finite density goes back to `init`), or a matrix with one row per chain
#'   (used as given). `NULL`: the model's `init` (for a model object).
#' @param gradient For an R function `log_density`: an R function of the
#'   same points matrix (and `...`) returning the gradients as a matrix of
#'   the same shape; `NULL` to tape `log_density` (RTMB needed). `NULL` for
#'   a model object.
#' @param n_iter Iterations per chain after warmup (all kept unless
#'   `thin`). `NULL`: `ceiling(4000 / chains)`, so that about 4000 draws
#'   are kept in all whatever the number of chains (rstanarm's default of 4
#'   chains x 1000), and `log_lik()` / `loo()` of the fit are as large as
#'   rstanarm's.
#' @param warmup Adaptation iterations per chain before the kept ones.
#'   `NULL`: 1000, or `floor(iter / 2)` when `iter` is given.
#' @param iter_warmup,iter_sampling cmdstanr's names for `warmup` and
#'   `n_iter` (give one name of each, not both).
#' @param iter rstan's `iter`: iterations per chain, warmup included
#'   (`n_iter` is then `iter - warmup`, and `warmup` defaults to
#'   `floor(iter / 2)`, as rstan). `iter <= warmup` is an error. Give
#'   `iter` or `n_iter`, not both.
#' @param thin Keep every `thin`-th iteration after warmup (as rstan).
#' @param refresh As rstan's, for the progress display: `0` shows none;
#'   `NULL` or a positive number shows a progress bar in interactive
#'   sessions for runs longer than about 2 seconds (cli's), never per
#'   iteration lines.
#' @param control rstan's list: `adapt_delta` (as the argument),
#'   `max_treedepth` (a NUTS tree of depth `d` runs at most `2^d - 1`
#'   leapfrog steps, so it sets `max_leapfrog = 2^d - 1`: the trajectory
#'   cap of ChEES-HMC, whose trajectories are not trees), `metric`
#'   (`"diag_e"` or `"dense_e"`). Any other entry is an error. Give an
#'   entry here or as the argument, not both.
#' @param chains Number of chains, advanced together. One chain works: ChEES
#'   then centres it on the running mean of its own warmup draws in place of
#'   the mean over the chains (as SNAPER-HMC's `state_mean`). The
#'   default 16 is measured (see "Choices and evidence"): adaptation pools
#'   its estimates over the chains, so more chains adapt better in a
#'   shorter warmup, and with a vectorised density they cost little more
#'   per call. The kept draws stay about 4000 in all (see `n_iter`).
#' @param metric `"diagonal"` or `"dense"` (see Algorithm).
#' @param adapt_delta Target mean acceptance probability of the step size
#'   adaptation, in (0, 1).
#' @param max_leapfrog The most leapfrog steps of one trajectory.
#' @return A `clbayes_fit` (see [slice_sample_mv()]) with `sampler = "hmc"`
#'   and `n_gradients` (points evaluated with their gradient, warmup
#'   included), `n_leapfrog` (leapfrog steps per chain, each one batched
#'   call; `n_leapfrog_warmup` of them in warmup), `n_divergent` (divergent
#'   transitions after warmup, per chain), `n_divergent_warmup`,
#'   `n_bad_gradient` (points where the gradient was NaN or infinite at a
#'   finite log density, warmup included), `step_size` and
#'   `trajectory_length` (on the metric's coordinates), `accept_rate` (mean
#'   acceptance probability after warmup), `center` and `scale` (the metric:
#'   `u = center + scale * z`, with `scale` the vector of S's diagonal for a
#'   diagonal metric, or `u = center + scale %*% z` with the
#'   lower-triangular S of a dense metric).
#' @examples
#' # a bivariate normal with correlation 0.9, vectorised over rows
#' prec <- solve(matrix(c(1, 0.9, 0.9, 1), 2))
#' ld <- function(x) -0.5 * rowSums((x %*% prec) * x)
#' gr <- function(x) -x %*% prec
#' fit <- hmc_sample_mv(ld, init = c(a = 0, b = 0), gradient = gr,
#'                      iter = 1000, chains = 4, seed = 1)
#' fit$step_size
#' summary(fit)
#'
#' # no gradient: the density is taped (RTMB); eight schools, non-centred
#' if (requireNamespace("RTMB", quietly = TRUE)) {
#'   y <- c(28, 8, -3, 7, -1, 1, 18, 12)
#'   s <- c(15, 10, 16, 11, 9, 11, 10, 18)
#'   schools <- function(p) {
#'     n <- nrow(p)
#'     eta <- p[, 3:10, drop = FALSE]
#'     theta <- p[, 1] + p[, 2] * eta
#'     rowSums(dnorm(matrix(y, n, 8, byrow = TRUE), theta,
#'                   matrix(s, n, 8, byrow = TRUE), log = TRUE)) -
#'       0.5 * rowSums(eta^2) + dnorm(p[, 1], 0, 5, log = TRUE) -
#'       log1p((p[, 2] / 5)^2)
#'   }
#'   init <- c(mu = 0, tau = 1, setNames(rep(0, 8), paste0("eta", 1:8)))
#'   fit <- hmc_sample_mv(schools, init, lower = c(-Inf, 0, rep(-Inf, 8)),
#'                        n_iter = 300, warmup = 300, adapt_delta = 0.9,
#'                        seed = 1)
#'   fit$taped
#'
#'   # as in Stan: a function of one parameter vector, with a loop
#'   y2 <- c(1.2, -0.3, 0.8, 2.1)
#'   loop <- function(th) {
#'     lp <- dnorm(th[1], 0, 10, log = TRUE) - th[2]
#'     for (i in seq_along(y2)) lp <- lp + dnorm(y2[i], th[1], exp(th[2]), log = TRUE)
#'     lp
#'   }
#'   fit2 <- hmc_sample_mv(loop, c(mu = 0, log_sigma = 0), n_iter = 300,
#'                         warmup = 300, seed = 1)
#' }
#' @export
hmc_sample_mv <- function(log_density, init = NULL, gradient = NULL, n_iter = NULL,
                          warmup = NULL, chains = 16, seed = NULL,
                          metric = c("diagonal", "dense"), lower = NULL,
                          upper = NULL, adapt_delta = 0.75, max_leapfrog = 1000,
                          chain_groups = 1, devices = NULL,
                          backend = getOption("clbayes.backend", "auto"), iter = NULL,
                          thin = 1, refresh = NULL, control = NULL, iter_warmup = NULL,
                          iter_sampling = NULL, ...) {
  call <- match.call()
  ctrl <- resolve_control(control, "hmc")
  adapt_delta <- from_control(ctrl, "adapt_delta", adapt_delta, !missing(adapt_delta),
                              "adapt_delta")
  max_leapfrog <- from_control(ctrl, "max_leapfrog", max_leapfrog, !missing(max_leapfrog),
                               "max_leapfrog")
  metric <- from_control(ctrl, "metric", metric, !missing(metric), "metric")
  metric <- check_choice(metric, c("diagonal", "dense"), "metric")
  chains <- check_count(chains, "chains", 1)
  thin <- check_count(thin, "thin", 1)
  refresh <- check_refresh(refresh)
  its <- resolve_iterations(iter, warmup, n_iter, chains, thin, default_warmup = 1000,
                             iter_warmup, iter_sampling)
  warmup <- its$warmup
  n_iter <- its$n_iter
  max_leapfrog <- check_count(max_leapfrog, "max_leapfrog", 1)
  if (!is.numeric(adapt_delta) || length(adapt_delta) != 1L || !is.finite(adapt_delta) ||
      adapt_delta <= 0 || adapt_delta >= 1) {
    stop("`adapt_delta` must be a number strictly between 0 and 1", call. = FALSE)
  }
  init <- resolve_init(init, log_density, chains)
  check_memory(.cpp_hmc_memory(chains, if (is.matrix(init)) ncol(init) else length(init),
                               warmup, n_iter),
               chains, warmup + n_iter, "`warmup` + `n_iter`")
  init_radius <- if (is.matrix(init)) 0 else 0.1
  init <- check_init(init, chains)
  seed <- check_seed(seed)
  chain_groups <- check_count(chain_groups, "chain_groups", 1)
  if (chain_groups > 1L) {
    log_density <- carry_globals(log_density)
    gradient <- carry_globals(gradient)
  }
  tg <- mcmc_target(log_density, init, lower, upper, backend, ...)
  tg <- tape_target(tg, log_density, gradient, init, "hmc", ...)
  grad <- hmc_gradient(log_density, gradient, tg, init, ...)

  index <- chain_group_index(chains, chain_groups)
  devices <- check_devices(devices)
  # One run of the chains `idx` (a chain group), in this session or a worker.
  run_group <- function(group, idx, progress) {
    target <- model_rebuild_data(tg$target)
    ptr <- .cpp_hmc_new(init[idx, , drop = FALSE], tg$lower, tg$upper, metric, warmup,
                        n_iter, adapt_delta, max_leapfrog, init_radius, seed, idx[1L] - 1L)
    .cpp_hmc_start(ptr, target, grad)
    run_sampler_loop(function(step) .cpp_hmc_run(ptr, target, grad, step),
                     function() warmup + n_iter, function() .cpp_hmc_result(ptr),
                     warmup, n_iter, "HMC", progress %||% quiet_progress(refresh))
  }
  t0 <- proc.time()[["elapsed"]]
  res <- merge_group_results(
    run_chain_groups(index, run_group, devices, length(index) * (warmup + n_iter)), index)
  elapsed <- proc.time()[["elapsed"]] - t0
  t_warmup <- res$warmup_seconds
  res <- thin_draws(res, thin)
  fit <- new_clbayes_fit(res, tg, time = c(total = elapsed, warmup = t_warmup),
                         sampler = "hmc",
                         settings = list(method = "chees", metric = metric, chains = chains,
                                         n_iter = n_iter, warmup = warmup, thin = thin,
                                         seed = seed, adapt_delta = adapt_delta,
                                         max_leapfrog = max_leapfrog,
                                         taped = isTRUE(tg$taped), call = call))
  sampler_warnings(fit)
  fit
}

# The gradient the C++ glue calls: NULL for a model (its own), or the
# user's function wrapped to check its shape, after a check against finite
# differences at the initial points.
hmc_gradient <- function(log_density, gradient, tg, init, ...) {
  if (!is.function(log_density)) {
    if (!is.null(gradient)) {
      stop("`gradient` must be NULL for a model object (the model supplies its own)",
           call. = FALSE)
    }
    return(NULL)
  }
  if (is.null(gradient) && is.function(tg$gradient)) return(tg$gradient)  # R/tape.R
  if (is.null(gradient)) {
    stop(paste0("`gradient` is needed with a function `log_density`: give an R ",
                "function of the same points matrix returning d log f / d x, ",
                tape_missing_reason(), ", or use slice_sample_mv(), which needs no ",
                "gradient"), call. = FALSE)
  }
  if (!is.function(gradient)) stop("`gradient` must be a function", call. = FALSE)
  grad <- function(points) check_gradient_value(gradient(points, ...), points)
  # At the initial points and at a point moved off the first of them (a
  # gradient can agree at a single point by chance, e.g. at a mode).
  shift <- init[1L, ] + 0.1 * (-1)^seq_len(ncol(init)) * pmax(1, abs(init[1L, ]))
  inside <- shift > tg$lower & shift < tg$upper
  shift[!inside] <- init[1L, !inside]
  check_gradient_fd(tg$target, grad, rbind(init, shift), tg$lower, tg$upper, tg$vars)
  grad
}

# What the user's gradient returned, checked: a rows x dim numeric matrix.
# Its values may be NaN or infinite here (the sampler treats those steps
# as divergent); at the initial points check_gradient_fd() refuses them.
check_gradient_value <- function(val, points) {
  if (!is.numeric(val) || !is.matrix(val) || !identical(dim(val), dim(points))) {
    got <- if (is.matrix(val)) {
      sprintf("a %s matrix (%s)", typeof(val), paste(dim(val), collapse = " x "))
    } else {
      sprintf("%s of length %d", class(val)[1L], length(val))
    }
    stop(sprintf(paste0("`gradient` must return a numeric matrix with one row per ",
                        "point and one column per variable (%d x %d), not %s"),
                 nrow(points), ncol(points), got), call. = FALSE)
  }
  storage.mode(val) <- "double"
  val
}

# `grad` against central differences of `target` at the distinct rows of
# `points`, with steps that stay inside the bounds. The tolerance allows
# the differences' truncation (relative 1e-4) and rounding (the value's
# size times 1e-8 over the step) errors. A gradient that is NaN or infinite
# where the density is finite is an error naming the point and `vars`' one.
check_gradient_fd <- function(target, grad, points, lower, upper,
                              vars = paste0("x[", seq_len(ncol(points)), "]")) {
  x <- unique(points)
  r <- nrow(x)
  k <- ncol(x)
  f0 <- target(x)
  g <- grad(x)
  bad <- which(!is.finite(g) & is.finite(f0), arr.ind = TRUE)
  if (nrow(bad)) {
    i <- bad[1L, 1L]
    j <- bad[1L, 2L]
    stop(sprintf(paste0("`gradient` returned %s for variable %s at the initial ",
                        "point (%s), where `log_density` is finite (%.6g): it must ",
                        "be finite there"),
                 format(g[i, j]), vars[j], paste(signif(x[i, ], 6), collapse = ", "),
                 f0[i] + 0), call. = FALSE)
  }
  room <- pmin(sweep(x, 2L, lower), sweep(-x, 2L, -upper))
  h <- pmin(1e-5 * pmax(abs(x), 1), 0.5 * room)
  shifted <- function(sign) {
    do.call(rbind, lapply(seq_len(k), function(j) {
      y <- x
      y[, j] <- y[, j] + sign * h[, j]
      y
    }))
  }
  vals <- target(rbind(shifted(1), shifted(-1)))
  fd <- matrix((vals[seq_len(r * k)] - vals[r * k + seq_len(r * k)]) / (2 * c(h)), r, k)
  tol <- 1e-4 * (1 + abs(fd)) + 1e-8 * (1 + abs(f0)) / h
  ok <- !is.finite(fd) | !is.finite(f0) | abs(g - fd) <= tol
  if (!all(ok)) {
    bad <- which(!ok, arr.ind = TRUE)[1L, ]
    stop(sprintf(paste0("`gradient` disagrees with central finite differences of ",
                        "`log_density` at the initial points: variable %s of point %d ",
                        "has %.6g against %.6g"),
                 vars[bad[[2L]]], bad[[1L]], g[bad[[1L]], bad[[2L]]], fd[bad[[1L]], bad[[2L]]]),
         call. = FALSE)
  }
  invisible(TRUE)
}
