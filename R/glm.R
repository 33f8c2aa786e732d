#' GLM log-likelihoods with analytic gradients
#'
#' The log-likelihoods of Stan's six `*_glm_lpmf` / `*_glm_lpdf` functions,
#' with the gradient with respect to the parameters computed in the same
#' pass over `x` (stan-opencl.txt, section 3.4). On an OpenCL device one
#' fused kernel reads each row of `x` once for both the value and the
#' gradient; the CPU path does the same in cache-sized blocks of rows.
#'
#' Writing \eqn{\eta = \alpha + x\beta + o}{eta = alpha + x beta + offset}
#' (\eqn{o}{offset} the optional `offset`, zero by default):
#' * `"normal_id"`: \eqn{y \sim N(\eta, \sigma)}{y ~ normal(eta, sigma)},
#'   `sigma` a single number or one per row;
#' * `"bernoulli_logit"`: \eqn{y \sim Bernoulli(logit^{-1}(\eta))}, y in {0, 1};
#' * `"poisson_log"`: \eqn{y \sim Poisson(e^\eta)}{y ~ Poisson(exp(eta))};
#' * `"neg_binomial_2_log"`: negative binomial with mean \eqn{e^\eta}{exp(eta)}
#'   and precision `phi` (variance \eqn{\mu + \mu^2/\phi}{mu + mu^2 / phi}), as
#'   `dnbinom(y, mu = exp(eta), size = phi)`; `phi` one number or one per row;
#' * `"categorical_logit"`: y in 1..C with probabilities
#'   `softmax(alpha + x[i, ] %*% beta)`; `alpha` has length C, `beta` is k x C;
#' * `"ordered_logistic"`: y in 1..K with \eqn{P(y \le c) =
#'   logit^{-1}(cuts_c - x\beta)}{P(y <= c) = plogis(cuts[c] - x beta)}; no
#'   `alpha`; `cuts` (length K - 1) strictly increasing.
#'
#' @param y The outcomes, one per row of `x`: real numbers (`"normal_id"`),
#'   0 / 1 (`"bernoulli_logit"`; logical is accepted), non-negative whole
#'   numbers (`"poisson_log"`, `"neg_binomial_2_log"`), or categories
#'   1..C (`"categorical_logit"`, `"ordered_logistic"`; a factor is taken by
#'   its codes). Leave it out when `x` is a `gpu_glm_data` object.
#' @param x The n x k design matrix (no intercept column: that is `alpha`),
#'   or a `gpu_glm_data` object holding x and y (see [gpu_glm_data()]).
#' @param alpha The intercept: one number or one per row; for
#'   `"categorical_logit"` one per category. Not used by `"ordered_logistic"`.
#' @param beta The k coefficients; for `"categorical_logit"` a k x C matrix.
#'   For the four families with one linear predictor, a k x P matrix holds
#'   P parameter vectors (points), one per column, evaluated in one pass
#'   over `x` (the points of every chain of a sampler step); `alpha`,
#'   `sigma` and `phi` then have one value per point (or one for all).
#'   On the device a few points share one fused kernel; more points run
#'   one fused kernel on the FP64 tensor cores of an NVIDIA GPU of compute
#'   capability 9.0 (H100, H200; for k up to 128), or two matrix products
#'   elsewhere. `"categorical_logit"` and `"ordered_logistic"` take one
#'   parameter vector per call.
#' @param family One of `"normal_id"`, `"bernoulli_logit"`, `"poisson_log"`,
#'   `"neg_binomial_2_log"`, `"categorical_logit"`, `"ordered_logistic"`,
#'   `"gamma"` (mean and shape) or `"inverse_gaussian"` (mean and shape
#'   `lambda`).
#' @param link `NULL` for the family's own link (the one of its Stan name;
#'   `"inverse"` for `"gamma"`, `"1/mu^2"` for `"inverse_gaussian"`), or
#'   another link of the family, by R's name: `"log"` or `"inverse"` for
#'   `"normal_id"`; `"probit"`, `"cloglog"`, `"cauchit"` or `"log"` for
#'   `"bernoulli_logit"`; `"identity"` or `"sqrt"` for the count families;
#'   `"identity"`, `"log"` (and `"inverse"`) for `"gamma"` and
#'   `"inverse_gaussian"`. The rows then go through the mean
#'   `mu = g^{-1}(eta)`, on the CPU and on the device alike.
#' @param shape Shape(s) of `"gamma"` (rate `shape / mu`), positive.
#' @param lambda Shape(s) of `"inverse_gaussian"`, positive.
#' @param sigma Standard deviation(s) of `"normal_id"`, positive.
#' @param phi Precision(s) of `"neg_binomial_2_log"`, positive.
#' @param cuts Cut points of `"ordered_logistic"`, strictly increasing.
#' @param gradient If `TRUE`, attach the gradient.
#' @param offset `NULL` (none) or a finite numeric vector with one value per
#'   row of `x`, added to the linear predictor of each row, as the offset of
#'   [stats::glm()] (for `"ordered_logistic"` it shifts `x beta`; it is an
#'   error for `"categorical_logit"`, where one offset for every category
#'   would cancel). When `x` is a `gpu_glm_data` object the offset is the
#'   one it was made with (see [gpu_glm_data()]) and `offset` must be left
#'   out.
#' @param propto If `TRUE`, drop the terms that depend only on y and x
#'   (\eqn{-\log\sqrt{2\pi}}{-log(sqrt(2 pi))} per row of `"normal_id"`,
#'   \eqn{-\log y!}{-log(y!)} of `"poisson_log"` and
#'   `"neg_binomial_2_log"`), treating alpha, beta, sigma, phi and cuts as
#'   parameters; the other families have no such terms.
#' @param backend `"auto"`, `"opencl"` or `"cpu"` (see [backends]). With
#'   `"auto"` the device is used when x is a `gpu_glm_data` object on the
#'   device, or when `nrow(x) * ncol(x) * C` is at least
#'   `getOption("clbayes.threshold.gpu_glm_lp", 1e6)` (C the number of
#'   categories or of points, else 1). A matrix `x` sent to the device is copied there on
#'   every call: for repeated calls use [gpu_glm_data()].
#' @return The log-likelihood, a single number (P numbers, one per column of
#'   a k x P `beta`). With `gradient = TRUE` it has
#'   an attribute `"gradient"`: a named list with `alpha` (same length as
#'   `alpha`; absent for `"ordered_logistic"`), `beta` (a vector, or a k x C
#'   matrix for `"categorical_logit"`) and `sigma`, `phi` or `cuts` where the
#'   family has them, each the same length as the parameter. For P points:
#'   `alpha` (length P), `beta` (k x P) and `sigma` / `phi` (length P), the
#'   gradient of each point's log-likelihood in its column or entry.
#' @seealso [gpu_glm_data()]
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 100, 2)
#' y <- rbinom(100, 1, plogis(0.5 + x %*% c(1, -1)))
#' gpu_glm_lp(y, x, alpha = 0.5, beta = c(1, -1), family = "bernoulli_logit",
#'            gradient = TRUE, backend = "cpu")
#' # the same value from base R
#' sum(dbinom(y, 1, plogis(0.5 + x %*% c(1, -1)), log = TRUE))
#' # three points in one call: one log-likelihood per column of beta
#' b <- cbind(c(1, -1), c(0.5, 0), c(0, 0))
#' gpu_glm_lp(y, x, alpha = c(0.5, 0, 0), beta = b, family = "bernoulli_logit",
#'            backend = "cpu")
#' @export
gpu_glm_lp <- function(y, x, alpha, beta, family, sigma, phi, cuts,
                       gradient = FALSE, propto = FALSE,
                       backend = getOption("clbayes.backend", "auto"), offset = NULL,
                       link = NULL, shape, lambda) {
  if (missing(family)) {
    stop("`family` must be given: one of ", paste0("\"", glm_families(), "\"",
         collapse = ", "), call. = FALSE)
  }
  if (!is.character(family) || length(family) != 1L || !family %in% glm_families()) {
    stop("`family` must be one of ", paste0("\"", glm_families(), "\"", collapse = ", "),
         call. = FALSE)
  }
  link <- check_glm_link(link, family)
  gradient <- check_flag(gradient, "gradient")
  propto <- check_flag(propto, "propto")
  cat_family <- family == "categorical_logit"
  ord_family <- family == "ordered_logistic"

  is_data <- inherits(x, "gpu_glm_data")
  if (is_data) {
    if (!missing(y)) {
      stop("`y` must be missing when `x` is a gpu_glm_data object (it holds y)",
           call. = FALSE)
    }
    if (!is.null(offset)) {
      stop("`offset` must be NULL when `x` is a gpu_glm_data object: give the offset to ",
           "gpu_glm_data()", call. = FALSE)
    }
    dims <- .cpp_glm_data_dim(x$ptr)
    has_offset <- dims[3L] == 1L
  } else {
    if (missing(y)) stop("`y` must be given unless `x` is a gpu_glm_data object",
                         call. = FALSE)
    x <- check_design(x)
    y <- check_glm_y(y, nrow(x))
    offset <- check_glm_offset(offset, nrow(x))
    has_offset <- !is.null(offset)
    dims <- dim(x)
  }
  if (has_offset && cat_family) {
    stop("`offset` is not supported by categorical_logit (an offset shared by every ",
         "category cancels in the softmax)", call. = FALSE)
  }
  n <- dims[1L]
  k <- dims[2L]

  if (missing(beta)) stop("`beta` must be given", call. = FALSE)
  extra_name <- glm_extra_name(family)
  supplied <- c(sigma = !missing(sigma), phi = !missing(phi), cuts = !missing(cuts),
                shape = !missing(shape), lambda = !missing(lambda))
  for (nm in setdiff(names(supplied)[supplied], extra_name)) {
    stop(sprintf("`%s` is not used by %s", nm, family), call. = FALSE)
  }
  if (is.matrix(beta) && ncol(beta) > 1L && !cat_family) {
    if (ord_family) {
      stop("`beta` must be a vector for ordered_logistic: categorical_logit and ",
           "ordered_logistic take one parameter vector per call", call. = FALSE)
    }
    if (missing(alpha)) stop("`alpha` must be given", call. = FALSE)
    if (nzchar(extra_name) && !supplied[[extra_name]]) {
      stop(sprintf("`%s` must be given for %s", extra_name, family), call. = FALSE)
    }
    extra <- if (nzchar(extra_name)) {
      switch(extra_name, sigma = sigma, phi = phi, shape = shape, lambda = lambda)
    }
    pts <- check_glm_points(beta, alpha, extra, extra_name, k)
    run <- glm_run(x, y, offset, is_data, n, k, ncol(pts$beta), backend)
    res <- .cpp_glm_lp_batch(run$handle, family, pts$alpha, pts$beta, pts$extra, gradient,
                             propto, run$use_device, link)
    value <- res$value
    if (gradient) {
      g <- list(alpha = res$alpha, beta = res$beta)
      if (nzchar(extra_name)) g[[extra_name]] <- res$extra
      attr(value, "gradient") <- g
    }
    return(value)
  }
  beta <- check_glm_beta(beta, k, cat_family)
  if (ord_family) {
    if (!missing(alpha)) stop("`alpha` is not used by ordered_logistic (it has cuts)",
                              call. = FALSE)
    alpha <- numeric()
  } else {
    if (missing(alpha)) stop("`alpha` must be given", call. = FALSE)
    alpha <- check_glm_vector(alpha, "alpha")
    want <- if (cat_family) sprintf("one value per category (ncol(beta) = %d)", ncol(beta))
            else sprintf("a single number or a vector of length nrow(x) = %d", n)
    ok <- if (cat_family) length(alpha) == ncol(beta) else length(alpha) %in% c(1L, n)
    if (!ok) stop(sprintf("`alpha` must be %s, not of length %d", want, length(alpha)),
                  call. = FALSE)
  }
  extra <- numeric()
  if (nzchar(extra_name)) {
    if (!supplied[[extra_name]]) {
      stop(sprintf("`%s` must be given for %s", extra_name, family), call. = FALSE)
    }
    extra <- check_glm_vector(switch(extra_name, sigma = sigma, phi = phi, cuts = cuts,
                                     shape = shape, lambda = lambda), extra_name)
    if (extra_name != "cuts" && !length(extra) %in% c(1L, n)) {
      stop(sprintf("`%s` must be a single number or a vector of length nrow(x) = %d, not of length %d",
                   extra_name, n, length(extra)), call. = FALSE)
    }
    if (extra_name == "cuts" && length(extra) < 1L) {
      stop("`cuts` must have at least one value", call. = FALSE)
    }
  }

  run <- glm_run(x, y, offset, is_data, n, k, ncol(beta), backend)
  res <- .cpp_glm_lp(run$handle, family, alpha, beta, extra, gradient, propto,
                     run$use_device, link)
  value <- res$value
  if (gradient) {
    g <- list()
    if (!ord_family) g$alpha <- res$alpha
    g$beta <- if (cat_family) res$beta else as.vector(res$beta)
    if (nzchar(extra_name)) g[[extra_name]] <- res$extra
    attr(value, "gradient") <- g
  }
  value
}

