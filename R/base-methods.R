# Base R's model methods on a fit, with the meaning rstanarm gives them for
# a stanreg: point summaries are posterior medians, vcov() is the
# covariance of the draws, update() runs the model and the sampler again.

#' Base R methods for a fit
#'
#' For fits of [glm_model()] and [lm_model()] (and, where it says so, of
#' any model or R function), as rstanarm's methods for a `stanreg`:
#' * `as.matrix()`: the kept draws, a draws x variables matrix, chain after
#'   chain (any fit);
#' * `fitted()`: the mean response at the posterior medians of the
#'   parameters (`inverse link(linear predictor)`), one per row of the data;
#' * `residuals()`: `y - fitted()` (for a binomial response with trials,
#'   the proportion `successes / trials` minus `fitted()`), as rstanarm;
#' * `vcov()`: the covariance of the draws of the coefficients (the fixed
#'   effects of a multilevel model), or their correlation;
#' * `confint()`: central posterior intervals (as [posterior_interval()])
#'   with the probability `level`;
#' * `sigma()`: the posterior median of `sigma`; 1 for families without
#'   one, as rstanarm;
#' * `nobs()`, `formula()`, `family()` (an R family object),
#'   `model.frame()` (the variables of the formula, evaluated in the
#'   model's data, rows with missing values dropped as the model did);
#' * `update()`: the model made again with the arguments of its call
#'   changed (`formula.`, `data`, priors, ...) and sampled again with the
#'   sampler's arguments changed (`iter`, `chains`, `seed`, ...); any fit;
#' * `logLik()` is an error: a fit has no maximum likelihood; use
#'   [log_lik()] or `loo()`.
#'
#' @param x,object,formula A `clbayes_fit` (`formula` for `model.frame()`,
#'   whose generic names its argument so).
#' @param pars,regex_pars Variables by name, or by regular expression;
#'   `NULL` for all.
#' @param type `"response"` (the only type, as rstanarm).
#' @param correlation `TRUE` for the correlation matrix.
#' @param parm Variables (names); all coefficients when missing.
#' @param level The probability of each interval, in (0, 1).
#' @param formula. A formula updating the model's, as [stats::update()].
#' @param evaluate `FALSE` to return the calls (`model`, `sampler`)
#'   instead of running them.
#' @param ... `update()`: arguments of the model's constructor (e.g.
#'   `data`, `prior`) and of the sampler (e.g. `iter`, `seed`); otherwise
#'   unused, an error if given.
#' @return See above.
#' @examples
#' d <- mtcars
#' fit <- hmc_sample_mv(lm_model(mpg ~ wt, d), iter = 500, chains = 4,
#'                      seed = 1, backend = "cpu")
#' dim(as.matrix(fit))
#' head(fitted(fit)); head(residuals(fit))
#' vcov(fit); sigma(fit); nobs(fit); formula(fit); family(fit)
#' confint(fit, level = 0.9)
#' fit2 <- update(fit, formula. = . ~ . + hp, seed = 2)
#' coef(fit2)
#' @importFrom stats fitted residuals vcov confint sigma nobs formula family
#' @importFrom stats model.frame logLik update
#' @name base-methods
NULL

#' @rdname base-methods
#' @method as.matrix clbayes_fit
#' @export
as.matrix.clbayes_fit <- function(x, pars = NULL, regex_pars = NULL, ...) {
  check_no_dots(...)
  d <- fit_draws(x)
  d[, select_variables(colnames(d), pars, regex_pars), drop = FALSE]
}

# The variables of `vars` named by `pars` or matched by `regex_pars`
# (both: their union), all when both are NULL; an error naming the
# argument for names that match nothing.
select_variables <- function(vars, pars = NULL, regex_pars = NULL) {
  if (is.null(pars) && is.null(regex_pars)) return(vars)
  out <- character()
  if (!is.null(pars)) {
    if (!is.character(pars)) stop("`pars` must be variable names", call. = FALSE)
    bad <- setdiff(pars, vars)
    if (length(bad)) {
      stop(sprintf("`pars`: no variable %s in the fit", paste0("`", bad, "`", collapse = ", ")),
           call. = FALSE)
    }
    out <- pars
  }
  if (!is.null(regex_pars)) {
    if (!is.character(regex_pars)) stop("`regex_pars` must be regular expressions",
                                        call. = FALSE)
    hit <- vars[Reduce(`|`, lapply(regex_pars, grepl, vars), FALSE)]
    if (!length(hit)) stop("`regex_pars` matches no variable of the fit", call. = FALSE)
    out <- union(out, hit)
  }
  out
}

