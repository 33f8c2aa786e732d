# The slice samplers against targets with known moments. Monte Carlo
# standard errors (MCSE) come from the bulk ESS, so tolerances follow the
# run length; 4 MCSE bounds are used throughout (a chance failure rate of
# about 1e-4 per check).

# The settings these tests were written for (4 chains from one point, warmup
# half the draws, the box by default, no extension), so that each test keeps
# its run length; test-posteriors.R checks the defaults.
slice4 <- function(log_density, init, n_iter, method = "hyperrect", chains = 4,
                   warmup = n_iter %/% 2,
                   n_proposals = if (method == "univariate") 1 else 32, ...) {
  slice_sample_mv(log_density, init, n_iter = n_iter, method = method,
                  chains = chains, warmup = warmup, n_proposals = n_proposals,
                  init_radius = 0, warmup_extend = 0, ...)
}

# Short runs that test something else than convergence warn that their
# chains have not mixed; those warnings are expected here.
quiet <- function(fit) suppressWarnings(fit)
# Only the warning about the kept draws' R-hat muffled.
quiet_rhat <- function(fit) {
  withCallingHandlers(fit, warning = function(w) {
    if (grepl("The largest R-hat", conditionMessage(w))) invokeRestart("muffleWarning")
  })
}

bvn_density <- function(rho) {
  prec <- solve(matrix(c(1, rho, rho, 1), 2))
  function(x) -0.5 * rowSums((x %*% prec) * x)
}

# Mean and variance of every variable within 4 MCSE of the truth.
expect_moments <- function(fit, mean, var) {
  d <- as.array(fit)
  for (j in seq_len(dim(d)[3L])) {
    x <- matrix(d[, , j], dim(d)[1L])
    ess <- clbayes:::.ess_bulk(x)
    m_se <- sqrt(var[j] / ess)
    expect_lt(abs(mean(x) - mean[j]), 4 * m_se)
    # Var of (x - mu)^2 is 2 var^2 for a normal; the other targets here
    # have lighter tails, so this bound is conservative for them.
    v_se <- sqrt(2 * var[j]^2 / ess)
    expect_lt(abs(mean((x - mean[j])^2) - var[j]), 4 * v_se)
  }
}

test_that("hyperrect samples a bivariate normal with correlation -0.99", {
  fit <- slice4(bvn_density(-0.99), init = c(a = 0, b = 0),
                         n_iter = 3000, width = 1, seed = 11)
  expect_s3_class(fit, "clbayes_fit")
  expect_moments(fit, c(0, 0), c(1, 1))
  d <- as.array(fit)
  expect_lt(abs(cor(c(d[, , 1]), c(d[, , 2])) + 0.99), 0.005)
  s <- summary(fit)
  expect_true(all(s$rhat < 1.05))
  expect_true(all(fit$widths > 1))  # adapted towards the slice extent
})

test_that("univariate slice sampling of the same target is valid but slow", {
  fit <- slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 15000,
                         width = 0.2, method = "univariate", seed = 12,
                         metric = "diagonal")
  expect_moments(fit, c(0, 0), c(1, 1))
  hyper <- slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 15000,
                           width = 1, seed = 12, metric = "diagonal")
  # On the variables themselves the multivariate update mixes far better.
  expect_gt(min(summary(hyper)$ess_bulk), 5 * max(summary(fit)$ess_bulk))
})

test_that("the dense metric learns the covariance and decorrelates the target", {
  sigma <- matrix(c(1, -0.99, -0.99, 1), 2)
  for (method in c("univariate", "hyperrect")) {
    fit <- slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 2000,
                           width = 0.2, method = method, seed = 13)
    expect_equal(fit$metric, "dense")
    expect_moments(fit, c(0, 0), c(1, 1))
    # scale %*% t(scale) estimates the target's covariance from warmup draws
    expect_equal(fit$scale %*% t(fit$scale), sigma, tolerance = 0.25,
                 ignore_attr = TRUE)
    expect_equal(fit$scale[1, 2], 0)  # lower triangular
    diag_fit <- quiet(slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 2000,
                                width = 0.2, method = method, seed = 13,
                                metric = "diagonal"))
    expect_equal(unname(diag_fit$scale), c(1, 1))  # a diagonal metric: S's diagonal
    expect_gt(min(summary(fit)$ess_bulk), 2 * max(summary(diag_fit)$ess_bulk))
  }
  # Univariate updates on decorrelated coordinates: near-independent draws.
  fit <- slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 2000,
                         width = 0.2, method = "univariate", seed = 14)
  expect_gt(min(summary(fit)$ess_bulk), 0.5 * 2000 * 4)
  # Without adaptation there is no metric either.
  fixed <- quiet(slice4(bvn_density(-0.99), init = c(0, 0), n_iter = 50,
                           width = 0.2, stepout = "never", seed = 14))
  expect_equal(unname(fixed$scale), c(1, 1))
  expect_equal(unname(fixed$center), c(0, 0))
})

