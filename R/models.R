#' Linear regression with known unit variance and flat priors
#'
#' The model of Example 1 of Tibbits, Haran and Liechty ("Parallel
#' multivariate slice sampling"): `y = X b + e` with `e ~ N(0, 1)`
#' independent, the variance known, and flat priors on `b`. Its posterior is
#' normal with mean `solve(crossprod(X), crossprod(X, y))` and covariance
#' `solve(crossprod(X))`, which makes it a test of samplers; an intercept and
#' a predictor with a large mean give the strongly correlated posterior of
#' the paper. Pass the model as `log_density` to [slice_sample_mv()]; it is
#' evaluated in C++ on the CPU, `-0.5 (b - bhat)' X'X (b - bhat)` per point.
#'
#' @param y Numeric response vector, finite.
#' @param X Numeric design matrix with one row per element of `y` and full
#'   column rank (include a column of ones for an intercept). Its column
#'   names name the parameters.
#' @return An object of class `c("clbayes_lm_model", "clbayes_model")`: a
#'   list with `y`, `X`, `names` (parameter names), `size` (observations),
#'   `mean` and `cov` (the exact posterior mean and covariance).
#' @examples
#' set.seed(1)
#' x <- rnorm(50, mean = 5, sd = sqrt(0.5))
#' X <- cbind(alpha = 1, beta = x)
#' y <- drop(X %*% c(1, 2)) + rnorm(50)
#' m <- lm_model(y, X)
#' fit <- slice_sample_mv(m, init = m$mean, n_iter = 200, width = 1,
#'                        chains = 2, seed = 1, backend = "cpu")
#' summary(fit)
#' m$mean
#' @export
lm_model <- function(y, X) {
  if (!is.numeric(y) || length(y) < 1L || any(!is.finite(y))) {
    stop("`y` must be a finite numeric vector", call. = FALSE)
  }
  y <- as.double(y)
  if (!is.numeric(X) || !is.matrix(X) || any(!is.finite(X))) {
    stop("`X` must be a finite numeric matrix", call. = FALSE)
  }
  if (nrow(X) != length(y)) {
    stop(sprintf("`X` must have one row per element of `y` (%d), not %d",
                 length(y), nrow(X)), call. = FALSE)
  }
  storage.mode(X) <- "double"
  xtx <- crossprod(X)
  if (qr(X)$rank < ncol(X)) {
    stop("`X` must have full column rank (the posterior under flat priors is ",
         "improper otherwise)", call. = FALSE)
  }
  nm <- colnames(X) %||% paste0("b[", seq_len(ncol(X)), "]")
  cov <- solve(xtx)
  dimnames(cov) <- list(nm, nm)
  structure(list(y = y, X = X, names = nm, size = length(y),
                 mean = stats::setNames(drop(cov %*% crossprod(X, y)), nm),
                 cov = cov),
            class = c("clbayes_lm_model", "clbayes_model"))
}

#' @export
print.clbayes_model <- function(x, ...) {
  cat(sprintf("<%s> %d observations, parameters: %s\n", class(x)[1L], x$size,
              paste(x$names, collapse = ", ")))
  invisible(x)
}
