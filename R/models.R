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
  structure(list(y = y, X = X, names = nm, size = length(y), n_obs = length(y),
                 mean = stats::setNames(drop(cov %*% crossprod(X, y)), nm),
                 cov = cov),
            class = c("clbayes_lm_model", "clbayes_model"))
}

#' @export
print.clbayes_model <- function(x, ...) {
  cat(sprintf("<%s> %d observations, parameters: %s\n", class(x)[1L], x$n_obs,
              paste(x$names, collapse = ", ")))
  invisible(x)
}

#' Generalised linear model posterior for the slice sampler
#'
#' The likelihood of [gpu_glm_lp()] (Stan's `*_glm_lpmf`) with independent
#' priors: `alpha`, `beta` and `cuts` ~ normal(`prior$mean`, `prior$sd`),
#' `sigma` and `phi` ~ exponential(`prior$rate`). Pass the model as
#' `log_density` to [slice_sample_mv()]; each proposal is one evaluation of
#' the GLM likelihood, on the OpenCL device when the sampler's backend is
#' `"opencl"` (the data are uploaded once, when the model is made, and stay
#' there), else in C++ on the CPU.
#'
#' @param y Response: real for `"normal_id"`, 0/1 for `"bernoulli_logit"`,
#'   counts for `"poisson_log"` and `"neg_binomial_2_log"`, categories
#'   `1..C` for `"categorical_logit"` and `"ordered_logistic"` (a factor
#'   is taken by its codes).
#' @param x Numeric design matrix without an intercept column (the
#'   intercept is `alpha`).
#' @param family One of `"normal_id"`, `"bernoulli_logit"`,
#'   `"poisson_log"`, `"neg_binomial_2_log"`, `"categorical_logit"`,
#'   `"ordered_logistic"`.
#' @param prior A list with `mean` and `sd` of the normal prior on the
#'   coefficients (and cuts) and `rate` of the exponential prior on `sigma`
#'   or `phi`; missing entries take the defaults `mean = 0`, `sd = 10`,
#'   `rate = 1`.
#' @param n_categories For `"categorical_logit"` and `"ordered_logistic"`:
#'   the number of categories (default `max(y)`).
#' @details The parameters, in order: `alpha` (one per category for
#'   `"categorical_logit"`, absent for `"ordered_logistic"`), `beta` (one per
#'   column of `x`, times the categories for `"categorical_logit"`), then
#'   `sigma`, `phi` or the `cuts`. With `backend = "auto"` the sampler uses
#'   the device when one is selected, is not a CPU device, and `nrow(x) *
#'   ncol(x)` is at least `getOption("clbayes.threshold.glm_model", 1e5)`.
#' @return An object of class `c("clbayes_glm_model", "clbayes_model")`,
#'   with `lower` and `upper`: the support [slice_sample_mv()] samples on
#'   (`sigma` and `phi` positive, so they are sampled on the log scale).
#' @seealso [gpu_glm_lp()], [slice_sample_mv()]
#' @examples
#' set.seed(2)
#' x <- matrix(rnorm(200), 100, 2, dimnames = list(NULL, c("x1", "x2")))
#' y <- rbinom(100, 1, plogis(0.5 + x %*% c(1, -1)))
#' m <- glm_model(y, x, "bernoulli_logit")
#' m
#' fit <- slice_sample_mv(m, init = c(0, 0, 0), n_iter = 200, width = 1,
#'                        chains = 2, seed = 1, backend = "cpu")
#' summary(fit)
#' @export
glm_model <- function(y, x, family = c("normal_id", "bernoulli_logit", "poisson_log",
                                       "neg_binomial_2_log", "categorical_logit",
                                       "ordered_logistic"),
                      prior = list(mean = 0, sd = 10, rate = 1),
                      n_categories = NULL) {
  family <- match.arg(family)
  x <- check_design(x)
  y <- check_glm_y(y, nrow(x))
  if (!is.list(prior)) stop("`prior` must be a list (mean, sd, rate)", call. = FALSE)
  pr <- utils::modifyList(list(mean = 0, sd = 10, rate = 1), prior)
  for (nm in c("mean", "sd", "rate")) {
    v <- pr[[nm]]
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v) ||
        (nm != "mean" && v <= 0)) {
      stop(sprintf("`prior$%s` must be a single %s number", nm,
                   if (nm == "mean") "finite" else "positive"), call. = FALSE)
    }
  }
  categorical <- family %in% c("categorical_logit", "ordered_logistic")
  if (categorical) {
    if (is.null(n_categories)) n_categories <- max(y)
    if (!is.numeric(n_categories) || length(n_categories) != 1L ||
        n_categories < 2 || n_categories != round(n_categories)) {
      stop("`n_categories` must be a whole number of at least 2", call. = FALSE)
    }
  } else {
    n_categories <- 1L
  }
  data <- gpu_glm_data(x, y)  # checks y's support and uploads when a device exists
  xn <- colnames(x) %||% paste0("x", seq_len(ncol(x)))
  nm <- switch(family,
    categorical_logit = c(
      paste0("alpha[", seq_len(n_categories), "]"),
      paste0("beta[", rep(xn, n_categories), ",", rep(seq_len(n_categories), each = ncol(x)), "]")
    ),
    ordered_logistic = c(paste0("beta[", xn, "]"),
                         paste0("cuts[", seq_len(n_categories - 1L), "]")),
    c("alpha", paste0("beta[", xn, "]"),
      switch(family, normal_id = "sigma", neg_binomial_2_log = "phi", NULL))
  )
  model <- structure(list(family = family, data = data, prior = pr,
                          n_categories = as.integer(n_categories), names = nm,
                          size = nrow(x) * ncol(x), n_obs = nrow(x), device_path = TRUE,
                          threshold_option = "clbayes.threshold.glm_model",
                          threshold = 1e5, use_device = FALSE,
                          lower = ifelse(grepl("^(sigma|phi)$", nm), 0, -Inf),
                          upper = rep(Inf, length(nm))),
                     class = c("clbayes_glm_model", "clbayes_model"))
  # One evaluation at a point inside the support checks y against the
  # family (an error names `y`) before any sampling starts.
  .cpp_model_log_density(model, matrix(glm_model_start(model), nrow = 1L))
  model
}

