# The fit in the other packages of the Stan ecosystem: posterior's draws
# formats, loo's PSIS-LOO and WAIC (Vehtari, Gelman and Gabry 2017) with
# relative efficiencies from the chains, and bayesplot's pp_check(),
# rhat(), neff_ratio() and nuts_params(). posterior, loo and bayesplot are
# Suggests: the methods are registered when those packages load.

#' posterior, loo and bayesplot methods for a fit
#'
#' * `as_draws()`, `as_draws_array()`, `as_draws_df()`,
#'   `as_draws_matrix()`, `as_draws_list()`, `as_draws_rvars()`: the kept
#'   draws in posterior's formats (every fit);
#' * `loo()` and `waic()`: PSIS-LOO and WAIC from [log_lik()], with
#'   `r_eff` (the relative efficiency of `exp(log_lik)`) computed from the
#'   chains by `loo::relative_eff()`, as rstanarm does; the result is loo's
#'   `psis_loo` / `waic` object, so `loo::loo_compare()` takes it beside
#'   rstanarm's or brms's. `loo_compare(fit1, fit2, ...)` on fits (clbayes
#'   fits and `stanreg` fits may be mixed) computes each `loo()` first;
#' * `kfold()`: K-fold cross-validation, refitting the model on each
#'   training set with [update()] and scoring the held-out rows with
#'   `log_lik(newdata = )`;
#' * `pp_check()`: bayesplot's posterior predictive check
#'   `ppc_<plotfun>(y, yrep)` with `yrep` from [posterior_predict()];
#' * `rhat()` and `neff_ratio()`: per variable, split R-hat and bulk ESS
#'   over the number of kept draws (bayesplot's generics);
#' * `nuts_params()`: for fits of [hmc_sample_mv()], bayesplot's long data
#'   frame (`Chain`, `Iteration`, `Parameter`, `Value`) of the sampler's
#'   settings per kept iteration: `stepsize__` (the step size after
#'   warmup) and `n_leapfrog__` (leapfrog steps of that iteration's
#'   trajectory, the same for all chains of a chain group; the engine does
#'   not record per-iteration divergences or acceptance, so
#'   `divergent__`, `accept_stat__` and `energy__` are absent: the
#'   divergences per chain are in `fit$n_divergent`).
#'
#' @param x,object A `clbayes_fit` (`loo_compare()`: a clbayes fit,
#'   followed in `...` by further fits, clbayes's or rstanarm's).
#' @param cores Cores for loo's computations.
#' @param save_psis Keep the PSIS object in the result (as loo).
#' @param criterion `"loo"` or `"waic"` for `loo_compare()` of fits.
#' @param K,folds The number of folds, or a vector giving each row of the
#'   model's data its fold (`loo::kfold_split_random()` by default, from
#'   R's random numbers).
#' @param plotfun The bayesplot `ppc_` function, without its prefix.
#' @param nreps The number of predictive draws; `NULL`: 50 for the
#'   `*_overlay` plots, otherwise all.
#' @param seed `NULL`, or a seed for [set.seed()] before the predictive
#'   draws.
#' @param pars,regex_pars Variables by name or regular expression (`NULL`:
#'   all).
#' @param inc_warmup Must be `FALSE` (the warmup's settings are not kept).
#' @param ... `as_draws_*()`: passed to posterior's conversion of the
#'   draws array; `pp_check()`: passed to the `ppc_` function;
#'   `loo_compare()`: further fits; `kfold()`: further arguments of
#'   [update()] for the refits (e.g. `refresh = 0`); otherwise unused, an
#'   error if given.
#' @return posterior's draws objects; loo's `psis_loo`, `waic` and
#'   `kfold` objects; a `compare.loo` matrix; a ggplot; named numeric
#'   vectors; a data frame.
#' @examples
#' set.seed(3)
#' d <- data.frame(x = rnorm(80))
#' d$y <- rbinom(80, 1, plogis(0.3 + d$x))
#' fit <- hmc_sample_mv(glm_model(y ~ x, d, family = binomial()), iter = 500,
#'                      chains = 4, seed = 1, backend = "cpu")
#' if (requireNamespace("posterior", quietly = TRUE)) {
#'   print(posterior::summarise_draws(posterior::as_draws_df(fit)))
#' }
#' if (requireNamespace("loo", quietly = TRUE)) print(loo::loo(fit))
#' @name draws-methods
NULL

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws
as_draws.clbayes_fit <- function(x, ...) as_draws_array.clbayes_fit(x, ...)

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws_array
as_draws_array.clbayes_fit <- function(x, ...) {
  posterior::as_draws_array(unname_dims(x$draws), ...)
}

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws_df
as_draws_df.clbayes_fit <- function(x, ...) {
  posterior::as_draws_df(as_draws_array.clbayes_fit(x), ...)
}

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws_matrix
as_draws_matrix.clbayes_fit <- function(x, ...) {
  posterior::as_draws_matrix(as_draws_array.clbayes_fit(x), ...)
}

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws_list
as_draws_list.clbayes_fit <- function(x, ...) {
  posterior::as_draws_list(as_draws_array.clbayes_fit(x), ...)
}

