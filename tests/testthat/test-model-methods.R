# coef(), predict(), posterior_predict() and log_lik() on fits of models,
# against the same quantities computed in R from the draws.

# Short runs: these tests compute from whatever draws there are, so the
# sampler's convergence warnings are not theirs to check.
quick_fit <- function(...) suppressWarnings(sample_model(...))

fit_poisson <- function() {
  set.seed(31)
  d <- data.frame(x = rnorm(40), g = factor(sample(c("a", "b"), 40, replace = TRUE)))
  d$y <- rpois(40, exp(0.5 + 0.4 * d$x + 0.3 * (d$g == "b")))
  m <- glm_model(y ~ x + g, d, family = poisson())
  list(d = d, fit = quick_fit(m, n_iter = 200, chains = 2, seed = 2))
}

draws_matrix <- function(fit) {
  a <- as.array(fit)
  matrix(a, prod(dim(a)[1:2]), dim(a)[3], dimnames = list(NULL, dimnames(a)[[3]]))
}

test_that("coef() is the posterior median of each coefficient, named as glm()", {
  p <- fit_poisson()
  dm <- draws_matrix(p$fit)
  cf <- coef(p$fit)
  expect_identical(names(cf), names(coef(glm(y ~ x + g, poisson(), p$d))))
  expect_equal(cf, apply(dm, 2, median))
  # gaussian: sigma is not a coefficient
  set.seed(32)
  d <- data.frame(x = rnorm(30))
  d$y <- 1 + d$x + rnorm(30)
  fit <- quick_fit(lm_model(y ~ x, d), n_iter = 100, chains = 2, seed = 1)
  expect_identical(names(coef(fit)), c("(Intercept)", "x"))
})

test_that("predict() is the posterior mean of the linear predictor or of the mean", {
  p <- fit_poisson()
  dm <- draws_matrix(p$fit)
  X <- model.matrix(~ x + g, p$d)
  eta <- dm %*% t(X)
  expect_equal(predict(p$fit), unname(colMeans(eta)))
  expect_equal(predict(p$fit, type = "response"), unname(colMeans(exp(eta))))
  nd <- data.frame(x = c(-1, 0, 2), g = factor(c("b", "a", "b"), levels = c("a", "b")))
  Xn <- model.matrix(~ x + g, nd)
  expect_equal(predict(p$fit, newdata = nd, type = "link"), unname(colMeans(dm %*% t(Xn))))
  nd1 <- data.frame(x = 1, g = "b")  # a single level is read with the model's levels
  expect_equal(predict(p$fit, newdata = nd1), mean(dm %*% c(1, 1, 1)))
  expect_error(predict(p$fit, type = "probability"), "`type` must be one of")
  expect_error(predict(p$fit, newdata = 1:3), "`newdata` must be a data frame")
})

test_that("log_lik() is the point-wise log-likelihood of every draw", {
  p <- fit_poisson()
  dm <- draws_matrix(p$fit)
  eta <- dm %*% t(model.matrix(~ x + g, p$d))
  ll <- log_lik(p$fit)
  expect_identical(dim(ll), c(nrow(dm), 40L))
  expect_equal(ll, matrix(dpois(rep(p$d$y, each = nrow(dm)), exp(eta), log = TRUE),
                          nrow(dm)))
  # binomial with two columns: one binomial observation per row
  set.seed(33)
  d <- data.frame(x = rnorm(15), n = rpois(15, 3) + 1)
  d$s <- rbinom(15, d$n, plogis(d$x))
  fit <- quick_fit(glm_model(cbind(s, n - s) ~ x, d, family = binomial()),
                      n_iter = 100, chains = 2, seed = 3)
  dm <- draws_matrix(fit)
  pr <- plogis(dm[, 1] + dm[, 2] %o% d$x)
  expect_equal(log_lik(fit), matrix(dbinom(rep(d$s, each = nrow(dm)),
                                           rep(d$n, each = nrow(dm)), pr, log = TRUE),
                                    nrow(dm)))
  # gaussian and negative binomial use each draw's sigma / phi
  d$yn <- rnorm(15)
  d$yc <- rnbinom(15, mu = 2, size = 2)
  fit <- quick_fit(glm_model(yn ~ x, d), n_iter = 50, chains = 2, seed = 4)
  dm <- draws_matrix(fit)
  mu <- dm[, 1] + dm[, 2] %o% d$x
  expect_equal(log_lik(fit)[7, ], dnorm(d$yn, mu[7, ], dm[7, "sigma"], log = TRUE))
  fit <- quick_fit(glm_model(yc ~ x, d, family = neg_binomial_2()), n_iter = 50,
                      chains = 2, seed = 5)
  dm <- draws_matrix(fit)
  mu <- exp(dm[, 1] + dm[, 2] %o% d$x)
  expect_equal(log_lik(fit)[9, ], dnbinom(d$yc, mu = mu[9, ], size = dm[9, "phi"], log = TRUE))
})

