# The rstantools generics that rstanarm and brms share, extended for a
# clbayes_fit, so that with rstanarm or brms attached (in either order)
# every call dispatches to these methods: the linear predictor and the mean
# response per draw, intervals, the priors, Bayesian R^2 (Gelman, Goodrich,
# Gabry and Vehtari 2019) and the number of draws.

#' @importFrom rstantools log_lik
#' @export
rstantools::log_lik

#' @importFrom rstantools posterior_predict
#' @export
rstantools::posterior_predict

#' @importFrom rstantools posterior_linpred
#' @export
rstantools::posterior_linpred

#' @importFrom rstantools posterior_epred
#' @export
rstantools::posterior_epred

#' @importFrom rstantools posterior_interval
#' @export
rstantools::posterior_interval

#' @importFrom rstantools predictive_interval
#' @export
rstantools::predictive_interval

#' @importFrom rstantools prior_summary
#' @export
rstantools::prior_summary

#' @importFrom rstantools bayes_R2
#' @export
rstantools::bayes_R2

#' @importFrom rstantools loo_R2
#' @export
rstantools::loo_R2

#' @importFrom rstantools nsamples
#' @export
rstantools::nsamples

#' rstantools' methods for a fit
#'
#' The generics are rstantools' (re-exported), the ones rstanarm and brms
#' extend, so these calls work whichever of the packages is attached, and
#' give what rstanarm's methods give for a `stanreg`:
#' * `posterior_linpred()`: the linear predictor (offset and group-level
#'   terms included), a draws x observations matrix; `transform = TRUE`
#'   gives `posterior_epred()` instead, as rstanarm does;
#' * `posterior_epred()`: the mean response (inverse link of the linear
#'   predictor; for a binomial model the probability, not the count);
#' * `posterior_interval()`: central intervals of the parameters, a matrix
#'   with one row per variable and columns such as `5%` and `95%`; for any
#'   fit, also of an R function;
#' * `predictive_interval()`: central intervals of [posterior_predict()]'s
#'   draws, one row per observation;
#' * `prior_summary()`: the priors of the model (`prior`,
#'   `prior_intercept`, `prior_aux`, and `prior_covariance` for a
#'   multilevel model), as the model holds them;
#' * `bayes_R2()`: draws of Bayesian R^2, `var(mu) / (var(mu) + sigma^2)`
#'   per draw, with `sigma^2` the residual variance (gaussian) or the
#'   binomial variance averaged over the observations, as rstanarm; only
#'   for gaussian and binomial models, as rstanarm;
#' * `loo_R2()`: draws of the LOO-adjusted R^2 (leave-one-out predictions
#'   by Pareto smoothed importance sampling, Bayesian bootstrap weights
#'   drawn from the fit's seed), as rstanarm; loo needed;
#' * `nsamples()`, and posterior's `ndraws()`: the number of kept draws,
#'   all chains together.
#'
#' Draws are the post-warmup draws of all chains, chain after chain (the
#' order of `as.matrix()`).
#'
#' @param object A `clbayes_fit` (of [glm_model()] or [lm_model()] for all
#'   but `posterior_interval()`, `nsamples()` and `ndraws()`).
#' @param transform `TRUE` for the mean response ([posterior_epred()]).
#' @param newdata,offset,re.form,draws As for [posterior_predict()].
#' @param XZ Must be `FALSE` (rstanarm's design-matrix output is not
#'   available).
#' @param prob The probability mass of each central interval, in (0, 1).
#' @param type Must be `"central"` (rstanarm's only type).
#' @param pars,regex_pars Names, or regular expressions matching names, of
#'   the variables; `NULL` for all.
#' @param fun `NULL`, or a function applied to the predictive draws before
#'   the intervals (as rstanarm, e.g. `exp`).
#' @param seed `NULL`, or a seed for [set.seed()] before the draws are
#'   made.
#' @param digits Unused (rstanarm's argument of `prior_summary()`; the
#'   priors print in full).
#' @param x A `clbayes_fit` (`ndraws()`).
#' @param ... Unused; any argument given here is an error.
#' @return See above.
#' @examples
#' set.seed(2)
#' d <- data.frame(x = rnorm(50))
#' d$y <- 1 + 0.5 * d$x + rnorm(50)
#' fit <- hmc_sample_mv(lm_model(y ~ x, d), iter = 400, chains = 4, seed = 1,
#'                      backend = "cpu")
#' posterior_interval(fit)
#' dim(posterior_epred(fit))
#' head(predictive_interval(fit))
#' summary(bayes_R2(fit))
#' prior_summary(fit)
#' nsamples(fit)
#' @name rstantools-methods
NULL

