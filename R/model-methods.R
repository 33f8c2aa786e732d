# After the fit of a glm_model() / lm_model(): point estimates, predictions
# and point-wise log-likelihoods from the draws, computed in R from the
# model's design matrix (rstanarm's coef, predict, posterior_predict and
# log_lik; the generics are rstantools', see R/rstantools-methods.R).

#' Point estimates, predictions and log-likelihoods of a model's fit
#'
#' For fits of [glm_model()] and the formula [lm_model()] (`fit$model`):
#' * `coef()`: the posterior medians of the coefficients (all variables for
#'   a fit of an R function or of another model), named;
#' * `predict()`: the posterior mean of the linear predictor (`type =
#'   "link"`) or of the mean response (`type = "response"`), one value per
#'   row of `newdata`;
#' * `posterior_predict()`: draws of the response, a draws x observations
#'   matrix (for a two-column binomial response: successes out of the row's
#'   trials);
#' * `log_lik()`: the point-wise log-likelihood, a draws x observations
#'   matrix as the loo package wants it (one column per row of the data, a
#'   two-column binomial row being one binomial observation).
#'
#' Draws are the post-warmup draws of all chains, chain after chain. The
#' linear predictor includes the model's offset (see [glm_model()]): its own
#' for the rows of its data; for `newdata`, the `offset()` terms of the
#' formula and the model's `offset` expression evaluated in `newdata`, as
#' [stats::predict.glm()] does, unless `offset` is given.
#'
#' @param object A `clbayes_fit`.
#' @param newdata For a formula model a data frame with the predictors (and,
#'   for `log_lik()`, the response; for `posterior_predict()` of a binomial
#'   model with a two-column response too, whose rows give the trials); for the matrix form a matrix with the
#'   columns of `x` (not for `log_lik()`, which needs the response). `NULL`
#'   (the default) uses the data the model was made with.
#' @param offset `NULL` (the default: the model's offset, as above) or a
#'   finite numeric vector with one value per row of `newdata` (or of the
#'   model's data), used as the offset in place of the model's. A matrix-form
#'   model with an offset needs it with `newdata`.
#' @param type `"link"` or `"response"`.
#' @param re.form For a multilevel model (group-level terms such as `(1 |
#'   g)`): `NULL` (the default) includes every group-level term, `NA` (or
#'   `~0`) none, and a formula such as `~ (1 | g)` the terms it names. A
#'   level of `newdata` the model has not seen takes, in each draw, effects
#'   drawn from its term's population distribution N(0, Sigma), as rstanarm
#'   does.
#' @param draws The number of draws to use (a random subset), or `NULL` for
#'   all.
#' @param fun `NULL`, or a function applied to `posterior_predict()`'s
#'   draws (as rstanarm's, e.g. `exp`).
#' @param seed `NULL`, or a seed for [set.seed()] before the draws are
#'   made (as rstanarm's).
#' @param se.fit,interval `predict()`: must be `FALSE` and `"none"` (the
#'   error says which function gives the posterior sd or the intervals:
#'   [posterior_linpred()], [predictive_interval()]).
#' @param ... Unused; an argument given here is an error.
#' @return `coef()`: a named vector. `predict()`: a vector. The others: a
#'   matrix, draws x observations.
#' @examples
#' set.seed(4)
#' d <- data.frame(x = rnorm(60))
#' d$y <- rpois(60, exp(0.5 + 0.4 * d$x))
#' m <- glm_model(y ~ x, d, family = poisson())
#' fit <- slice_sample_mv(m, init = m$init, n_iter = 200, width = 1,
#'                        method = "univariate", chains = 2, seed = 1,
#'                        backend = "cpu")
#' coef(fit)
#' head(predict(fit, type = "response"))
#' dim(posterior_predict(fit, draws = 50))
#' dim(log_lik(fit))
#' @importFrom stats coef predict
#' @importFrom rstantools posterior_predict log_lik
#' @name model-methods
NULL

#' @rdname model-methods
#' @export
coef.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  if (inherits(object$model, "clbayes_glmer_model")) return(multilevel_coef(object))
  draws <- fit_draws(object)
  keep <- if (inherits(object$model, "clbayes_glm_model"))
    !colnames(draws) %in% c("sigma", "phi") else rep(TRUE, ncol(draws))
  apply(draws[, keep, drop = FALSE], 2L, stats::median)
}

