# ChEES-HMC (hmc_sample_mv) against targets with known moments, the same
# known-answer checks as the slice samplers: |z| <= 4 against the reference
# (MCSE from the bulk ESS), sd ratios in [0.9, 1.1], R-hat < 1.01, and
# min bulk ESS >= 400.

# Every variable's mean within 4 MCSE of `mean`, its sd within 10% of `sd`,
# R-hat below 1.01 and bulk ESS at least 400.
expect_known_answer <- function(fit, mean, sd) {
  d <- as.array(fit)
  s <- summary(fit)
  for (j in seq_len(dim(d)[3L])) {
    x <- matrix(d[, , j], dim(d)[1L])
    z <- (mean(x) - mean[j]) / (sd[j] / sqrt(s$ess_bulk[j]))
    expect_lte(abs(z), 4)
    expect_gte(stats::sd(c(x)) / sd[j], 0.9)
    expect_lte(stats::sd(c(x)) / sd[j], 1.1)
  }
  expect_true(all(s$rhat < 1.01))
  expect_gte(min(s$ess_bulk), 400)
}

gauss_target <- function(sigma) {
  prec <- solve(sigma)
  list(ld = function(x) -0.5 * rowSums((x %*% prec) * x),
       gr = function(x) -x %*% prec)
}

test_that("a correlated Gaussian: moments, the fit's fields, both metrics", {
  sd <- c(1, 10, 0.1, 3)
  cor <- 0.7^abs(outer(1:4, 1:4, "-"))
  sigma <- cor * outer(sd, sd)
  tg <- gauss_target(sigma)
  fit <- hmc_sample_mv(tg$ld, init = c(a = 1, b = 1, c = 0, d = 0), gradient = tg$gr,
                       n_iter = 500, warmup = 500, seed = 1)
  expect_s3_class(fit, "clbayes_fit")
  expect_equal(fit$sampler, "hmc")
  expect_equal(dim(fit$draws), c(500L, 16L, 4L))
  expect_equal(dimnames(fit$draws)[[3L]], c("a", "b", "c", "d"))
  expect_known_answer(fit, rep(0, 4), sd)
  expect_length(fit$n_divergent, 16L)
  expect_equal(sum(fit$n_divergent), 0)
  expect_gt(fit$step_size, 0)
  expect_gt(fit$trajectory_length, 0)
  # one batched call per leapfrog step, plus the step size searches
  expect_gte(fit$n_calls, fit$n_leapfrog)
  expect_lt(fit$n_calls, fit$n_leapfrog + 200)
  expect_equal(fit$n_gradients, fit$n_calls * 16)
  # the diagonal metric learns the marginal variances (on u = x here)
  expect_equal(fit$scale^2, sd^2, tolerance = 0.3, ignore_attr = TRUE)
  expect_null(dim(fit$scale))  # a diagonal metric is kept as S's diagonal
  dense <- hmc_sample_mv(tg$ld, init = c(1, 1, 0, 0), gradient = tg$gr,
                         n_iter = 500, warmup = 500, seed = 2, metric = "dense")
  expect_known_answer(dense, rep(0, 4), sd)
  expect_equal(dense$scale %*% t(dense$scale), sigma, tolerance = 0.3,
               ignore_attr = TRUE)
})

test_that("bounded variables: gamma and beta through lower/upper", {
  # Gamma(shape 3, rate 2) on (0, Inf) and beta(2, 5) on (0, 1).
  ld <- function(x) dgamma(x[, 1], 3, 2, log = TRUE) + dbeta(x[, 2], 2, 5, log = TRUE)
  gr <- function(x) cbind(2 / x[, 1] - 2, 1 / x[, 2] - 4 / (1 - x[, 2]))
  fit <- hmc_sample_mv(ld, init = c(1, 0.5), gradient = gr, lower = c(0, 0),
                       upper = c(Inf, 1), n_iter = 500, warmup = 500, seed = 3)
  expect_known_answer(fit, c(3 / 2, 2 / 7), c(sqrt(3) / 2, sqrt(10 / (49 * 8))))
  expect_true(all(fit$draws[, , 1] > 0))
  expect_true(all(fit$draws[, , 2] > 0 & fit$draws[, , 2] < 1))
})