#' @rdname rstantools-methods
#' @export
posterior_linpred.clbayes_fit <- function(object, transform = FALSE, newdata = NULL,
                                          draws = NULL, re.form = NULL, offset = NULL,
                                          XZ = FALSE, ...) {
  check_no_dots(...)
  if (!isFALSE(XZ)) stop("`XZ` must be FALSE: clbayes does not return the design matrix",
                         call. = FALSE)
  if (isTRUE(transform)) {
    return(posterior_epred(object, newdata = newdata, draws = draws, re.form = re.form,
                           offset = offset))
  }
  if (!isFALSE(transform)) stop("`transform` must be TRUE or FALSE", call. = FALSE)
  rows <- fit_rows(object, newdata, offset, re.form = re.form)
  fit_linear_predictor(object, fit_draws(object, draws), rows)
}

#' @rdname rstantools-methods
#' @export
posterior_epred.clbayes_fit <- function(object, newdata = NULL, draws = NULL,
                                        re.form = NULL, offset = NULL, ...) {
  check_no_dots(...)
  eta <- posterior_linpred(object, newdata = newdata, draws = draws, re.form = re.form,
                           offset = offset)
  family_mean(object$model, eta)
}

#' @rdname rstantools-methods
#' @export
posterior_interval.clbayes_fit <- function(object, prob = 0.9, type = "central",
                                           pars = NULL, regex_pars = NULL, ...) {
  check_no_dots(...)
  if (!identical(type, "central")) stop("`type` must be \"central\"", call. = FALSE)
  check_prob(prob, "prob")
  rstantools::posterior_interval(as.matrix(object, pars = pars, regex_pars = regex_pars),
                                 prob = prob)
}

#' @rdname rstantools-methods
#' @export
predictive_interval.clbayes_fit <- function(object, prob = 0.9, newdata = NULL,
                                           draws = NULL, re.form = NULL, fun = NULL,
                                           seed = NULL, offset = NULL, ...) {
  check_no_dots(...)
  check_prob(prob, "prob")
  if (!is.null(seed)) set.seed(check_seed(seed))
  ypred <- posterior_predict(object, newdata = newdata, draws = draws, offset = offset,
                             re.form = re.form)
  if (!is.null(fun)) {
    fun <- match.fun(fun)
    ypred <- fun(ypred)
  }
  rstantools::predictive_interval(ypred, prob = prob)
}

#' @rdname rstantools-methods
#' @export
prior_summary.clbayes_fit <- function(object, digits = 2, ...) {
  check_no_dots(...)
  m <- object$model
  if (inherits(m, "clbayes_lm_model")) {
    out <- list(note = "lm_model(y, X): flat priors on the coefficients, sigma = 1")
  } else if (inherits(m, "clbayes_glm_model")) {
    out <- m[intersect(c("prior", "prior_intercept", "prior_aux", "prior_covariance"),
                       names(m))]
  } else if (inherits(m, "clbayes_gp_model")) {
    out <- list(priors = m$priors)
  } else {
    stop("`object` is a fit of an R function: its priors are part of that function",
         call. = FALSE)
  }
  structure(out, class = "clbayes_prior_summary")
}

#' @export
print.clbayes_prior_summary <- function(x, ...) {
  for (nm in names(x)) {
    cat(nm, ":\n  ", sep = "")
    v <- x[[nm]]
    if (inherits(v, "clbayes_prior")) print(v) else utils::str(v, give.head = FALSE)
  }
  invisible(x)
}