test_that("bounded variables: log and logit scales with their Jacobians", {
  # Gamma(shape 3, rate 2) on (0, Inf), beta(2, 5) on (0, 1), and a normal
  # truncated to (1, Inf) (mean and variance in closed form) together.
  ld <- function(x) {
    dgamma(x[, 1], 3, 2, log = TRUE) + dbeta(x[, 2], 2, 5, log = TRUE) +
      dnorm(x[, 3], log = TRUE)
  }
  a <- 1
  tn_mean <- dnorm(a) / pnorm(a, lower.tail = FALSE)
  tn_var <- 1 + a * tn_mean - tn_mean^2
  mean <- c(3 / 2, 2 / 7, tn_mean)
  var <- c(3 / 4, 10 / (49 * 8), tn_var)
  for (method in c("univariate", "hyperrect")) {
    fit <- slice4(ld, init = c(1, 0.5, 2), n_iter = 3000, width = 1,
                           method = method, seed = 51, lower = c(0, 0, a),
                           upper = c(Inf, 1, Inf))
    d <- as.array(fit)
    expect_true(all(d[, , 1] > 0) && all(d[, , 2] > 0 & d[, , 2] < 1) &&
                  all(d[, , 3] > a))
    expect_moments(fit, mean, var)
    expect_equal(unname(fit$lower), c(0, 0, a))
    expect_equal(fit$n_nan, 0)
  }
  # The truncated normal is also right without bounds (-Inf outside).
  ld2 <- function(x) ifelse(x[, 1] > a, dnorm(x[, 1], log = TRUE), -Inf)
  fit <- slice4(ld2, init = 2, n_iter = 3000, width = 1, seed = 52)
  expect_moments(fit, tn_mean, tn_var)
})

test_that("bounds are checked", {
  ld <- function(x) rep(0, nrow(x))
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1, lower = 1),
               "`init` must lie strictly inside")
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1,
                               lower = c(0, 0), upper = c(2, 0)), "`upper`")
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1,
                               lower = c(0, 0, 0)), "`lower`")
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1,
                               lower = Inf), "`lower`")
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1,
                               upper = "a"), "`upper`")
  expect_error(slice4(ld, init = c(1, 1), n_iter = 5, width = 1,
                               metric = "full"), "`metric`")
})

example1 <- function(n = 100, seed = 5) {
  set.seed(seed)
  x <- rnorm(n, mean = 5, sd = sqrt(0.5))
  X <- cbind(alpha = 1, beta = x)
  list(X = X, y = drop(X %*% c(1, 2)) + rnorm(n))
}

test_that("Example 1: the linear regression posterior N((X'X)^-1 X'y, (X'X)^-1)", {
  e <- example1()
  m <- lm_model(e$y, e$X)
  ref <- lm.fit(e$X, e$y)$coefficients         # independent reference
  ref_cov <- chol2inv(qr.R(qr(e$X)))
  expect_equal(unname(m$mean), unname(ref), tolerance = 1e-10)
  expect_lt(cov2cor(ref_cov)[1, 2], -0.98)
  for (method in c("hyperrect", "univariate")) {
    n_iter <- if (method == "hyperrect") 2000 else 10000
    fit <- slice4(m, init = ref, n_iter = n_iter, width = 0.2,
                           method = method, seed = 21, backend = "cpu")
    expect_equal(dimnames(fit$draws)[[3]], c("alpha", "beta"))
    d <- as.array(fit)
    draws <- cbind(c(d[, , 1]), c(d[, , 2]))
    ess <- summary(fit)$ess_bulk
    se <- sqrt(diag(ref_cov) / ess)
    expect_true(all(abs(colMeans(draws) - ref) < 4 * se))
    expect_equal(cov(draws), ref_cov, tolerance = 0.2, ignore_attr = TRUE)
  }
  # The same posterior through an R function of the points.
  ld <- function(b) -0.5 * colSums((e$y - e$X %*% t(b))^2)
  fit <- slice4(ld, init = ref, n_iter = 2000, width = 0.2, seed = 22)
  d <- as.array(fit)
  expect_true(all(abs(apply(d, 3, mean) - ref) <
                    4 * sqrt(diag(ref_cov) / summary(fit)$ess_bulk)))
})

