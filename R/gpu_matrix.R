#' Matrices on the OpenCL device
#'
#' `gpu_matrix()` copies a numeric matrix to the selected OpenCL device and
#' returns a handle to it. Operations on handles run on the device and give
#' new handles; [as.matrix()] copies back.
#'
#' @param x A numeric matrix (or something [as.matrix()] turns into one;
#'   a vector becomes a one-column matrix). No `NA`, `NaN` or infinite
#'   values: see "Finite values only" below.
#' @param view `"entire"`, `"lower"` or `"upper"`. A triangular view keeps
#'   only that triangle of the square `x` (the other is zero) and travels
#'   packed: n (n + 1) / 2 values cross the bus each way instead of n^2.
#' @details `gpu_matrix` is an S4 class holding an external pointer to the
#'   device memory, which is released when the object is garbage-collected
#'   (kept for the next matrix of its size; see [gpu_empty_cache()]).
#'   Device memory does not survive [saveRDS()] or a new session. The
#'   operators `+`, `-` (both operands `gpu_matrix`), `*` and `/` by a
#'   scalar, unary minus, [t()] and `%*%` run on the device; a sum of two
#'   lower triangles is lower, `t()` of a lower triangle is upper, and a
#'   product of two lower (upper) triangles is lower (upper). `dim()`,
#'   `nrow()` and `ncol()` work as for matrices. In `%*%` one operand may
#'   be an R matrix or vector: it is copied to the device (a vector is a
#'   column, or a row where only that conforms, as in base R) and the
#'   product is a `gpu_matrix`.
#'
#'   ## Finite values only
#'   A `gpu_matrix` holds finite values only, so that every function that
#'   takes one (such as [gpu_chol()], [gpu_tri_solve()], [gpu_sum()]) can
#'   rely on it without a scan of its own. `gpu_matrix()` refuses `NA`,
#'   `NaN` and infinite values, division by zero is an error, and an
#'   operation whose result would hold an infinite or `NaN` value (an
#'   overflow, such as `1e300 * a` for an `a` with values above 1e8) stops
#'   with an error naming the operation instead of returning it: the
#'   result is checked on the device, one pass over it with only a flag
#'   read back. For IEEE infinities and `NaN`, compute on [as.matrix()] in R.
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
  view <- check_choice(view, c("entire", "lower", "upper"), "view")
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
#' @param y A `gpu_matrix`, or (when `x` is one) a numeric matrix or vector.
#' @aliases %*%,gpu_matrix,ANY-method %*%,ANY,gpu_matrix-method
#' @exportMethod %*%
setMethod("%*%", signature("gpu_matrix", "gpu_matrix"), function(x, y) {
  gpu_multiply(x, y)
})

setMethod("%*%", signature("gpu_matrix", "ANY"), function(x, y) {
  gpu_multiply(x, product_operand(y, "y", ncol(x), first = FALSE))
})

setMethod("%*%", signature("ANY", "gpu_matrix"), function(x, y) {
  gpu_multiply(product_operand(x, "x", nrow(y), first = TRUE), y)
})

gpu_multiply <- function(x, y) {
  if (ncol(x) != nrow(y)) {
    stop(sprintf("`y` has %d rows but `x` has %d columns: they do not conform",
                 nrow(y), ncol(x)), call. = FALSE)
  }
  check_result_size(nrow(x), ncol(y), "opencl",
                    sprintf("`x` %%*%% `y`, a %d x %d matrix,", nrow(x), ncol(y)),
                    stays_on_device = TRUE)
  new_gpu_matrix(.cpp_multiply(x@ptr, y@ptr))
}

