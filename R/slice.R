#' Parallel multivariate slice sampling
#'
#' Draws from a density known up to a constant with the multivariate slice
#' sampler of Tibbits, Haran and Liechty ("Parallel multivariate slice
#' sampling"), made exact, or with the univariate slice sampler as a
#' baseline. Every density that one step of the algorithm needs (the 2^k
#' vertices of every chain's hyperrectangle, or a batch of `n_proposals`
#' proposals of every chain) is requested in one call of `log_density`, so
#' a vectorised or device-side density computes them together.
#'
#' @section Methods:
#' * `"hyperrect"`: Neal's (2003, section 5.1) hyperrectangle. A box of
#'   widths `width`, placed uniformly at random around the current point, is
#'   sampled by batches of `n_proposals` uniform proposals evaluated in one
#'   call (the paper's Algorithm 3); the first proposal in draw order that
#'   lies in the slice is taken; when a whole batch is rejected the box
#'   shrinks towards the current point by every rejected proposal. This
#'   leaves the target invariant.
#' * `"univariate"`: the paper's Algorithm 1, Neal's stepping out (at most
#'   `max_steps` steps) and shrinkage, one coordinate after the other; with
#'   `n_proposals` > 1 each round evaluates several ends or proposals at
#'   once (the first proposal inside the slice is taken; a wholly rejected
#'   batch shrinks the interval by all of its points).
#'
#' @section Defaults and the evidence for them:
#' `slice_sample_mv(log_density, init)` runs with every other argument
#' defaulted. The choices were measured on the posteriors of
#' `bench/bench_posteriors.R` (2-core machine, 2026-11-24; the project's
#' `bench/RESULTS.md`, "Slice sampler defaults"):
#' * `method = "auto"`: `"hyperrect"` (with `n_proposals = 16`) in one or two
#'   dimensions, `"univariate"` (with `n_proposals = 2`) above. On a 2-d
#'   banana the box gave 4-6 times the bulk ESS of coordinate-wise updates
#'   (which cannot cross between its arms; R-hat 1.007 against 1.047); on
#'   3- and 5-d correlated Gaussians univariate updates in the learnt metric
#'   gave 2 and 8 times the ES/s of the box, on a 10-d one 8237 against 35:
#'   a box's acceptance falls with its dimension, and above 12 dimensions it
#'   cannot step out by its vertices.
#' * `chains`: 64 up to 32 dimensions, then about `2048 / dim` (a power of
#'   two, at least 8). With an R density most of the time is the call
#'   itself (0.1-0.3 ms here), and a univariate sweep needs a few calls per
#'   coordinate whatever the number of chains, so more chains are nearly
#'   free: on the 10-d eight schools model 4, 16, 64 and 128 chains gave
#'   315, 1112, 3349 and 3710 ES/s. In high dimension the points' own cost
#'   takes over.
#' * `n_proposals = 2` for `"univariate"`: 2 ends per side per step-out round
#'   and 2 proposals per shrinkage round halve the calls for 1.3-1.5 times
#'   the densities (eight schools, 64 chains: 2045, 3349 and 2775 ES/s for 1,
#'   2 and 4).
#' * `n_iter = ceiling(4000 / chains)`, `warmup = 300`: many chains need
#'   fewer draws each, and about 4000 kept draws in all (rstanarm's size)
#'   keep `log_lik()` and `loo()` of a fit as large as rstanarm's; 64
#'   chains x 500 draws (the earlier default) gave bulk ESS in the tens of
#'   thousands on the benchmark's posteriors; 64 x 63 draws gave bulk ESS
#'   3900-4500 and tail ESS 3400-3800 on a 10-d Gaussian with correlation
#'   0.5^|i - j| (seed 1).
#'   Warmup follows Stan's windows (below); with `warmup_extend = warmup`
#'   it may double where the chains disagree.
#' * `width = NULL`: widths of 2 on the unconstrained scale, adapted from
#'   the first iterations on; `init_radius = 2`: a single `init` is dispersed
#'   over the chains by uniform(-2, 2) offsets on the unconstrained scale,
#'   as Stan does for its random inits, so that R-hat can see chains that
#'   have not forgotten their start.
#'
#' @section Warmup:
#' Warmup is cut as Stan cuts it (Stan Reference Manual, "automatic
#' parameter tuning"): an initial buffer of 75 iterations (15% for short
#' warmups) where only widths adapt, slow windows that double from 25
#' iterations, each closing with a new dense metric estimated from its own
#' draws only (draws from before the chains reached the typical set are
#' discarded), and a terminal buffer of 50 where the widths adapt to the
#' final metric. Widths adapt in every dimension throughout: each update
#' steps out from a quarter of the current widths (at most `max_steps`
#' rounds) and every 10 iterations the widths become the mean stepped-out
#' extent over those iterations and the chains (for `"hyperrect"`, twice
#' the extent of its vertex step-out; above 12 dimensions, where vertices
#' are too many, its warmup runs univariate updates, whose extents set the
#' widths). At the end of warmup the split R-hat (of the draws' ranks) of
#' its second half is computed across the chains; while it is above 1.05,
#' warmup is extended
#' by blocks (a slow window and a terminal buffer of `max(100, warmup / 2)`
#' iterations in all) up to `warmup_extend` further iterations. A warning
#' says so when the chains still disagree (R-hat above 1.1), when the kept
#' draws have R-hat above 1.05, or when updates got stuck (see Guards).
#' Widths and metric are fixed for the kept draws.
#'
#' @section Step-out:
#' The paper's Algorithm 2 grows the box while one of its 2^k vertices lies
#' in the slice. Its final box depends on where the chain started, so the
#' update is not reversible and does not leave the target invariant. It is
#' therefore used where it is harmless:
#' * `stepout = "warmup"` (default): in warmup only (see Warmup).
#' * `stepout = "never"`: the widths given are used throughout.
#' * `stepout = "always"` (`"hyperrect"` only): the paper's literal sampler,
#'   vertex step-out from `width` at every iteration, then batched proposals
#'   with shrinkage. Its draws are only approximately from the target (a
#'   warning says so); it is there for comparison. For `"univariate"`,
#'   stepping out is always valid and `"always"` means the same as
#'   `"warmup"`.
#'
#' @section Scale and metric:
#' The updates need not run on the variables themselves:
#' * Bounds (`lower`, `upper`): a variable with a finite bound is sampled on
#'   an unconstrained scale, `log(x - lower)`, `log(upper - x)`, or the logit
#'   of `(x - lower) / (upper - lower)` when both are finite, and the log of
#'   the transform's Jacobian is added to the log density, so the draws of
#'   `x` still come from the target. Positive parameters with long right
#'   tails (variances, ranges) have far rounder slices on the log scale.
#'   `width` stays in the units of the variables: it is converted at the
#'   initial points. Model objects carry their own bounds (for
#'   [gp_model()]: `kappa, psi > 0` and `phi` within its prior's range).
#' * `metric = "dense"` (default): at the end of each slow window the sampler
#'   moves to coordinates `z` with `u = center + S z`, where `u` is the
#'   (unconstrained) variable, `center` the mean and `S` the Cholesky factor
#'   of the covariance of the window's draws (pooled over chains, shrunk
#'   towards its diagonal when there are few draws). On `z` a strongly correlated target is close to
#'   uncorrelated, so the axis-aligned box (or the coordinate-wise updates)
#'   fits its slices. The widths are then adapted again on `z`. The metric
#'   is fixed after warmup, so the kept draws come from a valid sampler; it
#'   is reported as `center` and `scale` in the fit. `metric = "diagonal"`
#'   adapts the widths only, on the (unconstrained) variables.
#'
#' @section Chain groups:
#' With `chain_groups = G > 1` each group is evaluated as
#' `future::future(...)`, so `future::plan(multisession, workers = 2)` runs
#' two groups at once on one machine, `plan(cluster, workers = c("node1",
#' "node2"))` on two machines, and a `future.batchtools` plan sends each group
#' to a scheduler (one GPU per job with `devices`). What the workers need:
#' clbayes installed; an R `log_density` travels with the variables it uses
#' (future's globals), and packages it calls are loaded through future's
#' `packages` conventions. A model's data on a device do not travel: each
#' worker rebuilds them from the host data the model keeps. The merged fit
#' holds every chain (`fit$chain_group` says which group each came from),
#' and [summary()][summary.clbayes_fit()] computes R-hat across all of them.
#' The groups are polled with [future::resolved()], so the first group to
#' fail, whichever it is, stops the call at once with an error naming the
#' group, and an interrupt (Ctrl-C) stops it as any R call. Either way the
#' groups still running are asked to stop, through a file in the session's
#' temporary directory that each group reads after every piece of its run
#' (about 0.1 s, at most 1% of the iterations), and are waited for up to
#' half a second: workers on this machine stop and stay free for the plan's
#' next future; workers that cannot see that directory (other machines,
#' batch jobs) run to their end. A closure that reads variables of the
#' global environment (a function defined at the top level, or made there
#' by `local()`) carries them to the workers.
#' `print()` shows each group's wall time and calls. With several groups and the progressr package
#' installed, one progress bar covers all groups wherever progressr's
#' handlers are on (e.g. `progressr::handlers(global = TRUE)`), as future
#' packages do. See `vignette("getting-started")`.
#'
#' @section Warnings at the end of a run:
#' As rstan's and [hmc_sample_mv()]'s (see its section of this name):
#' split R-hat above 1.05 and bulk or tail ESS below 100 per chain (at most
#' 400), with rstan's wording; besides, chains that disagree at the end of
#' warmup and updates stuck at the shrinkage limit (below).
#'
#' @section Guards:
#' A log density that is `NaN` (or `NA`) is read as `-Inf` (outside the
#' support) and counted (`n_nan` in the fit), with a warning at the end; if
#' every point of an iteration after the first is `NaN`, the run stops with
#' an error that says so. Every initial point must have a finite log
#' density (dispersed starts are retried up to 100 times per chain, then
#' the chain starts at `init` itself). An update that finds no point of its
#' slice after 200 shrinkage rounds keeps its point and is counted
#' (`n_stuck`) with a warning: it marks a density whose scale changes
#' sharply, such as the neck of Neal's funnel in its centred form. With a
#' model object, an argument the sampler does not know is an error naming
#' it. `chains` or `n_proposals` large enough that the run would need more
#' memory than `getOption("clbayes.memory_limit")` (default 80% of the
#' machine's memory) is an error naming the argument and the memory
#' needed, before anything is allocated. An error inside `log_density`
#' stops the run with its message; so does Ctrl-C.
#'
#' @param log_density An R function of a numeric matrix (one point per row)
#'   returning one log density per row (up to a constant, `-Inf` outside the
#'   support), or a model object such as [lm_model()]. With the RTMB package
#'   installed a function is taped as for [hmc_sample_mv()] (see its
#'   "Taped densities"; a function of one parameter vector is taken too)
#'   and its compiled values are used when they cost at most 2/3 of the R
#'   function's, timed at the initial points (a density with a loop or a
#'   Cholesky factor per point gains; a vectorised one often does not);
#'   `fit$taped` says which ran. A function that does not tape gets one
#'   message and runs as R code.
#' @param init Initial point, in any of rstan's forms: `"random"` (as
#'   `NULL`), `0` or `"0"` for a model (every coordinate 0 on the
#'   unconstrained scale), a function of `chain_id` returning one chain's
#'   values, a list with one element per chain; or a numeric vector,
#'   dispersed over the chains
#'   (see `init_radius`), or a matrix with one row per chain, used as is.
#'   Its names or column names name the variables. `NULL`: the model's
#'   `init` (`log_density$init`) for a model object that has one.
#' @param n_iter Iterations per chain after warmup (all kept unless
#'   `thin`). `NULL`: `ceiling(4000 / chains)`, so that about 4000 draws
#'   are kept in all whatever the number of chains (rstanarm's size), and
#'   `log_lik()` / `loo()` of the fit are as large as rstanarm's.
#' @param width Initial widths of the box (or interval) per dimension, on
#'   the scale of the variables: a positive number or one per dimension.
#'   `NULL`: 2 on the unconstrained scale. Adapted in warmup (see Warmup).
#' @param method `"auto"` (`"hyperrect"` in one or two dimensions, else
#'   `"univariate"`: see Defaults), `"univariate"` or `"hyperrect"` (see
#'   Methods).
#' @param n_proposals Proposals per chain evaluated together in each batch.
#'   For `"univariate"` also the most interval ends per side evaluated
#'   together when stepping out; 1 is Neal's sequential procedure, more
#'   trades densities for fewer calls. `NULL`: 16 for `"hyperrect"`, 2 for
#'   `"univariate"` (see Defaults).
#' @param chains Number of chains, advanced together (every chain's points
#'   of a step go to `log_density` in one call). `NULL`: one per row of a
#'   matrix `init`, else 64 up to 32 dimensions and about `2048 / dim` above
#'   (see Defaults).
#' @param warmup Iterations per chain before the kept ones; their draws are
#'   kept apart in the fit. `NULL`: 300, or `floor(iter / 2)` when `iter` is
#'   given.
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
#' @param control rstan's list; the slice sampler takes only `metric`
#'   (`"diag_e"` or `"dense_e"`, as the argument): `adapt_delta` and
#'   `max_treedepth` have no counterpart here (no step size, no
#'   trajectory) and are an error.
#' @param seed `NULL` (a seed is drawn from R's random numbers) or a whole
#'   number in \[0, 2^53). With a seed the run is reproducible and R's random
#'   number state is left untouched.
#' @param stepout `"warmup"`, `"never"` or `"always"` (see Step-out and
#'   widths).
#' @param max_steps The most step-out rounds of one update.
#' @param metric `"dense"` or `"diagonal"` (see Scale and metric). Only
#'   adapted when widths are (`stepout = "warmup"`, or `"always"` with
#'   `"univariate"`).
#' @param lower,upper Bounds of the support: a number or one per variable
#'   (`-Inf` and `Inf` for none). `NULL`: the model's bounds for a model
#'   object, none for a function. Initial points must lie strictly inside.
#' @param backend `"auto"`, `"opencl"` or `"cpu"` (see [backends]): where a
#'   model object is evaluated. An R function is always evaluated by R.
#'   [lm_model()] has only a CPU path (`"opencl"` is an error); [glm_model()]
#'   runs on the device with `"opencl"`, and with `"auto"` from its size
#'   threshold (see [glm_model()]).
#' @param warmup_extend The most iterations added to warmup while the
#'   chains disagree at its end (split R-hat above 1.05); 0 never extends.
#'   `NULL`: as many as `warmup`.
#' @param init_radius Half-width of the uniform offsets, on the
#'   unconstrained scale, that disperse a single `init` over the chains; 0
#'   starts every chain at `init`.
#' @param chain_groups The number of groups the chains are split into
#'   (consecutive chains, sizes differing by at most one). Each group is a
#'   run of its own: it adapts its widths and metric on its own chains, and
#'   runs as one future under the [future::plan()] the user has set (the
#'   package never sets one), so groups can run in parallel processes, on
#'   other machines or as cluster jobs. Chain `c` always draws from random
#'   stream `c` of `seed`, so the draws depend on `seed` and `chain_groups`
#'   only, never on the plan. With one group (the default) no future is used.
#'   See the section "Chain groups".
#' @param devices `NULL`, or OpenCL devices for the groups as [gpu_select()]
#'   takes them: a two-column matrix of (platform, device), rows of
#'   [gpu_devices()], or a list of pairs; group `g` selects device
#'   `(g - 1) %% n + 1` before it runs. A worker where that device cannot be
#'   selected runs as `backend` allows and says so in the fit
#'   (`fit$groups[[g]]$device`).
#' @param ... Further arguments passed to `log_density` when it is a
#'   function. With a model object, none are allowed.
#' @return A `clbayes_fit`: a list with `draws` (iteration x chain x
#'   variable), `warmup_draws`, `n_evals` (densities evaluated, warmup
#'   included), `n_evals_warmup`, `n_calls` (batches), `n_nan`, `n_stuck`
#'   (updates that hit the shrinkage limit and kept their point), `time`
#'   (elapsed seconds: `total`, `warmup`, and `density`, the part spent
#'   inside `log_density`), `warmup_rhat` (split R-hat at the end of warmup),
#'   `warmup` (its length, extensions included), `widths` (the final widths, on
#'   the sampler's coordinates `z`), `center` and `scale` (the metric:
#'   `u = center + scale %*% z` with `scale` lower triangular, or `u =
#'   center + scale * z` with `scale` a vector when the metric is
#'   diagonal), `lower`, `upper` and the settings. See [summary.clbayes_fit()].
#' @examples
#' # a bivariate normal with correlation -0.9, vectorised over rows
#' prec <- solve(matrix(c(1, -0.9, -0.9, 1), 2))
#' ld <- function(x) -0.5 * rowSums((x %*% prec) * x)
#' fit <- slice_sample_mv(ld, init = c(a = 0, b = 0), seed = 1)
#' fit
#' @export
slice_sample_mv <- function(log_density, init = NULL, n_iter = NULL, width = NULL,
                            method = c("auto", "univariate", "hyperrect"),
                            n_proposals = NULL, chains = NULL, warmup = NULL,
                            seed = NULL,
                            stepout = c("warmup", "never", "always"),
                            max_steps = 100,
                            metric = c("dense", "diagonal"),
                            lower = NULL, upper = NULL,
                            warmup_extend = NULL, init_radius = 2,
                            chain_groups = 1, devices = NULL,
                            backend = getOption("clbayes.backend", "auto"), iter = NULL,
                            thin = 1, refresh = NULL, control = NULL,
                            iter_warmup = NULL, iter_sampling = NULL, ...) {
  call <- match.call()
  ctrl <- resolve_control(control, "slice")
  metric <- from_control(ctrl, "metric", metric, !missing(metric), "metric")
  if (is.null(chains)) {
    chains <- if (is.list(init) && !is.data.frame(init)) length(init)
      else if (is.matrix(init) && nrow(init) > 1L) nrow(init)
      else default_chains(if (inherits(log_density, "clbayes_model"))
        length(log_density$names) else if (is.matrix(init)) ncol(init) else length(init))
  }
  chains <- check_count(chains, "chains", 1)
  init <- resolve_init(init, log_density, chains)
  k <- if (is.matrix(init)) ncol(init) else length(init)
  method <- check_choice(method, c("auto", "univariate", "hyperrect"), "method")
  if (method == "auto") method <- if (k <= 2L) "hyperrect" else "univariate"
  stepout <- check_choice(stepout, c("warmup", "never", "always"), "stepout")
  metric <- check_choice(metric, c("dense", "diagonal"), "metric")
  thin <- check_count(thin, "thin", 1)
  refresh <- check_refresh(refresh)
  its <- resolve_iterations(iter, warmup, n_iter, chains, thin, default_warmup = 300,
                             iter_warmup, iter_sampling)
  warmup <- its$warmup
  n_iter <- its$n_iter
  warmup_extend <- warmup_extend %||% warmup
  warmup_extend <- check_count(warmup_extend, "warmup_extend", 0)
  n_proposals <- check_count(n_proposals %||% if (method == "hyperrect") 16 else 2,
                             "n_proposals", 1)
  max_steps <- check_count(max_steps, "max_steps", 1)
  if (!is.numeric(init_radius) || length(init_radius) != 1L ||
      !is.finite(init_radius) || init_radius < 0) {
    stop("`init_radius` must be a finite number of at least 0", call. = FALSE)
  }
  need <- .cpp_slice_memory(chains, k, method, n_proposals, warmup, warmup_extend,
                            n_iter)
  check_memory(need[["total"]], chains, warmup + warmup_extend + n_iter,
               "`warmup` + `warmup_extend` + `n_iter`",
               if (need[["batch"]] > need[["total"]] / 2 && n_proposals > 1) "n_proposals"
               else "chains")
  # One point is dispersed over the chains; one row per chain is used as is.
  one_point <- !is.matrix(init) || (nrow(init) == 1L && chains > 1L)
  if (is.matrix(init) && nrow(init) == 1L) init <- init[1L, ]
  init <- check_init(init, chains)
  width_on_u <- is.null(width)
  if (width_on_u) width <- default_width
  if (!is.numeric(width) || !length(width) %in% c(1L, k) ||
      anyNA(width) || any(!is.finite(width) | width <= 0)) {
    stop(sprintf("`width` must be NULL, a positive number or %d positive numbers", k),
         call. = FALSE)
  }
  width <- rep_len(as.double(width), k)
  seed <- check_seed(seed)
  chain_groups <- check_count(chain_groups, "chain_groups", 1)
  if (chain_groups > 1L) log_density <- carry_globals(log_density)
  tg <- mcmc_target(log_density, init, lower, upper, backend, ...)
  tg <- tape_target(tg, log_density, NULL, init, "slice", ...)
  target <- tg$target
  if (stepout == "always" && method == "hyperrect") {
    warning("stepout = \"always\" is the paper's literal sampler: its vertex ",
            "step-out is not reversible, so the draws are only approximately ",
            "from the target", call. = FALSE)
  }

  index <- chain_group_index(chains, chain_groups)
  devices <- check_devices(devices)
  radius <- if (one_point) as.double(init_radius) else 0
  limit <- memory_limit()
  # One run of the chains `idx` (a chain group), in this session or a worker.
  run_group <- function(group, idx, progress) {
    target <- model_rebuild_data(tg$target)
    ptr <- .cpp_slice_new(init[idx, , drop = FALSE], width, tg$lower, tg$upper, method,
                          stepout, metric, n_proposals, warmup, n_iter, max_steps, seed,
                          radius, width_on_u, warmup_extend, warmup_rhat_bound, limit,
                          idx[1L] - 1L)
    .cpp_slice_start(ptr, target)
    run_sampler_loop(function(step) .cpp_slice_run(ptr, target, step),
                     function() .cpp_slice_total(ptr), function() .cpp_slice_result(ptr),
                     warmup, n_iter, "Slice sampling", progress %||% quiet_progress(refresh))
  }
  t0 <- proc.time()[["elapsed"]]
  res <- merge_group_results(
    run_chain_groups(index, run_group, devices, length(index) * (warmup + n_iter)), index)
  elapsed <- proc.time()[["elapsed"]] - t0
  t_warmup <- res$warmup_seconds
  warmup <- res$warmup_total
  res$warmup_done <- NULL
  slice_warnings(res, warmup, warmup_extend, tg$vars)
  res <- thin_draws(res, thin)
  # The density's time comes from a finer clock than proc.time()'s
  # milliseconds: where the density is the whole run it can read a little
  # more than the total.
  fit <- new_clbayes_fit(res, tg, time = c(total = elapsed, warmup = t_warmup,
                                           density = min(res$density_seconds, elapsed)),
                         sampler = "slice",
                         settings = list(method = method, stepout = stepout, metric = metric,
                                         n_proposals = n_proposals, chains = chains,
                                         n_iter = n_iter, warmup = warmup, thin = thin,
                                         seed = seed, warmup_extend = warmup_extend,
                                         init_radius = if (one_point) init_radius else 0,
                                         taped = isTRUE(tg$taped), call = call))
  sampler_warnings(fit)
  fit
}

# Chains when none are given: 64 up to 32 dimensions, where a call's fixed
# cost dominates and more chains per call are nearly free; above, about
# 2048 / dim (a power of two, at least 8), as the points' own cost grows.
default_chains <- function(k) {
  if (k <= 32L) return(64L)
  as.integer(max(8, 2^round(log2(2048 / k))))
}

# Widths on the unconstrained scale when none are given; adapted in warmup.
default_width <- 2

# The split R-hat (of ranks) of warmup's second half above which the
# chains disagree and warmup is extended (up to `warmup_extend`).
warmup_rhat_bound <- 1.05

# The starting point of a model object that carries one.
model_init <- function(log_density) {
  init <- if (inherits(log_density, "clbayes_model")) log_density$init
  if (is.null(init)) {
    stop("`init` is missing: give a starting point (a vector, dispersed over ",
         "the chains) or a matrix with one row per chain", call. = FALSE)
  }
  init
}
