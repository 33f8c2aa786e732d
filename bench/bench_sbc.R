# Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari and
# Gelman 2018) of hmc_sample_mv() on glm_model(): draw the parameters from
# their priors, simulate data, fit, and rank each true value among L
# thinned posterior draws. A calibrated sampler gives uniform ranks on
# 0..L; the table prints the rank histogram in B bins per parameter and the
# p-value of a chi-square test of uniformity.
#
#   Rscript bench/bench_sbc.R [replications] [family]
#
# family: binomial (default) or poisson. Priors normal(0, 1) on every
# coefficient, n = 40 rows, two predictors.
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[[1]]) else 200L
fam <- if (length(args) >= 2) args[[2]] else "binomial"
suppressPackageStartupMessages(library(clbayes))

n <- 40
L <- 99   # ranks 0..L
B <- 10   # histogram bins
chains <- 4
n_iter <- 500
set.seed(20261124)
x <- matrix(rnorm(n * 2), n, 2, dimnames = list(NULL, c("x1", "x2")))
family <- switch(fam, binomial = binomial(), poisson = poisson(),
                 stop("family must be binomial or poisson"))
ranks <- matrix(NA_integer_, reps, 3)
divergent <- 0
t0 <- proc.time()[["elapsed"]]
for (r in seq_len(reps)) {
  theta <- rnorm(3)
  eta <- drop(theta[1] + x %*% theta[2:3])
  y <- if (fam == "binomial") rbinom(n, 1, plogis(eta)) else rpois(n, exp(eta))
  m <- glm_model(y ~ x1 + x2, data = data.frame(y = y, x), family = family,
                 prior = normal(0, 1), prior_intercept = normal(0, 1))
  fit <- suppressWarnings(hmc_sample_mv(m, n_iter = n_iter, warmup = 500,
                                        chains = chains, seed = r, backend = "cpu"))
  divergent <- divergent + sum(fit$n_divergent)
  d <- as.array(fit)
  keep <- round(seq(1, n_iter, length.out = ceiling((L + 1) / chains)))
  for (j in 1:3) {
    draws <- c(d[keep, , j])[seq_len(L)]
    ranks[r, j] <- sum(draws < theta[j])
  }
}
elapsed <- proc.time()[["elapsed"]] - t0

cat(sprintf("# SBC of hmc_sample_mv on glm_model(%s), %s\n\n", fam,
            format(Sys.time(), tz = "UTC", usetz = TRUE)))
cat(sprintf("%d replications, n = %d, %d chains x %d draws, ranks among L = %d thinned draws, %d bins; %.1f s; %d divergent transitions after warmup in all\n\n",
            reps, n, chains, n_iter, L, B, elapsed, divergent))
cat(sprintf("| parameter | %s | chi-square p |\n", paste(sprintf("bin %d", 1:B), collapse = " | ")))
cat(sprintf("|---|%s---:|\n", strrep("---:|", B)))
for (j in 1:3) {
  counts <- tabulate(pmin(B, ranks[, j] %/% ((L + 1) / B) + 1), B)
  p <- stats::chisq.test(counts, p = rep(1 / B, B))$p.value
  cat(sprintf("| %s | %s | %.3f |\n", c("(Intercept)", "x1", "x2")[j],
              paste(counts, collapse = " | "), p))
}
