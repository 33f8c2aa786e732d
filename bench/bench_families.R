# The GLM families and links of glm_model() against glm() at large n: the
# posterior mean of each coefficient (flat priors) against glm()'s estimate,
# in units of glm()'s standard error, with the Monte Carlo error of the mean
# beside it (issue 47's target: within 0.05 se). HMC with its defaults
# (16 chains, about 4000 kept draws); one table; CPU seconds beside wall
# time.
#
#   Rscript bench/bench_families.R [n]
library(clbayes)
args <- commandArgs(TRUE)
n <- if (length(args)) as.integer(args[1]) else 20000L
set.seed(47)
d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
# each case: the family, the truth of its linear predictor's coefficients
# (glm()'s start), and y given the mean
lin <- function(b) b[1] + b[2] * d$x1 + b[3] * d$x2
b0 <- c(0.3, 0.4, -0.2)
shift <- function(a, s = 1) c(a + s * b0[1], s * b0[2], s * b0[3])
cases <- list(
  list(gaussian("log"), b0, function(mu) rnorm(n, mu, 0.5)),
  list(gaussian("inverse"), shift(1, 0.2), function(mu) rnorm(n, mu, 0.2)),
  list(binomial("probit"), b0, function(mu) rbinom(n, 1, mu)),
  list(binomial("cloglog"), b0, function(mu) rbinom(n, 1, mu)),
  list(binomial("cauchit"), b0, function(mu) rbinom(n, 1, mu)),
  list(binomial("log"), shift(-1.5, 0.2), function(mu) rbinom(n, 1, mu)),
  list(poisson("identity"), shift(3), function(mu) rpois(n, mu)),
  list(poisson("sqrt"), shift(2), function(mu) rpois(n, mu)),
  list(neg_binomial_2("identity"), shift(3), function(mu) rnbinom(n, size = 3, mu = mu)),
  list(neg_binomial_2("sqrt"), shift(2), function(mu) rnbinom(n, size = 3, mu = mu)),
  list(Gamma("inverse"), shift(1, 0.2), function(mu) rgamma(n, 3, 3 / mu)),
  list(Gamma("log"), b0, function(mu) rgamma(n, 3, 3 / mu)),
  list(Gamma("identity"), shift(2), function(mu) rgamma(n, 3, 3 / mu)),
  list(inverse.gaussian("1/mu^2"), shift(1, 0.2), function(mu) clbayes:::rinvgauss(n, mu, 4)),
  list(inverse.gaussian("log"), b0, function(mu) clbayes:::rinvgauss(n, mu, 4)))
flat <- normal(0, 1e3)
out <- NULL
for (cs in cases) {
  fam <- cs[[1]]
  truth <- cs[[2]]
  d$y <- cs[[3]](fam$linkinv(lin(truth)))
  g <- if (fam$family == "neg_binomial_2") {
    MASS::glm.nb(y ~ x1 + x2, d, link = fam$link, start = truth)
  } else {
    glm(y ~ x1 + x2, fam, d, start = truth)
  }
  t0 <- proc.time()
  w0 <- Sys.time()
  m <- glm_model(y ~ x1 + x2, d, family = fam, prior = flat, prior_intercept = flat,
                 prior_aux = exponential(1e-3))
  fit <- hmc_sample_mv(m, seed = 1, refresh = 0)
  cpu <- sum((proc.time() - t0)[c(1, 2)])
  wall <- as.numeric(Sys.time() - w0, units = "secs")
  s <- summary(fit)
  s <- s[match(c("(Intercept)", "x1", "x2"), s$variable), ]
  se <- sqrt(diag(vcov(g)))
  z <- (s$mean - coef(g)) / se
  mcse <- s$sd / sqrt(s$ess_bulk) / se
  out <- rbind(out, data.frame(family = fam$family, link = fam$link,
                               max_abs_z = max(abs(z)), mcse_z = max(mcse),
                               min_ess = min(s$ess_bulk), rhat = max(s$rhat),
                               wall_s = wall, cpu_s = cpu))
}
cat(sprintf("bench_families: n = %d, %s, %s\n", n, format(Sys.time(), "%Y-%m-%d %H:%M"),
            Sys.info()[["nodename"]]))
print(out, digits = 3, row.names = FALSE)