#' @rdname draws-methods
#' @exportS3Method posterior::as_draws_rvars
as_draws_rvars.clbayes_fit <- function(x, ...) {
  posterior::as_draws_rvars(as_draws_array.clbayes_fit(x), ...)
}

# posterior wants the variable names and no names on the dimnames list.
unname_dims <- function(d) {
  dimnames(d) <- list(NULL, NULL, dimnames(d)[[3L]])
  d
}

# loo::relative_eff() of exp(ll), ll a draws x observations matrix in the
# order of fit_draws() (chain after chain).
fit_relative_eff <- function(fit, ll, cores = 1) {
  d <- dim(fit$draws)
  loo::relative_eff(exp(ll), chain_id = rep(seq_len(d[2L]), each = d[1L]), cores = cores)
}

#' @rdname draws-methods
#' @exportS3Method loo::loo
loo.clbayes_fit <- function(x, ..., cores = getOption("mc.cores", 1), save_psis = FALSE) {
  check_no_dots(...)
  ll <- log_lik(x)
  out <- loo::loo(ll, r_eff = fit_relative_eff(x, ll, cores), cores = cores,
                  save_psis = save_psis)
  attr(out, "model_name") <- deparse1(substitute(x))
  attr(out, "yhash") <- fit_yhash(x)
  out
}

# rstanarm's hash of the response (its hash_y(): digest::sha1 of the
# response as model.response() gives it, attributes dropped), so that
# loo_compare() of a clbayes and an rstanarm fit of the same data does not
# warn that the responses differ; NULL without digest.
fit_yhash <- function(fit) {
  if (!requireNamespace("digest", quietly = TRUE)) return(NULL)
  m <- fit$model
  y <- if (!is.null(m$formula) && !is.null(m$call$data)) {
    tryCatch(stats::model.response(model.frame(fit)), error = function(e) m$y)
  } else m$y
  attributes(y) <- NULL
  digest::sha1(x = y)
}

#' @rdname draws-methods
#' @exportS3Method loo::waic
waic.clbayes_fit <- function(x, ...) {
  check_no_dots(...)
  out <- loo::waic(log_lik(x))
  attr(out, "yhash") <- fit_yhash(x)
  out
}

#' @rdname draws-methods
#' @exportS3Method loo::loo_compare
loo_compare.clbayes_fit <- function(x, ..., criterion = c("loo", "waic")) {
  criterion <- check_choice(criterion, c("loo", "waic"), "criterion")
  fits <- c(list(x), list(...))
  labels <- vapply(as.list(substitute(list(x, ...)))[-1L], deparse1, "")
  ic <- lapply(seq_along(fits), function(i) {
    f <- fits[[i]]
    if (!inherits(f, c("clbayes_fit", "stanreg", "brmsfit"))) {
      stop(sprintf("`...`: argument %d is not a fit (clbayes_fit, stanreg or brmsfit)", i),
           call. = FALSE)
    }
    out <- if (criterion == "loo") loo::loo(f) else loo::waic(f)
    attr(out, "model_name") <- labels[i]
    out
  })
  names(ic) <- labels
  loo::loo_compare(ic)
}

#' @rdname draws-methods
#' @exportS3Method loo::kfold
kfold.clbayes_fit <- function(x, K = 10, ..., folds = NULL) {
  y <- fit_rows(x, NULL, NULL)  # a model fit, or an error saying so
  data <- fit_data(x)
  n <- nrow(data)
  if (is.null(folds)) {
    K <- check_count(K, "K", 2)
    folds <- loo::kfold_split_random(K, n)
  } else if (!is.numeric(folds) || length(folds) != n || anyNA(folds)) {
    stop(sprintf("`folds` must give a fold for each of the %d rows of the data", n),
         call. = FALSE)
  }
  if (nrow(y$x) != n) {
    stop("kfold() needs a model without dropped rows (na.action)", call. = FALSE)
  }
  K <- length(unique(folds))
  elpd <- numeric(n)
  for (k in unique(folds)) {
    held <- folds == k
    refit <- update(x, data = data[!held, , drop = FALSE], ...)
    ll <- log_lik(refit, newdata = data[held, , drop = FALSE])
    elpd[held] <- apply(ll, 2L, function(v) max(v) + log(mean(exp(v - max(v)))))
  }
  est <- c(elpd_kfold = sum(elpd), p_kfold = NA_real_, kfoldic = -2 * sum(elpd))
  se <- sqrt(n * stats::var(elpd)) * c(1, NA, 2)
  structure(list(estimates = cbind(Estimate = est, SE = se),
                 pointwise = cbind(elpd_kfold = elpd)),
            K = K, yhash = fit_yhash(x), class = c("kfold", "loo"))
}

