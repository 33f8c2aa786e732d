#' Batched Cholesky factorisation of many small matrices
#'
#' Factors every slice of an m x m x B array, `a[, , b] = L_b %*% t(L_b)`,
#' in one device launch: each work item (m <= 8) or each work group (larger
#' m) factors one matrix, in local memory while it fits. From m = 128 on,
#' a blocked algorithm spreads every matrix over many work groups, two
#' launches per block of 32 columns (diagonal block and panel, then the
#' update of the trailing triangle), so that a few large matrices still
#' fill a GPU.
#'
#' @param a A numeric m x m x B array of symmetric positive-definite
#'   matrices (an m x m matrix is one item). No `NA`, `NaN` or infinite
#'   values.
#' @param upper `FALSE` (default) returns the lower factors L; `TRUE` returns
#'   `t(L)`, what [base::chol()] returns.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"` the device is used when `B * m^3` is at least
#'   `getOption("clbayes.threshold.gpu_chol_batched", 1e7)`.
#' @return An array of the same shape as `a` holding the factors (zeros in
#'   the other triangle).
#' @seealso [gpu_solve_batched()]
#' @examples
#' a <- array(0, c(3, 3, 2))
#' a[, , 1] <- diag(3) + 1
#' a[, , 2] <- 2 * diag(3)
#' l <- gpu_chol_batched(a, backend = "cpu")
#' l[, , 1] %*% t(l[, , 1])
#' @export
gpu_chol_batched <- function(a, upper = FALSE,
                             backend = getOption("clbayes.backend", "auto")) {
  .chol_batched(a, upper, backend)
}

# gpu_chol_batched() with `settings`: named values in place of the device's
# batched settings (src/r_batched.cpp, settings_with), by which the tests
# reach the blocked path at small m.
.chol_batched <- function(a, upper, backend, settings = integer(0)) {
  d <- check_batch_array(a, "a")
  m <- d[1L]
  B <- d[3L]
  if (!isTRUE(upper) && !isFALSE(upper)) {
    stop("`upper` must be TRUE or FALSE", call. = FALSE)
  }
  bad <- .cpp_first_asymmetric(a, m, B)
  if (bad > 0L) {
    stop(sprintf("`%s` must be symmetric", item_name("a", bad, dim(a))), call. = FALSE)
  }
  backend <- resolve_backend(backend, as.double(B) * m^3,
                             getOption("clbayes.threshold.gpu_chol_batched", 1e7))
  res <- .cpp_chol_batched(a, m, B, backend == "opencl", settings)
  bad <- which(res$info != 0L)
  if (length(bad) > 0L) {
    stop(sprintf("`%s` is not positive definite", item_name("a", bad[1L], dim(a))),
         call. = FALSE)
  }
  out <- array(res$factor, dim(a))
  if (upper) out <- aperm(array(out, d), c(2L, 1L, 3L))
  dim(out) <- dim(a)
  dimnames(out) <- dimnames(a)
  out
}