#' @rdname model-methods
#' @export
predict.clbayes_fit <- function(object, newdata = NULL, type = c("link", "response"),
                                offset = NULL, re.form = NULL, se.fit = FALSE,
                                interval = "none", ...) {
  check_no_dots(...)
  type <- check_choice(type, c("link", "response"), "type")
  if (!isFALSE(se.fit)) {
    stop("`se.fit` must be FALSE: for the posterior sd of the linear predictor use ",
         "apply(posterior_linpred(fit), 2, sd)", call. = FALSE)
  }
  if (!identical(interval, "none")) {
    stop("`interval` must be \"none\": for intervals use predictive_interval(fit) ",
         "(new observations) or posterior_interval(posterior_epred(fit)) (the mean)",
         call. = FALSE)
  }
  eta <- fit_linear_predictor(object, fit_draws(object),
                              fit_rows(object, newdata, offset, re.form = re.form))
  mu <- if (type == "link") eta else family_mean(object$model, eta)
  unname(colMeans(mu))
}

#' @rdname model-methods
#' @export
posterior_predict.clbayes_fit <- function(object, newdata = NULL, draws = NULL,
                                          offset = NULL, re.form = NULL, fun = NULL,
                                          seed = NULL, ...) {
  check_no_dots(...)
  if (!is.null(seed)) set.seed(check_seed(seed))
  if (!is.null(fun)) {
    fun <- match.fun(fun)
    return(fun(posterior_predict(object, newdata = newdata, draws = draws, offset = offset,
                                 re.form = re.form)))
  }
  d <- fit_draws(object, draws)
  # a binomial model with trials takes each new row's trials from its response
  rows <- fit_rows(object, newdata, offset, trials = TRUE, re.form = re.form)
  eta <- fit_linear_predictor(object, d, rows)
  family_draws(object$model, eta, d, rows$trials)
}

#' @rdname model-methods
#' @export
log_lik.clbayes_fit <- function(object, newdata = NULL, offset = NULL, re.form = NULL, ...) {
  check_no_dots(...)
  d <- fit_draws(object)
  rows <- fit_rows(object, newdata, offset, response = TRUE, re.form = re.form)
  eta <- fit_linear_predictor(object, d, rows)
  m <- object$model
  out <- family_log_density(m, rows$y, eta, d, rows$trials)
  # as rstanarm: each row's log density times its prior weight
  if (is.null(newdata) && !is.null(m$weights)) out <- sweep(out, 2L, m$weights, `*`)
  out
}

# The post-warmup draws as a (iterations x chains) x variables matrix, or
# `n` of them drawn at random.
fit_draws <- function(fit, n = NULL) {
  if (!inherits(fit, "clbayes_fit")) stop("`object` must be a clbayes_fit", call. = FALSE)
  a <- fit$draws
  out <- matrix(a, prod(dim(a)[1:2]), dim(a)[3L], dimnames = list(NULL, dimnames(a)[[3L]]))
  if (is.null(n)) return(out)
  n <- check_count(n, "draws", lower = 1)
  if (n > nrow(out)) {
    stop(sprintf("`draws` must be at most the number of draws (%d)", nrow(out)), call. = FALSE)
  }
  out[sort(sample.int(nrow(out), n)), , drop = FALSE]
}

# The draws x observations matrix of linear predictors at the rows `rows`
# (fit_rows()): alpha + x beta + offset per draw.
fit_linear_predictor <- function(fit, draws, rows) {
  m <- fit$model
  x <- rows$x
  k <- ncol(x)
  n_alpha <- as.integer(m$has_intercept)
  beta <- draws[, n_alpha + seq_len(k), drop = FALSE]
  eta <- beta %*% t(x)
  if (n_alpha == 1L) eta <- eta + draws[, 1L]
  if (!is.null(rows$offset)) eta <- eta + rep(rows$offset, each = nrow(eta))
  if (length(rows$re) > 0L) eta <- eta + group_linear_predictor(m, draws, rows$re, ncol(eta))
  eta
}

# The rows a prediction is for: list(x = the design without an intercept
# column, offset = NULL or one value per row, and with `response` y and
# trials), of `newdata` or of the model's own data; `offset`, when given,
# replaces the model's. With `trials`, the rows of a binomial model with a
# two-column response get their trials (from newdata's response).
fit_rows <- function(fit, newdata, offset, response = FALSE, trials = FALSE, re.form = NULL) {
  m <- fit$model
  if (!inherits(m, "clbayes_glm_model") ||
      m$family %in% c("categorical_logit", "ordered_logistic")) {
    stop("`object` must be a fit of glm_model() or lm_model(formula, data) with a ",
         "family with one linear predictor (not categorical or ordinal)", call. = FALSE)
  }
  if (trials && !is.null(newdata) && !is.null(m$trials)) {
    check_response_columns(m, newdata)
    response <- TRUE
  }
  rows <- if (is.null(newdata)) list(x = m$x, offset = m$offset, y = m$y, trials = m$trials)
    else if (is.null(m$terms)) matrix_new_rows(m, newdata, offset, response)
    else formula_new_rows(m, newdata, offset, response)
  if (!is.null(offset)) {
    rows$offset <- check_glm_offset(offset, nrow(rows$x),
                                    if (is.null(newdata)) "the model's data" else "`newdata`")
  }
  if (inherits(m, "clbayes_glmer_model")) {
    rows$re <- multilevel_rows(m, newdata, re.form)
  } else if (!is.null(re.form) && !identical(re.form, NA)) {
    stop("`re.form` is for models with group-level terms such as (1 | g)", call. = FALSE)
  }
  rows
}

