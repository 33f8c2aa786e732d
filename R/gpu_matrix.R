#' Matrices on the OpenCL device
#'
#' `gpu_matrix()` copies a numeric matrix to the selected OpenCL device and
#' returns a handle to it. Operations on handles run on the device and give
#' new handles; [as.matrix()] copies back.
#'
#' @param x A numeric matrix (or something [as.matrix()] turns into one;
#'   a vector becomes a one-column matrix). No `NA`, `NaN` or infinite
#'   values.
#' @param view `"entire"`, `"lower"` or `"upper"`. A triangular view keeps
#'   only that triangle of the square `x` (the other is zero) and travels
#'   packed: n (n + 1) / 2 values cross the bus each way instead of n^2.
#' @details `gpu_matrix` is an S4 class holding an external pointer to the
#'   device memory, which is freed when the object is garbage-collected.
#'   Device memory does not survive [saveRDS()] or a new session. The
#'   operators `+`, `-` (both operands `gpu_matrix`), `*` and `/` by a
#'   scalar, unary minus, [t()] and `%*%` run on the device; a sum of two
#'   lower triangles is lower, `t()` of a lower triangle is upper, and a
#'   product of two lower (upper) triangles is lower (upper). `dim()`,
#'   `nrow()` and `ncol()` work as for matrices.
#' @return An object of class `gpu_matrix`.
#' @seealso [gpu_available()], [gpu_select()]
#' @examples
#' if (gpu_available()) {
#'   a <- gpu_matrix(matrix(1:6, 2, 3))
#'   b <- gpu_matrix(matrix(6:1, 2, 3))
#'   as.matrix(a + b)
#'   as.matrix(2 * a %*% t(b))
#'   l <- gpu_matrix(diag(3) + 1, view = "lower")
#'   l
#' }
#' @export
gpu_matrix <- function(x, view = c("entire", "lower", "upper")) {
  view <- match.arg(view)
  if (methods::is(x, "gpu_matrix")) {
    stop("`x` is already a gpu_matrix", call. = FALSE)
  }
  x <- check_numeric_matrix(x, "x")
  if (view != "entire" && nrow(x) != ncol(x)) {
    stop(sprintf("`x` must be square for view = \"%s\" (it is %d x %d)",
                 view, nrow(x), ncol(x)), call. = FALSE)
  }
  new_gpu_matrix(.cpp_gpu_matrix(x, view))
}

#' @rdname gpu_matrix
#' @exportClass gpu_matrix
setClass("gpu_matrix", representation(ptr = "externalptr"))

new_gpu_matrix <- function(ptr) methods::new("gpu_matrix", ptr = ptr)

#' @rdname gpu_matrix
#' @param ... Unused.
#' @exportMethod as.matrix
setMethod("as.matrix", "gpu_matrix", function(x, ...) .cpp_as_matrix(x@ptr))

#' @rdname gpu_matrix
#' @exportMethod dim
setMethod("dim", "gpu_matrix", function(x) .cpp_dim(x@ptr))

#' @rdname gpu_matrix
#' @param object A `gpu_matrix`.
#' @exportMethod show
setMethod("show", "gpu_matrix", function(object) {
  d <- .cpp_dim(object@ptr)
  cat(sprintf("<gpu_matrix %d x %d, view %s>\n", d[1L], d[2L],
              .cpp_view(object@ptr)))
  if (d[1L] > 0L && d[2L] > 0L) {
    m <- .cpp_as_matrix(object@ptr)
    r <- min(d[1L], 6L)
    cl <- min(d[2L], 6L)
    print(m[seq_len(r), seq_len(cl), drop = FALSE])
    if (r < d[1L] || cl < d[2L]) {
      cat(sprintf("... (%d more rows, %d more columns)\n", d[1L] - r, d[2L] - cl))
    }
  }
  invisible(object)
})

#' @rdname gpu_matrix
#' @exportMethod t
setMethod("t", "gpu_matrix", function(x) new_gpu_matrix(.cpp_transpose(x@ptr)))

#' @rdname gpu_matrix
#' @param y A `gpu_matrix`.
#' @exportMethod %*%
setMethod("%*%", signature("gpu_matrix", "gpu_matrix"), function(x, y) {
  new_gpu_matrix(.cpp_multiply(x@ptr, y@ptr))
})

