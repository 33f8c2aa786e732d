# Does the gradient pay on the Gaussian-process posterior (gp_model, the
# paper's Example 2)? The slice sampler with its defaults against
# hmc_sample_mv() with the model's analytic gradient (one Cholesky factor
# per point, Sigma^-1 from it: about three densities' work), in one run on
# the CPU path, the same number of chains and iterations for both.
# Data as in the paper's Example 2 (and bench::simulate_gp of the C++
# drivers, with R's random numbers): n locations uniform on the unit
# square, covariates an intercept and the first coordinate with beta =
# (1, -0.5), exponential covariance with kappa = psi = 1, phi = 0.2; beta
# is gp_model()'s GLS estimate.
#
#   Rscript bench/bench_gp_hmc.R [locations] [iterations] [chains] [warmup]
#
# iterations are kept draws per chain; warmup defaults to iterations.
# Columns: min bulk ESS over (kappa, psi, phi); wall seconds, warmup
# included; min ES/s over that time; densities (slice) or gradients (HMC)
# per effective sample, warmup included; ms per point: the time inside the
# density per point evaluated (slice), the whole run's time per gradient
# (HMC, the sampler's own work included).
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[[1]]) else 60L
iter <- if (length(args) >= 2) as.integer(args[[2]]) else 300L
chains <- if (length(args) >= 3) as.integer(args[[3]]) else 16L
warmup <- if (length(args) >= 4) as.integer(args[[4]]) else iter
suppressPackageStartupMessages(library(clbayes))

set.seed(2010 + n)
coords <- matrix(runif(2 * n), n, 2)
X <- cbind(1, coords[, 1])
S <- exp(-as.matrix(dist(coords)) / 0.2) + diag(n)
y <- drop(X %*% c(1, -0.5) + t(chol(S)) %*% rnorm(n))
m <- gp_model(y, X, coords)

fs <- slice_sample_mv(m, n_iter = iter, warmup = warmup, chains = chains, seed = 1,
                      backend = "cpu")
fh <- hmc_sample_mv(m, n_iter = iter, warmup = warmup, chains = chains, seed = 1,
                    backend = "cpu")
row <- function(name, fit, dens, grads, ms) {
  ess <- min(summary(fit)$ess_bulk)
  wall <- fit$time[["total"]]
  sprintf("| %s | %d | %d + %d | %.0f | %.1f | %.2f | %s | %s | %.2f |\n", name, chains,
          fit$warmup, iter, ess, wall, ess / wall,
          if (is.na(dens)) "-" else sprintf("%.0f", dens / ess),
          if (is.na(grads)) "-" else sprintf("%.0f", grads / ess), ms)
}
cat(sprintf("# GP posterior, %d locations, CPU path, %s threads, %s\n\n", n,
            Sys.getenv("OMP_NUM_THREADS", "default"),
            format(Sys.time(), tz = "UTC", usetz = TRUE)))
cat("| sampler | chains | warmup + iterations | min ESS | wall s | min ES/s |",
    "densities per ES | gradients per ES | ms per point |\n")
cat("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
cat(row("slice_sample_mv (defaults but chains/iterations)", fs, fs$n_evals, NA,
        1e3 * fs$time[["density"]] / fs$n_evals))
cat(row("hmc_sample_mv, analytic gradient", fh, NA, fh$n_gradients,
        1e3 * fh$time[["total"]] / fh$n_gradients))
cat(sprintf("\nHMC: step size %.3g, trajectory length %.3g, acceptance %.2f, %d divergent after warmup\n",
            fh$step_size[1], fh$trajectory_length[1], fh$accept_rate,
            sum(fh$n_divergent)))
cat(sprintf("min ES/s, HMC / slice: %.2f\n",
            (min(summary(fh)$ess_bulk) / fh$time[["total"]]) /
              (min(summary(fs)$ess_bulk) / fs$time[["total"]])))