# A point inside the support: zero coefficients, unit sigma / phi, cuts
# spread evenly around zero.
glm_model_start <- function(model) {
  theta <- numeric(length(model$names))
  is_extra <- grepl("^(sigma|phi)$", model$names)
  theta[is_extra] <- 1
  is_cut <- startsWith(model$names, "cuts[")
  theta[is_cut] <- seq_len(sum(is_cut)) - (sum(is_cut) + 1) / 2
  stats::setNames(theta, model$names)
}

#' Log density of a clbayes model at given points
#'
#' @param model A model object, e.g. from [lm_model()] or [glm_model()].
#' @param points A numeric matrix with one point (parameter vector) per row,
#'   or a vector for a single point.
#' @param backend Where to evaluate: see [backends]. Only models with a
#'   device path use the device.
#' @return The log posterior density, up to an additive constant, at each
#'   row of `points` (`-Inf` outside the support).
#' @examples
#' X <- cbind(1, c(-1, 0, 1, 2))
#' m <- lm_model(c(0.1, 1.2, 1.9, 3.2), X)
#' model_log_density(m, rbind(m$mean, m$mean + 0.1))
#' @export
model_log_density <- function(model, points, backend = getOption("clbayes.backend", "auto")) {
  if (!inherits(model, "clbayes_model")) {
    stop("`model` must be a clbayes model (e.g. lm_model(), glm_model())", call. = FALSE)
  }
  if (is.null(dim(points))) points <- matrix(points, nrow = 1L)
  points <- check_numeric_matrix_na_ok(points, "points")
  if (ncol(points) != length(model$names)) {
    stop(sprintf("`points` must have %d columns, one per parameter of the model",
                 length(model$names)), call. = FALSE)
  }
  model$use_device <- model_uses_device(model, backend)
  .cpp_model_log_density(model, points)
}