#' @rdname gpu_matrix
#' @param e1,e2 Operands.
#' @aliases Arith,gpu_matrix,numeric-method Arith,numeric,gpu_matrix-method
#'   Arith,gpu_matrix,missing-method Arith,gpu_matrix,ANY-method
#'   Arith,ANY,gpu_matrix-method
#' @exportMethod Arith
setMethod("Arith", signature("gpu_matrix", "gpu_matrix"), function(e1, e2) {
  switch(.Generic,
    "+" = new_gpu_matrix(.cpp_add(e1@ptr, e2@ptr)),
    "-" = new_gpu_matrix(.cpp_subtract(e1@ptr, e2@ptr)),
    stop(sprintf("`%s` of two gpu_matrix objects is not supported; `+`, `-` ",
                 .Generic), "and `%*%` are", call. = FALSE)
  )
})

setMethod("Arith", signature("gpu_matrix", "numeric"), function(e1, e2) {
  s <- check_scalar(e2, "e2")
  switch(.Generic,
    "*" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, s)),
    "/" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, 1 / s)),
    stop(sprintf("`%s` of a gpu_matrix and a number is not supported; ", .Generic),
         "`*` and `/` are", call. = FALSE)
  )
})

setMethod("Arith", signature("numeric", "gpu_matrix"), function(e1, e2) {
  s <- check_scalar(e1, "e1")
  switch(.Generic,
    "*" = new_gpu_matrix(.cpp_scalar_multiply(e2@ptr, s)),
    stop(sprintf("`%s` of a number and a gpu_matrix is not supported; `*` is",
                 .Generic), call. = FALSE)
  )
})

setMethod("Arith", signature("gpu_matrix", "missing"), function(e1, e2) {
  switch(.Generic,
    "-" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, -1)),
    "+" = e1,
    stop(sprintf("unary `%s` is not defined for a gpu_matrix", .Generic),
         call. = FALSE)
  )
})

setMethod("Arith", signature("gpu_matrix", "ANY"), function(e1, e2) {
  stop(sprintf("`e2` must be a gpu_matrix or a single number, not %s; ",
               class(e2)[1L]), "use gpu_matrix() to copy a matrix to the device",
       call. = FALSE)
})

setMethod("Arith", signature("ANY", "gpu_matrix"), function(e1, e2) {
  stop(sprintf("`e1` must be a gpu_matrix or a single number, not %s; ",
               class(e1)[1L]), "use gpu_matrix() to copy a matrix to the device",
       call. = FALSE)
})

check_scalar <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x)) {
    stop(sprintf("`%s` must be a single finite number", arg), call. = FALSE)
  }
  as.double(x)
}

# A double matrix with no missing or infinite values, or an error naming `arg`.
check_numeric_matrix <- function(x, arg, finite = TRUE) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) {
    if (!is.numeric(x) && !is.logical(x)) {
      stop(sprintf("`%s` must be a numeric matrix, not %s", arg, class(x)[1L]),
           call. = FALSE)
    }
    x <- matrix(x, ncol = 1L)
  }
  if (length(dim(x)) != 2L) {
    stop(sprintf("`%s` must be a matrix (it has %d dimensions)", arg,
                 length(dim(x))), call. = FALSE)
  }
  if (!is.numeric(x) && !is.logical(x)) {
    stop(sprintf("`%s` must be numeric, not %s", arg, typeof(x)), call. = FALSE)
  }
  if (finite) check_finite(x, arg)
  storage.mode(x) <- "double"
  x
}

# NA/NaN and infinite values are errors. gpu_chol() leaves this to the
# device for matrices that go there (one pass over the data where it
# already is; src/r_chol.cpp gives the same messages): at n = 16384 these
# two scans take longer than the factorisation.
check_finite <- function(x, arg) {
  if (anyNA(x)) {
    stop(sprintf("`%s` contains NA or NaN values", arg), call. = FALSE)
  }
  if (any(is.infinite(x))) {
    stop(sprintf("`%s` contains infinite values", arg), call. = FALSE)
  }
  invisible(x)
}
