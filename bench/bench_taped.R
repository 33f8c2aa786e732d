# R log densities taped by RTMB (R/tape.R) against the plain R path and
# rstan's NUTS, on the models of bench/taped_models.R: eight schools
# (non-centred), a varying-intercept regression (89 parameters), a latent
# GP Poisson regression (11 latent values + 2 hyperparameters, a Cholesky
# factor inside) and a hierarchical logistic regression (100 parameters).
#
# Per model and sampler: min bulk ESS, max R-hat, max |z| of the means
# against the NUTS run (its draws are the reference: 4 chains x 2000 kept
# draws; z uses both runs' MCSE), wall and CPU seconds, min ES/s. clbayes's
# ES/s is by the wall time of its whole call (taping and checks included);
# NUTS's by Stan's own sampling time (warmup + sampling, compile excluded)
# and by the wall time a user waits, compile included. Ratios are clbayes
# over NUTS.
#
#   OMP_NUM_THREADS=1 Rscript bench/bench_taped.R [--no-stan] [models...]
#
# rstan on Debian: r-cran-rstan's BH package is a stub without headers, so
# the Stan models are compiled with boost_lib = "/usr/include" (rstan's
# own argument: the system Boost headers of libboost-dev), as the other
# Stan benchmarks here do. Compiled models are cached with their compile
# time in $CLBAYES_STAN_CACHE (default /tmp/clbayes-stan-cache): a rerun
# reports the compile time measured when the model was built.
suppressPackageStartupMessages(library(clbayes))
args <- commandArgs(trailingOnly = TRUE)
use_stan <- !"--no-stan" %in% args && requireNamespace("rstan", quietly = TRUE)
only <- setdiff(args, "--no-stan")
`%||%` <- function(a, b) if (is.null(a)) b else a
source("bench/taped_models.R")  # run from the repository root
stopifnot(requireNamespace("RTMB", quietly = TRUE), requireNamespace("posterior", quietly = TRUE))
invisible(loadNamespace("RTMB"))  # once per session (about 1 s), not in any sampler's time
models <- taped_models()
if (length(only)) models <- models[only]
# Slice runs in 89-100 dimensions need ~100 coordinate updates of several
# calls each per iteration: shorter runs there (ES/s still comparable), and
# for the plain R path everywhere (the GP's R density costs ~1 ms a batch).
slice_iter <- function(m) if (length(m$init) > 50L) 60L else 500L
plain_iter <- function(m) min(250L, slice_iter(m))

cache <- Sys.getenv("CLBAYES_STAN_CACHE", "/tmp/clbayes-stan-cache")
dir.create(cache, showWarnings = FALSE, recursive = TRUE)
stan_model_cached <- function(code) {
  tf <- tempfile()
  writeLines(code, tf)
  file <- file.path(cache, paste0("taped-", unname(tools::md5sum(tf)), ".rds"))
  if (file.exists(file)) return(readRDS(file))
  boost <- if (dir.exists(rstan::rstan_options("boost_lib"))) NULL else "/usr/include"
  t0 <- proc.time()[["elapsed"]]
  sm <- suppressMessages(rstan::stan_model(model_code = code, boost_lib = boost))
  out <- list(model = sm, compile = proc.time()[["elapsed"]] - t0)
  saveRDS(out, file)
  out
}

# Draws as iterations x chains x variables, and what the table needs.
stats_of <- function(d) {
  vars <- dimnames(d)[[3L]]
  list(ess = vapply(seq_along(vars), function(j) posterior::ess_bulk(d[, , j]), 1),
       rhat = vapply(seq_along(vars), function(j) posterior::rhat(d[, , j]), 1),
       mean = apply(d, 3L, mean), sd = apply(d, 3L, stats::sd))
}

