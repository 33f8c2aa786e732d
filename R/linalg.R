#' Triangular inverse, triangular solve and `x %*% t(x)`
#'
#' `gpu_tri_inv()` inverts a triangular matrix; on the device with the
#' batched algorithm of Cesnovar et al. (2020, section 3.2.1): all small
#' diagonal blocks are inverted at once, then neighbouring blocks are joined
#' by `C3 = -C2 %*% A3 %*% C1` over doubling block sizes. `gpu_tri_solve()`
#' solves `L %*% y = b` (like [base::backsolve()] / [base::forwardsolve()]);
#' on the device as the inverse times `b`. `gpu_tcrossprod()` computes
#' `x %*% t(x)` like [base::tcrossprod()], one triangle and a mirror.
#'
#' @param L A triangular numeric matrix or [gpu_matrix()]; only the triangle
#'   chosen by `lower` is used. Its diagonal must have no zeros.
#' @param b A numeric matrix or vector (or a `gpu_matrix`) with `nrow(L)`
#'   rows.
#' @param x A numeric matrix or a `gpu_matrix`.
#' @param lower `TRUE` if `L` is lower triangular, `FALSE` if upper.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"`, R matrices go to the device from
#'   `getOption("clbayes.threshold.tri_inv", 256)` rows of `L` in
#'   `gpu_tri_inv()`. `gpu_tri_solve()` and `gpu_tcrossprod()` compare the
#'   order of the square problem of the same work, `(nrow(L)^2 *
#'   ncol(b))^(1/3)` and `(nrow(x)^2 * ncol(x))^(1/3)`, with
#'   `getOption("clbayes.threshold.tri_solve", 256)` and
#'   `getOption("clbayes.threshold.tcrossprod", 256)`: a solve with one
#'   right-hand side goes to the device from 4096 rows. The defaults are
#'   where the device, copies included, overtook the CPU path on the H200
#'   machine (`bench/RESULTS.md`). `gpu_matrix` arguments keep the
#'   computation on the device.
#' @return A numeric matrix (a vector from `gpu_tri_solve()` when `b` is a
#'   vector), or a `gpu_matrix` when an argument is one. A result that
#'   cannot fit (the n x n of `gpu_tcrossprod()` from a tall `x`, say) is an
#'   error before anything is allocated, stating the memory it needs and the
#'   memory of the machine (on the CPU) or of the device (its
#'   `CL_DEVICE_GLOBAL_MEM_SIZE` and `CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
#' @examples
#' L <- t(chol(crossprod(matrix(rnorm(16), 4)) + diag(4)))
#' all.equal(gpu_tri_inv(L, backend = "cpu"), solve(L))
#' b <- rnorm(4)
#' all.equal(gpu_tri_solve(L, b, backend = "cpu"), forwardsolve(L, b))
#' x <- matrix(rnorm(12), 3)
#' all.equal(gpu_tcrossprod(x, backend = "cpu"), tcrossprod(x))
#' @md
#' @name gpu_tri_inv
NULL

#' @rdname gpu_tri_inv
#' @export
gpu_tri_inv <- function(L, lower = TRUE, backend = getOption("clbayes.backend", "auto")) {
  lower <- check_flag(lower, "lower")
  if (methods::is(L, "gpu_matrix")) {
    if (resolve_backend(backend, on_device = TRUE) == "cpu") {
      return(gpu_matrix(gpu_tri_inv(as.matrix(L), lower, backend = "cpu"),
                        view = if (lower) "lower" else "upper"))
    }
    return(new_gpu_matrix(.cpp_tri_inv_gpu(L@ptr, lower)))
  }
  L <- check_square_matrix(L, "L", finite = FALSE)
  where <- resolve_backend(backend, nrow(L), getOption("clbayes.threshold.tri_inv", 256))
  if (where != "opencl") check_finite(L, "L")  # else on the device, while copying
  .cpp_tri_inv(L, lower, where == "opencl")
}

#' @rdname gpu_tri_inv
#' @export
gpu_tri_solve <- function(L, b, lower = TRUE,
                          backend = getOption("clbayes.backend", "auto")) {
  lower <- check_flag(lower, "lower")
  if (methods::is(L, "gpu_matrix") || methods::is(b, "gpu_matrix")) {
    if (!methods::is(L, "gpu_matrix")) L <- gpu_matrix(check_square_matrix(L, "L"))
    if (!methods::is(b, "gpu_matrix")) b <- gpu_matrix(check_numeric_matrix(b, "b"))
    if (resolve_backend(backend, on_device = TRUE) == "cpu") {
      return(gpu_matrix(gpu_tri_solve(as.matrix(L), as.matrix(b), lower, backend = "cpu")))
    }
    return(new_gpu_matrix(.cpp_tri_solve_gpu(L@ptr, b@ptr, lower)))
  }
  L <- check_square_matrix(L, "L")
  was_vector <- is.null(dim(b))
  b <- check_numeric_matrix(b, "b")
  if (nrow(b) != nrow(L)) {
    stop(sprintf("`b` must have %d rows like `L` (it has %d)", nrow(L), nrow(b)),
         call. = FALSE)
  }
  where <- resolve_backend(backend, square_order(nrow(L), nrow(L), ncol(b)),
                           getOption("clbayes.threshold.tri_solve", 256))
  y <- .cpp_tri_solve(L, b, lower, where == "opencl")
  if (was_vector) drop(y) else y
}

#' @rdname gpu_tri_inv
#' @export
gpu_tcrossprod <- function(x, backend = getOption("clbayes.backend", "auto")) {
  if (methods::is(x, "gpu_matrix")) {
    if (resolve_backend(backend, on_device = TRUE) == "cpu") {
      return(gpu_matrix(gpu_tcrossprod(as.matrix(x), backend = "cpu")))
    }
    check_result_size(nrow(x), nrow(x), "opencl", tcrossprod_name(x),
                      stays_on_device = TRUE)
    return(new_gpu_matrix(.cpp_tcrossprod_gpu(x@ptr)))
  }
  x <- check_numeric_matrix(x, "x")
  where <- resolve_backend(backend, square_order(nrow(x), nrow(x), ncol(x)),
                           getOption("clbayes.threshold.tcrossprod", 256))
  check_result_size(nrow(x), nrow(x), where, tcrossprod_name(x))
  .cpp_tcrossprod(x, where == "opencl")
}

tcrossprod_name <- function(x) {
  sprintf("`x` has %d rows: x %%*%% t(x), a %d x %d matrix,", nrow(x), nrow(x), nrow(x))
}

# An error before allocation when a rows x cols result cannot be made;
# `what` names the argument and the result ("`x` has 70000 rows: x %*%
# t(x), a 70000 x 70000 matrix,"). On the CPU the C++ result and its copy
# in R exist at once; a result made on the device must fit in one device
# buffer, and in R's memory as well unless it stays on the device.
check_result_size <- function(rows, cols, where, what, stays_on_device = FALSE) {
  bytes <- 8 * as.double(rows) * as.double(cols)
  if (where == "opencl") .cpp_check_device_allocation(bytes, what)
  if (!stays_on_device) {
    .cpp_check_host_allocation(if (where == "cpu") 2 * bytes else bytes, what)
  }
  invisible(NULL)
}

# The order of the square problem with the work of an m x k by k x n
# product, (m n k)^(1/3): what "auto" compares with a threshold measured
# on square matrices.
square_order <- function(m, n, k) {
  (as.numeric(m) * n * k)^(1 / 3)
}
