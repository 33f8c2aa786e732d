# Chain groups under future plans: an expensive R density (about 2 ms of
# CPU a call, whatever the number of points) sampled by slice_sample_mv()
# with 2 chain groups, under plan(sequential) and plan(multisession,
# workers = 2), in one run. Prints the wall times, their ratio, and whether
# the draws are identical (they must be: they depend on the seed and the
# groups only).
#
#   Rscript bench/bench_chain_groups.R [n_iter] [warmup]
args <- commandArgs(trailingOnly = TRUE)
n_iter <- if (length(args) >= 1) as.integer(args[[1]]) else 150L
warmup <- if (length(args) >= 2) as.integer(args[[2]]) else 100L
suppressPackageStartupMessages(library(clbayes))
if (!requireNamespace("future", quietly = TRUE)) stop("needs the future package")

prec <- solve(0.5^abs(outer(1:4, 1:4, "-")))
burn <- matrix(runif(150 * 150), 150)
# A correlated 4-d normal whose every call also does ~2 ms of work (a
# 150 x 150 product), as a costly likelihood would.
ld <- function(x) {
  s <- sum(burn %*% burn)
  -0.5 * rowSums((x %*% prec) * x) + 0 * s
}
per_call <- system.time(for (i in 1:50) ld(matrix(0, 8, 4)))[["elapsed"]] / 50

run <- function() {
  t0 <- proc.time()[["elapsed"]]
  fit <- slice_sample_mv(ld, init = rep(0, 4), n_iter = n_iter, warmup = warmup,
                         chains = 16, chain_groups = 2, seed = 1)
  list(fit = fit, time = proc.time()[["elapsed"]] - t0)
}
old <- future::plan(future::sequential)
seq_run <- run()
future::plan(future::multisession, workers = 2)
invisible(future::value(future::future(NULL)))  # workers started before timing
par_run <- run()
future::plan(old)

cat(sprintf("# chain groups, %s; density %.2f ms a call; %d + %d iterations, 16 chains, 2 groups\n\n",
            format(Sys.time(), tz = "UTC", usetz = TRUE), 1e3 * per_call, warmup, n_iter))
cat("| plan | wall s | calls | min ES/s |\n|---|---:|---:|---:|\n")
for (r in list(list("sequential", seq_run), list("multisession, 2 workers", par_run))) {
  s <- summary(r[[2]]$fit)
  cat(sprintf("| %s | %.1f | %.0f | %.1f |\n", r[[1]], r[[2]]$time, r[[2]]$fit$n_calls,
              min(s$ess_bulk) / r[[2]]$time))
}
cat(sprintf("\nmultisession / sequential wall time: %.2f (target <= 0.6); identical draws: %s\n",
            par_run$time / seq_run$time,
            identical(as.array(seq_run$fit), as.array(par_run$fit))))