#' Batched solution of many small linear systems
#'
#' Solves `a[, , b] %*% x = b` for every item b in one device launch: LU with
#' partial pivoting, then forward and back substitution, per item.
#'
#' @param a A numeric m x m x B array of non-singular matrices (an m x m
#'   matrix is one item). No `NA`, `NaN` or infinite values.
#' @param b The right-hand sides: an m x B matrix (one vector per item), or
#'   an m x r x B array (r vectors per item). With one item, a vector of
#'   length m is accepted too.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"` the device is used when `B * m^3` is at least
#'   `getOption("clbayes.threshold.gpu_solve_batched", 1e7)`.
#' @return The solutions, with the shape of `b`. An item whose LU factor has
#'   an exactly zero pivot is an error (as [base::solve()]).
#' @examples
#' a <- array(c(2, 1, 1, 3, 4, 0, 0, 5), c(2, 2, 2))
#' b <- matrix(1:4, 2, 2)
#' x <- gpu_solve_batched(a, b, backend = "cpu")
#' a[, , 2] %*% x[, 2]
#' @export
gpu_solve_batched <- function(a, b, backend = getOption("clbayes.backend", "auto")) {
  d <- check_batch_array(a, "a")
  m <- d[1L]
  B <- d[3L]
  if (!is.numeric(b) && !is.logical(b)) {
    stop("`b` must be a numeric matrix or array", call. = FALSE)
  }
  db <- dim(b)
  if (is.null(db) && B == 1L && length(b) == m) db <- c(m, 1L)
  if (length(db) == 2L && db[1L] == m && db[2L] == B) {
    r <- 1L
  } else if (length(db) == 3L && db[1L] == m && db[3L] == B) {
    r <- db[2L]
  } else {
    stop(sprintf(paste0("`b` must be an %d x %d matrix or an %d x r x %d array ",
                        "(it is %s)"), m, B, m, B,
                 if (is.null(dim(b))) sprintf("a vector of length %d", length(b))
                 else paste(dim(b), collapse = " x ")), call. = FALSE)
  }
  if (any(!is.finite(b))) {
    stop("`b` must not contain NA, NaN or infinite values", call. = FALSE)
  }
  backend <- resolve_backend(backend, as.double(B) * m^3,
                             getOption("clbayes.threshold.gpu_solve_batched", 1e7))
  res <- .cpp_solve_batched(a, as.double(b), m, r, B, backend == "opencl")
  bad <- which(res$info != 0L)
  if (length(bad) > 0L) {
    stop(sprintf("`%s` is singular (U[%d, %d] is exactly zero)",
                 item_name("a", bad[1L], dim(a)), res$info[bad[1L]], res$info[bad[1L]]),
         call. = FALSE)
  }
  out <- res$solution
  dim(out) <- dim(b)
  if (!is.null(dim(b))) dimnames(out) <- dimnames(b)
  out
}

# Dimensions c(m, m, B) of a numeric array of square matrices, checked.
check_batch_array <- function(a, arg) {
  if (!is.numeric(a) && !is.logical(a)) {
    stop(sprintf("`%s` must be a numeric array, not %s", arg, class(a)[1L]),
         call. = FALSE)
  }
  d <- dim(a)
  if (length(d) == 2L) d <- c(d, 1L)
  if (length(d) != 3L) {
    stop(sprintf("`%s` must be an m x m x B array (or an m x m matrix)", arg),
         call. = FALSE)
  }
  if (d[1L] != d[2L]) {
    stop(sprintf("`%s` must hold square matrices (it is %s)", arg,
                 paste(dim(a), collapse = " x ")), call. = FALSE)
  }
  if (any(!is.finite(a))) {
    stop(sprintf("`%s` must not contain NA, NaN or infinite values", arg),
         call. = FALSE)
  }
  as.integer(d)
}

item_name <- function(arg, b, d) {
  if (length(d) == 3L) sprintf("%s[, , %d]", arg, b) else arg
}

