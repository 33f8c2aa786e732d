# Priors for glm_model() and lm_model(), as rstanarm writes them. A prior
# object only records the distribution and its numbers; prior_table() lays
# the priors of a model out one parameter a row for the C++ core
# (models/priors.hpp), which evaluates them with the likelihood.

#' Prior distributions for glm_model() and lm_model()
#'
#' The priors of rstanarm, for the `prior` (coefficients), `prior_intercept`
#' and `prior_aux` (`sigma` or `phi`) arguments of [glm_model()] and
#' [lm_model()]. `NULL` in place of a prior means a flat (improper uniform)
#' prior.
#'
#' @param location Prior location: one number, or for `prior` one per
#'   coefficient (in the order of the columns of the design matrix, without
#'   the intercept).
#' @param scale Prior scale, positive: one number or one per coefficient.
#'   `NULL` takes the default of the argument the prior is given to: 2.5 for
#'   `prior`, 10 for `prior_intercept` and 1 for `prior_aux`.
#' @param df Degrees of freedom of the Student-t, positive.
#' @param rate Rate of the exponential, positive (for `prior_aux` only).
#' @details Scales are used as given: unlike rstanarm, clbayes does not
#'   rescale them by the standard deviations of the predictors or of the
#'   response (no autoscaling), and the intercept's prior is on the
#'   intercept of the predictors as given (not centred). Put predictors and
#'   response on a unit scale, or choose the scales, accordingly.
#'
#'   Given as `prior_aux`, `normal()`, `student_t()` and `cauchy()` are the
#'   half distributions on the positive parameter (truncated at zero).
#'   `cauchy(location, scale)` is `student_t(1, location, scale)`.
#'   `exponential()` is only for `prior_aux`.
#' @return An object of class `clbayes_prior`.
#' @examples
#' normal(0, 2.5)
#' student_t(df = 3, location = 0, scale = c(1, 2))
#' cauchy(0, 5)
#' exponential(1)
#' @name priors
NULL

new_prior <- function(dist, df = NA_real_, location = 0, scale = NULL) {
  check_prior_numbers(location, "location", positive = FALSE)
  if (!is.null(scale)) check_prior_numbers(scale, "scale", positive = TRUE)
  check_prior_numbers(df, "df", positive = TRUE, na_ok = dist != "student_t")
  structure(list(dist = dist, df = as.double(df), location = as.double(location),
                 scale = if (!is.null(scale)) as.double(scale)),
            class = "clbayes_prior")
}

check_prior_numbers <- function(v, arg, positive, na_ok = FALSE) {
  if (na_ok && length(v) == 1L && is.na(v)) return(invisible())
  ok <- is.numeric(v) && length(v) >= 1L && !anyNA(v) && all(is.finite(v)) &&
    (!positive || all(v > 0))
  if (!ok) {
    stop(sprintf("`%s` must be %s number(s)", arg,
                 if (positive) "positive, finite" else "finite"), call. = FALSE)
  }
  invisible()
}

#' @rdname priors
#' @export
normal <- function(location = 0, scale = NULL) new_prior("normal", location = location,
                                                         scale = scale)

#' @rdname priors
#' @export
student_t <- function(df = 1, location = 0, scale = NULL) {
  new_prior("student_t", df = df, location = location, scale = scale)
}

#' @rdname priors
#' @export
cauchy <- function(location = 0, scale = NULL) new_prior("cauchy", df = 1,
                                                         location = location, scale = scale)

#' @rdname priors
#' @export
exponential <- function(rate = 1) {
  check_prior_numbers(rate, "rate", positive = TRUE)
  if (length(rate) != 1L) stop("`rate` must be a single number", call. = FALSE)
  structure(list(dist = "exponential", rate = as.double(rate)), class = "clbayes_prior")
}

#' @export
print.clbayes_prior <- function(x, ...) {
  num <- function(v) if (length(v) == 1L) format(v) else
    paste0("c(", paste(format(v), collapse = ", "), ")")
  txt <- switch(x$dist,
    exponential = sprintf("exponential(rate = %s)", num(x$rate)),
    decov = sprintf("decov(regularization = %s, concentration = %s, shape = %s, scale = %s)",
                    num(x$regularization), num(x$concentration), num(x$shape), num(x$scale)),
    lkj = sprintf("lkj(regularization = %s, scale = %s, df = %s, autoscale = %s)",
                  num(x$regularization), num(x$scale), num(x$df), x$autoscale),
    student_t = sprintf("student_t(df = %s, location = %s, scale = %s)", num(x$df),
                        num(x$location), if (is.null(x$scale)) "NULL" else num(x$scale)),
    sprintf("%s(location = %s, scale = %s)", x$dist, num(x$location),
            if (is.null(x$scale)) "NULL" else num(x$scale)))
  cat(txt, "\n", sep = "")
  invisible(x)
}

