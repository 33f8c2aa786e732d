# R log densities taped by RTMB (R/tape.R): values and gradients against
# the R function, closed forms and central finite differences; posteriors
# against closed forms and quadrature; the errors of bad input.

skip_if_not_installed("RTMB")

# Central differences of a function of one vector `f` at `x`.
fd_grad <- function(f, x, h = 1e-5) {
  vapply(seq_along(x), function(j) {
    e <- replace(numeric(length(x)), j, h * max(1, abs(x[j])))
    (f(x + e) - f(x - e)) / (2 * e[j])
  }, numeric(1))
}

# Every variable's mean within 4 MCSE (bulk ESS) of `mean`, R-hat < 1.01.
expect_means <- function(fit, mean, sd) {
  d <- as.array(fit)
  s <- summary(fit)
  for (j in seq_along(mean)) {
    z <- (base::mean(d[, , j]) - mean[j]) / (sd[j] / sqrt(s$ess_bulk[j]))
    expect_lte(abs(z), 4)
  }
  expect_true(all(s$rhat < 1.01))
}

test_that("a taped matrix density: values and gradients of every row in one call", {
  prec <- solve(matrix(c(1, 0.9, 0.9, 1), 2))
  ld <- function(x) -0.5 * rowSums((x %*% prec) * x)
  td <- clbayes:::taped_density(ld, "matrix", c(0.3, -0.2), TRUE)
  x <- matrix(c(0.3, 1, -2, 0.5, -0.2, 0.7, 1.5, -1), 4, 2)
  expect_equal(td$value(x), ld(x), tolerance = 1e-12)
  expect_equal(td$gradient(x), -x %*% prec, tolerance = 1e-12)
  # other batch sizes, padded up to a tape of more points
  expect_equal(td$value(x[1:3, ]), ld(x[1:3, ]), tolerance = 1e-12)
  expect_equal(td$gradient(x[1:3, ]), -x[1:3, ] %*% prec, tolerance = 1e-12)
  # a function of one vector, as in Stan, with a user-written loop and data in `...`
  y <- c(1.2, -0.3, 0.8, 2.1)
  loop <- function(th, y) {
    lp <- -0.5 * th[1]^2 / 100 - th[2]
    for (i in seq_along(y)) lp <- lp + dnorm(y[i], th[1], exp(th[2]), log = TRUE)
    lp
  }
  expect_equal(clbayes:::density_form(loop, c(0, 0), y = y), "vector")
  expect_equal(clbayes:::density_form(ld, c(0, 0)), "matrix")
  tv <- clbayes:::taped_density(loop, "vector", c(0, 0), TRUE, y = y)
  pts <- rbind(c(0.5, 0.1), c(-1, -0.4), c(2, 0.3))
  expect_equal(tv$value(pts), apply(pts, 1, loop, y = y), tolerance = 1e-12)
  # closed form: d/dmu = sum(y - mu) / s^2 - mu / 100; d/dlog s = sum((y - mu)^2) / s^2 - n - 1
  s2 <- exp(2 * pts[, 2])
  closed <- cbind(vapply(pts[, 1], function(m) sum(y - m), 1) / s2 - pts[, 1] / 100,
                  vapply(pts[, 1], function(m) sum((y - m)^2), 1) / s2 - length(y) - 1)
  expect_equal(tv$gradient(pts), closed, tolerance = 1e-10)
})

test_that("a latent Gaussian process with a Cholesky factor inside tapes", {
  x <- seq(0, 5, length.out = 6)
  yc <- c(2, 3, 5, 4, 2, 1)
  d2 <- outer(x, x, "-")^2
  gp <- function(th) {
    K <- exp(2 * th[2]) * exp(-0.5 * d2 / exp(2 * th[1])) + diag(1e-6, 6)
    f <- t(chol(K)) %*% th[3:8]
    sum(dpois(yc, exp(f), log = TRUE)) - 0.5 * sum(th^2)
  }
  td <- clbayes:::taped_density(gp, "vector", rep(0, 8), TRUE)
  set.seed(3)
  pts <- matrix(stats::rnorm(24, 0, 0.5), 3, 8)
  expect_equal(td$value(pts), apply(pts, 1, gp), tolerance = 1e-10)
  g <- td$gradient(pts)
  for (i in 1:3) expect_equal(g[i, ], fd_grad(gp, pts[i, ]), tolerance = 1e-6)
  # the taped Cholesky factor: R's at a positive definite matrix, NaN at
  # one that is not (read as -Inf by the samplers)
  tc <- RTMB::MakeTape(function(a) {
    dim(a) <- c(3L, 3L)
    clbayes:::tape_chol(a)
  }, rep(0, 9))
  A <- crossprod(matrix(c(2, 1, 0, 1, 3, 1, 0, 1, 4), 3))
  expect_equal(matrix(tc(c(A)), 3), chol(A), tolerance = 1e-12)
  expect_true(anyNA(tc(c(diag(c(1, -1, 1))))))
  fit <- suppressWarnings(slice_sample_mv(gp, init = rep(0, 8), n_iter = 50, warmup = 50,
                                          chains = 8, seed = 1))
  expect_true(fit$taped)
  expect_equal(dim(fit$draws), c(50L, 8L, 8L))
})

