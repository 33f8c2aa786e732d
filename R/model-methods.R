# After the fit of a glm_model() / lm_model(): point estimates, predictions
# and point-wise log-likelihoods from the draws, computed in R from the
# model's design matrix (rstanarm's coef, predict, posterior_predict and
# log_lik).

#' Draws of the posterior predictive distribution
#'
#' `posterior_predict()` and `log_lik()` are generics of this package with
#' the names and arguments of rstantools' generics (clbayes does not depend
#' on rstantools; when rstanarm or rstantools is attached after clbayes,
#' call `clbayes::posterior_predict()` / `clbayes::log_lik()`).
#'
#' @param object A `clbayes_fit` of a [glm_model()] or formula [lm_model()].
#' @param ... Unused.
#' @return See the methods: [posterior_predict.clbayes_fit()],
#'   [log_lik.clbayes_fit()].
#' @export
posterior_predict <- function(object, ...) UseMethod("posterior_predict")

#' @rdname posterior_predict
#' @export
log_lik <- function(object, ...) UseMethod("log_lik")

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
#' Draws are the post-warmup draws of all chains, chain after chain.
#'
#' @param object A `clbayes_fit`.
#' @param newdata For a formula model a data frame with the predictors; for
#'   the matrix form a matrix with the columns of `x`. `NULL` (the default)
#'   uses the data the model was made with.
#' @param type `"link"` or `"response"`.
#' @param draws The number of draws to use (a random subset), or `NULL` for
#'   all.
#' @param ... Unused.
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
#' @name model-methods
NULL

#' @rdname model-methods
#' @export
coef.clbayes_fit <- function(object, ...) {
  draws <- fit_draws(object)
  keep <- if (inherits(object$model, "clbayes_glm_model"))
    !colnames(draws) %in% c("sigma", "phi") else rep(TRUE, ncol(draws))
  apply(draws[, keep, drop = FALSE], 2L, stats::median)
}

#' @rdname model-methods
#' @export
predict.clbayes_fit <- function(object, newdata = NULL, type = c("link", "response"), ...) {
  type <- check_choice(type, c("link", "response"), "type")
  eta <- fit_linear_predictor(object, fit_draws(object), newdata)
  mu <- if (type == "link") eta else model_inverse_link(object$model, eta)
  unname(colMeans(mu))
}

#' @rdname model-methods
#' @export
posterior_predict.clbayes_fit <- function(object, newdata = NULL, draws = NULL, ...) {
  d <- fit_draws(object, draws)
  eta <- fit_linear_predictor(object, d, newdata)
  m <- object$model
  S <- nrow(eta)
  trials <- if (is.null(newdata)) m$trials else NULL
  out <- switch(m$family,
    normal_id = stats::rnorm(length(eta), eta, d[, "sigma"]),
    bernoulli_logit = stats::rbinom(length(eta), rep(trials %||% 1, each = S), stats::plogis(eta)),
    poisson_log = stats::rpois(length(eta), exp(eta)),
    neg_binomial_2_log = stats::rnbinom(length(eta), size = d[, "phi"], mu = exp(eta)))
  matrix(out, S, ncol(eta))
}

#' @rdname model-methods
#' @export
log_lik.clbayes_fit <- function(object, ...) {
  d <- fit_draws(object)
  eta <- fit_linear_predictor(object, d, NULL)
  m <- object$model
  S <- nrow(eta)
  y <- matrix(m$y, S, length(m$y), byrow = TRUE)
  out <- switch(m$family,
    normal_id = stats::dnorm(y, eta, d[, "sigma"], log = TRUE),
    bernoulli_logit = stats::dbinom(y, matrix(m$trials %||% 1, S, length(m$y), byrow = TRUE),
                                    stats::plogis(eta), log = TRUE),
    poisson_log = stats::dpois(y, exp(eta), log = TRUE),
    neg_binomial_2_log = stats::dnbinom(y, size = d[, "phi"], mu = exp(eta), log = TRUE))
  matrix(out, S, ncol(eta))
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

# The draws x observations matrix of linear predictors at `newdata`.
fit_linear_predictor <- function(fit, draws, newdata) {
  m <- fit$model
  if (!inherits(m, "clbayes_glm_model") ||
      m$family %in% c("categorical_logit", "ordered_logistic")) {
    stop("`object` must be a fit of glm_model() or lm_model(formula, data) with a ",
         "gaussian, binomial, poisson or negative binomial family", call. = FALSE)
  }
  x <- if (is.null(newdata)) m$x else model_new_x(m, newdata)
  k <- ncol(x)
  n_alpha <- as.integer(m$has_intercept)
  beta <- draws[, n_alpha + seq_len(k), drop = FALSE]
  eta <- beta %*% t(x)
  if (n_alpha == 1L) eta <- eta + draws[, 1L]
  eta
}

# The design matrix (no intercept column) of `newdata` for model `m`.
model_new_x <- function(m, newdata) {
  if (is.null(m$terms)) {
    if (!is.numeric(newdata) || !is.matrix(newdata) || ncol(newdata) != ncol(m$x)) {
      stop(sprintf("`newdata` must be a numeric matrix with %d columns, as `x`", ncol(m$x)),
           call. = FALSE)
    }
    return(newdata)
  }
  if (!is.data.frame(newdata)) stop("`newdata` must be a data frame", call. = FALSE)
  tt <- stats::delete.response(m$terms)
  mf <- stats::model.frame(tt, newdata, xlev = m$xlevels, na.action = stats::na.pass)
  X <- stats::model.matrix(tt, mf, contrasts.arg = m$contrasts)
  if (anyNA(X)) stop("`newdata` must have no missing predictors", call. = FALSE)
  X[, colnames(X) != "(Intercept)", drop = FALSE]
}

model_inverse_link <- function(m, eta) {
  switch(m$family, normal_id = eta, bernoulli_logit = stats::plogis(eta), exp(eta))
}