test_that("a uniform target on a box, with NaN outside read as -Inf", {
  lo <- c(0, 2)
  hi <- c(1, 5)
  ld <- function(x) {
    inside <- x[, 1] > lo[1] & x[, 1] < hi[1] & x[, 2] > lo[2] & x[, 2] < hi[2]
    ifelse(inside, 0, NaN)
  }
  for (method in c("hyperrect", "univariate")) {
    expect_warning(
      fit <- slice4(ld, init = c(0.5, 3), n_iter = 2000, width = 1,
                             method = method, seed = 31),
      "returned NaN at [0-9]+ points")
    expect_gt(fit$n_nan, 0)
    d <- as.array(fit)
    expect_true(all(d[, , 1] > 0 & d[, , 1] < 1 & d[, , 2] > 2 & d[, , 2] < 5))
    expect_moments(fit, (lo + hi) / 2, (hi - lo)^2 / 12)
  }
})

test_that("a bimodal mixture is crossed with wide widths", {
  # Modes at (-4, 0) and (4, 0), separated by a valley of density e^-8
  # of the peak along the first axis (the univariate sampler can cross it).
  ld <- function(x) {
    a <- -0.5 * ((x[, 1] - 4)^2 + x[, 2]^2)
    b <- -0.5 * ((x[, 1] + 4)^2 + x[, 2]^2)
    pmax(a, b) + log1p(exp(-abs(a - b)))
  }
  for (method in c("hyperrect", "univariate")) {
    fit <- slice4(ld, init = c(4, 0), n_iter = 3000, width = 20,
                           method = method, stepout = "never", seed = 41)
    d <- as.array(fit)
    in_upper <- d[, , 1] > 0
    expect_true(all(colMeans(in_upper) > 0.2 & colMeans(in_upper) < 0.8))
    expect_moments(fit, c(0, 0), c(17, 1))
  }
})

test_that("a seed reproduces the draws and leaves R's RNG untouched", {
  ld <- bvn_density(0.5)
  set.seed(99)
  before <- .Random.seed
  a <- quiet(slice4(ld, init = c(0, 0), n_iter = 50, width = 1, seed = 7))
  expect_identical(.Random.seed, before)
  b <- quiet(slice4(ld, init = c(0, 0), n_iter = 50, width = 1, seed = 7))
  expect_identical(a$draws, b$draws)
  expect_identical(a$warmup_draws, b$warmup_draws)
  c <- quiet(slice4(ld, init = c(0, 0), n_iter = 50, width = 1, seed = 8))
  expect_false(identical(a$draws, c$draws))
  u1 <- quiet(slice4(ld, init = c(0, 0), n_iter = 20, width = 1,
                        method = "univariate", seed = 7))
  u2 <- quiet(slice4(ld, init = c(0, 0), n_iter = 20, width = 1,
                        method = "univariate", seed = 7))
  expect_identical(u1$draws, u2$draws)
  # Without a seed the run follows set.seed().
  set.seed(3)
  d1 <- quiet(slice4(ld, init = c(0, 0), n_iter = 20, width = 1))
  set.seed(3)
  d2 <- quiet(slice4(ld, init = c(0, 0), n_iter = 20, width = 1))
  expect_identical(d1$draws, d2$draws)
})

test_that("stepout = 'always' (the paper's literal sampler) is biased", {
  ld <- bvn_density(-0.99)
  expect_warning(
    fit <- slice4(ld, init = c(0, 0), n_iter = 3000, width = 0.1,
                           stepout = "always", seed = 51),
    "only approximately")
  d <- as.array(fit)
  v <- mean(d^2)
  se <- sqrt(2 / min(summary(fit)$ess_bulk))
  # The variance is 1; the literal sampler's is many MCSE smaller.
  expect_lt(v, 1 - 6 * se)
})