test_that("eight schools by taped HMC against quadrature over tau", {
  y <- c(28, 8, -3, 7, -1, 1, 18, 12)
  s <- c(15, 10, 16, 11, 9, 11, 10, 18)
  ld <- function(p) {
    n <- nrow(p)
    eta <- p[, 3:10, drop = FALSE]
    theta <- p[, 1] + p[, 2] * eta
    -0.5 * rowSums(((matrix(y, n, 8, byrow = TRUE) - theta) /
                      matrix(s, n, 8, byrow = TRUE))^2) -
      0.5 * rowSums(eta^2) - p[, 1]^2 / 50 - log1p((p[, 2] / 5)^2)
  }
  # Given tau, y ~ N(0, diag(s^2 + tau^2) + 25) and mu | tau, y is normal:
  # the posterior of tau by quadrature, mu's moments averaged over it.
  post_tau <- function(tau) vapply(tau, function(t) {
    S <- diag(s^2 + t^2) + 25
    exp(-0.5 * sum(y * solve(S, y)) - 0.5 * determinant(S)$modulus) / (1 + (t / 5)^2)
  }, 1)
  mu_given <- function(t) {
    prec <- 1 / 25 + sum(1 / (s^2 + t^2))
    c(mean = sum(y / (s^2 + t^2)) / prec, var = 1 / prec)
  }
  z <- integrate(post_tau, 0, Inf)$value
  m_tau <- integrate(function(t) t * post_tau(t), 0, Inf)$value / z
  sd_tau <- sqrt(integrate(function(t) t^2 * post_tau(t), 0, Inf)$value / z - m_tau^2)
  mom <- function(t, i) vapply(t, function(u) {
    m <- mu_given(u)
    if (i == 1) m[["mean"]] else m[["var"]] + m[["mean"]]^2
  }, 1) * post_tau(t)
  m_mu <- integrate(mom, 0, Inf, i = 1)$value / z
  sd_mu <- sqrt(integrate(mom, 0, Inf, i = 2)$value / z - m_mu^2)
  fit <- suppressWarnings(hmc_sample_mv(ld, init = c(0, 1, rep(0, 8)),
                                        lower = c(-Inf, 0, rep(-Inf, 8)), n_iter = 500,
                                        warmup = 500, adapt_delta = 0.9, seed = 2))
  expect_true(fit$taped)
  expect_means(fit, c(m_mu, m_tau), c(sd_mu, sd_tau))
  expect_gte(min(summary(fit)$ess_bulk), 400)
})

test_that("a varying-intercept model by taped HMC against its closed form", {
  # sigma_y = 1 and sigma_a = 0.5 known: (a, mu) | y is Gaussian.
  set.seed(5)
  J <- 6
  g <- rep(1:J, times = c(2, 3, 5, 8, 4, 3))
  y <- stats::rnorm(length(g), stats::rnorm(J, 1, 0.5)[g])
  ld <- function(p) {
    n <- nrow(p)
    a <- p[, 1:J, drop = FALSE]
    mu <- p[, J + 1]
    -0.5 * rowSums((matrix(y, n, length(y), byrow = TRUE) - a[, g, drop = FALSE])^2) -
      0.5 * rowSums(((a - mu) / 0.5)^2) - mu^2 / 200
  }
  prec <- matrix(0, J + 1, J + 1)
  diag(prec)[1:J] <- tabulate(g, J) + 4
  prec[1:J, J + 1] <- prec[J + 1, 1:J] <- -4
  prec[J + 1, J + 1] <- 4 * J + 1 / 100
  b <- c(vapply(1:J, function(j) sum(y[g == j]), 1), 0)
  cov <- solve(prec)
  fit <- hmc_sample_mv(ld, init = rep(0, J + 1), n_iter = 400, warmup = 400, seed = 3)
  expect_true(fit$taped)
  expect_means(fit, drop(cov %*% b), sqrt(diag(cov)))
})