test_that("a logistic regression posterior matches glm() at large n", {
  # With a flat prior and 5000 rows the posterior is close to normal with
  # the MLE's mean and covariance: the mean's error is O(1/n), about 0.015
  # posterior sds here, below one MCSE of the run (about 0.02 sds).
  set.seed(4)
  n <- 5000
  X <- cbind(1, matrix(rnorm(n * 2), n))
  y <- rbinom(n, 1, plogis(X %*% c(-0.5, 1, -0.3)))
  ld <- function(b) {
    eta <- X %*% t(b)
    colSums(y * eta - log1p(exp(eta)))
  }
  gr <- function(b) t(crossprod(X, y - plogis(X %*% t(b))))
  ref <- glm(y ~ X - 1, family = binomial())
  fit <- hmc_sample_mv(ld, init = c(0, 0, 0), gradient = gr, n_iter = 400,
                       warmup = 400, seed = 5)
  expect_known_answer(fit, coef(ref), sqrt(diag(vcov(ref))))
})

test_that("divergences are counted per chain and reported", {
  # A cliff the gradient cannot see: the density drops by e^2000 beyond
  # x1 = 1, so trajectories that cross it have an energy error > 1000.
  ld <- function(x) -0.5 * rowSums(x^2) - 2000 * (x[, 1] > 1)
  gr <- function(x) -x
  expect_warning(
    fit <- hmc_sample_mv(ld, init = c(0, 0), gradient = gr, n_iter = 200,
                         warmup = 200, chains = 4, seed = 6),
    "divergent transitions after warmup")
  expect_length(fit$n_divergent, 4L)
  expect_gt(sum(fit$n_divergent), 0)
  expect_true(all(fit$draws[, , 1] <= 1))  # never accepted beyond the cliff
})

test_that("one chain recovers a normal target's means and variances", {
  # ChEES centres a single chain on its running mean (hmc/sampler.hpp); a
  # diagonal normal with distinct means and scales, against its moments:
  # means within 4 MCSE (bulk ESS), sds within 10%.
  mu <- c(1, -2, 0.5)
  sd <- c(1, 3, 0.5)
  ld <- function(x) -0.5 * rowSums(sweep(sweep(x, 2L, mu), 2L, sd, "/")^2)
  gr <- function(x) -sweep(sweep(x, 2L, mu), 2L, sd^2, "/")
  fit <- hmc_sample_mv(ld, init = c(a = 0, b = 0, c = 0), gradient = gr, chains = 1,
                       n_iter = 2000, warmup = 3000, seed = 11)
  expect_equal(dim(fit$draws), c(2000L, 1L, 3L))
  s <- summary(fit)
  d <- fit$draws[, 1L, ]
  expect_true(all(abs(colMeans(d) - mu) / (sd / sqrt(s$ess_bulk)) <= 4))
  expect_true(all(abs(apply(d, 2L, stats::sd) / sd - 1) <= 0.1))
  expect_gte(min(s$ess_bulk), 400)
  # the trajectory length was adapted (one chain's criterion is noisier than
  # many chains', so it takes a longer warmup): without a centre its
  # gradient would be 0 and the length would stay at the first step size
  expect_gt(fit$trajectory_length, 1.2 * fit$step_size)
})

test_that("the same seed gives the same draws", {
  tg <- gauss_target(diag(2))
  a <- hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, n_iter = 50, warmup = 50,
                     chains = 4, seed = 7)
  b <- hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, n_iter = 50, warmup = 50,
                     chains = 4, seed = 7)
  c <- hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, n_iter = 50, warmup = 50,
                     chains = 4, seed = 8)
  expect_identical(a$draws, b$draws)
  expect_false(identical(a$draws, c$draws))
  # a vector init is moved a little per chain; a matrix is used as given
  expect_false(any(a$warmup_draws[1, 1, ] == a$warmup_draws[1, 2, ]))
})

test_that("gradients are checked, and bad input names its argument", {
  tg <- gauss_target(diag(2))
  run <- function(...) hmc_sample_mv(tg$ld, c(0.5, 0.5), n_iter = 10, warmup = 10,
                                     chains = 2, seed = 1, ...)
  expect_error(run(gradient = function(x) 2 * tg$gr(x)), "`gradient` disagrees")
  expect_error(run(gradient = function(x) tg$gr(x)[, 1]), "`gradient` must return")
  expect_error(run(gradient = function(x) tg$gr(x)[1, , drop = FALSE]),
               "`gradient` must return")
  # without a gradient and without taping (RTMB: test-tape.R)
  old <- options(clbayes.tape = FALSE)
  expect_error(run(), "slice_sample_mv")
  options(old)
  expect_error(run(gradient = 1), "`gradient` must be a function")
  expect_error(hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, chains = 0), "`chains`")
  expect_error(run(gradient = tg$gr, adapt_delta = 1), "`adapt_delta`")
  expect_error(run(gradient = tg$gr, metric = "full"), "`metric`")
  expect_error(hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, n_iter = 0), "`n_iter`")
  expect_error(run(gradient = tg$gr, max_leapfrog = 0), "`max_leapfrog`")
  expect_error(run(gradient = tg$gr, lower = c(1, 0)), "`init`")
  expect_error(hmc_sample_mv(tg$ld, matrix(0, 3, 2), gradient = tg$gr, chains = 2),
               "`init`")
  # a gradient that goes wrong later is still caught by its shape check
  calls <- 0
  late <- function(x) {
    calls <<- calls + 1
    if (calls > 3) x[, 1] else tg$gr(x)
  }
  expect_error(run(gradient = late), "`gradient` must return")
})