test_that("max_steps bounds stepping out", {
  ld <- function(x) ifelse(abs(x[, 1]) < 1000, 0, -Inf)
  fit <- quiet(slice4(ld, init = 0, n_iter = 200, width = 0.01,
                         method = "univariate", stepout = "never",
                         max_steps = 3, seed = 61))
  jumps <- abs(diff(fit$draws[, 1, 1]))
  expect_true(all(jumps <= 3 * 0.01 + 1e-12))
  expect_gt(max(jumps), 0)
  suppressWarnings(
    fit <- slice4(ld, init = 0, n_iter = 200, width = 0.01,
                           stepout = "always", max_steps = 2, seed = 62))
  jumps <- abs(diff(fit$draws[, 1, 1]))
  expect_true(all(jumps <= (2 * 2 + 1) * 0.01 + 1e-12))
})

test_that("errors in log_density and bad arguments stop with clear messages", {
  ld <- bvn_density(0)
  expect_error(slice4(function(x) stop("boom"), init = c(0, 0),
                               n_iter = 5, width = 1, seed = 1), "boom")
  late <- function(x) if (nrow(x) > 4) stop("late failure") else rep(0, nrow(x))
  expect_error(slice4(late, init = c(0, 0), n_iter = 5, width = 1,
                               seed = 1), "late failure")
  expect_error(slice4(function(x) 0, init = c(0, 0), n_iter = 5,
                               width = 1, seed = 1, chains = 2),
               "`log_density` must return a numeric vector with one value per row")
  expect_error(slice4(function(x) ifelse(x[, 1] > 1, 0, -Inf),
                               init = c(0, 0), n_iter = 5, width = 1, seed = 1),
               "`init` must have a finite log density")
  expect_error(slice4("f", init = 0, n_iter = 5, width = 1),
               "`log_density` must be a function")
  expect_error(slice4(ld, init = c(0, NA), n_iter = 5, width = 1), "`init`")
  expect_error(slice4(ld, init = matrix(0, 3, 2), n_iter = 5, width = 1),
               "`init` must have one row per chain")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 0, width = 1), "`n_iter`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = -1), "`width`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = c(1, 1, 1)),
               "`width`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               chains = 0), "`chains`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               warmup = -1), "`warmup`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               n_proposals = 0), "`n_proposals`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               max_steps = 0), "`max_steps`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               seed = -1), "`seed`")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               method = "gibbs"), "`method` must be one of")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               stepout = "sometimes"), "`stepout` must be one of")
  expect_error(slice4(ld, init = c(0, 0), n_iter = 5, width = 1,
                               backend = "gpu"), "`backend`")
  expect_error(suppressWarnings(
    slice4(function(x) rep(0, nrow(x)), init = numeric(13),
                    n_iter = 5, width = 1, stepout = "always")), "`stepout`")
})

test_that("lm_model checks its data", {
  e <- example1(20)
  expect_error(lm_model(e$y[-1], e$X), "`X` must have one row per element")
  expect_error(lm_model(c(NA, e$y[-1]), e$X), "`y` must be")
  expect_error(lm_model(e$y, cbind(e$X, e$X[, 2] * 2)), "`X` must have full column rank")
  expect_error(lm_model(e$y, e$X[, 2]), "`X` must be a finite numeric matrix")
  m <- lm_model(e$y, e$X)
  expect_error(slice4(m, init = c(0, 0, 0), n_iter = 5, width = 1),
               "`init` must have 2 columns")
  if (gpu_available()) {
    expect_error(slice4(m, init = m$mean, n_iter = 5, width = 1,
                                 backend = "opencl"), "no device path")
  }
  expect_output(print(m), "2 observations|20 observations")
})