prior_fields <- c("dist", "df", "location", "scale", "rate")

# `p` (given as argument `arg`) checked: NULL or a clbayes_prior whose
# entries are all known; exponential() only where `aux`.
check_prior_arg <- function(p, arg, aux = FALSE) {
  if (is.null(p)) return(NULL)
  if (!is.list(p)) {
    stop(sprintf("`%s` must be a prior made by normal(), student_t(), cauchy()%s, or NULL",
                 arg, if (aux) ", exponential()" else ""), call. = FALSE)
  }
  unknown <- setdiff(names(p) %||% "<unnamed>", prior_fields)
  if (length(unknown) > 0L || !inherits(p, "clbayes_prior")) {
    stop(sprintf(paste0("`%s` has unknown entries (%s): give a prior made by normal(), ",
                        "student_t(), cauchy()%s, or NULL"), arg,
                 paste(if (length(unknown)) unknown else "not a prior", collapse = ", "),
                 if (aux) ", exponential()" else ""), call. = FALSE)
  }
  check_prior_dist(p, arg, aux)
  if (p$dist == "exponential" && !aux) {
    stop(sprintf("`%s` must be normal(), student_t(), cauchy() or NULL: exponential() is for `prior_aux`",
                 arg), call. = FALSE)
  }
  p
}

# The rows of the prior table for `n` parameters under prior `p` (checked
# by check_prior_arg(); scale NULL takes `default_scale`).
prior_rows <- function(p, n, arg, default_scale) {
  if (n == 0L) return(NULL)
  if (is.null(p)) {
    return(list(dist = rep("flat", n), df = rep(1, n), location = rep(0, n),
                scale = rep(1, n), arg = rep(arg, n)))
  }
  if (p$dist == "exponential") {
    return(list(dist = rep("exponential", n), df = rep(1, n), location = rep(0, n),
                scale = rep(1 / p$rate, n), arg = rep(arg, n)))
  }
  scale <- p$scale %||% default_scale
  for (field in c("location", "scale", "df")) {
    v <- switch(field, location = p$location, scale = scale, df = p$df)
    if (!length(v) %in% c(1L, n)) {
      stop(sprintf("`%s` must have %s of length %s (one per %s), not %d", arg, field,
                   if (n == 1L) "1" else paste("1 or", n),
                   if (arg == "prior") "coefficient" else "parameter", length(v)),
           call. = FALSE)
    }
  }
  df <- if (p$dist == "normal") 1 else p$df
  list(dist = rep(if (p$dist == "normal") "normal" else "student_t", n),
       df = rep_len(df, n), location = rep_len(p$location, n),
       scale = rep_len(scale, n), arg = rep(arg, n))
}

# The table the C++ core reads (one row per parameter, in the order of a
# point): `n_alpha` intercepts under prior_intercept, `n_beta` coefficients
# under prior, then `n_aux` positive parameters under prior_aux and `n_cuts`
# cut points under prior_intercept.
prior_table <- function(prior, prior_intercept, prior_aux, n_alpha, n_beta, n_aux,
                        n_cuts = 0L) {
  parts <- list(prior_rows(prior_intercept, n_alpha, "prior_intercept", 10),
                prior_rows(prior, n_beta, "prior", 2.5),
                prior_rows(prior_aux, n_aux, "prior_aux", 1),
                prior_rows(prior_intercept, n_cuts, "prior_intercept", 10))
  parts <- parts[!vapply(parts, is.null, logical(1))]
  if (length(parts) == 0L) {
    return(list(dist = character(), df = numeric(), location = numeric(),
                scale = numeric(), arg = character()))
  }
  out <- lapply(names(parts[[1L]]), function(f) unlist(lapply(parts, `[[`, f), use.names = FALSE))
  stats::setNames(out, names(parts[[1L]]))
}

