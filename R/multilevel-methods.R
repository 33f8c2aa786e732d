# The methods an lme4 / rstanarm user calls on a multilevel fit: fixef(),
# ranef(), coef() per group and VarCorr(), from the posterior draws, with
# rstanarm's summaries (medians for the effects, means for the covariances).

#' Group-level summaries of a multilevel fit
#'
#' For a fit of a multilevel [glm_model()] or [lm_model()] (a formula with
#' terms such as `(1 | g)` or `(x | g)`), as lme4 and rstanarm give them:
#' * `fixef()`: the posterior medians of the fixed effects;
#' * `ranef()`: for each grouping factor a data frame, one row per level and
#'   one column per coefficient, of the posterior medians of the group-level
#'   effects `b`;
#' * `coef()`: for each grouping factor, `fixef()` plus `ranef()` level by
#'   level (the coefficients of each group, as lme4's `coef()`);
#' * `VarCorr()`: each term's covariance matrix (posterior means of
#'   `Sigma`), with attributes `stddev` and `correlation`, and `sc`, the
#'   posterior mean of `sigma` for a gaussian model; an object of lme4's
#'   class `VarCorr.merMod`, so lme4's `print()` shows it.
#'
#' The generics are nlme's (which lme4 and rstanarm use too), so these work
#' with either package attached.
#'
#' @param object A `clbayes_fit` of a multilevel model.
#' @param x A `clbayes_fit` of a multilevel model (`VarCorr()`).
#' @param sigma Passed by nlme's generic; unused.
#' @param ... Unused; an argument given here is an error.
#' @return See above.
#' @examples
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'   data(sleepstudy, package = "lme4")
#'   m <- lm_model(Reaction ~ Days + (Days | Subject), sleepstudy)
#'   fit <- hmc_sample_mv(m, iter = 1000, chains = 4, seed = 1, backend = "cpu")
#'   fixef(fit)
#'   head(ranef(fit)$Subject)
#'   VarCorr(fit)
#' }
#' @name multilevel-methods
#' @importFrom nlme fixef ranef VarCorr
NULL

#' @rdname multilevel-methods
#' @export
fixef.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  m <- multilevel_model_of(object)
  apply(fit_draws(object)[, m$fixed_names, drop = FALSE], 2L, stats::median)
}

#' @rdname multilevel-methods
#' @export
ranef.clbayes_fit <- function(object, ...) {
  check_no_dots(...)
  m <- multilevel_model_of(object)
  med <- apply(fit_draws(object)[, multilevel_b_names(m), drop = FALSE], 2L, stats::median)
  b <- split(med, rep(seq_along(m$group_terms), group_term_sizes(m$group_terms)))
  per_term <- lapply(seq_along(m$group_terms), function(t) {
    term <- m$group_terms[[t]]
    data.frame(matrix(b[[t]], length(term$levels), length(term$cnms), byrow = TRUE,
                      dimnames = list(term$levels, term$cnms)), check.names = FALSE)
  })
  # terms of one grouping factor (as (x || g) makes) share its data frame
  groups <- vapply(m$group_terms, `[[`, "", "group")
  out <- lapply(unique(groups), function(g) do.call(cbind, unname(per_term[groups == g])))
  stats::setNames(out, unique(groups))
}

#' @rdname multilevel-methods
#' @export
VarCorr.clbayes_fit <- function(x, sigma = 1, ...) {
  m <- multilevel_model_of(x)
  d <- fit_draws(x)
  out <- lapply(m$group_terms, function(term) {
    p <- length(term$cnms)
    entries <- sigma_entries(term)
    idx <- entries$index
    V <- matrix(0, p, p, dimnames = list(term$cnms, term$cnms))
    V[idx] <- colMeans(d[, entries$names, drop = FALSE])
    V[idx[, 2:1, drop = FALSE]] <- V[idx]
    sd <- sqrt(diag(V))
    structure(V, stddev = sd, correlation = V / outer(sd, sd))
  })
  names(out) <- make.unique(vapply(m$group_terms, `[[`, "", "group"))
  gaussian <- m$family == "normal_id"
  structure(out, sc = if (gaussian) mean(d[, "sigma"]) else 1, useSc = gaussian,
            class = "VarCorr.merMod")
}

# coef() of a multilevel fit: per grouping factor, the fixed effects plus
# each level's effects where the names match (lme4's coef.merMod).
multilevel_coef <- function(object) {
  fe <- fixef(object)
  lapply(ranef(object), function(re) {
    out <- as.data.frame(matrix(fe, nrow(re), length(fe), byrow = TRUE,
                                dimnames = list(rownames(re), names(fe))),
                         check.names = FALSE)
    for (nm in names(re)) {
      if (nm %in% names(out)) out[[nm]] <- out[[nm]] + re[[nm]] else out[[nm]] <- re[[nm]]
    }
    out
  })
}

multilevel_model_of <- function(object) {
  if (!inherits(object, "clbayes_fit") || !inherits(object$model, "clbayes_glmer_model")) {
    stop("`object` must be a fit of a multilevel glm_model() or lm_model() (a formula with ",
         "group-level terms such as (1 | g))", call. = FALSE)
  }
  object$model
}

multilevel_b_names <- function(m) {
  n_fixed <- length(m$fixed_names)
  n_b <- sum(group_term_sizes(m$group_terms))
  m$reported_names[n_fixed + seq_len(n_b)]
}

#' @importFrom nlme fixef
#' @export
nlme::fixef

#' @importFrom nlme ranef
#' @export
nlme::ranef

#' @importFrom nlme VarCorr
#' @export
nlme::VarCorr