#' @rdname draws-methods
#' @exportS3Method bayesplot::pp_check
pp_check.clbayes_fit <- function(object, plotfun = "dens_overlay", nreps = NULL,
                                 seed = NULL, ...) {
  if (!is.character(plotfun) || length(plotfun) != 1L) {
    stop("`plotfun` must be the name of a bayesplot ppc_ function", call. = FALSE)
  }
  plotfun <- sub("^ppc_", "", plotfun)
  fun <- tryCatch(getExportedValue("bayesplot", paste0("ppc_", plotfun)),
                  error = function(e) stop(sprintf("`plotfun`: bayesplot has no ppc_%s()",
                                                   plotfun), call. = FALSE))
  if (is.null(nreps) && grepl("overlay", plotfun)) nreps <- min(50, nsamples(object))
  if (!is.null(seed)) set.seed(check_seed(seed))
  yrep <- posterior_predict(object, draws = nreps)
  fun(object$model$y, yrep, ...)
}

#' @rdname draws-methods
#' @exportS3Method bayesplot::rhat
rhat.clbayes_fit <- function(object, pars = NULL, regex_pars = NULL, ...) {
  check_no_dots(...)
  s <- summary(object, pars = pars, regex_pars = regex_pars)
  stats::setNames(s$rhat, s$variable)
}

#' @rdname draws-methods
#' @exportS3Method bayesplot::neff_ratio
neff_ratio.clbayes_fit <- function(object, pars = NULL, regex_pars = NULL, ...) {
  check_no_dots(...)
  s <- summary(object, pars = pars, regex_pars = regex_pars)
  stats::setNames(s$ess_bulk / nsamples(object), s$variable)
}

#' @rdname draws-methods
#' @exportS3Method bayesplot::nuts_params
nuts_params.clbayes_fit <- function(object, pars = NULL, inc_warmup = FALSE, ...) {
  check_no_dots(...)
  if (!identical(object$sampler, "hmc")) {
    stop("`object` must be a fit of hmc_sample_mv(): the slice sampler has no step size ",
         "or trajectories", call. = FALSE)
  }
  if (!isFALSE(inc_warmup)) stop("`inc_warmup` must be FALSE", call. = FALSE)
  per <- hmc_iteration_params(object)
  all <- c("stepsize__", "n_leapfrog__")
  pars <- pars %||% all
  bad <- setdiff(pars, all)
  if (length(bad)) {
    stop(sprintf("`pars`: %s not recorded (available: %s)", paste(bad, collapse = ", "),
                 paste(all, collapse = ", ")), call. = FALSE)
  }
  n <- nrow(per$n_leapfrog)
  m <- ncol(per$n_leapfrog)
  value <- list(stepsize__ = per$step_size, n_leapfrog__ = per$n_leapfrog)
  out <- do.call(rbind, lapply(pars, function(p) {
    data.frame(Chain = rep(seq_len(m), each = n), Iteration = rep(seq_len(n), m),
               Parameter = p, Value = c(value[[p]]))
  }))
  out$Parameter <- factor(out$Parameter, levels = pars)
  out
}

# The leapfrog steps and step size of every kept iteration of an HMC fit,
# iteration x chain matrices, by the engine's rule (hmc/sampler.hpp:
# iterate()): iteration i (0-based, warmup included) runs
# min(max_leapfrog, max(1, ceiling(halton(i) * length / step_size))) steps,
# with the step size and trajectory length of the chain's group fixed
# after warmup, at the kept iterations or at the post-warmup iterations
# `its` (1-based). `capped`: the iterations whose trajectory the cap cut.
hmc_iteration_params <- function(fit, its = NULL) {
  d <- dim(fit$draws)
  m <- d[2L]
  group <- fit$chain_group %||% rep(1L, m)
  # each chain group adapted its own step size and length (fit$groups)
  per_group <- function(field) {
    g <- vapply(fit$groups %||% list(), function(x) x[[field]] %||% NA_real_, 0)
    if (length(g) == max(group) && !anyNA(g)) g else rep_len(fit[[field]], max(group))
  }
  eps <- per_group("step_size")[group]
  len <- per_group("trajectory_length")[group]
  warmup <- rep_len(fit$warmup_total %||% fit$warmup, 1L)
  thin <- fit$thin %||% 1L
  # the kept iterations after warmup (1-based), or `its`
  its <- its %||% ((seq_len(d[1L]) - 1L) * thin + 1L)
  n <- length(its)
  i <- warmup + its - 1L
  h <- halton(i)
  raw <- outer(h, len / eps) # iteration x chain
  steps <- pmax(ceiling(raw), 1)
  list(n_leapfrog = pmin(steps, fit$max_leapfrog),
       capped = steps > fit$max_leapfrog,
       step_size = matrix(eps, n, m, byrow = TRUE))
}

# The base-2 Halton (van der Corput) number of iteration i (0-based), as
# hmc/chees.hpp's halton().
halton <- function(i) {
  n <- i + 1
  h <- numeric(length(i))
  f <- 0.5
  while (any(n > 0)) {
    h <- h + f * (n %% 2)
    n <- n %/% 2
    f <- f / 2
  }
  h
}