test_that("functions that do not tape: one message for slice, an error for HMC", {
  branch <- function(x) ifelse(x[, 1] > 0, -x[, 1]^2, -2 * x[, 1]^2) - x[, 2]^2
  expect_error(hmc_sample_mv(branch, init = c(0.5, 0), n_iter = 10, warmup = 10, seed = 1),
               "comparison of a parameter.*`gradient`")
  # (slice: a function of one vector; a matrix function under 1 ms a call
  # is kept as it is, untaped)
  branch1 <- function(th) if (th[1] > 0) -th[1]^2 - th[2]^2 else -2 * th[1]^2 - th[2]^2
  expect_message(fit <- suppressWarnings(slice_sample_mv(branch1, init = c(0.5, 0),
                                                         n_iter = 20, warmup = 20,
                                                         chains = 4, seed = 1)),
                 "could not be taped.*runs as R code.*comparison")
  expect_false(fit$taped)
  ns <- function(x) rowSums(stats::dnorm(x, log = TRUE))
  expect_error(hmc_sample_mv(ns, init = c(0, 0), n_iter = 10, warmup = 10, seed = 1),
               "stats::dnorm")
  # a tape that differs from the R function is never used
  differs <- function(x) -0.5 * rowSums(x^2) + if (inherits(x, "advector")) 1 else 0
  expect_error(hmc_sample_mv(differs, init = c(0, 0), n_iter = 10, warmup = 10, seed = 1),
               "its tape gives -?[0-9.]+ at initial point 1 where the R function gives")
  with_option <- function(code) {
    old <- options(clbayes.tape = FALSE)
    on.exit(options(old))
    code
  }
  expect_error(with_option(hmc_sample_mv(function(x) -rowSums(x^2), init = c(0, 0),
                                         n_iter = 10, warmup = 10, seed = 1)),
               "clbayes.tape")
})

test_that("bad input: values, init, failing tapes", {
  h <- function(ld, init, ...) hmc_sample_mv(ld, init = init, n_iter = 10, warmup = 10,
                                              seed = 1, ...)
  expect_error(h(function(x) -sum(x^2) + c(0, 0, 0), c(0, 0)), "log_density")
  expect_error(h(function(x) rep("a", nrow(x)), c(0, 0)), "`log_density` must return")
  expect_error(h(function(th) -0.5 * sum(th[1:3]^2), c(0, 0)), "`init`")
  expect_error(h(function(x) -0.5 * rowSums(x[, 1:3]^2), c(0, 0)), "`init` has 2 values")
  expect_error(h(function(x) rep(NA_real_, nrow(x)), c(0, 0)), "`init`")
  # a tape that fails at some points (RTMB's Cholesky factor, used above
  # 64 x 64, of a matrix that is not positive definite there): NaN, with a
  # warning naming the point
  chol_ld <- function(th) {
    K <- diag(65) + th[1] * (row(diag(65)) + col(diag(65)) == 3)
    -sum(log(diag(chol(K)))) - 0.5 * th[1]^2
  }
  td <- clbayes:::taped_density(chol_ld, "vector", 0, TRUE)
  expect_warning(v <- td$value(matrix(c(0.5, 1.5, -0.2), 3)), "tape failed.*1\\.5")
  expect_equal(v[c(1, 3)], c(chol_ld(0.5), chol_ld(-0.2)), tolerance = 1e-12)
  expect_true(is.nan(v[2]))
  expect_equal(td$gradient(matrix(c(0.5, 1.5, -0.2), 3))[2, ], 0)
})

test_that("a taped density copied to another process tapes again there", {
  ld <- function(x) -0.5 * rowSums(x^2)
  td <- clbayes:::taped_density(ld, "matrix", c(0, 0), TRUE)
  x <- matrix(c(1, 2, 3, 4), 2)
  expect_equal(td$gradient(x), -x)
  copy <- unserialize(serialize(td, NULL))
  expect_equal(copy$value(x), ld(x))
  expect_equal(copy$gradient(x), -x)
  skip_on_cran()
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  fit <- hmc_sample_mv(ld, init = c(0, 0), n_iter = 100, warmup = 100, chains = 4,
                       chain_groups = 2, seed = 1)
  expect_true(fit$taped)
  expect_equal(dim(fit$draws), c(100L, 4L, 2L))
})
