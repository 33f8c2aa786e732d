# The fit object's methods, and our ESS / R-hat against posterior's.

ar1_draws <- function(n, chains, phi, shift = 0, seed = 1) {
  set.seed(seed)
  sapply(seq_len(chains), function(c) {
    as.numeric(stats::arima.sim(list(ar = phi), n)) + shift * (c - 1)
  })
}

test_that("ESS and R-hat agree with posterior's", {
  skip_if_not_installed("posterior")
  cases <- list(ar1_draws(500, 4, 0.5), ar1_draws(301, 3, 0.95, seed = 2),
                ar1_draws(400, 4, 0.2, shift = 0.5, seed = 3),
                ar1_draws(200, 1, -0.3, seed = 4),
                matrix(rexp(800), 200, 4))
  for (x in cases) {
    # posterior warns where it caps the ESS of antithetic chains; so do we.
    expect_equal(clbayes:::.ess_bulk(x), suppressWarnings(posterior::ess_bulk(x)),
                 tolerance = 1e-8)
    expect_equal(clbayes:::.ess_tail(x), posterior::ess_tail(x), tolerance = 1e-8)
    expect_equal(clbayes:::.rhat(x), posterior::rhat(x), tolerance = 1e-8)
  }
  expect_true(is.na(clbayes:::.ess_bulk(matrix(1, 10, 2))))
})

test_that("ESS of independent draws is close to their number", {
  set.seed(8)
  x <- matrix(rnorm(4000), 1000, 4)
  expect_gt(clbayes:::.ess_bulk(x), 3400)
  expect_lt(clbayes:::.ess_bulk(x), 4600)
  expect_lt(abs(clbayes:::.rhat(x) - 1), 0.01)
})

fit_for_methods <- function() {
  ld <- function(x) -0.5 * rowSums(x^2)
  suppressWarnings(slice_sample_mv(ld, init = c(mu = 0, tau = 0), n_iter = 60,
                                   width = 2, chains = 3, warmup = 20, seed = 2))
}

test_that("summary, print, as.array and as.data.frame", {
  fit <- fit_for_methods()
  a <- as.array(fit)
  expect_equal(dim(a), c(60, 3, 2))
  expect_equal(dim(fit$warmup_draws), c(20, 3, 2))
  expect_equal(dimnames(a)[[3]], c("mu", "tau"))
  s <- summary(fit)
  expect_equal(s$variable, c("mu", "tau"))
  expect_equal(s$mean, unname(apply(a, 3, mean)))
  expect_equal(s$sd, unname(apply(a, 3, sd)))
  expect_equal(s$q95, unname(apply(a, 3, quantile, 0.95)))
  expect_equal(s$es_per_sec, s$ess_bulk / fit$time[["total"]])
  expect_gt(fit$n_evals, fit$n_evals_warmup)
  expect_output(print(fit), "3 chains x 60 draws")
  df <- as.data.frame(fit)
  expect_equal(nrow(df), 180)
  expect_equal(df$mu[df$.chain == 2], unname(a[, 2, "mu"]))
  pdf(NULL)
  on.exit(dev.off())
  expect_invisible(plot(fit))
  expect_error(plot(fit, variables = "nope"), "`variables`")
})

test_that("coda and posterior conversions", {
  fit <- fit_for_methods()
  a <- as.array(fit)
  skip_if_not_installed("coda")
  m <- coda::as.mcmc.list(fit)
  expect_s3_class(m, "mcmc.list")
  expect_equal(coda::nchain(m), 3)
  expect_equal(unname(as.matrix(m[[3]])[, "tau"]), unname(a[, 3, "tau"]))
  skip_if_not_installed("posterior")
  p <- posterior::as_draws_array(fit)
  expect_s3_class(p, "draws_array")
  expect_equal(posterior::variables(p), c("mu", "tau"))
  expect_equal(unclass(p)[, 2, 1], unname(a[, 2, 1]), ignore_attr = TRUE)
  expect_equal(posterior::ess_bulk(posterior::extract_variable_matrix(p, "mu")),
               summary(fit)$ess_bulk[1])
})

test_that("print reports points per call, the density's share of the time, ES/s", {
  fit <- suppressWarnings(fit_for_methods())
  expect_true(fit$time[["density"]] >= 0 && fit$time[["density"]] <= fit$time[["total"]])
  out <- capture.output(print(fit))
  per_call <- sprintf("%.1f points per call", fit$n_evals / fit$n_calls)
  expect_true(any(grepl(per_call, out, fixed = TRUE)))
  expect_true(any(grepl("s in the density \\([0-9]+%\\), [0-9.e-]+ s in the sampler", out)))
  min_es <- min(summary(fit)$es_per_sec)
  expect_true(any(grepl(sprintf("min ES/s %.3g", min_es), out, fixed = TRUE)))
})

test_that("print shows an HMC fit's own fields", {
  fit <- suppressWarnings(fit_for_methods())
  fit$sampler <- "hmc"
  fit$n_divergent <- 7
  fit$step_size <- 0.25
  fit$n_gradients <- 1234
  fit$n_leapfrog <- 1200
  out <- capture.output(print(fit))
  expect_true(any(grepl("hmc sampler", out)))
  expect_true(any(grepl("7 divergent transitions, step size 0.25, 1234 gradients, 1200 leapfrog steps",
                        out, fixed = TRUE)))
})