#' Keep GLM data on the device
#'
#' Copies `x`, `y` and the optional `offset` to the selected OpenCL device
#' once. Pass the result as
#' `x` to [gpu_glm_lp()] (leaving `y` out): each call then moves only the
#' parameters, which is what an MCMC loop wants. The device memory is freed
#' when the object is garbage-collected. Without a device (or in a build
#' without OpenCL) the object holds only the host data and [gpu_glm_lp()]
#' uses the CPU path; the host data are kept in any case, so
#' `backend = "cpu"` always works.
#'
#' @param x The n x k design matrix, finite.
#' @param y The n outcomes, finite (their support is checked per family by
#'   [gpu_glm_lp()]). Logical values and factors (by their codes) are
#'   accepted.
#' @param offset `NULL` (none) or a finite numeric vector of length `n`,
#'   added to the linear predictor of each row by every [gpu_glm_lp()] call
#'   on this object (see there). Without an offset the kernels are built
#'   without one and read nothing for it.
#' @param weights `NULL` (none) or `n` non-negative finite numbers
#'   multiplying each row's log density (R's prior weights of [glm()]). A
#'   likelihood with weights runs on the CPU path, on the host copy of the
#'   data, whatever the backend.
#' @return An object of class `gpu_glm_data`: a list with `ptr` (an external
#'   pointer), `n`, `k`, `has_offset`, `has_weights` and `on_device`. It does not survive [saveRDS()] or a
#'   new session, nor a switch of device with [gpu_select()].
#' @seealso [gpu_glm_lp()]
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(300), 100, 3)
#' y <- rpois(100, exp(x %*% c(0.2, -0.1, 0.3)))
#' d <- gpu_glm_data(x, y)
#' d
#' gpu_glm_lp(x = d, alpha = 0, beta = c(0.2, -0.1, 0.3), family = "poisson_log")
#'
#' # counts over exposures: the offset log(exposure)
#' exposure <- runif(100, 1, 5)
#' y2 <- rpois(100, exposure * exp(x %*% c(0.2, -0.1, 0.3)))
#' d2 <- gpu_glm_data(x, y2, offset = log(exposure))
#' gpu_glm_lp(x = d2, alpha = 0, beta = c(0.2, -0.1, 0.3), family = "poisson_log")
#' sum(dpois(y2, exposure * exp(x %*% c(0.2, -0.1, 0.3)), log = TRUE))
#' @export
gpu_glm_data <- function(x, y, offset = NULL, weights = NULL) {
  x <- check_design(x)
  y <- check_glm_y(y, nrow(x))
  offset <- check_glm_offset(offset, nrow(x))
  weights <- check_weights(weights, nrow(x))
  upload <- gpu_available() && is.null(weights)
  ptr <- .cpp_glm_data(x, y, upload, TRUE, offset, weights)
  structure(list(ptr = ptr, n = nrow(x), k = ncol(x), has_offset = !is.null(offset),
                 has_weights = !is.null(weights), on_device = upload),
            class = "gpu_glm_data")
}