# Does the model run on the device under `backend`?
model_uses_device <- function(model, backend) {
  if (!isTRUE(model$device_path)) {
    if (identical(resolve_backend(backend, 0, Inf), "opencl")) {
      stop("`backend` is \"opencl\" but this model has no device path; ",
           "use backend = \"cpu\"", call. = FALSE)
    }
    return(FALSE)
  }
  threshold <- getOption(model$threshold_option, model$threshold)
  resolve_backend(backend, model$size, threshold) == "opencl"
}

check_numeric_matrix_na_ok <- function(x, arg) {
  if (!is.numeric(x) || length(dim(x)) != 2L) {
    stop(sprintf("`%s` must be a numeric matrix", arg), call. = FALSE)
  }
  storage.mode(x) <- "double"
  x
}

#' Gaussian-process regression model for the slice sampler
#'
#' The linear Gaussian-process model of Examples 2 and 3 of Tibbits, Haran
#' and Liechty ("Parallel multivariate slice sampling"): `y ~ N(X beta,
#' Sigma)` with `Sigma[i, j] = kappa exp(-d_ij / phi)` for `i != j` and
#' `kappa + psi` on the diagonal (or the squared-exponential kernel
#' `kappa exp(-d_ij^2 / (2 phi^2))`), `d_ij` the Euclidean distance between
#' locations. The sampler draws `(kappa, psi, phi)`; each batch of points is
#' one launch of the fused likelihood of [gp_loglik_batched()] (build, factor,
#' solve and reduce per point), on the device when the sampler's backend is
#' `"opencl"`.
#'
#' @param y Numeric response, one value per location.
#' @param X Covariates, a numeric matrix with one row per location
#'   (include a column of ones for an intercept), or `NULL` for none.
#' @param coords Location coordinates, a numeric matrix with one row per
#'   location.
#' @param priors A list: `kappa` and `psi` as `c(shape, scale)` of their
#'   inverse-gamma priors, `phi` as `c(lower, upper)` of its uniform prior.
#'   Defaults are the paper's Example 2: inverse-gamma(2, 1) and
#'   uniform(0.01, 5).
#' @param cov `"exponential"` or `"squared_exponential"`.
#' @param beta The regression coefficients, fixed during sampling. By
#'   default their generalised least-squares estimate at a starting value of
#'   the covariance parameters: `kappa = psi = var(r) / 2` with `r` the
#'   least-squares residuals, and `phi` a third of the median distance
#'   between locations, moved inside the prior's range. (The paper samples
#'   `beta` too; fixing it at its GLS estimate keeps the sampled target
#'   three-dimensional. The estimate is stored in the model as `beta`.)
#' @details With `backend = "auto"` the sampler uses the device when one is
#'   selected, is not a CPU device, and the number of locations is at least
#'   `getOption("clbayes.threshold.gp_model", 100)`.
#' @return An object of class `c("clbayes_gp_model", "clbayes_model")`,
#'   with `lower` and `upper`: the support [slice_sample_mv()] samples on
#'   (`kappa` and `psi` on the log scale, `phi` on the logit scale of its
#'   prior's range).
#' @seealso [gp_loglik_batched()], [slice_sample_mv()]
#' @examples
#' set.seed(3)
#' n <- 40
#' coords <- matrix(runif(2 * n), n, 2)
#' S <- exp(-as.matrix(dist(coords)) / 0.2) + diag(n)
#' y <- drop(1 + t(chol(S)) %*% rnorm(n))
#' m <- gp_model(y, cbind(1, coords[, 1]), coords)
#' m
#' fit <- slice_sample_mv(m, init = c(1, 1, 0.2), n_iter = 100, width = 0.5,
#'                        chains = 2, seed = 1, backend = "cpu")
#' summary(fit)
#' @export
gp_model <- function(y, X = NULL, coords,
                     priors = list(kappa = c(2, 1), psi = c(2, 1), phi = c(0.01, 5)),
                     cov = c("exponential", "squared_exponential"), beta = NULL) {
  cov <- match.arg(cov)
  if (!is.numeric(y) || !is.null(dim(y)) || length(y) < 2L || any(!is.finite(y))) {
    stop("`y` must be a finite numeric vector with at least two values", call. = FALSE)
  }
  n <- length(y)
  if (is.null(X)) X <- matrix(0, n, 0L)
  if (is.null(dim(X))) X <- matrix(X, ncol = 1L)
  if (!is.numeric(X) || nrow(X) != n || any(!is.finite(X))) {
    stop(sprintf("`X` must be a finite numeric matrix with %d rows", n), call. = FALSE)
  }
  if (missing(coords) || !is.numeric(coords)) {
    stop("`coords` must be a numeric matrix of locations", call. = FALSE)
  }
  if (is.null(dim(coords))) coords <- matrix(coords, ncol = 1L)
  if (nrow(coords) != n || any(!is.finite(coords))) {
    stop(sprintf("`coords` must be a finite numeric matrix with %d rows", n), call. = FALSE)
  }
  pr <- utils::modifyList(list(kappa = c(2, 1), psi = c(2, 1), phi = c(0.01, 5)),
                          if (is.list(priors)) priors else
                            stop("`priors` must be a list (kappa, psi, phi)", call. = FALSE))
  for (nm in c("kappa", "psi")) {
    v <- pr[[nm]]
    if (!is.numeric(v) || length(v) != 2L || any(!is.finite(v)) || any(v <= 0)) {
      stop(sprintf("`priors$%s` must be c(shape, scale), both positive", nm), call. = FALSE)
    }
  }
  v <- pr$phi
  if (!is.numeric(v) || length(v) != 2L || any(!is.finite(v)) || v[1] < 0 || v[2] <= v[1]) {
    stop("`priors$phi` must be c(lower, upper) with 0 <= lower < upper", call. = FALSE)
  }
  storage.mode(X) <- "double"
  storage.mode(coords) <- "double"
  if (is.null(beta)) {
    beta <- gp_gls_beta(y, X, coords, pr$phi, cov)
  } else if (!is.numeric(beta) || length(beta) != ncol(X) || any(!is.finite(beta))) {
    stop(sprintf("`beta` must be %d finite numbers, one per column of `X`", ncol(X)),
         call. = FALSE)
  }
  data <- gpu_gp_data(y, X, coords)
  structure(list(data = data, beta = stats::setNames(as.double(beta), colnames(X)),
                 priors = pr, cov = cov,
                 names = c("kappa", "psi", "phi"), size = n, n_obs = n, device_path = TRUE,
                 threshold_option = "clbayes.threshold.gp_model", threshold = 100,
                 use_device = FALSE, lower = c(0, 0, pr$phi[1]),
                 upper = c(Inf, Inf, pr$phi[2])),
            class = c("clbayes_gp_model", "clbayes_model"))
}

# GLS estimate of beta at a starting covariance (see gp_model()'s `beta`).
gp_gls_beta <- function(y, X, coords, phi_range, cov) {
  if (ncol(X) == 0L) return(numeric())
  ols <- stats::lm.fit(X, y)
  r <- ols$residuals
  s2 <- max(stats::var(r), 1e-8) / 2
  d <- as.matrix(stats::dist(coords))
  med <- stats::median(d[upper.tri(d)])
  phi <- min(max(med / 3, phi_range[1] + 0.01 * diff(phi_range)), phi_range[2] - 0.01 * diff(phi_range))
  S <- s2 * (if (cov == "exponential") exp(-d / phi) else exp(-d^2 / (2 * phi^2)))
  diag(S) <- 2 * s2
  R <- chol(S)
  Xw <- backsolve(R, X, transpose = TRUE)
  yw <- backsolve(R, y, transpose = TRUE)
  stats::setNames(drop(qr.coef(qr(Xw), yw)), colnames(X))
}