timed <- function(expr) {
  t0 <- proc.time()
  val <- suppressWarnings(force(expr))
  t <- proc.time() - t0
  list(val = val, wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}

rows <- list()
add <- function(model, sampler, st, wall, cpu, note = "", ref = NULL, es_time = wall) {
  z <- if (is.null(ref)) NA else max(abs(st$mean - ref$mean) /
                                        sqrt(st$sd^2 / st$ess + ref$sd^2 / ref$ess))
  rows[[length(rows) + 1L]] <<- data.frame(
    model = model, sampler = sampler, min_ess = min(st$ess), max_rhat = max(st$rhat),
    max_z = z, wall = wall, cpu = cpu, es_s = min(st$ess) / es_time, note = note)
}

for (nm in names(models)) {
  m <- models[[nm]]
  cat("==", m$name, "\n")
  ref <- NULL
  nuts <- NULL
  if (use_stan) {
    sm <- stan_model_cached(m$stan)
    r <- timed(rstan::sampling(sm$model, data = m$stan_data, chains = 4, iter = 3000,
                               warmup = 1000, cores = 1, refresh = 0, seed = 1))
    et <- sum(rstan::get_elapsed_time(r$val))
    d <- as.array(r$val)
    d <- d[, , dimnames(d)[[3L]] != "lp__", drop = FALSE]
    ref <- stats_of(d)
    sp <- rstan::get_sampler_params(r$val, inc_warmup = FALSE)
    div <- sum(vapply(sp, function(s) sum(s[, "divergent__"]), 1))
    nuts <- list(es_sampling = min(ref$ess) / et, es_wall = min(ref$ess) / (r$wall + sm$compile))
    add(nm, "rstan NUTS (sampling time)", ref, et, et, sprintf("%d divergent", div),
        es_time = et)
    add(nm, "rstan NUTS (wall + compile)", ref, r$wall + sm$compile, r$cpu + sm$compile,
        sprintf("compile %.0f s", sm$compile))
  }
  h <- timed(hmc_sample_mv(m$ld, init = m$init, lower = m$lower, seed = 1))
  add(nm, "clbayes taped HMC", stats_of(as.array(h$val)), h$wall, h$cpu,
      sprintf("%d divergent, %d chains", sum(h$val$n_divergent), h$val$chains), ref)
  s <- timed(slice_sample_mv(m$ld, init = m$init, lower = m$lower, seed = 1,
                             n_iter = slice_iter(m), warmup = slice_iter(m)))
  add(nm, "clbayes slice (taped when faster)", stats_of(as.array(s$val)), s$wall, s$cpu,
      sprintf("%s, %d + %d iterations", if (isTRUE(s$val$taped)) "taped" else
                "R function (tape not faster)", slice_iter(m), slice_iter(m)), ref)
  old <- options(clbayes.tape = FALSE)
  p <- timed(slice_sample_mv(m$ld_plain %||% m$ld, init = m$init, lower = m$lower, seed = 1,
                             n_iter = plain_iter(m), warmup = plain_iter(m)))
  options(old)
  add(nm, "clbayes slice, plain R density", stats_of(as.array(p$val)), p$wall, p$cpu,
      sprintf("%d + %d iterations", plain_iter(m), plain_iter(m)), ref)
}

tab <- do.call(rbind, rows)
nuts_s <- tab$es_s[tab$sampler == "rstan NUTS (sampling time)"]
names(nuts_s) <- tab$model[tab$sampler == "rstan NUTS (sampling time)"]
nuts_w <- tab$es_s[tab$sampler == "rstan NUTS (wall + compile)"]
names(nuts_w) <- tab$model[tab$sampler == "rstan NUTS (wall + compile)"]
plain <- tab$es_s[tab$sampler == "clbayes slice, plain R density"]
names(plain) <- tab$model[tab$sampler == "clbayes slice, plain R density"]
tab$vs_nuts <- tab$es_s / nuts_s[tab$model]
tab$vs_nuts_compile <- tab$es_s / nuts_w[tab$model]
tab$vs_plain <- tab$es_s / plain[tab$model]

cat(sprintf("\n%s, %s, R %s, RTMB %s, OMP_NUM_THREADS=%s\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            Sys.info()[["nodename"]], getRversion(), utils::packageVersion("RTMB"),
            Sys.getenv("OMP_NUM_THREADS", "unset")))
cat("\n| model | sampler | min ESS | max R-hat | max abs z | wall s | CPU s | min ES/s |",
    "x NUTS (sampling) | x NUTS (+ compile) | x plain R | note |\n")
cat("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
f <- function(x, d = 2) ifelse(is.na(x), "", formatC(x, format = "f", digits = d))
for (i in seq_len(nrow(tab))) {
  r <- tab[i, ]
  cat(sprintf("| %s | %s | %.0f | %.4f | %s | %.1f | %.1f | %.0f | %s | %s | %s | %s |\n",
              r$model, r$sampler, r$min_ess, r$max_rhat, f(r$max_z), r$wall, r$cpu, r$es_s,
              f(r$vs_nuts), f(r$vs_nuts_compile), f(r$vs_plain), r$note))
}