# A value per row, of n rows (of `rows`): NULL, or n finite doubles
# (non-negative when `non_negative`); errors name `arg`.
check_row_values <- function(v, n, rows, arg, non_negative = FALSE) {
  if (is.null(v)) return(NULL)
  if (!is.numeric(v) || (!is.null(dim(v)) && min(dim(v)) > 1L)) {
    stop(sprintf("`%s` must be NULL or a numeric vector", arg), call. = FALSE)
  }
  if (length(v) != n) {
    stop(sprintf("`%s` must have one value per row of %s (%d), not %d", arg, rows, n,
                 length(v)), call. = FALSE)
  }
  if (anyNA(v) || any(is.infinite(v)) || (non_negative && any(v < 0))) {
    stop(sprintf("`%s` must be %sfinite (no NA, NaN or Inf)", arg,
                 if (non_negative) "non-negative and " else ""), call. = FALSE)
  }
  as.double(v)
}

check_weights <- function(weights, n, rows = "`x`") {
  check_row_values(weights, n, rows, "weights", non_negative = TRUE)
}

check_glm_offset <- function(offset, n, rows = "`x`") {
  check_row_values(offset, n, rows, "offset")
}

#' @export
print.gpu_glm_data <- function(x, ...) {
  where <- if (x$on_device && .cpp_glm_data_on_device(x$ptr)) "on the device and the host"
           else "on the host only"
  cat(sprintf("<gpu_glm_data: %d rows, %d columns%s, %s>\n", x$n, x$k,
              if (isTRUE(x$has_offset)) ", an offset" else "", where))
  invisible(x)
}

