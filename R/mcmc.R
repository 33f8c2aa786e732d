# What every sampler shares on the R side: argument checks, the target (an
# R function or a model object, with its bounds, variable names and
# backend), and the clbayes_fit built from what the C++ core returns.

`%||%` <- function(a, b) if (is.null(a)) b else a

# A whole number >= lower, as an integer, or an error naming `arg`.
check_count <- function(x, arg, lower = 0) {
  if (is.numeric(x) && length(x) == 1L && is.finite(x) && x > .Machine$integer.max) {
    stop(sprintf("`%s` must be at most %d, not %.3g", arg, .Machine$integer.max, x),
         call. = FALSE)
  }
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x != floor(x) ||
      x < lower) {
    stop(sprintf("`%s` must be a whole number of at least %d", arg, lower),
         call. = FALSE)
  }
  as.integer(x)
}

# A bound: one number or k numbers, NA-free, as doubles of length k.
check_bound <- function(x, k, arg) {
  if (!is.numeric(x) || !length(x) %in% c(1L, k) || anyNA(x)) {
    stop(sprintf("`%s` must be a number or %d numbers (-Inf / Inf for none)", arg, k),
         call. = FALSE)
  }
  bad <- if (arg == "lower") x == Inf else x == -Inf
  if (any(bad)) {
    stop(sprintf("`%s` must not be %s", arg, if (arg == "lower") "Inf" else "-Inf"),
         call. = FALSE)
  }
  rep_len(as.double(x), k)
}

# init as a chains x k matrix with column names when it had names.
check_init <- function(init, chains) {
  if (!is.numeric(init) || length(init) == 0L) {
    stop("`init` must be a numeric vector or a matrix with one row per chain",
         call. = FALSE)
  }
  if (is.matrix(init)) {
    if (nrow(init) != chains) {
      stop(sprintf("`init` must have one row per chain (%d), not %d rows",
                   chains, nrow(init)), call. = FALSE)
    }
    out <- init
  } else {
    out <- matrix(init, chains, length(init), byrow = TRUE,
                  dimnames = list(NULL, names(init)))
  }
  storage.mode(out) <- "double"
  if (any(!is.finite(out))) stop("`init` must be finite", call. = FALSE)
  out
}

# The most bytes a sampler may hold: option clbayes.memory_limit, else 80%
# of the machine's memory where it can be read, else 16 GB.
memory_limit <- function() {
  opt <- getOption("clbayes.memory_limit")
  if (!is.null(opt)) return(as.double(opt))
  total <- tryCatch({
    line <- grep("^MemTotal:", readLines("/proc/meminfo", n = 5L), value = TRUE)
    as.double(gsub("[^0-9]", "", line)) * 1024
  }, error = function(e) NA_real_, warning = function(w) NA_real_)
  if (length(total) == 1L && is.finite(total) && total > 0) 0.8 * total else 16e9
}

# The memory guard both samplers call before they allocate anything: an
# error naming `arg` (`chains`, or `n_proposals` when the batches of
# proposals are most of it), the chains, the iterations (`iterations`: how
# many, and `iter_args`, the arguments they come from) and the bytes
# needed, when a run would need more than memory_limit() bytes.
check_memory <- function(bytes, chains, iterations, iter_args, arg = "chains") {
  limit <- memory_limit()
  if (bytes > limit) {
    stop(sprintf(paste0("`%s` is too large: %.0f chains over %.0f iterations ",
                        "(%s) would need %.3g GB of memory for their draws and ",
                        "batches, more than the %.3g GB allowed (option ",
                        "clbayes.memory_limit)"),
                 arg, chains, iterations, iter_args, bytes / 1e9, limit / 1e9),
         call. = FALSE)
  }
  invisible(bytes)
}

# One of `choices` (the first when `x` is the whole default vector).
check_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  if (!is.character(x) || length(x) != 1L || !x %in% choices) {
    stop(sprintf("`%s` must be one of %s", arg,
                 paste0("\"", choices, "\"", collapse = ", ")), call. = FALSE)
  }
  x
}

