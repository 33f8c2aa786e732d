# Priors for glm_model() and lm_model(), as rstanarm writes them. A prior
# object only records the distribution and its numbers, in the fields of
# rstanarm's (dist, df, location, scale, autoscale, and hs()'s own), so that
# rstanarm's objects are accepted too (as_model_prior()). R/prior-table.R
# adjusts them as rstanarm does (autoscale) and lays them out one parameter
# a row for the C++ core (models/priors.hpp, models/horseshoe.hpp).

#' Prior distributions for glm_model() and lm_model()
#'
#' The priors of rstanarm, for the `prior` (coefficients), `prior_intercept`
#' and `prior_aux` (`sigma` or `phi`) arguments of [glm_model()] and
#' [lm_model()], with rstanarm's arguments, defaults and meaning. `NULL` in
#' place of a prior means a flat (improper uniform) prior. The objects made
#' by rstanarm's functions of the same names are accepted as well, so either
#' package may be loaded last.
#'
#' @param location Prior location: one number, or for `prior` one per
#'   coefficient (in the order of the columns of the design matrix, without
#'   the intercept).
#' @param scale Prior scale, positive: one number or one per coefficient.
#'   `NULL` takes rstanarm's default: 2.5 for `prior` and `prior_intercept`,
#'   1 for `prior_aux`.
#' @param df Degrees of freedom, positive: of the Student-t; for `hs()`, of
#'   the half Student-t of the local shrinkage parameters (one number or one
#'   per coefficient).
#' @param rate Rate of the exponential, positive (for `prior_aux` only).
#' @param autoscale Whether the scale is adjusted to the data as rstanarm
#'   does (see Details).
#' @param global_df,global_scale Degrees of freedom and scale of the half
#'   Student-t prior of the horseshoe's global shrinkage parameter `tau`.
#' @param slab_df,slab_scale Degrees of freedom and scale of the Student-t
#'   slab of the regularised horseshoe.
#' @details `autoscale = TRUE` adjusts the scale exactly as rstanarm's
#'   `stan_glm()` does (see rstanarm's vignette "Prior Distributions for
#'   rstanarm Models"): for a gaussian model every autoscaled scale (of
#'   `prior`, `prior_intercept` and `prior_aux`) is multiplied by `sd(y)`,
#'   and each coefficient's scale is then divided by the standard deviation
#'   of its predictor (a constant predictor keeps its scale). For the
#'   `probit` link the scales of `prior` and `prior_intercept` are
#'   multiplied by `dnorm(0) / dlogis(0)`, as rstanarm does, whether
#'   autoscaled or not. The defaults of [glm_model()] are rstanarm's:
#'   `normal(0, 2.5, autoscale = TRUE)` on the coefficients and on the
#'   intercept of the centred predictors (at location `mean(y)` for a
#'   gaussian model with the identity link), and `exponential(1, autoscale
#'   = TRUE)` on `sigma` or `phi`. Priors you give are used with the
#'   `autoscale` you give them (`FALSE` unless you say so, as in rstanarm).
#'
#'   Given as `prior_aux`, `normal()`, `student_t()` and `cauchy()` are the
#'   half distributions on the positive parameter (truncated at zero).
#'   `cauchy(location, scale)` is `student_t(1, location, scale)`.
#'   `laplace()` is the double exponential (Stan's `double_exponential`).
#'   `exponential()` is only for `prior_aux`; `laplace()` and `hs()` only
#'   for `prior`.
#'
#'   `hs()` is the regularised horseshoe of Piironen and Vehtari (2017),
#'   parameterised as rstanarm parameterises it: `beta_j = z_j tau
#'   lambda_tilde_j` with `lambda_tilde_j^2 = c^2 lambda_j^2 / (c^2 + tau^2
#'   lambda_j^2)`, half Student-t(`df`) local scales `lambda_j`, `tau` half
#'   Student-t(`global_df`, 0, `global_scale`) (times `sigma` in a gaussian
#'   model), and `c^2 = slab_scale^2 caux` with `caux ~ inv_gamma(slab_df /
#'   2, slab_df / 2)`. Each half Student-t is a half normal times the root
#'   of an inverse gamma, as in rstanarm, so the samplers draw `z_beta[j]`,
#'   `global[1]`, `global[2]`, `local[1,j]`, `local[2,j]` and `caux[1]` in
#'   place of the coefficients; the fit reports the coefficients (by their
#'   names), as rstanarm does. `hs()` does not autoscale (nor does
#'   rstanarm's). rstanarm advises `global_scale = p0 / (D - p0) /
#'   sqrt(n)` for `p0` expected non-zero coefficients out of `D`.
#' @return An object of class `clbayes_prior`: a list with rstanarm's
#'   fields `dist` (`"normal"`, `"student_t"`, `"cauchy"`, `"laplace"`,
#'   `"hs"` or `"exponential"`), `df`, `location`, `scale` and `autoscale`
#'   (`exponential()` adds `rate`; `hs()` has `global_df`,
#'   `global_scale`, `slab_df` and `slab_scale` and no `autoscale`).
#' @references Piironen, J. and Vehtari, A. (2017). Sparsity information and
#'   regularization in the horseshoe and other shrinkage priors. Electronic
#'   Journal of Statistics 11(2), 5018-5051.
#' @examples
#' normal(0, 2.5)
#' normal(0, 2.5, autoscale = TRUE)
#' student_t(df = 3, location = 0, scale = c(1, 2))
#' cauchy(0, 5)
#' laplace(0, 1)
#' hs(global_scale = 0.05)
#' exponential(1)
#' @name priors
NULL

