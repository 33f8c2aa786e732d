# The GLM families and links of glm_model() against glm() at large n: the
# posterior mean of each coefficient (flat priors) against glm()'s estimate,
# in units of glm()'s standard error, with the Monte Carlo error of the mean
# beside it (issue 47's target: within 0.05 se). HMC with the default
# chains; one table; CPU seconds beside wall time.
#
#   Rscript bench/bench_families.R [n]
library(clbayes)
args <- commandArgs(TRUE)
n <- if (length(args)) as.integer(args[1]) else 20000L
set.seed(47)
d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
eta <- 0.3 + 0.4 * d$x1 - 0.2 * d$x2
cases <- list(
  list(gaussian("log"), function() rnorm(n, exp(eta), 0.5)),
  list(gaussian("inverse"), function() rnorm(n, 1 / (1 + 0.2 * eta), 0.2)),
  list(binomial("probit"), function() rbinom(n, 1, pnorm(eta))),
  list(binomial("cloglog"), function() rbinom(n, 1, 1 - exp(-exp(eta)))),
  list(binomial("cauchit"), function() rbinom(n, 1, pcauchy(eta))),
  list(binomial("log"), function() rbinom(n, 1, exp(-1.5 + 0.2 * eta))),
  list(poisson("identity"), function() rpois(n, 3 + eta)),
  list(poisson("sqrt"), function() rpois(n, (2 + eta)^2)),
  list(neg_binomial_2("identity"), function() rnbinom(n, size = 3, mu = 3 + eta)),
  list(neg_binomial_2("sqrt"), function() rnbinom(n, size = 3, mu = (2 + eta)^2)),
  list(Gamma("inverse"), function() rgamma(n, 3, 3 * (1 + 0.2 * eta))),
  list(Gamma("log"), function() rgamma(n, 3, 3 / exp(eta))),
  list(Gamma("identity"), function() rgamma(n, 3, 3 / (2 + eta))),
  list(inverse.gaussian("1/mu^2"), function() clbayes:::rinvgauss(n, 1 / sqrt(1 + 0.2 * eta), 4)),
  list(inverse.gaussian("log"), function() clbayes:::rinvgauss(n, exp(eta), 4)))
flat <- normal(0, 1e3)
out <- NULL
for (cs in cases) {
  fam <- cs[[1]]
  d$y <- cs[[2]]()
  g <- if (fam$family == "neg_binomial_2") {
    MASS::glm.nb(y ~ x1 + x2, d, link = fam$link, mustart = pmax(d$y, 0.5))
  } else if (fam$family == "binomial") {
    glm(y ~ x1 + x2, fam, d, start = c(if (fam$link == "log") -1.5 else 0.1, 0, 0))
  } else {
    glm(y ~ x1 + x2, fam, d, mustart = pmax(d$y, 0.1))
  }
  t0 <- proc.time()
  w0 <- Sys.time()
  m <- glm_model(y ~ x1 + x2, d, family = fam, prior = flat, prior_intercept = flat,
                 prior_aux = exponential(1e-3))
  fit <- hmc_sample_mv(m, seed = 1)
  cpu <- sum((proc.time() - t0)[c(1, 2)])
  wall <- as.numeric(Sys.time() - w0, units = "secs")
  s <- summary(fit)
  se <- sqrt(diag(vcov(g)))
  z <- (s$mean[1:3] - coef(g)) / se
  mcse <- s$sd[1:3] / sqrt(s$ess_bulk[1:3]) / se
  out <- rbind(out, data.frame(family = fam$family, link = fam$link,
                               max_abs_z = max(abs(z)), mcse_z = max(mcse),
                               rhat = max(s$rhat), wall_s = wall, cpu_s = cpu))
}
cat(sprintf("bench_families: n = %d, %s, %s\n", n, format(Sys.time(), "%Y-%m-%d %H:%M"),
            Sys.info()[["nodename"]]))
print(out, digits = 3, row.names = FALSE)
