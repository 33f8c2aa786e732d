#' Working with a clbayes_fit
#'
#' [slice_sample_mv()] and [hmc_sample_mv()] return a `clbayes_fit`.
#' `summary()` gives per variable the mean, median, sd, MAD_SD (the scaled
#' median absolute deviation, as rstanarm), the quantiles `probs`, the bulk
#' and tail
#' effective sample sizes and the rank-normalised split R-hat of Vehtari et
#' al. (2021), and ES/sec (bulk ESS per second of the whole run, warmup
#' included). `print()` shows it with the run's density evaluations, the
#' points per call of the density, the time spent inside the density against
#' the time spent in the sampler, and the smallest ES/s (for HMC fits also the
#' divergent transitions, step size, gradients and leapfrog steps); for a
#' fit of [glm_model()] or [lm_model()] the table is laid out as rstanarm's
#' (family, formula, observations, then Median, MAD_SD, ESS and R-hat of
#' the coefficients and apart of the auxiliary parameters);
#' `plot()` draws a trace and a density per variable; `as.array()` gives the
#' draws as an iteration x chain x variable array, `as.data.frame()` one row
#' per draw. With coda installed, `coda::as.mcmc.list()` converts the kept
#' draws; for posterior's formats see [draws-methods], for the draws matrix
#' [as.matrix.clbayes_fit()].
#'
#' @param object,x A `clbayes_fit`.
#' @param probs The quantiles `summary()` gives, as columns `q5`, `q50`,
#'   `q95` (for the default `c(0.05, 0.5, 0.95)`), `q2.5`, ...
#' @param pars,regex_pars Variables by name, or by regular expression; all
#'   when both are `NULL`.
#' @param digits Digits of the numbers `print()` shows (R-hat always with
#'   3 decimals, ESS as whole numbers).
#' @param variables Names (or indices) of the variables to plot; all by
#'   default.
#' @param ... Unused; an argument given here is an error (`as.data.frame()`
#'   ignores the arguments R's generic passes).
#' @return `summary()`: a data frame of class `clbayes_fit_summary`, one row
#'   per variable. `as.array()`: the draws array. `as.data.frame()`: columns
#'   `.chain`, `.iteration` and one per variable. `as.mcmc.list()`: a coda
#'   `mcmc.list`. `plot()` and
#'   `print()` return their argument invisibly.
#' @name clbayes_fit
#' @examples
#' ld <- function(x) -0.5 * rowSums(x^2)
#' fit <- slice_sample_mv(ld, init = c(0, 0), chains = 4, seed = 3)
#' summary(fit)
#' dim(as.array(fit))
#' head(as.data.frame(fit))
NULL

#' @rdname clbayes_fit
#' @export
summary.clbayes_fit <- function(object, probs = c(0.05, 0.5, 0.95), pars = NULL,
                                regex_pars = NULL, ...) {
  check_no_dots(...)
  if (!is.numeric(probs) || !length(probs) || anyNA(probs) || any(probs < 0 | probs > 1)) {
    stop("`probs` must be probabilities in [0, 1]", call. = FALSE)
  }
  d <- object$draws
  vars <- select_variables(dimnames(d)[[3L]], pars, regex_pars)
  qnames <- paste0("q", formatC(100 * probs, format = "fg", digits = 6))
  qnames <- gsub(" ", "", qnames)
  per <- lapply(vars, function(v) {
    x <- matrix(d[, , v], dim(d)[1L], dim(d)[2L])
    q <- stats::quantile(x, probs, names = FALSE)
    ess_bulk <- .ess_bulk(x)
    out <- data.frame(variable = v, mean = mean(x), median = stats::median(x),
                      sd = stats::sd(c(x)), mad_sd = stats::mad(c(x)),
                      stringsAsFactors = FALSE)
    out[qnames] <- as.list(q)
    cbind(out, data.frame(ess_bulk = ess_bulk, ess_tail = .ess_tail(x), rhat = .rhat(x),
                          es_per_sec = ess_bulk / object$time[["total"]]))
  })
  out <- do.call(rbind, per)
  rownames(out) <- NULL
  attr(out, "n_evals") <- object$n_evals
  attr(out, "time") <- object$time[["total"]]
  attr(out, "points_per_call") <- object$n_evals / object$n_calls
  class(out) <- c("clbayes_fit_summary", "data.frame")
  out
}