test_that("univariate batches (n_proposals > 1) sample the same target with fewer calls", {
  sigma <- matrix(c(1, 0.6, 0.6, 2), 2)
  prec <- solve(sigma)
  ld <- function(x) -0.5 * rowSums((x %*% prec) * x)
  one <- slice4(ld, init = c(0, 0), n_iter = 3000, width = 0.5,
                         method = "univariate", seed = 61)
  expect_equal(one$n_proposals, 1)  # the default for "univariate"
  four <- slice4(ld, init = c(0, 0), n_iter = 3000, width = 0.5,
                          method = "univariate", n_proposals = 4, seed = 61)
  expect_moments(four, c(0, 0), diag(sigma))
  d <- as.array(four)
  r <- cor(c(d[, , 1]), c(d[, , 2]))
  expect_lt(abs(r - cov2cor(sigma)[1, 2]), 4 * (1 - 0.6^2) / sqrt(min(summary(four)$ess_bulk)))
  expect_lt(four$n_calls, 0.7 * one$n_calls)
  expect_gt(four$n_evals, one$n_evals)
})

# "interrupted" when `expr` was stopped by Ctrl-C: R's own interrupt
# condition, or the error the C++ loop raises when it sees the interrupt.
stopped_by_interrupt <- function(expr) {
  tryCatch({ expr; "finished" },
           interrupt = function(e) "interrupted",
           error = function(e) {
             if (grepl("interrupted by the user", conditionMessage(e))) "interrupted"
             else conditionMessage(e)
           })
}

test_that("Ctrl-C (SIGINT) stops a run cleanly", {
  skip_on_os("windows")
  # An R density: the signal arrives during the fifth call.
  calls <- 0
  ld <- function(x) {
    calls <<- calls + 1
    if (calls == 5) tools::pskill(Sys.getpid(), tools::SIGINT)
    -0.5 * rowSums(x^2)
  }
  res <- stopped_by_interrupt(slice4(ld, c(0, 0), n_iter = 1000,
                                              width = 1, seed = 1))
  expect_identical(res, "interrupted")
  expect_lt(calls, 10)
  # R is still usable.
  fit <- quiet(slice4(function(x) -0.5 * rowSums(x^2), c(0, 0), n_iter = 10,
                         width = 1, seed = 3))
  expect_s3_class(fit, "clbayes_fit")
})

test_that("a single init is dispersed over the chains on the unconstrained scale", {
  ld <- function(x) -0.5 * rowSums(x^2)
  fit <- quiet(slice_sample_mv(ld, init = c(0, 0), n_iter = 50, warmup = 50,
                               chains = 8, seed = 4))
  first <- fit$warmup_draws[1L, , ]
  expect_equal(nrow(unique(first)), 8L)
  expect_equal(fit$init_radius, 2)
  # bounded: the offsets act on log(x), so every chain stays inside
  fit <- quiet(slice_sample_mv(function(x) dexp(x[, 1], log = TRUE), init = 1,
                               lower = 0, n_iter = 20, warmup = 20, chains = 8,
                               seed = 4))
  expect_true(all(fit$warmup_draws > 0))
  # one row per chain is used as given
  init <- cbind(a = 1:4, b = 0)
  fit <- quiet(slice_sample_mv(ld, init = init, n_iter = 10, warmup = 0, seed = 4))
  expect_equal(fit$chains, 4L)
  expect_equal(fit$init_radius, 0)
  # starts where the density is not finite are retried
  half <- function(x) ifelse(x[, 1] > 0, -0.5 * rowSums(x^2), -Inf)
  fit <- quiet(slice_sample_mv(half, init = c(0.5, 0), n_iter = 20, warmup = 20,
                               chains = 16, seed = 4))
  expect_true(all(fit$warmup_draws[, , 1] > 0))
})

test_that("warmup reports split R-hat, extends while chains disagree, and warns", {
  ld <- function(x) -0.5 * rowSums(x^2)
  # R-hat of the ranks of the second half of warmup, as R computes the
  # classic split R-hat
  fit <- quiet(slice_sample_mv(ld, init = c(0, 0), n_iter = 50, warmup = 60,
                               chains = 8, seed = 5))
  w <- fit$warmup_draws
  h <- dim(w)[1L] %/% 2L
  ref <- max(vapply(1:2, function(j) {
    x <- w[(h + 1L):dim(w)[1L], , j]
    clbayes:::.rhat_columns(clbayes:::.split_chains(array(rank(x), dim(x))))
  }, 0))
  expect_equal(fit$warmup_rhat, ref, tolerance = 1e-10)
  # Chains started 1e4 sds away cannot agree after 10 iterations: warmup is
  # extended (by blocks, within the bound) until they do.
  far <- matrix(c(-1e4, 1e4), 8, 2)
  fit <- slice_sample_mv(ld, init = far, n_iter = 200, warmup = 10,
                         warmup_extend = 1000, seed = 6)
  expect_gt(fit$warmup, 10)
  expect_lte(fit$warmup, 1010)
  expect_equal(dim(fit$warmup_draws)[1L], fit$warmup)
  expect_lt(fit$warmup_rhat, 1.05)
  expect_lt(max(summary(fit)$rhat), 1.05)
  # without extension: a warning that names the problem
  expect_warning(quiet_rhat(slice_sample_mv(ld, init = far, n_iter = 50, warmup = 10,
                                            warmup_extend = 0, seed = 6)),
                 "chains disagree at the end of warmup")
})