# NULL (a seed drawn from R's random numbers) or a whole number in [0, 2^53).
check_seed <- function(seed) {
  if (is.null(seed)) return(floor(stats::runif(1) * 2^31))
  if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) ||
      seed < 0 || seed >= 2^53 || seed != floor(seed)) {
    stop("`seed` must be NULL or a whole number in [0, 2^53)", call. = FALSE)
  }
  as.double(seed)
}

# What the user's function returned, checked.
check_density_value <- function(val, points) {
  if (!is.numeric(val) || length(val) != nrow(points)) {
    stop(sprintf(paste0("`log_density` must return a numeric vector with one ",
                        "value per row of its argument (%d), not %s of ",
                        "length %d"), nrow(points), class(val)[1L],
                 length(val)), call. = FALSE)
  }
  as.double(val)
}

# The sampler's target for `log_density` (an R function of a points matrix,
# or a clbayes model) at the chains x k matrix `init`: `target` (what the
# C++ glue evaluates), `vars` (variable names), `lower`/`upper` (the
# support, checked against init), `backend` (where a model runs) and
# `model` (the model object, NULL for a function).
mcmc_target <- function(log_density, init, lower, upper, backend, ...) {
  k <- ncol(init)
  if (is.function(log_density)) {
    target <- function(points) check_density_value(log_density(points, ...), points)
    names_from_model <- NULL
    backend <- resolve_backend(backend, 0,
                               getOption("clbayes.threshold.slice_sample_mv", Inf))
    model_bounds <- NULL
  } else if (inherits(log_density, "clbayes_model")) {
    extra <- ...names()
    if (...length() > 0L) {
      extra <- if (is.null(extra)) rep("", ...length()) else extra
      shown <- ifelse(extra == "", "an unnamed argument", paste0("`", extra, "`"))
      stop(sprintf(paste0("%s: not an argument of the sampler, and a model object ",
                          "takes no further arguments"),
                   paste(shown, collapse = ", ")), call. = FALSE)
    }
    target <- log_density
    if (length(log_density$names) != k) {
      stop(sprintf("`init` must have %d columns, one per parameter of the model",
                   length(log_density$names)), call. = FALSE)
    }
    names_from_model <- log_density$names
    target$use_device <- model_uses_device(log_density, backend)
    backend <- if (target$use_device) "opencl" else "cpu"
    model_bounds <- log_density
  } else {
    stop("`log_density` must be a function or a clbayes model (e.g. lm_model())",
         call. = FALSE)
  }
  vars <- names_from_model %||% colnames(init) %||% paste0("x[", seq_len(k), "]")
  lower <- check_bound(lower %||% model_bounds$lower %||% -Inf, k, "lower")
  upper <- check_bound(upper %||% model_bounds$upper %||% Inf, k, "upper")
  if (any(lower >= upper)) {
    stop("`upper` must be greater than `lower` for every variable", call. = FALSE)
  }
  outside <- sweep(init, 2L, lower, "<=") | sweep(init, 2L, upper, ">=")
  if (any(outside)) {
    j <- which(colSums(outside) > 0)[1L]
    stop(sprintf("`init` must lie strictly inside `lower` and `upper` (variable %s)",
                 vars[j]), call. = FALSE)
  }
  list(target = target, vars = vars, lower = lower, upper = upper,
       backend = backend, model = model_bounds)
}

