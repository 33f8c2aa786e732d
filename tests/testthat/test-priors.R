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
  # the first parameter is the intercept of the centred predictors (rstanarm's)
  xc1 <- d$x1 - mean(d$x1)
  xc2 <- d$x2 - mean(d$x2)
  lik <- apply(pts, 1, function(th) sum(dnorm(d$y, th[1] + th[2] * xc1 + th[3] * xc2,
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

# ---- laplace(), hs(), autoscale and rstanarm's objects ----------------------

test_that("laplace(), hs() and autoscale keep rstanarm's fields and print them", {
  p <- laplace(1, 2)
  expect_identical(unclass(p)[c("dist", "location", "scale", "autoscale")],
                   list(dist = "laplace", location = 1, scale = 2, autoscale = FALSE))
  expect_true(normal(0, 1, autoscale = TRUE)$autoscale)
  expect_identical(unclass(hs())[c("df", "global_df", "global_scale", "slab_df", "slab_scale")],
                   list(df = 1, global_df = 1, global_scale = 0.01, slab_df = 4, slab_scale = 2.5))
  expect_identical(exponential(2)$scale, 0.5)
  expect_output(print(laplace(0, 1)), "laplace\\(location = 0, scale = 1\\)")
  expect_output(print(normal(0, 2.5, autoscale = TRUE)),
                "normal\\(location = 0, scale = 2.5, autoscale = TRUE\\)")
  expect_output(print(hs()),
                "hs\\(df = 1, global_df = 1, global_scale = 0.01, slab_df = 4, slab_scale = 2.5\\)")
  skip_if_not_installed("rstanarm")
  # every field of rstanarm's objects, with its value (rstanarm's Student-t is dist "t")
  for (f in c("normal", "student_t", "cauchy", "laplace", "hs", "exponential")) {
    args <- if (f == "hs") list() else list(autoscale = TRUE)
    ours <- unclass(do.call(f, args))
    theirs <- do.call(getExportedValue("rstanarm", f), args)
    expect_identical(setdiff(names(theirs), names(ours)), character(), info = f)
    common <- setdiff(intersect(names(theirs), names(ours)), "dist")
    expect_equal(as.numeric(unlist(ours[common])), as.numeric(unlist(theirs[common])), info = f)
  }
})

test_that("the new priors and prior arguments check their input, naming the argument", {
  expect_error(laplace(0, -1), "`scale` must be positive")
  expect_error(laplace(NA), "`location` must be finite")
  expect_error(hs(df = 0), "`df` must be positive")
  expect_error(hs(global_scale = -0.1), "`global_scale` must be positive")
  expect_error(hs(slab_df = c(1, 2)), "`slab_df` must be a single number")
  expect_error(normal(0, 1, autoscale = NA), "`autoscale` must be TRUE or FALSE")
  expect_error(exponential(1, autoscale = "yes"), "`autoscale` must be TRUE or FALSE")
  set.seed(1)
  d <- data.frame(x = rnorm(10), z = rnorm(10), y = rnorm(10))
  expect_error(glm_model(y ~ x, d, prior_intercept = laplace()),
               "`prior_intercept` must be normal\\(\\), .*: laplace\\(\\) is for `prior`")
  expect_error(glm_model(y ~ x, d, prior_aux = hs()), "`prior_aux` must be .*hs\\(\\) is for `prior`")
  lasso <- list(dist = "lasso", df = 1, location = 0, scale = NULL, autoscale = FALSE)
  expect_error(glm_model(y ~ x, d, prior = lasso), "`prior` .*\"lasso\" is not supported")
  expect_error(glm_model(y ~ x + z, d, prior = hs(df = c(1, 2, 3))),
               "`prior` must have df of length 1 or 2")
  expect_error(glm_model(y ~ x, d, prior = list(dist = "normal", scale = -1)),
               "`prior`: `scale` must be positive")
  expect_error(glm_model(ceiling(abs(d$y)) + 1, cbind(x = d$x), "ordered_logistic", prior = hs()),
               "`prior` hs\\(\\) is not available for \"ordered_logistic\"")
})

# rstanarm's hs_prior() (common_functions.stan): beta from z, the global
# and local scales and caux; the log inverse gamma density.
hs_beta <- function(z, g, l1, l2, caux, sigma, global_scale, slab_scale) {
  lambda2 <- (l1 * sqrt(l2))^2
  tau <- g[1] * sqrt(g[2]) * global_scale * sigma
  c2 <- slab_scale^2 * caux
  z * sqrt(c2 * lambda2 / (c2 + tau^2 * lambda2)) * tau
}
log_dinvgamma <- function(v, a, b) a * log(b) - lgamma(a) - (a + 1) * log(v) - b / v

test_that("laplace() and hs() densities are rstanarm's, with gradients matching finite differences", {
  set.seed(4)
  d <- data.frame(x1 = rnorm(25), x2 = rnorm(25, 3), x3 = rnorm(25))
  d$y <- rnorm(25, 1 + d$x1)
  d$yb <- rbinom(25, 1, 0.5)
  X <- scale(as.matrix(d[c("x1", "x2", "x3")]), scale = FALSE)  # centred, as rstanarm
  m <- glm_model(y ~ x1 + x2 + x3, d, prior = laplace(c(0, 0.5, -0.5), 2),
                 prior_intercept = normal(0, 5), prior_aux = exponential(1))
  pts <- cbind(rnorm(4), matrix(rnorm(12), 4), runif(4, 0.5, 2))
  ref <- apply(pts, 1, function(th) {
    sum(dnorm(d$y, th[1] + X %*% th[2:4], th[5], log = TRUE)) + dnorm(th[1], 0, 5, log = TRUE) +
      sum(-abs(th[2:4] - c(0, 0.5, -0.5)) / 2 - log(4)) + dexp(th[5], 1, log = TRUE)
  })
  ours <- model_log_density(m, pts, backend = "cpu")
  expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
  expect_equal(clbayes:::.cpp_model_gradient(m, pts)$gradient, finite_diff_gradient(m, pts),
               tolerance = 1e-6)
  for (fam in list(gaussian(), binomial())) {
    gaussian <- fam$family == "gaussian"
    d$resp <- if (gaussian) d$y else d$yb
    m <- glm_model(resp ~ x1 + x2 + x3, d, family = fam,
                   prior = hs(df = 3, global_df = 2, global_scale = 0.1, slab_df = 5,
                              slab_scale = 2),
                   prior_intercept = normal(0, 5), prior_aux = exponential(1))
    expect_identical(m$names, c("alpha_centred", sprintf("z_beta[%d]", 1:3),
                                if (gaussian) "sigma", "global[1]", "global[2]",
                                sprintf("local[1,%d]", 1:3), sprintf("local[2,%d]", 1:3),
                                "caux[1]"))
    expect_identical(model_variables(m), c("(Intercept)", "x1", "x2", "x3",
                                           if (gaussian) "sigma"))
    a <- as.integer(gaussian)
    pts <- cbind(rnorm(4), matrix(rnorm(12), 4), if (gaussian) runif(4, 0.5, 2),
                 matrix(runif(4 * 9, 0.3, 2), 4))
    beta <- t(apply(pts, 1, function(th) {
      blk <- th[4 + a + 1:9]
      hs_beta(th[2:4], blk[1:2], blk[3:5], blk[6:8], blk[9], if (gaussian) th[5] else 1,
              0.1, 2)
    }))
    ref <- vapply(seq_len(nrow(pts)), function(r) {
      th <- pts[r, ]
      blk <- th[4 + a + 1:9]
      eta <- th[1] + drop(X %*% beta[r, ])
      ll <- if (gaussian) sum(dnorm(d$y, eta, th[5], log = TRUE)) else
        sum(dbinom(d$yb, 1, plogis(eta), log = TRUE))
      ll + dnorm(th[1], 0, 5, log = TRUE) + sum(dnorm(th[2:4], log = TRUE)) +
        (if (gaussian) dexp(th[5], 1, log = TRUE) else 0) + dnorm(blk[1], log = TRUE) +
        log_dinvgamma(blk[2], 1, 1) + sum(dnorm(blk[3:5], log = TRUE)) +
        sum(log_dinvgamma(blk[6:8], 1.5, 1.5)) + log_dinvgamma(blk[9], 2.5, 2.5)
    }, 0)
    ours <- model_log_density(m, pts, backend = "cpu")
    expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9, info = fam$family)
    expect_equal(clbayes:::.cpp_model_gradient(m, pts)$gradient, finite_diff_gradient(m, pts),
                 tolerance = 1e-6, info = fam$family)
    # the fit reports beta and the intercept of the predictors as given
    rep <- clbayes:::model_reported_draws(m, pts)
    expect_equal(unname(rep[, 2:4]), unname(beta), tolerance = 1e-12)
    expect_equal(unname(rep[, 1]), pts[, 1] - drop(beta %*% colMeans(d[c("x1", "x2", "x3")])))
  }
  # with group-level terms: the horseshoe's block sits between sigma and theirs
  skip_if_not_installed("lme4")
  d$g <- factor(rep(1:5, 5))
  m <- lm_model(y ~ x1 + x2 + (1 | g), d, prior = hs(global_scale = 0.1))
  expect_identical(m$names[1:12], c("alpha_centred", "z_beta[1]", "z_beta[2]", "sigma",
                                    "global[1]", "global[2]", "local[1,1]", "local[1,2]",
                                    "local[2,1]", "local[2,2]", "caux[1]", "z_b[1]"))
  pts <- t(replicate(2, m$init + abs(rnorm(length(m$init), sd = 0.1))))
  expect_equal(clbayes:::.cpp_model_gradient(m, pts)$gradient, finite_diff_gradient(m, pts),
               tolerance = 1e-6)
})

test_that("a laplace() prior gives the posterior of a Poisson slope by quadrature", {
  set.seed(8)
  d <- data.frame(x = runif(8))
  d$y <- rpois(8, exp(0.3 * d$x))
  lp <- function(b) vapply(b, function(bi) sum(dpois(d$y, exp(bi * d$x), log = TRUE)), 0) -
    abs(b - 0.2) / 0.5
  top <- max(lp(seq(-5, 5, length.out = 2001)))
  dens <- function(b) exp(lp(b) - top)
  moment <- function(p) {  # split at the kink
    integrate(function(b) b^p * dens(b), -20, 0.2)$value +
      integrate(function(b) b^p * dens(b), 0.2, 20)$value
  }
  z <- moment(0)
  m1 <- moment(1) / z
  sd_ref <- sqrt(moment(2) / z - m1^2)
  m <- glm_model(y ~ 0 + x, d, family = poisson(), prior = laplace(0.2, 0.5))
  fit <- sample_model(m, n_iter = 1500, chains = 4, seed = 9)
  s <- summary(fit)
  expect_lt(abs(s$mean - m1), 4 * s$sd / sqrt(s$ess_bulk))
  expect_lt(abs(s$sd / sd_ref - 1), 0.1)
})

test_that("autoscale adjusts the scales as rstanarm does, and the defaults are rstanarm's", {
  set.seed(12)
  d <- data.frame(x1 = rnorm(40, 0, 3), x2 = runif(40))
  d$y <- rnorm(40, 10 + d$x1, 4)
  d$yb <- rbinom(40, 1, plogis(d$x1))
  s_y <- sd(d$y)
  s_x <- c(sd(d$x1), sd(d$x2))
  m <- glm_model(y ~ x1 + x2, d)
  a <- m$prior_adjusted
  expect_equal(a$prior$scale, 2.5 * s_y / s_x)
  expect_equal(c(a$prior_intercept$location, a$prior_intercept$scale), c(mean(d$y), 2.5 * s_y))
  expect_equal(a$prior_aux$rate, 1 / s_y)
  # the log density under the defaults, written out
  X <- scale(as.matrix(d[c("x1", "x2")]), scale = FALSE)
  pts <- cbind(rnorm(3, 10), rnorm(3), rnorm(3), runif(3, 2, 6))
  ref <- apply(pts, 1, function(th) {
    sum(dnorm(d$y, th[1] + X %*% th[2:3], th[4], log = TRUE)) +
      dnorm(th[1], mean(d$y), 2.5 * s_y, log = TRUE) +
      sum(dnorm(th[2:3], 0, 2.5 * s_y / s_x, log = TRUE)) + dexp(th[4], 1 / s_y, log = TRUE)
  })
  ours <- model_log_density(m, pts, backend = "cpu")
  expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
  # given priors keep their own autoscale; binomial models are not scaled by y
  m <- glm_model(y ~ x1 + x2, d, prior = normal(0, 1), prior_intercept = normal(0, 3),
                 prior_aux = exponential(2))
  expect_equal(m$prior_adjusted$prior$scale, 1)
  expect_equal(m$prior_adjusted$prior_intercept[c("location", "scale")], list(location = 0, scale = 3))
  m <- glm_model(y ~ x1 + x2, d, prior = student_t(3, 0, 1, autoscale = TRUE))
  expect_equal(m$prior_adjusted$prior$scale, s_y / s_x)
  m <- glm_model(yb ~ x1 + x2, d, family = binomial())
  expect_equal(m$prior_adjusted$prior$scale, 2.5 / s_x)
  expect_equal(m$prior_adjusted$prior_intercept[c("location", "scale")],
               list(location = 0, scale = 2.5))
  # the probit link scales the coefficients' and the intercept's priors by
  # dnorm(0) / dlogis(0), autoscaled or not, as rstanarm's set_prior_scale()
  pr <- list(prior = normal(0, 2.5, autoscale = TRUE), prior_intercept = cauchy(1, 2),
             prior_aux = NULL)
  a <- clbayes:::adjust_priors(pr, as.matrix(d[c("x1", "x2")]), d$yb, FALSE, "probit", FALSE)
  expect_equal(a$adjusted$prior$scale, 2.5 * dnorm(0) / dlogis(0) / s_x)
  expect_equal(a$adjusted$prior_intercept$scale, 2 * dnorm(0) / dlogis(0))
  skip_if_not_installed("rstanarm")
  expect_equal(a$specified$prior$scale, rstanarm:::set_prior_scale(2.5, 2.5, "probit"))
  # rstanarm's prior.info of the same calls (optimizing: no sampling needed)
  for (cs in list(list(y ~ x1 + x2, gaussian()), list(yb ~ x1 + x2, binomial()))) {
    ref <- suppressWarnings(rstanarm::stan_glm(cs[[1]], data = d, family = cs[[2]],
                                               algorithm = "optimizing", refresh = 0,
                                               seed = 1))$prior.info
    ours <- glm_model(cs[[1]], d, family = cs[[2]])$prior_info
    for (p in c("prior", "prior_intercept", "prior_aux")) {
      for (f in c("dist", "location", "scale", "adjusted_scale", "rate")) {
        expect_equal(as.vector(ours[[p]][[f]]), as.vector(ref[[p]][[f]]),
                     info = paste(cs[[2]]$family, p, f))
      }
    }
  }
})

test_that("rstanarm's prior objects give the same model as clbayes's", {
  skip_if_not_installed("rstanarm")
  set.seed(13)
  d <- data.frame(x1 = rnorm(30), x2 = rnorm(30))
  d$y <- rnorm(30, 2 + d$x1)
  r <- function(f, ...) getExportedValue("rstanarm", f)(...)
  cases <- list(
    list(r("normal", 0, 2.5), r("student_t", 3, 1, 2, autoscale = TRUE),
         r("exponential", 2, autoscale = TRUE),
         normal(0, 2.5), student_t(3, 1, 2, autoscale = TRUE), exponential(2, autoscale = TRUE)),
    list(r("laplace", 0, 1), r("cauchy", 0, 3), r("cauchy", 0, 1),
         laplace(0, 1), cauchy(0, 3), cauchy(0, 1)),
    list(r("hs", global_scale = 0.1), r("normal"), r("normal", 0, 2),
         hs(global_scale = 0.1), normal(), normal(0, 2)))
  for (cs in cases) {
    theirs <- glm_model(y ~ x1 + x2, d, prior = cs[[1]], prior_intercept = cs[[2]],
                        prior_aux = cs[[3]])
    ours <- glm_model(y ~ x1 + x2, d, prior = cs[[4]], prior_intercept = cs[[5]],
                      prior_aux = cs[[6]])
    pts <- t(replicate(3, ours$init + abs(rnorm(length(ours$init), sd = 0.1))))
    expect_equal(model_log_density(theirs, pts, backend = "cpu"),
                 model_log_density(ours, pts, backend = "cpu"), info = cs[[4]]$dist)
  }
})

test_that("default against default, the kidiq posterior is stan_glm's", {
  skip_if_not_installed("rstanarm")
  data("kidiq", package = "rstanarm", envir = environment())
  ref <- as.matrix(rstanarm::stan_glm(kid_score ~ mom_hs + mom_iq, data = kidiq, refresh = 0,
                                      chains = 4, iter = 2000, seed = 1))
  fit <- sample_model(lm_model(kid_score ~ mom_hs + mom_iq, kidiq), n_iter = 1000, seed = 2)
  s <- summary(fit)
  expect_identical(s$variable, colnames(ref))
  z <- (s$mean - colMeans(ref)) / apply(ref, 2, sd)
  expect_true(all(abs(z) < 0.1), info = paste(round(z, 3), collapse = " "))
})

test_that("an hs() posterior is stan_glm's", {
  skip_if_not_installed("rstanarm")
  set.seed(3)
  X <- matrix(rnorm(60 * 6), 60, 6, dimnames = list(NULL, paste0("x", 1:6)))
  d <- data.frame(X)
  d$y <- 1 + 2 * d$x1 - 1.5 * d$x2 + rnorm(60)
  ref <- as.matrix(suppressWarnings(rstanarm::stan_glm(
    y ~ ., data = d, prior = rstanarm::hs(), refresh = 0, chains = 2, iter = 1000, seed = 1,
    adapt_delta = 0.99)))
  fit <- sample_model(glm_model(y ~ ., d, prior = hs()), n_iter = 1000, seed = 4)
  s <- summary(fit)
  expect_identical(s$variable, colnames(ref))
  z <- (s$mean - colMeans(ref)) / apply(ref, 2, sd)
  expect_true(all(abs(z) < 0.2), info = paste(round(z, 3), collapse = " "))
})
