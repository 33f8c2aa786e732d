#' Working with a clbayes_fit
#'
#' [slice_sample_mv()] returns a `clbayes_fit`. `summary()` gives per
#' variable the mean, sd, 5%, 50% and 95% quantiles, the bulk and tail
#' effective sample sizes and the rank-normalised split R-hat of Vehtari et
#' al. (2021), and ES/sec (bulk ESS per second of the whole run, warmup
#' included). `print()` shows it with the run's density evaluations, the
#' points per call of the density, the time spent inside the density against
#' the time spent in the sampler, and the smallest ES/s (for HMC fits also the
#' divergent transitions, step size, gradients and leapfrog steps);
#' `plot()` draws a trace and a density per variable; `as.array()` gives the
#' draws as an iteration x chain x variable array, `as.data.frame()` one row
#' per draw. With coda or posterior installed, `coda::as.mcmc.list()` and
#' `posterior::as_draws_array()` convert the kept draws.
#'
#' @param object,x A `clbayes_fit`.
#' @param variables Names (or indices) of the variables to plot; all by
#'   default.
#' @param ... Unused.
#' @return `summary()`: a data frame of class `clbayes_fit_summary`, one row
#'   per variable. `as.array()`: the draws array. `as.data.frame()`: columns
#'   `.chain`, `.iteration` and one per variable. `as.mcmc.list()`: a coda
#'   `mcmc.list`. `as_draws_array()`: a posterior `draws_array`. `plot()` and
#'   `print()` return their argument invisibly.
#' @name clbayes_fit
#' @examples
#' ld <- function(x) -0.5 * rowSums(x^2)
#' fit <- slice_sample_mv(ld, init = c(0, 0), n_iter = 100, width = 2,
#'                        chains = 2, seed = 3)
#' summary(fit)
#' dim(as.array(fit))
#' head(as.data.frame(fit))
NULL

