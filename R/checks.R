# Argument checks of the model constructors that give a problem in the
# user's words where R's own message would be about its internals (issue
# 50): a formula given as a string, a design matrix that is not finite, a
# model with no parameters, a prior of an unknown distribution, a response
# the model's arithmetic cannot hold, a points matrix with no rows.

# A formula written as a string ("y ~ x") is an error naming `formula`.
check_formula_not_string <- function(formula) {
  if (is.character(formula) && length(formula) == 1L && grepl("~", formula, fixed = TRUE)) {
    stop(sprintf(paste0("`formula` must be a formula, not a string: write %s without ",
                        "quotes, or as.formula(\"%s\")"), formula, formula), call. = FALSE)
  }
  invisible(formula)
}

# The design matrix X of `formula`: NA, NaN or Inf in a predictor is an
# error naming `x` (as glm() names it), the column and the first such row.
check_design_finite <- function(X) {
  bad <- which(!is.finite(X), arr.ind = TRUE)
  if (nrow(bad)) {
    i <- bad[1L, 1L]
    j <- bad[1L, 2L]
    stop(sprintf(paste0("NA/NaN/Inf in `x`, the design matrix of `formula`: column ",
                        "\"%s\" is %s in row %s of the data used"),
                 colnames(X)[j], format(X[i, j]), rownames(X)[i] %||% i), call. = FALSE)
  }
  invisible(X)
}

# A formula with no coefficients (`y ~ 0`) under a family with no
# auxiliary parameter leaves nothing to sample: an error naming `formula`.
check_has_parameters <- function(X, family) {
  if (ncol(X) == 0L && !nzchar(glm_extra_name(family))) {
    stop(paste0("`formula` has no terms and no intercept (e.g. y ~ 0), so this family's ",
                "model has no parameters to sample: add terms or an intercept (y ~ 1)"),
         call. = FALSE)
  }
  invisible(X)
}

# The starting point of a model and its log density there (`lp`) must be
# finite: a response too large for the model's arithmetic (|y| near
# 1e300, whose squares overflow) makes them Inf. The error names `y`.
check_model_start <- function(init, lp, y) {
  bad <- names(init)[!is.finite(init)]
  if (length(bad) || !all(is.finite(lp))) {
    what <- if (length(bad)) {
      sprintf("the starting value of %s is not finite",
              paste0("`", bad, "`", collapse = ", "))
    } else {
      "the log density at its starting point is not finite"
    }
    stop(sprintf(paste0("`y` is too large in magnitude for the model (its largest ",
                        "absolute value is %.3g): %s; rescale `y`"),
                 max(abs(y)), what), call. = FALSE)
  }
  invisible(init)
}

# `points` for model_log_density() of a model with `k` parameters: a
# matrix with no rows is an error that says so (a type error would mislead).
check_points_rows <- function(points, k) {
  if (is.numeric(points) && length(dim(points)) == 2L && nrow(points) == 0L) {
    stop(sprintf("`points` has no rows: give one point (%d parameter values) per row", k),
         call. = FALSE)
  }
  invisible(points)
}
