# rstan's sampler arguments, one meaning for both samplers: iter (warmup
# included), warmup, thin, refresh, init as rstan takes it, and control.

# The size of a default run: kept draws in all chains together, as
# rstanarm's default (4 chains x 1000), so that log_lik() and loo() of a
# fit need what they need after rstanarm.
default_kept_draws <- 4000

# Iterations per chain from rstan's `iter` / `warmup` or clbayes's
# `n_iter` / `warmup`: list(warmup, n_iter) with n_iter the post-warmup
# iterations (thinning keeps every `thin`-th). Without `iter` and
# `n_iter`, n_iter keeps about default_kept_draws draws over `chains`.
resolve_iterations <- function(iter, warmup, n_iter, chains, thin, default_warmup,
                               iter_warmup = NULL, iter_sampling = NULL) {
  # cmdstanr's names for the same two counts
  if (!is.null(iter_warmup)) {
    if (!is.null(warmup)) stop("give `warmup` or `iter_warmup`, not both", call. = FALSE)
    warmup <- iter_warmup
  }
  if (!is.null(iter_sampling)) {
    if (!is.null(n_iter)) stop("give `n_iter` or `iter_sampling`, not both", call. = FALSE)
    n_iter <- iter_sampling
  }
  if (!is.null(iter) && !is.null(n_iter)) {
    stop("give `iter` (warmup included, as rstan) or `n_iter` (after warmup), not both",
         call. = FALSE)
  }
  if (!is.null(iter)) {
    iter <- check_count(iter, "iter", 2)
    warmup <- if (is.null(warmup)) iter %/% 2L else check_count(warmup, "warmup", 0)
    if (iter <= warmup) {
      stop(sprintf("`iter` (%d) must be greater than `warmup` (%d): `iter` counts the warmup too",
                   iter, warmup), call. = FALSE)
    }
    return(list(warmup = warmup, n_iter = iter - warmup))
  }
  warmup <- check_count(warmup %||% default_warmup, "warmup", 0)
  n_iter <- n_iter %||% (ceiling(default_kept_draws / chains) * thin)
  list(warmup = warmup, n_iter = check_count(n_iter, "n_iter", 1))
}

# The kept iterations after thinning: every `thin`-th from the first.
thin_draws <- function(res, thin) {
  if (thin == 1L) return(res)
  keep <- seq(1L, dim(res$draws)[1L], by = thin)
  res$draws <- res$draws[keep, , , drop = FALSE]
  res
}

# rstan's `control` list: list(adapt_delta, max_treedepth, metric) for
# HMC; for the slice sampler only `metric`. Returns the entries given, with
# max_treedepth as max_leapfrog and metric in clbayes's words.
resolve_control <- function(control, sampler) {
  if (is.null(control)) return(list())
  if (!is.list(control) || (length(control) && is.null(names(control))) ||
      any(names(control) == "")) {
    stop("`control` must be a named list, e.g. list(adapt_delta = 0.9)", call. = FALSE)
  }
  known <- if (sampler == "hmc") c("adapt_delta", "max_treedepth", "metric") else "metric"
  bad <- setdiff(names(control), known)
  if (length(bad)) {
    why <- if (sampler == "slice") {
      "; the slice sampler has no step size or trajectory (adapt_delta and max_treedepth are for hmc_sample_mv())"
    } else ""
    stop(sprintf("`control`: %s not supported (supported: %s)%s",
                 paste0("`", bad, "`", collapse = ", "), paste(known, collapse = ", "), why),
         call. = FALSE)
  }
  out <- list()
  if (!is.null(control$adapt_delta)) out$adapt_delta <- control$adapt_delta
  if (!is.null(control$max_treedepth)) {
    d <- check_count(control$max_treedepth, "control$max_treedepth", 1)
    if (d > 30L) stop("`control$max_treedepth` must be at most 30", call. = FALSE)
    out$max_leapfrog <- 2^d - 1
  }
  if (!is.null(control$metric)) {
    out$metric <- switch(check_choice(control$metric, c("diag_e", "dense_e"), "control$metric"),
                         diag_e = "diagonal", dense_e = "dense")
  }
  out
}

