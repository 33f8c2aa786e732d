# Prior constructors and their checks, the priors' log densities in the C++
# core against R's d* functions, and posteriors under each prior against
# numerical integration.

test_that("prior constructors keep their numbers and print them", {
  p <- normal(1, c(2, 3))
  expect_s3_class(p, "clbayes_prior")
  expect_identical(p$location, 1)
  expect_identical(p$scale, c(2, 3))
  expect_null(normal()$scale)
  expect_identical(cauchy(0, 5)$df, 1)
  expect_output(print(normal(0, 2.5)), "normal\\(location = 0, scale = 2.5\\)")
  expect_output(print(student_t(3, 0, c(1, 2))),
                "student_t\\(df = 3, location = 0, scale = c\\(1, 2\\)\\)")
  expect_output(print(cauchy()), "cauchy\\(location = 0, scale = NULL\\)")
  expect_output(print(exponential(2)), "exponential\\(rate = 2\\)")
})

test_that("prior constructors check their arguments", {
  expect_error(normal(NA), "`location` must be finite")
  expect_error(normal(0, -1), "`scale` must be positive")
  expect_error(normal(0, Inf), "`scale` must be positive, finite")
  expect_error(student_t(0, 0, 1), "`df` must be positive")
  expect_error(cauchy(0, "a"), "`scale` must be positive")
  expect_error(exponential(-1), "`rate` must be positive")
  expect_error(exponential(c(1, 2)), "`rate` must be a single number")
})

test_that("the core's priors are R's densities, per coefficient, and flat for NULL", {
  set.seed(1)
  d <- data.frame(x1 = rnorm(20), x2 = rnorm(20))
  d$y <- rnorm(20)
  pts <- cbind(rnorm(4), rnorm(4), rnorm(4), runif(4, 0.5, 2))
  lik <- apply(pts, 1, function(th) sum(dnorm(d$y, th[1] + th[2] * d$x1 + th[3] * d$x2,
                                              th[4], log = TRUE)))
  cases <- list(
    list(args = list(prior = normal(c(0, 1), c(1, 3)), prior_intercept = student_t(5, 1, 2),
                     prior_aux = exponential(3)),
         lp = function(th) dnorm(th[2], 0, 1, log = TRUE) + dnorm(th[3], 1, 3, log = TRUE) +
           dt((th[1] - 1) / 2, 5, log = TRUE) - log(2) + dexp(th[4], 3, log = TRUE)),
    list(args = list(prior = cauchy(0.5, c(2, 1)), prior_intercept = NULL,
                     prior_aux = student_t(3, 0, 2)),
         lp = function(th) dcauchy(th[2], 0.5, 2, log = TRUE) +
           dcauchy(th[3], 0.5, 1, log = TRUE) + dt(th[4] / 2, 3, log = TRUE)),
    list(args = list(prior = NULL, prior_intercept = normal(0, 10), prior_aux = cauchy(0, 1)),
         lp = function(th) dnorm(th[1], 0, 10, log = TRUE) + dcauchy(th[4], 0, 1, log = TRUE)))
  for (cs in cases) {
    m <- do.call(glm_model, c(list(y ~ x1 + x2, d), cs$args))
    ours <- model_log_density(m, pts, backend = "cpu")
    ref <- lik + apply(pts, 1, cs$lp)
    expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
    g <- clbayes:::.cpp_model_gradient(m, pts)$gradient
    expect_equal(g, finite_diff_gradient(m, pts), tolerance = 1e-6)
  }
})

# The posterior of log(lambda) = alpha in an intercept-only Poisson model
# by integrate(): mean and sd.
poisson_intercept_moments <- function(y, log_prior) {
  lp <- function(a) sum(y) * a - length(y) * exp(a) + log_prior(a)
  grid <- seq(-10, 10, length.out = 2001)
  mode <- grid[which.max(vapply(grid, lp, numeric(1)))]
  dens <- function(a) exp(vapply(a, lp, numeric(1)) - lp(mode))
  z <- stats::integrate(dens, mode - 8, mode + 8, subdivisions = 500L)$value
  m1 <- stats::integrate(function(a) a * dens(a), mode - 8, mode + 8, subdivisions = 500L)$value / z
  m2 <- stats::integrate(function(a) a^2 * dens(a), mode - 8, mode + 8,
                         subdivisions = 500L)$value / z
  c(mean = m1, sd = sqrt(m2 - m1^2))
}

test_that("intercept-only Poisson posteriors match numerical integration under each prior", {
  set.seed(2)
  d <- data.frame(y = rpois(5, 3))
  cases <- list(
    list(prior = normal(0, 1), log_prior = function(a) dnorm(a, 0, 1, log = TRUE)),
    list(prior = student_t(3, 0, 0.5), log_prior = function(a) dt(a / 0.5, 3, log = TRUE)),
    list(prior = cauchy(-1, 0.3), log_prior = function(a) dcauchy(a, -1, 0.3, log = TRUE)))
  for (i in seq_along(cases)) {
    cs <- cases[[i]]
    ref <- poisson_intercept_moments(d$y, cs$log_prior)
    m <- glm_model(y ~ 1, d, family = poisson(), prior_intercept = cs$prior)
    expect_identical(m$names, "(Intercept)")
    fit <- sample_model(m, n_iter = 1500, chains = 4, seed = 10 + i)
    s <- summary(fit)
    mcse <- s$sd / sqrt(s$ess_bulk)
    expect_lt(abs(s$mean - ref[["mean"]]), 4 * mcse, label = paste("mean, case", i))
    expect_lt(abs(s$sd / ref[["sd"]] - 1), 0.1, label = paste("sd, case", i))
  }
})

test_that("a half-Cauchy prior_aux gives the posterior of sigma by integration", {
  set.seed(3)
  y <- rnorm(6, 0, 2)
  d <- data.frame(y = y)
  m <- glm_model(y ~ 0, d, prior_aux = cauchy(0, 1))
  expect_identical(m$names, "sigma")
  lp <- function(s) vapply(s, function(si) sum(dnorm(y, 0, si, log = TRUE)), 0) +
    dcauchy(s, 0, 1, log = TRUE)
  top <- max(lp(seq(0.05, 20, length.out = 2000)))
  dens <- function(s) exp(lp(s) - top)
  z <- integrate(dens, 0, Inf)$value
  m1 <- integrate(function(s) s * dens(s), 0, Inf)$value / z
  m2 <- integrate(function(s) s^2 * dens(s), 0, Inf)$value / z
  fit <- sample_model(m, n_iter = 1500, chains = 4, seed = 7)
  s <- summary(fit)
  expect_lt(abs(s$mean - m1), 4 * s$sd / sqrt(s$ess_bulk))
  expect_lt(abs(s$sd / sqrt(m2 - m1^2) - 1), 0.1)
})