# The backend and the data handle of one call: x is a gpu_glm_data object
# (read as it is) or a matrix (wrapped with y and the offset, and uploaded
# for the device). `width` is the number of linear predictors times points.
glm_run <- function(x, y, offset, is_data, n, k, width, backend) {
  on_device <- is_data && x$on_device && .cpp_glm_data_on_device(x$ptr)
  backend <- if (is_data && on_device && identical(backend, "auto")) "opencl" else
    resolve_backend(backend, as.double(n) * k * width,
                    getOption("clbayes.threshold.gpu_glm_lp", 1e6))
  use_device <- backend == "opencl"
  if (is_data) {
    if (use_device && !on_device) {
      stop("`x` has no copy on the selected device (it was made without one, or ",
           "before gpu_select()); make it again with gpu_glm_data() or use ",
           "backend = \"cpu\"", call. = FALSE)
    }
    return(list(handle = x$ptr, use_device = use_device))
  }
  # x is checked as it is read
  list(handle = .cpp_glm_data(x, y, use_device, FALSE, offset), use_device = use_device)
}

# P points of a scalar family: beta k x P, alpha and sigma / phi of length 1
# or P (recycled); errors name the argument and, for values, the column.
check_glm_points <- function(beta, alpha, extra, extra_name, k) {
  if (!is.numeric(beta)) stop("`beta` must be numeric", call. = FALSE)
  if (nrow(beta) != k) {
    stop(sprintf("`beta` must have one row per column of `x` (%d), not %d rows", k,
                 nrow(beta)), call. = FALSE)
  }
  P <- ncol(beta)
  bad <- which(colSums(!is.finite(beta)) > 0)
  if (length(bad)) {
    stop(sprintf("`beta` must be finite: column %d has NA, NaN or Inf", bad[1L]),
         call. = FALSE)
  }
  one_per_point <- function(v, arg) {
    if (!is.numeric(v) && !(is.atomic(v) && all(is.na(v)))) {
      stop(sprintf("`%s` must be a numeric vector", arg), call. = FALSE)
    }
    if (!is.null(dim(v)) && min(dim(v)) > 1L) {
      stop(sprintf("`%s` must be a vector", arg), call. = FALSE)
    }
    if (!length(v) %in% c(1L, P)) {
      stop(sprintf("`%s` must be a single number or one per column of `beta` (%d), not of length %d",
                   arg, P, length(v)), call. = FALSE)
    }
    v <- rep_len(as.double(v), P)
    bad <- which(!is.finite(v))
    if (length(bad)) {
      stop(sprintf("`%s` must be finite: column %d has NA, NaN or Inf", arg, bad[1L]),
           call. = FALSE)
    }
    v
  }
  alpha <- one_per_point(alpha, "alpha")
  extra <- if (nzchar(extra_name)) one_per_point(extra, extra_name) else numeric()
  if (any(extra <= 0)) {
    stop(sprintf("`%s` must be positive: column %d is not", extra_name,
                 which(extra <= 0)[1L]), call. = FALSE)
  }
  storage.mode(beta) <- "double"
  list(beta = beta, alpha = alpha, extra = extra)
}