# `value` of the sampler's own argument `arg`, or the control entry that
# means the same; both is an error.
from_control <- function(ctrl, entry, value, given, arg) {
  if (is.null(ctrl[[entry]])) return(value)
  if (given) {
    stop(sprintf("give `%s` or `control$%s`, not both", arg,
                 if (entry == "max_leapfrog") "max_treedepth" else entry), call. = FALSE)
  }
  ctrl[[entry]]
}

# rstan's `refresh`: NULL (a progress bar in interactive sessions, shown
# after 2 s as cli does) or a whole number; 0 turns the bar off.
check_refresh <- function(refresh) {
  if (is.null(refresh)) return(NULL)
  check_count(refresh, "refresh", 0)
}

# rstan's forms of `init` as a point or a chains x k matrix: "random" (the
# model's start, dispersed over the chains), 0 or "0" (every unconstrained
# coordinate 0: a bounded variable at lower + 1, upper - 1 or its
# interval's midpoint), a function of `chain_id` returning each chain's
# values, or a list with one set of values per chain. Other values pass
# through (a vector or matrix, checked later).
resolve_init <- function(init, log_density, chains) {
  is_model <- inherits(log_density, "clbayes_model")
  if (is.null(init) || identical(init, "random")) return(model_init(log_density))
  if (identical(init, "0") || (is_model && is.numeric(init) && length(init) == 1L &&
                               length(log_density$names) > 1L && isTRUE(init == 0))) {
    if (!is_model) {
      stop("`init` = \"0\" needs a model object (its number of parameters); give a vector",
           call. = FALSE)
    }
    k <- length(log_density$names)
    lo <- rep_len(log_density$lower %||% -Inf, k)
    hi <- rep_len(log_density$upper %||% Inf, k)
    x <- ifelse(is.finite(lo) & is.finite(hi), (lo + hi) / 2,
                ifelse(is.finite(lo), lo + 1, ifelse(is.finite(hi), hi - 1, 0)))
    return(matrix(x, chains, k, byrow = TRUE, dimnames = list(NULL, log_density$names)))
  }
  if (is.character(init)) {
    stop("`init` must be \"random\", \"0\", a vector, a matrix, a function or a list",
         call. = FALSE)
  }
  if (is.function(init)) {
    has_id <- "chain_id" %in% names(formals(init))
    init <- lapply(seq_len(chains), function(c) if (has_id) init(chain_id = c) else init())
  }
  if (is.list(init) && !is.data.frame(init)) {
    if (length(init) != chains) {
      stop(sprintf("`init` as a list must have one element per chain (%d), not %d",
                   chains, length(init)), call. = FALSE)
    }
    rows <- lapply(init, function(v) unlist(v, use.names = TRUE))
    if (!all(vapply(rows, is.numeric, logical(1)))) {
      stop("`init`: each chain's values must be numbers", call. = FALSE)
    }
    nm <- if (is_model) log_density$names else names(rows[[1L]])
    rows <- lapply(rows, function(v) {
      if (is.null(names(v)) || is.null(nm)) return(v)
      missing <- setdiff(nm, names(v))
      if (length(missing) > 0L) {
        stop(sprintf("`init`: a chain's values are named but lack %s (the model samples %s)",
                     paste0("`", missing, "`", collapse = ", "),
                     paste0("`", nm, "`", collapse = ", ")), call. = FALSE)
      }
      v[nm]
    })
    if (length(unique(lengths(rows))) != 1L) {
      stop("`init`: every chain must have the same number of values", call. = FALSE)
    }
    init <- do.call(rbind, rows)
    colnames(init) <- nm %||% colnames(init)
  }
  init
}

# The progress callback of a run with `refresh = 0`: no bar.
quiet_progress <- function(refresh) {
  if (identical(refresh, 0L)) function(n) invisible() else NULL
}