#' @rdname clbayes_fit
#' @export
summary.clbayes_fit <- function(object, ...) {
  d <- object$draws
  vars <- dimnames(d)[[3L]]
  per <- lapply(seq_along(vars), function(j) {
    x <- matrix(d[, , j], dim(d)[1L], dim(d)[2L])
    q <- stats::quantile(x, c(0.05, 0.5, 0.95), names = FALSE)
    ess_bulk <- .ess_bulk(x)
    data.frame(variable = vars[j], mean = mean(x), sd = stats::sd(c(x)),
               q5 = q[1L], q50 = q[2L], q95 = q[3L],
               ess_bulk = ess_bulk, ess_tail = .ess_tail(x), rhat = .rhat(x),
               es_per_sec = ess_bulk / object$time[["total"]],
               stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, per)
  rownames(out) <- NULL
  attr(out, "n_evals") <- object$n_evals
  attr(out, "time") <- object$time[["total"]]
  attr(out, "points_per_call") <- object$n_evals / object$n_calls
  class(out) <- c("clbayes_fit_summary", "data.frame")
  out
}

#' @export
print.clbayes_fit_summary <- function(x, digits = 3, ...) {
  y <- as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE)
  num <- vapply(y, is.numeric, logical(1))
  y[num] <- lapply(y[num], signif, digits = digits)
  print(y, row.names = FALSE)
  invisible(x)
}

#' @rdname clbayes_fit
#' @export
print.clbayes_fit <- function(x, ...) {
  d <- dim(x$draws)
  cat(sprintf("clbayes_fit: %s, %d chains x %d draws after %d warmup, %d variables\n",
              sampler_label(x), d[2L], d[1L], x$warmup, d[3L]))
  calls <- x$n_calls
  cat(sprintf("%.0f densities in %.0f calls (%.1f points per call)%s\n",
              x$n_evals, calls, if (calls > 0) x$n_evals / calls else NA_real_,
              if (isTRUE(x$n_nan > 0)) sprintf(", %.0f NaN read as -Inf", x$n_nan)
              else ""))
  cat(sprintf("time %.3g s (warmup %.3g s)%s\n", x$time[["total"]],
              x$time[["warmup"]], time_split(x$time)))
  if (!is.null(x$n_divergent)) {
    cat(sprintf("%.0f divergent transitions, step size %.3g, %.0f gradients, %.0f leapfrog steps\n",
                sum(x$n_divergent), x$step_size[1L], x$n_gradients %||% NA_real_,
                x$n_leapfrog %||% NA_real_))
  }
  if (length(x$groups) > 1L) {
    where <- vapply(x$groups, function(g) g$device %||% "", "")
    cat(sprintf("%d chain groups (chains %s); ran on: %s\n", length(x$groups),
                paste(tapply(seq_along(x$chain_group), x$chain_group, function(i)
                  paste0(min(i), "-", max(i))), collapse = ", "),
                paste(unique(where), collapse = "; ")))
    secs <- vapply(x$groups, function(g) g$seconds %||% NA_real_, 0)
    calls <- vapply(x$groups, function(g) g$n_calls %||% NA_real_, 0)
    if (!anyNA(secs)) {
      cat(sprintf("per group: %s\n", paste(sprintf("%.3g s, %.0f calls", secs, calls),
                                           collapse = "; ")))
    }
  }
  if (isTRUE(x$n_stuck > 0)) {
    cat(sprintf("%.0f updates stuck at the shrinkage limit\n", x$n_stuck))
  }
  if (isTRUE(is.finite(x$warmup_rhat))) {
    cat(sprintf("split R-hat at the end of warmup: %.3g\n", x$warmup_rhat))
  }
  s <- summary(x)
  print(s)
  cat(sprintf("min ES/s %.3g (bulk ESS per second of the whole run)\n",
              suppressWarnings(min(s$es_per_sec, na.rm = TRUE))))
  invisible(x)
}

# "slice sampler (univariate, dense metric)" or "hmc sampler".
sampler_label <- function(x) {
  if (identical(x$sampler, "slice")) {
    sprintf("slice sampler (%s, stepout = \"%s\", metric = \"%s\")", x$method,
            x$stepout, x$metric %||% "diagonal")
  } else {
    sprintf("%s sampler", x$sampler %||% "unknown")
  }
}

# ", 1.2 s in the density (40%), 1.8 s in the sampler" when the run timed
# its density calls.
time_split <- function(time) {
  if (!"density" %in% names(time) || !is.finite(time[["density"]])) return("")
  total <- time[["total"]]
  sprintf("; %.3g s in the density (%.0f%%), %.3g s in the sampler",
          time[["density"]], 100 * time[["density"]] / max(total, 1e-12),
          max(0, total - time[["density"]]))
}

#' @rdname clbayes_fit
#' @export
plot.clbayes_fit <- function(x, variables = NULL, ...) {
  d <- x$draws
  vars <- dimnames(d)[[3L]]
  if (is.null(variables)) variables <- vars
  idx <- if (is.numeric(variables)) variables else match(variables, vars)
  if (anyNA(idx) || any(idx < 1 | idx > length(vars))) {
    stop("`variables` must name variables of the fit", call. = FALSE)
  }
  old <- graphics::par(mfrow = c(length(idx), 2L), mar = c(4, 4, 2, 1))
  on.exit(graphics::par(old))
  for (j in idx) {
    graphics::matplot(d[, , j], type = "l", lty = 1, xlab = "iteration",
                      ylab = vars[j], main = paste("trace of", vars[j]))
    graphics::plot(stats::density(c(d[, , j])), main = paste("density of", vars[j]),
                   xlab = vars[j])
  }
  invisible(x)
}

#' @rdname clbayes_fit
#' @export
as.array.clbayes_fit <- function(x, ...) x$draws

#' @rdname clbayes_fit
#' @export
as.data.frame.clbayes_fit <- function(x, ...) {
  d <- x$draws
  n <- dim(d)[1L]
  m <- dim(d)[2L]
  out <- data.frame(.chain = rep(seq_len(m), each = n),
                    .iteration = rep(seq_len(n), times = m))
  vars <- dimnames(d)[[3L]]
  for (j in seq_along(vars)) out[[vars[j]]] <- c(d[, , j])
  out
}

#' @rdname clbayes_fit
#' @exportS3Method coda::as.mcmc.list
as.mcmc.list.clbayes_fit <- function(x, ...) {
  d <- x$draws
  coda::mcmc.list(lapply(seq_len(dim(d)[2L]), function(c) {
    coda::mcmc(matrix(d[, c, ], dim(d)[1L], dim(d)[3L],
                      dimnames = list(NULL, dimnames(d)[[3L]])),
               start = x$warmup + 1L)
  }))
}

#' @rdname clbayes_fit
#' @exportS3Method posterior::as_draws_array
as_draws_array.clbayes_fit <- function(x, ...) {
  posterior::as_draws_array(unname_dims(x$draws))
}

# posterior wants the variable names and no names on the dimnames list.
unname_dims <- function(d) {
  dimnames(d) <- list(NULL, NULL, dimnames(d)[[3L]])
  d
}