# The model of a fit of glm_model() / lm_model() (formula or matrix form).
glm_fit_model <- function(object) {
  m <- object$model
  if (!inherits(m, "clbayes_glm_model")) {
    stop("`object` must be a fit of glm_model() or lm_model(formula, data)", call. = FALSE)
  }
  m
}

#' @rdname base-methods
#' @export
fitted.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  m <- glm_fit_model(object)
  d <- fit_draws(object)
  med <- matrix(apply(d, 2L, stats::median), 1L, dimnames = list(NULL, colnames(d)))
  eta <- fit_linear_predictor(object, med, fit_rows(object, NULL, NULL))
  stats::setNames(drop(family_mean(m, eta)), fit_row_names(object))
}

#' @rdname base-methods
#' @export
residuals.clbayes_fit <- function(object, type = "response", ...) {
  check_no_dots(...)
  if (!identical(type, "response")) stop("`type` must be \"response\"", call. = FALSE)
  m <- glm_fit_model(object)
  y <- if (is.null(m$trials)) m$y else m$y / m$trials
  stats::setNames(y - fitted(object), fit_row_names(object))
}

# The names of the model's rows: the data's row names (rows dropped by
# na.action left out), else 1, 2, ...
fit_row_names <- function(object) {
  n <- nrow(object$model$x)
  rn <- rownames(object$model$x) %||%
    tryCatch(rownames(model.frame(object)), error = function(e) NULL)
  if (length(rn) == n) rn else as.character(seq_len(n))
}

# The coefficients' names: the fixed effects, without sigma / phi and the
# group-level variables.
coefficient_names <- function(object) {
  m <- glm_fit_model(object)
  if (!is.null(m$fixed_names)) return(m$fixed_names)
  setdiff(dimnames(object$draws)[[3L]], c("sigma", "phi"))
}

#' @rdname base-methods
#' @export
vcov.clbayes_fit <- function(object, correlation = FALSE, ...) {
  check_no_dots(...)
  v <- stats::cov(as.matrix(object, pars = coefficient_names(object)))
  if (isTRUE(correlation)) stats::cov2cor(v) else v
}

#' @rdname base-methods
#' @export
confint.clbayes_fit <- function(object, parm, level = 0.95, ...) {
  check_no_dots(...)
  check_prob(level, "level")
  pars <- if (missing(parm)) coefficient_names(object) else parm
  posterior_interval(object, prob = level, pars = pars)
}

#' @rdname base-methods
#' @export
sigma.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  glm_fit_model(object)
  if (!"sigma" %in% dimnames(object$draws)[[3L]]) return(1)
  stats::median(object$draws[, , "sigma"])
}

#' @rdname base-methods
#' @export
nobs.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  m <- object$model
  if (is.null(m)) stop("`object` is a fit of an R function: it has no observations",
                       call. = FALSE)
  if (inherits(m, "clbayes_glm_model")) nrow(m$x) else as.integer(m$n_obs)
}

#' @rdname base-methods
#' @export
formula.clbayes_fit <- function(x, ...) {
  check_no_dots(...)
  f <- x$model$formula
  if (is.null(f)) stop("`x` must be a fit of a formula model (glm_model(formula, data))",
                       call. = FALSE)
  f
}

#' @rdname base-methods
#' @export
family.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  m <- glm_fit_model(object)
  m$family_object %||% switch(m$family, normal_id = stats::gaussian(),
                              bernoulli_logit = stats::binomial(),
                              poisson_log = stats::poisson(),
                              neg_binomial_2_log = neg_binomial_2(),
                              stop(sprintf("the family \"%s\" has no R family object",
                                           m$family), call. = FALSE))
}