# The R operand of a mixed product on the device. A vector is a column
# (second operand) or a row (first operand) of length `inner`, or the other
# way round where only that conforms, as in base R's %*%.
product_operand <- function(v, arg, inner, first) {
  if (is.null(dim(v)) && (is.numeric(v) || is.logical(v))) {
    if (length(v) != inner && inner != 1L) {
      stop(sprintf("`%s` has %d values but must have %d (the %s of `%s`)", arg,
                   length(v), inner, if (first) "rows" else "columns",
                   if (first) "y" else "x"), call. = FALSE)
    }
    as_row <- if (length(v) == inner) first else !first
    v <- if (as_row) matrix(v, nrow = 1L) else matrix(v, ncol = 1L)
  }
  gpu_matrix(check_numeric_matrix(v, arg))
}

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
  if (.Generic == "/" && s == 0) {
    stop("`e2` must not be 0: dividing a gpu_matrix by zero gives infinite or NaN ",
         "values, and a gpu_matrix holds finite values only (see ?gpu_matrix)",
         call. = FALSE)
  }
  switch(.Generic,
    "*" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, s, "e1 * e2")),
    "/" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, 1 / s, "e1 / e2")),
    stop(sprintf("`%s` of a gpu_matrix and a number is not supported; ", .Generic),
         "`*` and `/` are", call. = FALSE)
  )
})

setMethod("Arith", signature("numeric", "gpu_matrix"), function(e1, e2) {
  s <- check_scalar(e1, "e1")
  switch(.Generic,
    "*" = new_gpu_matrix(.cpp_scalar_multiply(e2@ptr, s, "e1 * e2")),
    stop(sprintf("`%s` of a number and a gpu_matrix is not supported; `*` is",
                 .Generic), call. = FALSE)
  )
})

setMethod("Arith", signature("gpu_matrix", "missing"), function(e1, e2) {
  switch(.Generic,
    "-" = new_gpu_matrix(.cpp_scalar_multiply(e1@ptr, -1, "-e1")),
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
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# NA/NaN and infinite values are errors. gpu_chol(), gpu_chol_grad() and
# gpu_tri_inv() leave this to the device for matrices that go there (one
# pass over the data where it already is, in the kernel that copies it;
# src/r_chol.cpp and src/r_linalg.cpp give the same messages): at n = 16384
# these two scans take longer than the factorisation.
check_finite <- function(x, arg) {
  if (anyNA(x)) {
    stop(sprintf("`%s` contains NA or NaN values", arg), call. = FALSE)
  }
  if (any(is.infinite(x))) {
    stop(sprintf("`%s` contains infinite values", arg), call. = FALSE)
  }
  invisible(x)
}

# Comparisons, logic, elementwise math and summaries do not run on the
# device: an error that says so, rather than base R's "invalid argument
# type" or "comparison is possible only for atomic and list types".
unsupported_on_device <- function(generic, arg) {
  hint <- if (generic %in% c("sum", "prod", "max", "min", "range", "any", "all")) {
    "use gpu_sum() / gpu_mean(), or as.matrix() first"
  } else {
    "use as.matrix() first"
  }
  stop(sprintf("`%s` is a gpu_matrix, which `%s` does not take on the device; %s",
               arg, generic, hint), call. = FALSE)
}

#' @rdname gpu_matrix
#' @aliases Compare,gpu_matrix,ANY-method Compare,ANY,gpu_matrix-method
#'   Logic,gpu_matrix,ANY-method Logic,ANY,gpu_matrix-method
#'   Math,gpu_matrix-method Summary,gpu_matrix-method !,gpu_matrix-method
#' @exportMethod Compare Logic Math Summary !
setMethod("Compare", signature("gpu_matrix", "ANY"),
          function(e1, e2) unsupported_on_device(.Generic, "e1"))
setMethod("Compare", signature("ANY", "gpu_matrix"),
          function(e1, e2) unsupported_on_device(.Generic, "e2"))
setMethod("Logic", signature("gpu_matrix", "ANY"),
          function(e1, e2) unsupported_on_device(.Generic, "e1"))
setMethod("Logic", signature("ANY", "gpu_matrix"),
          function(e1, e2) unsupported_on_device(.Generic, "e2"))
setMethod("Math", "gpu_matrix", function(x) unsupported_on_device(.Generic, "x"))
setMethod("Summary", "gpu_matrix",
          function(x, ..., na.rm = FALSE) unsupported_on_device(.Generic, "x"))
setMethod("!", "gpu_matrix", function(x) unsupported_on_device("!", "x"))