#' Gaussian-process log-likelihood for many parameter rows at once
#'
#' For each row (kappa, psi, phi) of `theta`, the log density of
#' `y - X %*% beta` under N(0, Sigma) with
#' `Sigma[i, j] = kappa * exp(-d[i, j] / phi)` (exponential) or
#' `kappa * exp(-d[i, j]^2 / (2 * phi^2))` (squared exponential) for
#' i != j and `kappa + psi` on the diagonal, `d` the Euclidean distances
#' between the rows of `coords`. On the device all rows go in one launch,
#' one work group per row: build Sigma column by column into a Cholesky
#' factorisation, solve, and reduce the quadratic form and the log
#' determinant (Tibbits et al., parallel multivariate slice sampling,
#' section 4.1.2). From n = 128 locations on, the rows' covariance matrices
#' are built in one launch and factored by the blocked batched Cholesky of
#' [gpu_chol_batched()], many work groups per row, which keeps the latency
#' of a call low when there are few rows. This is the evaluator the slice
#' sampler calls with the 2^k vertices or the K proposals of one step.
#'
#' @param y The n responses, or a `gpu_gp_data` object made by
#'   [gpu_gp_data()] (then `X` and `coords` are omitted). The data of a
#'   `gpu_gp_data` object stay on the device between calls.
#' @param X The n x p design matrix (`NULL` for none).
#' @param coords The n x d matrix of locations (a vector is one coordinate).
#' @param beta The p regression coefficients.
#' @param theta A numeric matrix with 3 columns, kappa, psi and phi, one
#'   parameter row per density evaluation (a vector of length 3 is one row).
#'   No `NA`.
#' @param cov `"exponential"` or `"squared_exponential"`.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"` the device is used when `nrow(theta) * n^3` is at least
#'   `getOption("clbayes.threshold.gp_loglik_batched", 1e8)`.
#' @return A numeric vector, one log density per row of `theta`. A row
#'   outside the support (kappa <= 0, psi < 0, phi <= 0, or infinite) gives
#'   `-Inf`, as does a row whose Sigma is numerically not positive definite:
#'   a Cholesky pivot at or below `16 * n * .Machine$double.eps *
#'   (kappa + psi)`. Never `NaN`, never an error for a parameter value.
#' @examples
#' set.seed(1)
#' coords <- matrix(runif(20), 10, 2)
#' X <- cbind(1, rnorm(10))
#' y <- drop(X %*% c(1, 2)) + rnorm(10)
#' theta <- cbind(kappa = c(1, 2, -1), psi = 0.5, phi = 0.3)
#' gp_loglik_batched(y, X, coords, beta = c(1, 2), theta = theta,
#'                   backend = "cpu")
#' @export
gp_loglik_batched <- function(y, X, coords, beta, theta,
                              cov = c("exponential", "squared_exponential"),
                              backend = getOption("clbayes.backend", "auto")) {
  .gp_loglik_batched(y, X, coords, beta, theta, cov, backend)
}

# gp_loglik_batched() with `settings`, as .chol_batched(): the tests reach
# the blocked path at small n so. X, coords and beta may be missing, as there.
.gp_loglik_batched <- function(y, X, coords, beta, theta, cov, backend,
                               settings = integer(0)) {
  cov <- check_choice(cov, c("exponential", "squared_exponential"), "cov")
  if (inherits(y, "gpu_gp_data")) {
    if (!missing(X) || !missing(coords)) {
      stop("`X` and `coords` must be omitted when `y` is a gpu_gp_data object",
           call. = FALSE)
    }
    data <- y
  } else {
    data <- gpu_gp_data(y, X, coords)
  }
  n <- data$n
  if (is.null(dim(theta)) && length(theta) == 3L) theta <- matrix(theta, 1L)
  if (!is.numeric(theta) || length(dim(theta)) != 2L || ncol(theta) != 3L) {
    stop("`theta` must be a numeric matrix with 3 columns (kappa, psi, phi)",
         call. = FALSE)
  }
  if (anyNA(theta)) stop("`theta` must not contain NA or NaN values", call. = FALSE)
  if (missing(beta) || is.null(beta)) beta <- numeric(0)
  if (!is.numeric(beta) || length(beta) != data$p || any(!is.finite(beta))) {
    stop(sprintf("`beta` must be %d finite numbers (one per column of `X`)", data$p),
         call. = FALSE)
  }
  storage.mode(theta) <- "double"
  backend <- resolve_backend(backend, as.double(nrow(theta)) * n^3,
                             getOption("clbayes.threshold.gp_loglik_batched", 1e8))
  # every row in flight builds its own (n + 1) x (n + 1) covariance
  check_result_size(n + 1, n + 1, backend,
                    sprintf(paste("`y` has %d values: the covariance of a row of",
                                  "`theta`, a %d x %d matrix,"), n, n + 1L, n + 1L),
                    stays_on_device = backend == "opencl")
  .cpp_gp_loglik(data$ptr, as.double(beta), theta, cov, backend == "opencl", settings)
}

