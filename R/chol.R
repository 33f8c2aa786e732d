#' Cholesky decomposition on the device or the CPU
#'
#' `gpu_chol()` factors a symmetric positive-definite matrix `x` as
#' `x = L %*% t(L)`. On an OpenCL device it runs the blocked algorithm of
#' Cesnovar et al. (2020, section 3.3.1) as a loop over panels of columns:
#' each panel is factored on one queue, by products and by one small
#' kernel per 128 columns (512 where the device has FP64 tensor cores, which
#' then take its updates), whose work groups update, factor and solve those
#' columns 32 at a time, while the rest of the matrix is updated by large
#' GEMMs on another. An R matrix crosses the bus block column by block column,
#' copied in and back by two helper threads (each with a few more for the
#' host's copies through page-locked staging buffers), and is factored in the
#' left-looking order: each block column is updated with the finished
#' columns left of it and factored as soon as it has arrived, and copied
#' back at once while later columns still arrive, so that both copies
#' overlap with the factorisation. On the CPU it uses Eigen's blocked LLT.
#'
#' @param x A symmetric positive-definite numeric matrix, or a [gpu_matrix()].
#'   Symmetry is checked to a relative tolerance of `1e-8` per element.
#' @param upper If `FALSE` (the default) return the lower-triangular `L`; if
#'   `TRUE` return the upper-triangular `t(L)`, which is what [base::chol()]
#'   returns.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"` an R matrix goes to the device when it has at least
#'   `getOption("clbayes.threshold.chol", 384)` rows (where the device,
#'   copies included, overtook the CPU path on the H200 machine; see
#'   `bench/RESULTS.md`). A `gpu_matrix` stays on the device unless
#'   `backend = "cpu"`.
#' @return The triangular factor: a numeric matrix for a matrix `x`, a
#'   `gpu_matrix` with view `"lower"` (or `"upper"`) for a `gpu_matrix` `x`.
#'   An error names the problem when `x` is not square, contains `NA`, `NaN`
#'   or infinite values, is not symmetric, or is not positive definite (then
#'   it names the first pivot, 1-based, that is not positive).
#' @md
#' @seealso [gpu_chol_grad()], [gpu_tri_solve()]
#' @examples
#' x <- crossprod(matrix(rnorm(25), 5)) + diag(5)
#' L <- gpu_chol(x, backend = "cpu")
#' all.equal(L %*% t(L), x)
#' all.equal(gpu_chol(x, upper = TRUE, backend = "cpu"), chol(x))
#' @export
gpu_chol <- function(x, upper = FALSE,
                     backend = getOption("clbayes.backend", "auto")) {
  upper <- check_flag(upper, "upper")
  if (methods::is(x, "gpu_matrix")) {
    if (resolve_backend(backend, on_device = TRUE) == "cpu") {
      return(gpu_matrix(gpu_chol(as.matrix(x), upper, backend = "cpu"),
                        view = if (upper) "upper" else "lower"))
    }
    return(new_gpu_matrix(.cpp_chol_gpu(x@ptr, upper)))
  }
  x <- check_square_matrix(x, "x", finite = FALSE)
  where <- resolve_backend(backend, nrow(x),
                           getOption("clbayes.threshold.chol", 384))
  if (where != "opencl") check_finite(x, "x")  # else on the device
  .cpp_chol(x, upper, where == "opencl")
}

#' Reverse-mode gradient of the Cholesky decomposition
#'
#' Given `L = gpu_chol(A)` and the adjoint `L_adj` of `L` (the gradient of a
#' scalar function f with respect to the elements of `L`),
#' `gpu_chol_grad()` returns the gradient of f with respect to `A` as a
#' symmetric matrix `G`: for every symmetric direction `V`, the directional
#' derivative of `f(chol(A))` is `sum(G * V)`. It runs the blocked algorithm
#' of Murray (2016) as in Cesnovar et al. (2020, section 3.3.2), on the
#' device or with Eigen on the CPU. On the device it follows the schedule of
#' [gpu_chol()] backwards: each diagonal block's small products (and the
#' next block's inverse) run on one queue while the large updates of the
#' columns left of it run on another.
#'
#' @param L The lower-triangular Cholesky factor (a numeric matrix or a
#'   [gpu_matrix()]); only its lower triangle is used.
#' @param L_adj The adjoint of `L`, of the same dimensions; only its lower
#'   triangle is used, since the upper triangle of `L` is constant zero.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"`, matrices go to the device from
#'   `getOption("clbayes.threshold.chol_grad", 192)` rows (measured as for
#'   [gpu_chol()]); a `gpu_matrix` argument keeps the computation on the
#'   device.
#' @return The symmetric gradient `G`: a numeric matrix, or a `gpu_matrix`
#'   when `L` or `L_adj` is one.
#' @md
#' @seealso [gpu_chol()]
#' @examples
#' A <- crossprod(matrix(rnorm(16), 4)) + diag(4)
#' L <- gpu_chol(A, backend = "cpu")
#' W <- matrix(rnorm(16), 4)  # f(L) = sum(W * L) has adjoint W
#' G <- gpu_chol_grad(L, W, backend = "cpu")
#' isSymmetric(G)
#' @export
gpu_chol_grad <- function(L, L_adj, backend = getOption("clbayes.backend", "auto")) {
  on_device <- methods::is(L, "gpu_matrix") || methods::is(L_adj, "gpu_matrix")
  if (on_device) {
    if (!methods::is(L, "gpu_matrix")) L <- gpu_matrix(check_square_matrix(L, "L"))
    if (!methods::is(L_adj, "gpu_matrix")) {
      L_adj <- gpu_matrix(check_numeric_matrix(L_adj, "L_adj"))
    }
    if (resolve_backend(backend, on_device = TRUE) == "cpu") {
      return(gpu_matrix(gpu_chol_grad(as.matrix(L), as.matrix(L_adj), backend = "cpu")))
    }
    return(new_gpu_matrix(.cpp_chol_grad_gpu(L@ptr, L_adj@ptr)))
  }
  L <- check_square_matrix(L, "L", finite = FALSE)
  L_adj <- check_numeric_matrix(L_adj, "L_adj", finite = FALSE)
  where <- resolve_backend(backend, nrow(L),
                           getOption("clbayes.threshold.chol_grad", 192))
  if (where != "opencl") {  # else on the device, while copying
    check_finite(L, "L")
    check_finite(L_adj, "L_adj")
  }
  .cpp_chol_grad(L, L_adj, where == "opencl")
}

# TRUE or FALSE, or an error naming `arg` (used by several areas).
check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    stop(sprintf("`%s` must be TRUE or FALSE", arg), call. = FALSE)
  }
  x
}

check_square_matrix <- function(x, arg, finite = TRUE) {
  x <- check_numeric_matrix(x, arg, finite)
  if (nrow(x) != ncol(x)) {
    stop(sprintf("`%s` must be square (it is %d x %d)", arg, nrow(x), ncol(x)),
         call. = FALSE)
  }
  x
}