#' @rdname rstantools-methods
#' @export
bayes_R2.clbayes_fit <- function(object, re.form = NULL, ...) {
  check_no_dots(...)
  fam <- r2_family(object, "bayes_R2")
  mu <- posterior_epred(object, re.form = re.form)
  if (fam == "binomial") {
    trials <- object$model$trials
    if (!is.null(trials)) {
      mu_n <- mu * matrix(trials, nrow(mu), ncol(mu), byrow = TRUE)
      sigma2 <- rowMeans(mu_n * (1 - mu))
      mu <- mu_n
    } else {
      sigma2 <- rowMeans(mu * (1 - mu))
    }
  } else {
    sigma2 <- fit_draws(object)[, "sigma"]^2
  }
  var_mu <- apply(mu, 1L, stats::var)
  var_mu / (var_mu + sigma2)
}

#' @rdname rstantools-methods
#' @export
loo_R2.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  need_package("loo", "loo_R2()")
  r2_family(object, "loo_R2")
  y <- object$model$y
  ll <- log_lik(object)
  psis <- suppressWarnings(loo::psis(-ll, r_eff = fit_relative_eff(object, ll)))
  mu <- posterior_epred(object)
  if (!is.null(object$model$trials)) {
    mu <- mu * matrix(object$model$trials, nrow(mu), ncol(mu), byrow = TRUE)
  }
  mu_loo <- loo::E_loo(mu, psis, log_ratios = -ll)$value
  err <- mu_loo - y
  S <- nrow(mu)
  N <- ncol(mu)
  # Bayesian bootstrap weights from the fit's own seed, R's stream left as it was
  had_seed <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (had_seed) old <- get(".Random.seed", envir = globalenv())
  on.exit(if (had_seed) assign(".Random.seed", old, envir = globalenv())
          else rm(".Random.seed", envir = globalenv()))
  set.seed(object$seed %% .Machine$integer.max)
  w <- matrix(stats::rexp(S * N), S, N)
  w <- w / rowSums(w)
  wvar <- function(v) (drop(w %*% v^2) - drop(w %*% v)^2) * N / (N - 1)
  r2 <- 1 - wvar(err) / wvar(y)
  pmin(pmax(r2, -1), 1)
}

# bayes_R2 and loo_R2 are for gaussian and binomial models, as rstanarm's.
r2_family <- function(object, what) {
  m <- object$model
  fam <- if (inherits(m, "clbayes_glm_model")) {
    switch(m$family, normal_id = "gaussian", bernoulli_logit = "binomial", m$family)
  } else ""
  if (!fam %in% c("gaussian", "binomial")) {
    stop(sprintf(paste0("%s() is for fits of gaussian and binomial glm_model() / ",
                        "lm_model(), as rstanarm's"), what), call. = FALSE)
  }
  fam
}

#' @rdname rstantools-methods
#' @export
nsamples.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  prod(dim(object$draws)[1:2])
}

#' @rdname rstantools-methods
#' @exportS3Method posterior::ndraws
ndraws.clbayes_fit <- function(x) prod(dim(x$draws)[1:2])

# An error naming every argument that reached `...` of a method that
# honours none there.
check_no_dots <- function(...) {
  if (...length() == 0L) return(invisible())
  nm <- ...names()
  nm <- if (is.null(nm)) rep("", ...length()) else nm
  shown <- ifelse(nm == "", "an unnamed argument", paste0("`", nm, "`"))
  stop(sprintf("%s: not an argument of this method", paste(unique(shown), collapse = ", ")),
       call. = FALSE)
}

check_prob <- function(p, arg) {
  if (!is.numeric(p) || length(p) != 1L || !is.finite(p) || p <= 0 || p >= 1) {
    stop(sprintf("`%s` must be a number strictly between 0 and 1", arg), call. = FALSE)
  }
}

need_package <- function(pkg, what) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    stop(sprintf("%s needs the %s package: install.packages(\"%s\")", what, pkg, pkg),
         call. = FALSE)
  }
}