check_glm_y <- function(y, n) {
  if (is.factor(y)) y <- as.integer(y)
  if (!is.null(dim(y)) && length(dim(y)) == 2L && ncol(y) == 1L) y <- as.vector(y)
  if (!is.null(dim(y)) || !(is.numeric(y) || is.logical(y))) {
    stop("`y` must be a numeric vector", call. = FALSE)
  }
  if (length(y) != n) {
    stop(sprintf("`y` must have one value per row of `x` (%d), not %d", n, length(y)),
         call. = FALSE)
  }
  if (anyNA(y) || any(is.infinite(y))) stop("`y` must be finite (no NA, NaN or Inf)",
                                             call. = FALSE)
  as.double(y)
}

check_glm_vector <- function(v, arg) {
  if (is.atomic(v) && anyNA(v)) {
    stop(sprintf("`%s` must be finite (no NA, NaN or Inf)", arg), call. = FALSE)
  }
  if (!is.numeric(v) || (!is.null(dim(v)) && min(dim(v)) > 1L)) {
    stop(sprintf("`%s` must be a numeric vector", arg), call. = FALSE)
  }
  if (anyNA(v) || any(is.infinite(v))) {
    stop(sprintf("`%s` must be finite (no NA, NaN or Inf)", arg), call. = FALSE)
  }
  as.double(v)
}