#' @rdname clbayes_fit
#' @export
print.clbayes_fit_summary <- function(x, digits = 3, ...) {
  check_no_dots(...)
  y <- as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE)
  print(format_summary(y, digits, signif), row.names = FALSE)
  invisible(x)
}

# A summary's table for printing: numbers to `digits` (by `round_fun`),
# ESS as whole numbers, R-hat to 3 decimals.
format_summary <- function(y, digits, round_fun = round) {
  for (nm in names(y)) {
    v <- y[[nm]]
    if (!is.numeric(v)) next
    y[[nm]] <- if (nm %in% c("ess_bulk", "ess_tail")) {
      ifelse(is.na(v), "NA", sprintf("%.0f", v))
    } else if (nm == "rhat") {
      ifelse(is.na(v), "NA", sprintf("%.3f", v))
    } else {
      format(round_fun(v, digits), nsmall = if (identical(round_fun, round)) digits else 0)
    }
  }
  y
}

#' @rdname clbayes_fit
#' @export
print.clbayes_fit <- function(x, digits = 2, ...) {
  check_no_dots(...)
  d <- dim(x$draws)
  cat(sprintf("clbayes_fit: %s, %d chains x %d draws after %d warmup%s, %d variables\n",
              sampler_label(x), d[2L], d[1L], x$warmup,
              if (isTRUE(x$thin > 1)) sprintf(" (thin = %d)", x$thin) else "", d[3L]))
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
    cat(sprintf("split R-hat at the end of warmup: %.3f\n", x$warmup_rhat))
  }
  s <- summary(x)
  if (inherits(x$model, "clbayes_glm_model")) {
    print_model_table(x, s, digits)
  } else {
    print(s, digits = max(digits, 3L))
  }
  cat(sprintf("min ES/s %.3g (bulk ESS per second of the whole run)\n",
              suppressWarnings(min(s$es_per_sec, na.rm = TRUE))))
  invisible(x)
}

# rstanarm's layout for a fit of a model: the family, formula and sizes,
# then Median and MAD_SD (with ESS and R-hat) of the coefficients, the
# auxiliary parameters and the group-level covariances apart.
print_model_table <- function(x, s, digits) {
  class(s) <- "data.frame"
  m <- x$model
  fam <- tryCatch(family(x), error = function(e) NULL)
  cat(" family:       ", if (is.null(fam)) m$family else
    sprintf("%s [%s]", fam$family, fam$link), "\n", sep = "")
  if (!is.null(m$formula)) {
    cat(" formula:      ", paste(deparse(m$formula), collapse = " "), "\n", sep = "")
  }
  cat(" observations: ", nrow(m$x), "\n", sep = "")
  coefs <- coefficient_names(x)
  cat(" predictors:   ", length(coefs), "\n------\n", sep = "")
  tab <- function(vars) {
    r <- s[match(vars, s$variable), c("median", "mad_sd", "ess_bulk", "ess_tail", "rhat")]
    r <- format_summary(r, digits)
    names(r) <- c("Median", "MAD_SD", "ESS_bulk", "ESS_tail", "Rhat")
    rownames(r) <- vars
    print(r)
  }
  tab(coefs)
  aux <- intersect(c("sigma", "phi"), s$variable)
  if (length(aux)) {
    cat("\nAuxiliary parameter(s):\n")
    tab(aux)
  }
  cov <- grep("^Sigma\\[", s$variable, value = TRUE)
  if (length(cov)) {
    cat("\nGroup-level covariances:\n")
    tab(cov)
  }
  cat("------\n")
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
  check_no_dots(...)
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
as.array.clbayes_fit <- function(x, ...) {
  check_no_dots(...)
  x$draws
}

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
