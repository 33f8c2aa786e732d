# Simulation-based calibration (Talts et al. 2018) of hmc_sample_mv() on a
# multilevel glm_model(): a random-intercept logit y ~ x1 + (1 | g) with G
# groups. Draw the parameters from the model's priors (normal(0, 1) on the
# centred intercept and on x1, given; decov() on the group sd: sd = tau,
# tau ~ gamma(1, 1)), simulate data, fit, and rank each true value among L
# thinned posterior draws; uniform ranks on 0..L mean a calibrated
# sampler. Prints the rank histogram and a chi-square p-value per quantity.
#
#   Rscript bench/bench_sbc_multilevel.R [replications]
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[[1]]) else 200L
suppressPackageStartupMessages(library(clbayes))

G <- 8
n <- 80
L <- 99
B <- 10
chains <- 4
n_iter <- 500
set.seed(20261128)
g <- factor(rep(seq_len(G), length.out = n))
x1 <- rnorm(n)
x1 <- x1 - mean(x1)  # centred, so the prior's intercept is the model's
quantities <- c("(Intercept)", "x1", "Sigma[g:(Intercept),(Intercept)]", "b[(Intercept) g:1]")
ranks <- matrix(NA_integer_, reps, length(quantities))
divergent <- 0
t0 <- proc.time()[["elapsed"]]
for (r in seq_len(reps)) {
  alpha <- rnorm(1)
  beta <- rnorm(1)
  tau <- rgamma(1, 1, 1)
  b <- rnorm(G, 0, tau)
  y <- rbinom(n, 1, plogis(alpha + beta * x1 + b[g]))
  truth <- c(alpha, beta, tau^2, b[1])
  m <- glm_model(y ~ x1 + (1 | g), data.frame(y, x1, g), family = binomial(),
                 prior = normal(0, 1), prior_intercept = normal(0, 1))
  fit <- suppressWarnings(hmc_sample_mv(m, n_iter = n_iter, warmup = 500, chains = chains,
                                        seed = r, backend = "cpu", adapt_delta = 0.9))
  divergent <- divergent + sum(fit$n_divergent)
  d <- as.array(fit)
  keep <- round(seq(1, n_iter, length.out = ceiling((L + 1) / chains)))
  for (j in seq_along(quantities)) {
    draws <- c(d[keep, , quantities[j]])[seq_len(L)]
    ranks[r, j] <- sum(draws < truth[j])
  }
}
elapsed <- proc.time()[["elapsed"]] - t0
cat(sprintf("# SBC of hmc_sample_mv on glm_model(y ~ x1 + (1 | g), binomial), %s\n\n",
            format(Sys.time(), tz = "UTC", usetz = TRUE)))
cat(sprintf(paste0("%d replications, n = %d, G = %d, %d chains x %d draws (adapt_delta 0.9), ",
                   "ranks among L = %d thinned draws, %d bins; %.1f s; %d divergent ",
                   "transitions after warmup in all\n\n"),
            reps, n, G, chains, n_iter, L, B, elapsed, divergent))
cat(sprintf("| quantity | %s | chi-square p |\n", paste(sprintf("bin %d", 1:B), collapse = " | ")))
cat(sprintf("|---|%s---:|\n", strrep("---:|", B)))
for (j in seq_along(quantities)) {
  counts <- tabulate(pmin(B, ranks[, j] %/% ((L + 1) / B) + 1), B)
  p <- stats::chisq.test(counts, p = rep(1 / B, B))$p.value
  cat(sprintf("| %s | %s | %.3f |\n", quantities[j], paste(counts, collapse = " | "), p))
}