check_glm_beta <- function(beta, k, cat_family) {
  if (!is.numeric(beta)) stop("`beta` must be numeric", call. = FALSE)
  if (anyNA(beta) || any(is.infinite(beta))) {
    stop("`beta` must be finite (no NA, NaN or Inf)", call. = FALSE)
  }
  if (cat_family) {
    if (!is.matrix(beta) || nrow(beta) != k) {
      stop(sprintf("`beta` must be a k x C matrix with k = ncol(x) = %d rows for categorical_logit",
                   k), call. = FALSE)
    }
    storage.mode(beta) <- "double"
    return(beta)
  }
  if (length(beta) != k) {
    stop(sprintf("`beta` must have one value per column of `x` (%d), not %d", k,
                 length(beta)), call. = FALSE)
  }
  matrix(as.double(beta), ncol = 1L)
}

# A double matrix; NA / NaN / Inf are found by the C++ core in the pass that
# reads x anyway (a separate is.infinite() pass here would cost more than the
# log-likelihood itself).
check_design <- function(x) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) {
    if (!is.numeric(x) && !is.logical(x)) {
      stop(sprintf("`x` must be a numeric matrix, not %s", class(x)[1L]), call. = FALSE)
    }
    x <- matrix(x, ncol = 1L)
  }
  if (length(dim(x)) != 2L) {
    stop(sprintf("`x` must be a matrix (it has %d dimensions)", length(dim(x))),
         call. = FALSE)
  }
  if (!is.numeric(x) && !is.logical(x)) {
    stop(sprintf("`x` must be numeric, not %s", typeof(x)), call. = FALSE)
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# `link` of gpu_glm_lp(): NULL (the family's own) or one of its links; ""
# for the core.
check_glm_link <- function(link, family) {
  if (is.null(link)) return("")
  links <- strsplit(family_row(family)$links, ",", fixed = TRUE)[[1L]]
  if (!is.character(link) || length(link) != 1L || !link %in% links) {
    stop(sprintf("`link` %s is not a link of %s, which takes %s", deparse(link)[1L], family,
                 paste0("\"", links, "\"", collapse = ", ")), call. = FALSE)
  }
  link
}