test_that("a NaN or logical gradient is an error naming `gradient`, the point and the variable", {
  tg <- gauss_target(diag(2))
  run <- function(gr) hmc_sample_mv(tg$ld, c(a = 0.5, b = 0.25), gradient = gr,
                                    n_iter = 10, warmup = 10, chains = 2, seed = 1)
  nan_b <- function(x) cbind(-x[, 1], NaN)
  expect_error(run(nan_b), paste("`gradient` returned NaN for variable b at the initial",
                                 "point \\(0.5, 0.25\\), where `log_density` is finite"))
  expect_error(run(function(x) -x / 0 * (x[, 1] > 1)), "`gradient` returned (NaN|-?Inf)")
  expect_error(run(function(x) x > 0),
               "`gradient` must return a numeric matrix .* not a logical matrix \\(2 x 2\\)")
})

test_that("a gradient that turns NaN mid-run ends those trajectories as divergences", {
  # The gradient is NaN beyond x1 = 1.5: every trajectory that reaches
  # there diverges and is rejected, so no draw lies beyond it, and the
  # warning names `gradient` (not `log_density`).
  tg <- gauss_target(diag(2))
  gr <- function(x) {
    g <- tg$gr(x)
    g[x[, 1] > 1.5, ] <- NaN
    g
  }
  w <- character()
  fit <- withCallingHandlers(
    hmc_sample_mv(tg$ld, c(0, 0), gradient = gr, n_iter = 200, warmup = 200, chains = 4,
                  seed = 3),
    warning = function(cnd) {
      w <<- c(w, conditionMessage(cnd))
      invokeRestart("muffleWarning")
    })
  expect_true(any(grepl("^`gradient` was NaN or infinite at [0-9]+ points", w)))
  expect_false(any(grepl("`log_density` returned NaN", w)))
  expect_gt(fit$n_bad_gradient, 0)
  expect_equal(fit$n_nan, 0)
  expect_gt(sum(fit$n_divergent), 0)
  expect_true(all(fit$draws[, , 1] <= 1.5))
  expect_true(is.finite(fit$step_size) && fit$step_size > 0)
  # the chains still move: the other variable is a standard normal
  expect_gt(sd(fit$draws[, , 2]), 0.8)
})

test_that("runs too large for memory are refused before allocation, naming `chains`", {
  tg <- gauss_target(diag(2))
  expect_error(hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, chains = 1e9, n_iter = 1000),
               paste("`chains` is too large: 1000000000 chains over 2000 iterations",
                     "\\(`warmup` \\+ `n_iter`\\) would need [0-9.e+]+ GB"))
  old <- options(clbayes.memory_limit = 1e6)
  on.exit(options(old))
  # 100 chains x 2 variables x 3000 iterations' doubles (warmup, at most as
  # many again for a slow window, kept draws): 4.8 MB, and a little work space
  expect_error(hmc_sample_mv(tg$ld, c(0, 0), gradient = tg$gr, chains = 100, n_iter = 1000),
               "100 chains over 2000 iterations .* need 0.0048[0-9]* GB")
})

test_that("a model brings its own gradient; a function without one points to slice_sample_mv", {
  set.seed(9)
  coords <- matrix(runif(20), 10)
  X <- cbind(1, runif(10))
  m <- gp_model(drop(X %*% c(1, 2)) + rnorm(10), X, coords)
  expect_error(hmc_sample_mv(m, c(1, 1, 0.2), gradient = function(x) x, backend = "cpu"),
               "`gradient` must be NULL for a model")
  old <- options(clbayes.tape = FALSE)
  on.exit(options(old), add = TRUE)
  expect_error(hmc_sample_mv(function(x) -rowSums(x^2), c(0, 0), n_iter = 10, warmup = 10),
               "`gradient` is needed.*RTMB|clbayes.tape.*slice_sample_mv")
})
