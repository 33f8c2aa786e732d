# The sampler with its defaults (only n_iter, warmup and chains made
# smaller, for time) on posteriors whose answers are known independently:
# closed forms, quadrature on a grid, numerical integration over tau
# (posteriors.R beside this file; bench/bench_posteriors.R runs them at full
# length).
source(test_path("posteriors.R"), local = TRUE)

# Means within 5 Monte Carlo errors (from the fit's own bulk ESS), sds
# within 15%, R-hat < 1.05 and ESS >= 100 at these short lengths.
expect_posterior <- function(fit, p) {
  ck <- check_posterior(fit, p, z_max = 5, sd_range = c(0.85, 1.15),
                        rhat_max = 1.05, ess_min = 100)
  expect_lte(ck$max_z, 5)
  expect_gte(ck$sd_ratio[1], 0.85)
  expect_lte(ck$sd_ratio[2], 1.15)
  expect_lt(ck$rhat, 1.05)
  expect_gte(ck$ess, 100)
}

short <- function(p, ...) {
  slice_sample_mv(p$log_density, init = p$init, lower = p$lower, n_iter = 150,
                  warmup = 200, seed = 11, ...)
}

test_that("conjugate normal, defaults", {
  p <- posterior_conjugate_normal()
  expect_equal(p$mean, sum(p$stan$data$y) / (10 + 1 / 100))
  expect_posterior(short(p), p)
})

test_that("correlated Gaussian (10-d, rho 0.9), defaults", {
  p <- posterior_correlated10()
  expect_posterior(short(p, chains = 16), p)
})

test_that("banana against quadrature, defaults", {
  p <- posterior_banana()
  # the quadrature against the closed forms x2 = x1^2 / 2 + e: mean 2, sd 3
  expect_equal(p$mean, c(0, 2), tolerance = 1e-6)
  expect_equal(p$sd, c(2, 3), tolerance = 1e-5)
  expect_posterior(short(p), p)
})

test_that("eight schools (non-centred) against integration over tau, defaults", {
  p <- posterior_eight_schools()
  # the tau integral against a 2-d quadrature over (mu, log tau) of
  # p(mu) p(tau) prod N(y_j | mu, s_j^2 + tau^2), theta integrated out
  y <- p$stan$data$y
  s <- p$stan$data$s
  mu <- seq(-25, 35, length.out = 301)
  lt <- seq(log(1e-3), log(1e3), length.out = 301)
  lp <- outer(mu, exp(lt), Vectorize(function(m, t) {
    sum(dnorm(y, m, sqrt(s^2 + t^2), log = TRUE)) + dnorm(m, 0, 5, log = TRUE) +
      dcauchy(t, 0, 5, log = TRUE) + log(t)
  }))
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  expect_equal(p$mean[1], sum(w * mu), tolerance = 1e-3)
  expect_equal(p$mean[2], sum(w * rep(exp(lt), each = length(mu))), tolerance = 1e-3)
  expect_posterior(short(p, chains = 32), p)
})

test_that("a model's own init is used when init is missing", {
  p <- posterior_regression(4, 0.5)
  m <- p$log_density
  m$init <- m$mean * 0
  fit <- slice_sample_mv(m, n_iter = 150, warmup = 200, chains = 16, seed = 2)
  expect_posterior(fit, p)
  expect_error(slice_sample_mv(function(x) -rowSums(x^2)), "`init` is missing")
})