# A clbayes_fit from a sampler's C++ result `res` (draws and warmup_draws as
# iteration x chain x variable arrays, counts, the metric) and its target
# `tg` (mcmc_target()). `settings` are the sampler's arguments, kept as
# fields of the fit.
new_clbayes_fit <- function(res, tg, time, sampler, settings) {
  vars <- tg$vars
  if (res$n_nan > 0) {
    warning(sprintf(paste0("`log_density` returned NaN at %.0f points; they ",
                           "were read as -Inf (outside the support)"),
                    res$n_nan), call. = FALSE)
  }
  if (isTRUE(res$n_bad_gradient > 0)) {
    warning(sprintf(paste0("%s was NaN or infinite at %.0f points where the log ",
                           "density was finite; the leapfrog steps that reached ",
                           "them were treated as divergent"),
                    if (is.null(tg$model)) "`gradient`" else "the model's gradient",
                    res$n_bad_gradient), call. = FALSE)
  }
  dn <- list(iteration = NULL, chain = NULL, variable = vars)
  counts <- res[setdiff(names(res), c("draws", "warmup_draws", "widths", "center",
                                      "scale", "iteration"))]
  draws <- array(res$draws, dim(res$draws), dimnames = dn)
  if (!is.null(tg$model$reported_names)) draws <- reported_draws(tg$model, draws)
  fit <- c(
    list(draws = draws,
         warmup_draws = array(res$warmup_draws, dim(res$warmup_draws), dimnames = dn)),
    counts,
    list(time = time,
         widths = if (!is.null(res$widths)) stats::setNames(res$widths, vars),
         center = stats::setNames(res$center, vars),
         scale = if (is.matrix(res$scale)) array(res$scale, dim(res$scale), list(vars, vars))
           else stats::setNames(res$scale, vars),
         lower = stats::setNames(tg$lower, vars),
         upper = stats::setNames(tg$upper, vars),
         sampler = sampler, model = tg$model),
    settings,
    list(backend = tg$backend))
  structure(fit[!vapply(fit, is.null, logical(1))], class = "clbayes_fit")
}

# The variables a model reports (the intercept of uncentred predictors, a
# multilevel model's b and Sigma, ...) at the sampled draws, an iteration x
# chain x variable array; the warmup
# draws and the metric stay on the sampled parameters.
reported_draws <- function(model, draws) {
  d <- dim(draws)
  flat <- matrix(draws, d[1L] * d[2L], d[3L])
  out <- model_reported_draws(model, flat)
  array(out, c(d[1L], d[2L], ncol(out)),
        list(iteration = NULL, chain = NULL, variable = colnames(out)))
}

# The loop every sampler's R function runs over its C++ object, in pieces so
# that a progress bar moves (interactive sessions) and interrupts are seen
# between pieces: `run(step)` runs at most `step` iterations and returns how
# many it ran; `total()` is warmup + n_iter as the sampler now sees it
# (warmup may be extended at its end); `result()` the C++ result list, to
# which the warmup's length (`warmup_total`) and time (`warmup_seconds`) are
# added. `progress`: NULL (a cli bar in interactive sessions) or a function
# told how many iterations each piece ran (chain groups: run_chain_groups()).
# A piece is at most 1% of the run and about `piece_seconds` long (from the
# last piece's time per iteration; the first is one iteration), so that a
# chain group sees a stop request (stop_groups()) soon. Pieces do not
# change the draws.
run_sampler_loop <- function(run, total, result, warmup, n_iter, label, progress = NULL,
                             piece_seconds = 0.1) {
  t0 <- proc.time()[["elapsed"]]
  all <- warmup + n_iter
  chunk <- max(1L, as.integer(ceiling(all / 100)))
  show <- is.null(progress) && interactive() && requireNamespace("cli", quietly = TRUE)
  if (show) bar <- cli::cli_progress_bar(label, total = all, clear = TRUE)
  done <- 0L
  t_warmup <- if (warmup == 0L) 0 else NA_real_
  per_iteration <- Inf
  while (done < all) {
    step <- as.integer(max(1, min(chunk, floor(piece_seconds / per_iteration))))
    if (done < warmup) step <- min(step, warmup - done)
    t_piece <- proc.time()[["elapsed"]]
    ran <- run(step)
    per_iteration <- (proc.time()[["elapsed"]] - t_piece) / max(ran, 1L)
    done <- done + ran
    if (!is.null(progress)) progress(ran)
    if (done == warmup) {
      warmup <- total() - n_iter
      all <- warmup + n_iter
      if (done == warmup) t_warmup <- proc.time()[["elapsed"]] - t0
    }
    if (show) cli::cli_progress_update(id = bar, set = done, total = all)
  }
  res <- result()
  res$warmup_total <- warmup
  res$warmup_seconds <- t_warmup
  res
}
