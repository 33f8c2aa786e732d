# Does a gradient pay on the Gaussian-process posterior (gp_model, the
# paper's Example 2)? The slice sampler with its defaults against
# hmc_sample_mv() with a central finite-difference gradient of the same
# batched density (7 densities per gradient of the 3 parameters), in one
# run on the CPU path. An analytic gradient costs at least one density
# plus the trace term tr(Sigma^-1 dSigma), which needs Sigma^-1 (about the
# cost of a second density); so HMC with an analytic gradient is at most
# about 7 / 2 = 3.5 times faster than with this one. If the slice sampler
# beats 3.5x the finite-difference HMC's ES/s, the analytic gradient does
# not pay either.
#
#   Rscript inst/bench/bench_gp_hmc.R [locations] [iterations]
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[[1]]) else 60L
iter <- if (length(args) >= 2) as.integer(args[[2]]) else 300L
suppressPackageStartupMessages(library(clbayes))

set.seed(7)
coords <- matrix(runif(2 * n), n, 2)
S <- 1.0 * exp(-as.matrix(dist(coords)) / 0.3) + diag(0.5, n)
y <- drop(1 + t(chol(S)) %*% rnorm(n))
m <- gp_model(y, matrix(1, n, 1), coords)

ld <- function(p) model_log_density(m, p, backend = "cpu")
grad <- function(p) {
  g <- matrix(0, nrow(p), ncol(p))
  for (j in seq_len(ncol(p))) {
    h <- 1e-5 * pmax(1, abs(p[, j]))
    up <- p
    dn <- p
    up[, j] <- up[, j] + h
    dn[, j] <- dn[, j] - h
    g[, j] <- (ld(up) - ld(dn)) / (2 * h)
  }
  g
}
es <- function(fit) min(summary(fit)$ess_bulk) / fit$time[["total"]]

t_slice <- system.time(fs <- slice_sample_mv(m, n_iter = iter, warmup = iter, chains = 16,
                                             seed = 1, backend = "cpu"))[["elapsed"]]
t_hmc <- system.time(fh <- hmc_sample_mv(ld, init = m$init, gradient = grad, n_iter = iter,
                                         warmup = iter, chains = 16, seed = 1,
                                         lower = m$lower, upper = m$upper))[["elapsed"]]
cat(sprintf("# GP posterior, %d locations, CPU path, %s\n\n", n,
            format(Sys.time(), tz = "UTC", usetz = TRUE)))
cat("| sampler | chains | iterations | min ESS | wall s | min ES/s | densities per ES |\n")
cat("|---|---:|---:|---:|---:|---:|---:|\n")
cat(sprintf("| slice_sample_mv (defaults but chains/iterations) | 16 | %d + %d | %.0f | %.1f | %.1f | %.0f |\n",
            iter, iter, min(summary(fs)$ess_bulk), t_slice, es(fs),
            fs$n_evals / min(summary(fs)$ess_bulk)))
cat(sprintf("| hmc_sample_mv, finite-difference gradient | 16 | %d + %d | %.0f | %.1f | %.1f | %.0f |\n",
            iter, iter, min(summary(fh)$ess_bulk), t_hmc, es(fh),
            7 * fh$n_gradients / min(summary(fh)$ess_bulk)))
cat(sprintf("\nslice / (3.5 x finite-difference HMC) = %.2f: %s\n",
            es(fs) / (3.5 * es(fh)),
            if (es(fs) > 3.5 * es(fh)) "an analytic gradient would not pay"
            else "an analytic gradient could pay"))
