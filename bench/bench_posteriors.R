# slice_sample_mv() with its default settings on posteriors with known
# answers (tests/testthat/posteriors.R), and rstan's NUTS on the same
# posteriors in the same run (4 chains, 1000 warmup + 1000 draws, compile
# time excluded). Per posterior: pass/fail (|z| <= 4 against the reference,
# sd ratio in [0.9, 1.1], R-hat < 1.01, min bulk ESS >= 400), min ES/s
# (bulk ESS per second of the whole run, warmup included, ESS computed the
# same way for both samplers), densities per effective sample, wall time,
# the warnings of the fit, and the ES/s ratio against NUTS.
#   Rscript bench/bench_posteriors.R [--no-stan] [names...]
# Compiled Stan models are cached in $CLBAYES_STAN_CACHE (default
# /tmp/clbayes-stan-cache). rstan needs Boost: BH, or the system's headers
# (boost_lib = /usr/include, as Debian's r-cran-rstan has no BH).
suppressPackageStartupMessages(library(clbayes))
args <- commandArgs(trailingOnly = TRUE)
use_stan <- !"--no-stan" %in% args && requireNamespace("rstan", quietly = TRUE)
only <- setdiff(args, "--no-stan")
# The posteriors are shared with the tests: tests/testthat/posteriors.R of
# this checkout (run from its root, or by path).
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
root <- if (length(script)) file.path(dirname(normalizePath(script[1L])), "..") else "."
source(file.path(root, "tests", "testthat", "posteriors.R"))

posteriors <- list(
  conjugate = posterior_conjugate_normal(),
  correlated10 = posterior_correlated10(),
  banana = posterior_banana(),
  schools = posterior_eight_schools(),
  regression8 = posterior_regression(8, 0.9),
  regression30 = posterior_regression(30, 0.95),
  gaussian100 = posterior_gaussian100(),
  funnel_nc = posterior_funnel(centred = FALSE),
  funnel_c = posterior_funnel(centred = TRUE)
)
if (length(only)) posteriors <- posteriors[only]

boost <- if (use_stan && !dir.exists(rstan::rstan_options("boost_lib"))) "/usr/include"
cache <- Sys.getenv("CLBAYES_STAN_CACHE", "/tmp/clbayes-stan-cache")
dir.create(cache, showWarnings = FALSE, recursive = TRUE)

stan_fit <- function(p) {
  file <- file.path(cache, paste0("m", substr(digest_code(p$stan$code), 1, 16), ".stan"))
  if (!file.exists(file)) writeLines(p$stan$code, file)
  model <- rstan::stan_model(file = file, auto_write = TRUE, boost_lib = boost)
  fit <- rstan::sampling(model, data = p$stan$data, chains = 4, iter = 2000,
                         warmup = 1000, seed = 1, refresh = 0, cores = 1)
  d <- rstan::extract(fit, permuted = FALSE, inc_warmup = FALSE)
  d <- d[, , setdiff(dimnames(d)[[3]], "lp__"), drop = FALSE]
  time <- sum(rstan::get_elapsed_time(fit))
  grads <- sum(vapply(rstan::get_sampler_params(fit, inc_warmup = TRUE),
                      function(m) sum(m[, "n_leapfrog__"]), 0))
  list(draws = d, time = time, grads = grads)
}

# A stable file name for a Stan program.
digest_code <- function(code) {
  bytes <- as.integer(charToRaw(gsub("\\s+", " ", code)))
  h <- 5381
  for (b in bytes) h <- (h * 33 + b) %% 2^31
  sprintf("%016.0f", h)
}

ess_min <- function(d) {
  min(vapply(seq_len(dim(d)[3]), function(j) {
    clbayes:::.ess_bulk(matrix(d[, , j], dim(d)[1], dim(d)[2]))
  }, 0))
}

cat(sprintf("# bench_posteriors.R, %s, %s\n", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
            R.version.string))
cat(sprintf("# slice_sample_mv() defaults: %s\n",
            paste(names(formals(slice_sample_mv))[3:12],
                  vapply(formals(slice_sample_mv)[3:12], function(a) paste(deparse(a), collapse = ""), ""),
                  sep = " = ", collapse = ", ")))
rows <- list()
for (nm in names(posteriors)) {
  p <- posteriors[[nm]]
  warns <- character()
  t0 <- proc.time()[["elapsed"]]
  fit <- withCallingHandlers(
    slice_sample_mv(p$log_density, init = p$init, lower = p$lower, seed = 1, backend = "cpu"),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  wall <- proc.time()[["elapsed"]] - t0
  ck <- check_posterior(fit, p)
  es <- ck$ess / fit$time[["total"]]
  row <- data.frame(posterior = p$name, pass = ck$pass, max_z = round(ck$max_z, 2),
                    sd_ratio = sprintf("%.3f-%.3f", ck$sd_ratio[1], ck$sd_ratio[2]),
                    rhat = round(ck$rhat, 4), min_ess = round(ck$ess),
                    es_per_s = signif(es, 3),
                    dens_per_es = round(fit$n_evals / ck$ess),
                    pts_per_call = round(fit$n_evals / fit$n_calls, 1),
                    density_share = round(fit$time[["density"]] / fit$time[["total"]], 2),
                    warmup = fit$warmup, wall_s = round(wall, 2),
                    warnings = length(warns), stringsAsFactors = FALSE)
  if (use_stan) {
    sf <- stan_fit(p)
    nuts_ess <- ess_min(sf$draws)
    row$nuts_es_per_s <- signif(nuts_ess / sf$time, 3)
    row$nuts_grads_per_es <- round(sf$grads / nuts_ess)
    row$ratio <- signif(es / (nuts_ess / sf$time), 3)
    row$nuts_s <- round(sf$time, 2)
  }
  rows[[nm]] <- row
  print(row, row.names = FALSE)
  if (length(warns)) cat(paste0("  warning: ", warns, collapse = "\n"), "\n")
}
cat("\n## Summary\n")
out <- do.call(rbind, rows)
print(out[, setdiff(names(out), "warnings")], row.names = FALSE)
