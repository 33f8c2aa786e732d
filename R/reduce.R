#' Sums and means without floating-point absorption
#'
#' `gpu_sum()` and `gpu_mean()` add up all values of `x` by one of four
#' summation methods, on the OpenCL device or on the CPU. They follow
#' Pechprasarn and Khiripet, "Accelerating Bayesian Computation with
#' Parallel Reduction using CUDA": a long sum (a Monte Carlo mean, say)
#' computed with one accumulator loses the small addends once the running
#' sum is large ("absorption"); a parallel tree with many accumulators
#' suffers much less, and halving after every addition or compensating the
#' rounding error removes the problem.
#'
#' @param x A numeric (or integer or logical) vector, matrix or array, or a
#'   [gpu_matrix] whose elements are summed where they are, on the device.
#' @param method
#'   * `"kahan"` (default): compensated (Kahan-Babuska / Neumaier)
#'     accumulation in each work item (each chunk on the CPU), combined by
#'     compensated additions of the partial results. Accurate for data of
#'     any sign.
#'   * `"div2"`: the paper's tree reduction that divides by two after every
#'     addition, zero-padded to the next power of two \eqn{2^D \ge n};
#'     the mean is \eqn{C} times the root with \eqn{C = 2^D / n}. For
#'     non-negative data no intermediate ever exceeds the largest value, so
#'     nothing is absorbed; the guarantee is for non-negative data, though
#'     the method works (as well as `"pairwise"`) for any sign. Its
#'     intermediates never overflow.
#'   * `"pairwise"`: the same tree without halving.
#'   * `"naive"`: one sequential accumulator, on the CPU only; it exists to
#'     show the failure.
#' @param precision `"double"` (default) or `"single"`: `"single"` converts
#'   the values to single precision on the way to the device (or as they
#'   are read on the CPU) and accumulates in single precision, to reproduce
#'   the paper's experiments. Values beyond the single-precision range
#'   become infinite.
#' @param na.rm `TRUE` to drop `NA` and `NaN` values first. Otherwise, as in
#'   base R, any `NA` gives `NA` (and `NaN` without `NA` gives `NaN`).
#'   A `gpu_matrix` holds finite values only (arithmetic whose result would
#'   hold `NaN` or an infinity stops with an error instead: see the NaN
#'   policy in [gpu_matrix]), so `na.rm` changes nothing for one, and its
#'   sum is summed where it is, on the device.
#' @param backend `"auto"`, `"opencl"` or `"cpu"`; see [backends]. With
#'   `"auto"`, a `gpu_matrix` is summed on the device, and a vector on the
#'   device when it has at least `getOption("clbayes.threshold.gpu_sum")`
#'   (for `gpu_mean()`: `"clbayes.threshold.gpu_mean"`) values, default
#'   `2^20`, a provisional value that weighs the transfer to the device
#'   against the CPU path. `"naive"` always runs on the CPU (and refuses
#'   `backend = "opencl"`).
#' @details Infinite values give `Inf`, `-Inf` or `NaN` as in base R. When
#'   the result of `"kahan"` or `"pairwise"` is not finite it is recomputed
#'   by `"div2"`, so that a mean of finite values never overflows.
#'   The result is a double even for integer `x`. In double precision the
#'   error of `"kahan"` is a few units of roundoff times `sum(abs(x))`, that
#'   of `"div2"` and `"pairwise"` at most about `log2(length(x))` units
#'   (the tests check these bounds against base R's [sum()] and [mean()],
#'   which accumulate in long double); `"naive"` can be off by
#'   `length(x)` units. Device and CPU results differ only by rounding: the
#'   trees have the same depth but pair the values differently.
#' @return `gpu_sum()`: the sum of the values, a single number (`0` for no
#'   values). `gpu_mean()`: their mean (`NaN` for no values).
#' @seealso [sum()], [mean()]
#' @examples
#' x <- c(2^24, rep(1, 1000))
#' # one single-precision accumulator absorbs every 1 added to 2^24:
#' gpu_sum(x, "naive", "single", backend = "cpu") - 2^24
#' gpu_sum(x, "kahan", "single", backend = "cpu") - 2^24
#' set.seed(1)
#' u <- runif(1e5)
#' gpu_mean(u, "div2", backend = "cpu") - mean(u)
#' gpu_mean(c(1, 2, NA, 4), na.rm = TRUE, backend = "cpu")
#' @export
gpu_sum <- function(x, method = c("kahan", "div2", "pairwise", "naive"),
                    precision = c("double", "single"), na.rm = FALSE,
                    backend = getOption("clbayes.backend", "auto")) {
  reduce_run(x, method, precision, na.rm, backend, "gpu_sum")[1L]
}

#' @rdname gpu_sum
#' @export
gpu_mean <- function(x, method = c("kahan", "div2", "pairwise", "naive"),
                     precision = c("double", "single"), na.rm = FALSE,
                     backend = getOption("clbayes.backend", "auto")) {
  reduce_run(x, method, precision, na.rm, backend, "gpu_mean")[2L]
}

# c(sum, mean) of x after checking every argument.
reduce_run <- function(x, method, precision, na.rm, backend, fn) {
  method <- check_choice(method, c("kahan", "div2", "pairwise", "naive"), "method")
  precision <- check_choice(precision, c("double", "single"), "precision")
  if (!is.logical(na.rm) || length(na.rm) != 1L || is.na(na.rm)) {
    stop("`na.rm` must be TRUE or FALSE", call. = FALSE)
  }
  threshold <- getOption(paste0("clbayes.threshold.", fn), 2^20)
  if (methods::is(x, "gpu_matrix")) {
    where <- if (method == "naive") {
      reduce_naive_backend(backend)
    } else {
      resolve_backend(backend, on_device = TRUE)
    }
    if (where == "opencl") return(.cpp_sum_gpu(x@ptr, method, precision))
    x <- as.matrix(x)
  }
  if (!(is.numeric(x) || is.logical(x)) || is.object(x) && !is.matrix(x)) {
    stop(sprintf("`x` must be a numeric vector, matrix or array, or a gpu_matrix, not %s",
                 class(x)[1L]), call. = FALSE)
  }
  if (anyNA(x)) {
    if (na.rm) {
      x <- x[!is.na(x)]
    } else {
      value <- if (any(is.na(x) & !is.nan(x))) NA_real_ else NaN
      return(c(value, value))
    }
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  where <- if (method == "naive") {
    reduce_naive_backend(backend)
  } else {
    resolve_backend(backend, length(x), threshold)
  }
  .cpp_sum(x, method, precision, where == "opencl")
}

# "naive" exists only on the CPU.
reduce_naive_backend <- function(backend) {
  if (identical(resolve_backend(backend, 0, Inf), "opencl")) {
    stop("`method` \"naive\" runs on the CPU only; use backend = \"cpu\" or \"auto\"",
         call. = FALSE)
  }
  "cpu"
}