test_that("NaN densities are counted and an all-NaN density is an error", {
  ld <- function(x) ifelse(x[, 1] > 2, NaN, -0.5 * rowSums(x^2))
  expect_warning(fit <- slice_sample_mv(ld, init = c(0, 0), n_iter = 100,
                                        warmup = 50, chains = 4, seed = 7),
                 "NaN at [0-9]+ points")
  expect_gt(fit$n_nan, 0)
  expect_output(print(fit), "NaN read as -Inf")
  calls <- 0
  goes_nan <- function(x) {
    calls <<- calls + 1
    if (calls > 3) rep(NA_real_, nrow(x)) else -0.5 * rowSums(x^2)
  }
  expect_error(slice_sample_mv(goes_nan, init = c(0, 0), n_iter = 10, warmup = 10,
                               chains = 2, init_radius = 0, seed = 7),
               "`log_density` returned NaN at every one of the [0-9]+ points of iteration")
})

test_that("unknown arguments with a model, and runs too large for memory, are errors", {
  m <- lm_model(c(1, 2, 3.5), cbind(1, c(0, 1, 2)))
  expect_error(slice_sample_mv(m, init = c(0, 0), n_iter = 5, iters = 4),
               "`iters`: not an argument of the sampler")
  # rstan's iter and clbayes's n_iter are two ways to say one thing
  expect_error(slice_sample_mv(m, init = c(0, 0), n_iter = 5, iter = 4),
               "give `iter` .* or `n_iter` .*, not both")
  ld <- function(x) -0.5 * rowSums(x^2)
  expect_error(slice_sample_mv(ld, init = c(0, 0), chains = 1e9),
               paste("`chains` is too large: 1000000000 chains over [0-9]+ iterations",
                     "\\(`warmup` \\+ `warmup_extend` \\+ `n_iter`\\) would need [0-9.e+]+ GB"))
  expect_error(slice_sample_mv(ld, init = c(0, 0), n_proposals = 1e9),
               "`n_proposals` is too large")
  old <- options(clbayes.memory_limit = 1e6)
  on.exit(options(old))
  # 100 chains x 2 variables x (1600 iterations' draws + 600 of warmup's,
  # at most, copied for a metric) doubles: 3.52 MB, and a batch of 16
  # proposals of 100 chains (38 KB)
  expect_error(slice_sample_mv(ld, init = c(0, 0), chains = 100, n_iter = 1000),
               "`chains` is too large: 100 chains over 1600 iterations .* need 0.00356 GB")
})

test_that("the core refuses a run larger than its memory limit", {
  ld <- function(x) -0.5 * rowSums(x^2)
  # the R check passes (limit Inf); the core's guard, given the same limit
  # by R, is reached through .cpp_slice_new directly
  expect_error(clbayes:::.cpp_slice_new(matrix(0, 2, 2), c(1, 1), c(-Inf, -Inf),
                                        c(Inf, Inf), "univariate", "warmup", "dense",
                                        1L, 10L, 10L, 100L, 1, 0, FALSE, 0L, 1.05, 100,
                                        0L),
               "`chains` needs")
})

test_that("hyperrect above 12 dimensions adapts its widths in warmup", {
  ld <- function(x) -0.5 * rowSums(x^2)
  fit <- quiet(slice_sample_mv(ld, init = numeric(13), width = 0.01,
                               method = "hyperrect", n_proposals = 8, chains = 8,
                               warmup = 100, warmup_extend = 0, n_iter = 10,
                               seed = 9))
  # univariate step-outs in warmup measure the unit-scale slice along
  # every axis: widths grow from 0.01 to the order of its extent
  expect_true(all(fit$widths > 1 & fit$widths < 20))
})