#' Priors of the covariance of group-level terms
#'
#' The `prior_covariance` of a multilevel [glm_model()] or [lm_model()]
#' (terms such as `(1 | g)` or `(x | g)`), as rstanarm's `stan_glmer()`
#' and `stan_mvmer()` define them. Each term's effects are non-centred: at
#' every level `b = T z` with `z ~ N(0, I)` and `Sigma = T T'` the term's
#' covariance.
#'
#' `decov()` (the default, rstanarm's `decov()`): the covariance matrix is
#' decomposed into a correlation matrix with an LKJ(`regularization`) prior,
#' a simplex of variance shares with a Dirichlet(`concentration`) prior, and
#' the trace, `p (tau scale)^2` for a term with `p` coefficients, with `tau
#' ~ gamma(shape, 1)`. In a gaussian model the trace is also multiplied by
#' `sigma^2`, as rstanarm does. A term with one coefficient has standard
#' deviation `tau * scale` (times `sigma`, gaussian). The construction is
#' rstanarm's step for step, so the same call gives the same posterior in
#' both packages.
#'
#' `lkj()` (rstanarm's `lkj()` of `stan_mvmer()`): the correlation matrix
#' has an LKJ(`regularization`) prior and each standard deviation a half
#' Student-t(`df`, 0, `scale`) prior; with `autoscale = TRUE` the scale of a
#' gaussian model is multiplied by `sd(y)`.
#'
#' Each argument is one number, or one per group-level term (in the order of
#' the terms lme4 builds). rstanarm's objects made by `rstanarm::decov()`
#' and `rstanarm::lkj()` are accepted too.
#'
#' @param regularization LKJ shape of the correlations (1: uniform over
#'   correlation matrices; larger values pull towards the identity).
#' @param concentration Dirichlet concentration of the variance shares.
#' @param shape Gamma shape of `tau`.
#' @param scale `decov()`: scale multiplying `tau`; `lkj()`: scale of the
#'   standard deviations' half Student-t.
#' @param df Degrees of freedom of the standard deviations' half Student-t.
#' @param autoscale Whether `lkj()`'s scale is multiplied by `sd(y)` in a
#'   gaussian model.
#' @return An object of class `clbayes_prior` with `dist` `"decov"` or
#'   `"lkj"`.
#' @seealso [glm_model()], [priors]
#' @examples
#' decov()
#' lkj(regularization = 2)
#' @name covariance-priors
NULL

#' @rdname covariance-priors
#' @export
decov <- function(regularization = 1, concentration = 1, shape = 1, scale = 1) {
  for (a in c("regularization", "concentration", "shape", "scale")) {
    check_prior_numbers(get(a), a, positive = TRUE)
  }
  structure(list(dist = "decov", regularization = as.double(regularization),
                 concentration = as.double(concentration), shape = as.double(shape),
                 scale = as.double(scale)), class = "clbayes_prior")
}

#' @rdname covariance-priors
#' @export
lkj <- function(regularization = 1, scale = 10, df = 1, autoscale = TRUE) {
  for (a in c("regularization", "scale", "df")) check_prior_numbers(get(a), a, positive = TRUE)
  if (!is.logical(autoscale) || length(autoscale) != 1L || is.na(autoscale)) {
    stop("`autoscale` must be TRUE or FALSE", call. = FALSE)
  }
  structure(list(dist = "lkj", regularization = as.double(regularization),
                 scale = as.double(scale), df = as.double(df), autoscale = autoscale),
            class = "clbayes_prior")
}

# `prior_covariance` checked and laid out one term a row: a list of n_terms
# lists with the prior's numbers for that term (rstanarm's decov() and lkj()
# objects are accepted: the same fields).
check_prior_covariance <- function(p, n_terms) {
  dist <- if (is.list(p)) p$dist else NULL
  if (!is.character(dist) || length(dist) != 1L || !dist %in% c("decov", "lkj")) {
    stop("`prior_covariance` must be decov() or lkj()", call. = FALSE)
  }
  fields <- if (dist == "decov") c("regularization", "concentration", "shape", "scale")
    else c("regularization", "scale", "df")
  for (f in fields) {
    v <- p[[f]]
    if (!is.numeric(v) || !length(v) %in% c(1L, n_terms) || any(!is.finite(v)) || any(v <= 0)) {
      stop(sprintf(paste0("`prior_covariance`: `%s` must be positive, one number or one per ",
                          "group-level term (%d)"), f, n_terms), call. = FALSE)
    }
  }
  lapply(seq_len(n_terms), function(t) {
    out <- lapply(p[fields], function(v) rep_len(v, n_terms)[t])
    out$dist <- dist
    out$autoscale <- !isFALSE(p$autoscale)
    out
  })
}