# The data a formula model was made from, evaluated again from its call.
fit_data <- function(object) {
  m <- glm_fit_model(object)
  if (is.null(m$call) || is.null(m$formula)) {
    stop("`object` must be a fit of a formula model (glm_model(formula, data))",
         call. = FALSE)
  }
  data <- m$call$data
  if (is.null(data)) {
    stop("the model was made without `data`: its variables cannot be found again",
         call. = FALSE)
  }
  eval(data, environment(m$formula))
}

#' @rdname base-methods
#' @export
model.frame.clbayes_fit <- function(formula, ...) {
  check_no_dots(...)
  m <- glm_fit_model(formula)
  data <- fit_data(formula)
  f <- m$formula
  if (inherits(m, "clbayes_glmer_model")) f <- bars_as_terms(f)
  mf <- stats::model.frame(f, data, na.action = stats::na.pass)
  keep <- seq_len(nrow(mf))
  if (length(m$na_action)) keep <- setdiff(keep, as.integer(m$na_action))
  mf[keep, , drop = FALSE]
}

# A formula with each group-level term (x | g) written as x + g, so that
# model.frame() finds its variables (as lme4's subbars()).
bars_as_terms <- function(f) {
  swap <- function(e) {
    if (!is.call(e)) return(e)
    if (identical(e[[1L]], as.name("|")) || identical(e[[1L]], as.name("||"))) {
      e[[1L]] <- as.name("+")
    }
    e[-1L] <- lapply(as.list(e[-1L]), swap)
    e
  }
  out <- swap(f)
  environment(out) <- environment(f)
  out
}

#' @rdname base-methods
#' @export
logLik.clbayes_fit <- function(object, ...) {
  stop("logLik() is the maximised log-likelihood, which a posterior sample does not have: ",
       "use log_lik(fit) (draws x observations) or loo(fit)", call. = FALSE)
}

#' @rdname base-methods
#' @export
update.clbayes_fit <- function(object, formula., ..., evaluate = TRUE) {
  call <- object$call
  if (is.null(call)) {
    stop("`object` does not hold its sampler's call (a fit made before clbayes 0.2)",
         call. = FALSE)
  }
  args <- list(...)
  if (length(args) && (is.null(names(args)) || any(names(args) == ""))) {
    stop("`...`: every argument of update() must be named", call. = FALSE)
  }
  sampler <- if (identical(object$sampler, "hmc")) hmc_sample_mv else slice_sample_mv
  call[[1L]] <- if (identical(object$sampler, "hmc")) quote(clbayes::hmc_sample_mv)
    else quote(clbayes::slice_sample_mv)
  sampler_args <- setdiff(names(formals(sampler)), "...")
  m <- object$model
  model_call <- m$call
  model_args <- if (!is.null(model_call)) {
    constructor <- if (grepl("lm_model", deparse(model_call[[1L]]))) lm_model else glm_model
    setdiff(names(formals(constructor)), "...")
  }
  to_model <- setdiff(intersect(names(args), model_args), sampler_args)
  to_sampler <- setdiff(names(args), to_model)
  bad <- setdiff(to_sampler, sampler_args)
  if (length(bad) && !is.null(m)) {
    stop(sprintf("%s: not an argument of %s() or of the model",
                 paste0("`", bad, "`", collapse = ", "), deparse(call[[1L]])), call. = FALSE)
  }
  # the fit's own model, so that the call does not depend on the caller's names
  if (!is.null(m)) call$log_density <- m
  env <- parent.frame()
  if (!missing(formula.) || length(to_model)) {
    if (is.null(model_call)) {
      stop("`formula.` and the model's arguments are for fits of glm_model() / lm_model()",
           call. = FALSE)
    }
    if (!missing(formula.)) {
      model_call$formula <- stats::update.formula(m$formula, formula.)
    }
    for (a in to_model) model_call[a] <- list(args[[a]])
    model <- if (evaluate) eval(model_call, environment(m$formula)) else model_call
    call$log_density <- if (evaluate) model else model_call
    # a model of other parameters needs the model's own start
    if (evaluate && !identical(model$names, m$names)) call$init <- NULL
  }
  for (a in to_sampler) call[a] <- list(args[[a]])
  if (!evaluate) return(call)
  eval(call, env)
}