#' Gaussian-process data kept for repeated likelihood evaluations
#'
#' Checks and stores y, X and the locations once, for
#' [gp_loglik_batched()]; the first device evaluation copies them to the
#' device, where they stay for later calls (and for the slice sampler's GP
#' model). Only beta and theta travel per call.
#'
#' @inheritParams gp_loglik_batched
#' @param y The n responses.
#' @return An object of class `gpu_gp_data`: a list with the external
#'   pointer `ptr` and the dimensions `n`, `p`, `d`. It does not survive
#'   [saveRDS()] or a new session.
#' @examples
#' set.seed(1)
#' data <- gpu_gp_data(rnorm(5), cbind(1, 1:5), matrix(runif(10), 5))
#' data
#' gp_loglik_batched(data, beta = c(0, 0), theta = c(1, 0.1, 0.5), backend = "cpu")
#' @export
gpu_gp_data <- function(y, X, coords) {
  if (!is.numeric(y) || !is.null(dim(y)) && !(length(dim(y)) == 2L && ncol(y) == 1L)) {
    stop("`y` must be a numeric vector", call. = FALSE)
  }
  y <- as.double(y)
  n <- length(y)
  if (n < 1L) stop("`y` must have at least one value", call. = FALSE)
  if (missing(X) || is.null(X)) X <- matrix(0, n, 0L)
  if (is.null(dim(X))) X <- matrix(X, ncol = 1L)
  if (!is.numeric(X) || length(dim(X)) != 2L || nrow(X) != n) {
    stop(sprintf("`X` must be a numeric matrix with %d rows (one per value of `y`)", n),
         call. = FALSE)
  }
  if (missing(coords) || is.null(coords)) {
    stop("`coords` must be a numeric matrix of locations, one row per value of `y`",
         call. = FALSE)
  }
  if (is.null(dim(coords))) coords <- matrix(coords, ncol = 1L)
  if (!is.numeric(coords) || length(dim(coords)) != 2L || nrow(coords) != n ||
      ncol(coords) < 1L) {
    stop(sprintf("`coords` must be a numeric matrix with %d rows (one per value of `y`)",
                 n), call. = FALSE)
  }
  storage.mode(X) <- "double"
  storage.mode(coords) <- "double"
  ptr <- .cpp_gp_data(y, X, coords)
  dims <- .cpp_gp_data_dims(ptr)
  structure(list(ptr = ptr, n = dims[1L], p = dims[2L], d = dims[3L]),
            class = "gpu_gp_data")
}

#' @rdname gpu_gp_data
#' @param x A `gpu_gp_data` object.
#' @param ... Unused.
#' @export
print.gpu_gp_data <- function(x, ...) {
  cat(sprintf("<gpu_gp_data: %d locations in %d dimensions, %d covariates>\n",
              x$n, x$d, x$p))
  invisible(x)
}

# Internal, for the tests: apply one batched device function (op: "chol",
# "lu", "lu_piv", "trsm_lower", "trsm_upper", "gemm", "gemv", "trsv_lower",
# "trsv_upper") to every item of the m x m x B array a, with b and c
# m x r x B arrays, at level "serial" or "team", with the contiguous or the
# interleaved layout, in local or global memory (team level). Returns a list
# with the new a and c, info and (lu_piv) the 1-based pivots, m x B.
batched_device_op <- function(op, a, b = NULL, c = NULL,
                              level = c("serial", "team"),
                              layout = c("contiguous", "interleaved"),
                              local = TRUE, unit = FALSE, alpha = 1, beta = 0) {
  level <- check_choice(level, c("serial", "team"), "level")
  layout <- check_choice(layout, c("contiguous", "interleaved"), "layout")
  d <- check_batch_array(a, "a")
  m <- d[1L]
  B <- d[3L]
  if (is.null(b)) b <- array(0, c(m, 1L, B))
  if (is.null(c)) c <- array(0, dim(b))
  r <- length(b) %/% (m * B)
  res <- .cpp_batched_op(op, as.double(a), as.double(b), as.double(c), m, r, B,
                         level == "team", layout == "interleaved", isTRUE(local),
                         isTRUE(unit), alpha, beta)
  list(a = array(res$a, dim(a)), c = array(res$c, dim(b)), info = res$info,
       piv = if (op == "lu_piv") matrix(res$piv + 1L, m, B))
}