# A binomial model with a two-column response draws each row's successes
# out of its trials: `newdata` must hold the response's variables.
check_response_columns <- function(m, newdata) {
  if (!is.data.frame(newdata)) stop("`newdata` must be a data frame", call. = FALSE)
  response <- attr(m$terms, "variables")[[attr(m$terms, "response") + 1L]]
  missing <- setdiff(all.vars(response), names(newdata))
  if (length(missing)) {
    stop(sprintf(paste0("`newdata` must have the response's columns (%s): the model's ",
                        "response %s gives each row's number of trials"),
                 paste(missing, collapse = ", "), paste(deparse(response), collapse = " ")),
         call. = FALSE)
  }
}

# The rows of `newdata` for a matrix-form model: its columns are x's.
matrix_new_rows <- function(m, newdata, offset, response) {
  if (response) {
    stop("`newdata` in log_lik() is for formula models (it needs the response)",
         call. = FALSE)
  }
  if (!is.numeric(newdata) || !is.matrix(newdata) || ncol(newdata) != ncol(m$x)) {
    stop(sprintf("`newdata` must be a numeric matrix with %d columns, as `x`", ncol(m$x)),
         call. = FALSE)
  }
  if (!is.null(m$offset) && is.null(offset)) {
    stop("`offset` must be given with `newdata`: the model has an offset (give one value ",
         "per row of `newdata`)", call. = FALSE)
  }
  list(x = newdata, offset = NULL)
}

# The rows of the data frame `newdata` for a formula model, as
# predict.glm() builds them: its design, its offset (the offset() terms and
# the `offset` expression evaluated in newdata, unless `offset` replaces
# them) and, with `response`, its response.
formula_new_rows <- function(m, newdata, offset, response) {
  if (!is.data.frame(newdata)) stop("`newdata` must be a data frame", call. = FALSE)
  tt <- if (response) m$terms else stats::delete.response(m$terms)
  # as predict.glm(): every variable present, and of the class it was fitted with
  missing_cols <- setdiff(all.vars(stats::delete.response(tt)), names(newdata))
  missing_cols <- missing_cols[!vapply(missing_cols, exists, logical(1),
                                       envir = environment(m$terms))]
  if (length(missing_cols) > 0L) {
    stop(sprintf("`newdata` must have the column(s) %s", paste0("`", missing_cols, "`",
                                                                collapse = ", ")), call. = FALSE)
  }
  # (a factor given as another type warns here; the class check below then
  # stops with the column's name, so the warning is dropped)
  mf <- withCallingHandlers(
    stats::model.frame(tt, newdata, xlev = m$xlevels, na.action = stats::na.pass),
    warning = function(w) if (grepl("is not a factor", conditionMessage(w), fixed = TRUE))
      invokeRestart("muffleWarning"))
  classes <- attr(m$terms, "dataClasses")
  if (!is.null(classes)) {
    tryCatch(stats::.checkMFClasses(classes, mf), error = function(e) {
      stop(sprintf("`newdata`: %s", conditionMessage(e)), call. = FALSE)
    })
  }
  X <- stats::model.matrix(tt, mf, contrasts.arg = m$contrasts)
  if (anyNA(X)) stop("`newdata` must have no missing predictors", call. = FALSE)
  rows <- list(x = X[, colnames(X) != "(Intercept)", drop = FALSE])
  if (response) {
    resp <- glm_response(stats::model.response(mf), m$family)
    if (anyNA(resp$y)) stop("`newdata` must have no missing responses", call. = FALSE)
    rows$y <- resp$y
    rows$trials <- resp$trials
  }
  if (is.null(offset)) {
    label <- paste(deparse(m$offset_call), collapse = " ")
    extra <- if (!is.null(m$offset_call)) {
      tryCatch(eval(m$offset_call, newdata, environment(m$terms)), error = function(e) {
        stop(sprintf("`offset`: the model's offset (%s) could not be evaluated in ",
                     label), "`newdata`: ", conditionMessage(e), call. = FALSE)
      })
    }
    rows$offset <- frame_offset(mf, extra, label, nrow(X), "`newdata`")
  }
  rows
}