test_that("posterior_predict() draws the response from each draw's distribution", {
  p <- fit_poisson()
  pp <- posterior_predict(p$fit)
  dm <- draws_matrix(p$fit)
  expect_identical(dim(pp), c(nrow(dm), 40L))
  expect_true(all(pp >= 0 & pp == round(pp)))
  # its mean per observation is the posterior mean of exp(eta), to
  # Monte Carlo error (Poisson variance plus the posterior's)
  mu <- exp(dm %*% t(model.matrix(~ x + g, p$d)))
  se <- sqrt((colMeans(mu) + apply(mu, 2, var)) / nrow(dm))
  expect_lt(max(abs(colMeans(pp) - colMeans(mu)) / se), 4.5)
  expect_identical(dim(posterior_predict(p$fit, draws = 25)), c(25L, 40L))
  nd <- data.frame(x = c(0, 1), g = c("a", "b"))
  expect_identical(dim(posterior_predict(p$fit, newdata = nd, draws = 10)), c(10L, 2L))
  expect_error(posterior_predict(p$fit, draws = 1e6), "`draws` must be at most")
  # a two-column binomial response: new rows take their trials from newdata's
  # response, and the draws' mean is trials x the posterior mean of plogis(eta)
  set.seed(34)
  d <- data.frame(x = rnorm(30), n = rpois(30, 6) + 1)
  d$s <- rbinom(30, d$n, plogis(0.3 + 0.8 * d$x))
  fit <- quick_fit(glm_model(cbind(s, n - s) ~ x, d, family = binomial()), n_iter = 200,
                   chains = 2, seed = 6)
  dm <- draws_matrix(fit)
  nd <- data.frame(x = c(-1, 0.5, 2), n = c(40, 1, 25), s = 0)
  pp <- posterior_predict(fit, newdata = nd)
  expect_true(all(pp >= 0 & pp == round(pp) & sweep(pp, 2, nd$n, "<=")))
  pr <- plogis(dm[, 1] + dm[, 2] %o% nd$x)
  mu <- sweep(pr, 2, nd$n, "*")
  se <- sqrt((colMeans(sweep(pr * (1 - pr), 2, nd$n, "*")) + apply(mu, 2, var)) / nrow(dm))
  expect_lt(max(abs(colMeans(pp) - colMeans(mu)) / se), 4.5)
  expect_error(posterior_predict(fit, newdata = data.frame(x = 1)),
               "`newdata` must have the response's columns \\(s, n\\)")
  # a fit of an R function has no model to predict from
  f <- slice_sample_mv(function(x) -0.5 * rowSums(x^2), init = 0, n_iter = 20, width = 1,
                       method = "univariate", n_proposals = 1, chains = 2, warmup = 20,
                       seed = 1, stepout = "warmup", max_steps = 100, metric = "dense",
                       lower = NULL, upper = NULL, backend = "cpu")
  expect_error(log_lik(f), "`object` must be a fit of glm_model")
  expect_length(coef(f), 1L)
})

test_that("the fit's variables keep glm()'s names through summary and posterior", {
  p <- fit_poisson()
  nm <- c("(Intercept)", "x", "gb")
  expect_identical(summary(p$fit)$variable, nm)
  skip_if_not_installed("posterior")
  expect_identical(posterior::variables(posterior::as_draws_array(p$fit)), nm)
})

test_that("the matrix form's fits predict from x", {
  set.seed(34)
  x <- matrix(rnorm(60), 30, 2, dimnames = list(NULL, c("a", "b")))
  y <- rbinom(30, 1, plogis(0.5 + x %*% c(1, -1)))
  m <- glm_model(y, x, "bernoulli_logit")
  fit <- quick_fit(m, n_iter = 100, chains = 2, seed = 6)
  dm <- draws_matrix(fit)
  eta <- dm[, 1] + dm[, 2:3] %*% t(x)
  expect_equal(log_lik(fit), matrix(dbinom(rep(y, each = nrow(dm)), 1, plogis(eta), log = TRUE),
                                    nrow(dm)))
  expect_equal(predict(fit, newdata = x[1:3, ], type = "response"),
               unname(colMeans(plogis(eta[, 1:3]))))
  expect_error(predict(fit, newdata = x[, 1, drop = FALSE]), "`newdata` must be a numeric matrix with 2")
})

test_that("newdata with a missing or mistyped column is an error naming it, as predict.glm", {
  set.seed(9)
  d <- data.frame(x1 = rnorm(40), f = factor(sample(c("a", "b"), 40, TRUE)))
  d$y <- rbinom(40, 1, plogis(0.3 + d$x1))
  m <- glm_model(y ~ x1 + f, d, family = binomial())
  fit <- hmc_sample_mv(m, n_iter = 20, warmup = 20, chains = 2, seed = 1, backend = "cpu")
  ref <- glm(y ~ x1 + f, binomial(), d)
  bad <- transform(d[1:2, ], x1 = as.character(x1))
  expect_error(predict(ref, bad), "x1")  # the reference behaviour
  expect_error(predict(fit, bad), "newdata.*x1")
  expect_error(posterior_predict(fit, bad), "newdata.*x1")
  expect_error(log_lik(fit, bad), "newdata.*x1")
  expect_error(predict(fit, transform(d[1:2, ], f = as.numeric(f))), "newdata.*f")
  expect_error(predict(fit, d[1:2, "x1", drop = FALSE]), "`f`")
})