new_prior <- function(dist, df = NA_real_, location = 0, scale = NULL, autoscale = FALSE) {
  check_prior_numbers(location, "location", positive = FALSE)
  if (!is.null(scale)) check_prior_numbers(scale, "scale", positive = TRUE)
  check_prior_numbers(df, "df", positive = TRUE, na_ok = dist != "student_t")
  check_autoscale(autoscale)
  structure(list(dist = dist, df = as.double(df), location = as.double(location),
                 scale = if (!is.null(scale)) as.double(scale), autoscale = autoscale),
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

check_autoscale <- function(autoscale) {
  if (!is.logical(autoscale) || length(autoscale) != 1L || is.na(autoscale)) {
    stop("`autoscale` must be TRUE or FALSE", call. = FALSE)
  }
  invisible()
}

#' @rdname priors
#' @export
normal <- function(location = 0, scale = NULL, autoscale = FALSE) {
  new_prior("normal", location = location, scale = scale, autoscale = autoscale)
}

#' @rdname priors
#' @export
student_t <- function(df = 1, location = 0, scale = NULL, autoscale = FALSE) {
  new_prior("student_t", df = df, location = location, scale = scale, autoscale = autoscale)
}

#' @rdname priors
#' @export
cauchy <- function(location = 0, scale = NULL, autoscale = FALSE) {
  new_prior("cauchy", df = 1, location = location, scale = scale, autoscale = autoscale)
}

#' @rdname priors
#' @export
laplace <- function(location = 0, scale = NULL, autoscale = FALSE) {
  new_prior("laplace", location = location, scale = scale, autoscale = autoscale)
}

#' @rdname priors
#' @export
hs <- function(df = 1, global_df = 1, global_scale = 0.01, slab_df = 4, slab_scale = 2.5) {
  check_prior_numbers(df, "df", positive = TRUE)
  for (a in c("global_df", "global_scale", "slab_df", "slab_scale")) {
    v <- get(a)
    check_prior_numbers(v, a, positive = TRUE)
    if (length(v) != 1L) stop(sprintf("`%s` must be a single number", a), call. = FALSE)
  }
  structure(list(dist = "hs", df = as.double(df), location = 0, scale = 1,
                 global_df = as.double(global_df), global_scale = as.double(global_scale),
                 slab_df = as.double(slab_df), slab_scale = as.double(slab_scale)),
            class = "clbayes_prior")
}

#' @rdname priors
#' @export
exponential <- function(rate = 1, autoscale = FALSE) {
  check_prior_numbers(rate, "rate", positive = TRUE)
  if (length(rate) != 1L) stop("`rate` must be a single number", call. = FALSE)
  check_autoscale(autoscale)
  structure(list(dist = "exponential", df = NA_real_, location = NA_real_,
                 scale = 1 / as.double(rate), rate = as.double(rate), autoscale = autoscale),
            class = "clbayes_prior")
}

#' @export
print.clbayes_prior <- function(x, ...) {
  num <- function(v) if (length(v) == 1L) format(v) else
    paste0("c(", paste(format(v), collapse = ", "), ")")
  auto <- if (isTRUE(x$autoscale)) ", autoscale = TRUE" else ""
  scale <- if (is.null(x$scale)) "NULL" else num(x$scale)
  txt <- switch(x$dist,
    exponential = sprintf("exponential(rate = %s%s)", num(x$rate), auto),
    decov = sprintf("decov(regularization = %s, concentration = %s, shape = %s, scale = %s)",
                    num(x$regularization), num(x$concentration), num(x$shape), num(x$scale)),
    lkj = sprintf("lkj(regularization = %s, scale = %s, df = %s, autoscale = %s)",
                  num(x$regularization), num(x$scale), num(x$df), x$autoscale),
    hs = sprintf("hs(df = %s, global_df = %s, global_scale = %s, slab_df = %s, slab_scale = %s)",
                 num(x$df), num(x$global_df), num(x$global_scale), num(x$slab_df),
                 num(x$slab_scale)),
    student_t = sprintf("student_t(df = %s, location = %s, scale = %s%s)", num(x$df),
                        num(x$location), scale, auto),
    sprintf("%s(location = %s, scale = %s%s)", x$dist, num(x$location), scale, auto))
  cat(txt, "\n", sep = "")
  invisible(x)
}

# The fields a prior of the coefficients, intercept or aux may have: ours
# and rstanarm's (whose default priors also carry `default` and `version`).
prior_fields <- c("dist", "df", "location", "scale", "autoscale", "rate", "global_df",
                  "global_scale", "slab_df", "slab_scale", "default", "version")

# The distributions each prior argument takes (rstanarm's: stan_glm.fit's
# ok_dists, ok_intercept_dists and ok_aux_dists).
prior_dists <- list(prior = c("normal", "student_t", "cauchy", "laplace", "hs"),
                    prior_intercept = c("normal", "student_t", "cauchy"),
                    prior_aux = c("normal", "student_t", "cauchy", "exponential"))

# `p`, given as argument `arg` (prior, prior_intercept or prior_aux): NULL,
# or a clbayes_prior or rstanarm's prior object (a list with the same
# fields, whose Student-t is dist "t"), returned as a clbayes_prior with its
# numbers checked; `default` records rstanarm's default_prior_intercept().
as_model_prior <- function(p, arg) {
  if (is.null(p)) return(NULL)
  allowed <- prior_dists[[arg]]
  made_by <- paste0(paste0(allowed, "()", collapse = ", "), ", or NULL")
  if (!is.list(p)) {
    stop(sprintf("`%s` must be a prior made by %s", arg, made_by), call. = FALSE)
  }
  unknown <- setdiff(names(p) %||% "<unnamed>", prior_fields)
  if (length(unknown) > 0L) {
    stop(sprintf("`%s` has unknown entries (%s): give a prior made by %s", arg,
                 paste(unknown, collapse = ", "), made_by), call. = FALSE)
  }
  dist <- p$dist
  if (!is.character(dist) || length(dist) != 1L || is.na(dist)) {
    stop(sprintf("`%s` must be a prior made by %s (a list with a `dist` entry)", arg,
                 made_by), call. = FALSE)
  }
  if (identical(dist, "t")) dist <- "student_t"  # rstanarm's student_t() and cauchy()
  if (!dist %in% allowed) {
    where <- names(prior_dists)[vapply(prior_dists, function(d) dist %in% d, logical(1))]
    stop(sprintf("`%s` must be %s: %s", arg, made_by,
                 if (length(where)) sprintf("%s() is for `%s`", dist,
                                            paste(where, collapse = "` and `"))
                 else sprintf("\"%s\" is not supported by clbayes", dist)), call. = FALSE)
  }
  auto <- isTRUE(p$autoscale)
  loc <- p$location %||% 0
  out <- tryCatch(switch(dist,
    normal = normal(loc, p$scale, auto),
    student_t = student_t(p$df, loc, p$scale, auto),
    cauchy = cauchy(loc, p$scale, auto),
    laplace = laplace(loc, p$scale, auto),
    hs = hs(p$df, p$global_df, p$global_scale, p$slab_df, p$slab_scale),
    exponential = exponential(p$rate %||% (1 / p$scale), auto)),
    error = function(e) stop(sprintf("`%s`: %s", arg, conditionMessage(e)), call. = FALSE))
  if (isTRUE(p$default)) out$default <- TRUE
  out
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
  check_autoscale(autoscale)
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
