# Offsets (a known term added to every linear predictor, as glm()'s): the
# log-likelihood on every path (CPU and device, one point and P points, each
# device kernel) against base R densities, glm_model() against glm(), and
# predict() / log_lik() / posterior_predict() against the same quantities
# computed in R from the draws.

# The log-likelihood of one point in base R with linear predictor eta.
ref_ll <- function(family, y, eta, extra) {
  switch(family,
    normal_id = sum(dnorm(y, eta, extra, log = TRUE)),
    bernoulli_logit = sum(dbinom(y, 1, plogis(eta), log = TRUE)),
    poisson_log = sum(dpois(y, exp(eta), log = TRUE)),
    neg_binomial_2_log = sum(dnbinom(y, mu = exp(eta), size = extra, log = TRUE)),
    ordered_logistic = {
      cc <- c(-Inf, extra, Inf)
      sum(log(plogis(cc[y + 1] - eta) - plogis(cc[y] - eta)))
    })
}

# d lp / d eta of each row, from the closed forms.
ref_d_eta <- function(family, y, eta, extra) {
  switch(family,
    normal_id = (y - eta) / extra^2,
    bernoulli_logit = y - plogis(eta),
    poisson_log = y - exp(eta),
    neg_binomial_2_log = y - (y + extra) * exp(eta) / (exp(eta) + extra))
}

# Data of a family whose truth has an offset of a few units (exposures).
sim_offset <- function(family, n, k, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * k), n, k)
  beta <- rnorm(k) * 0.3
  off <- log(runif(n, 0.5, 4))
  eta <- 0.2 + drop(x %*% beta) + off
  extra <- switch(family, normal_id = 1.3, neg_binomial_2_log = 2.5,
                  ordered_logistic = c(-1, 0.2, 1.5), NULL)
  y <- switch(family,
    normal_id = rnorm(n, eta, extra),
    bernoulli_logit = rbinom(n, 1, plogis(eta)),
    poisson_log = rpois(n, exp(eta)),
    neg_binomial_2_log = rnbinom(n, mu = exp(eta), size = extra),
    ordered_logistic = vapply(eta - 0.2, function(e) sum(runif(1) > plogis(extra - e)) + 1,
                              numeric(1)))
  list(x = x, y = y, beta = beta, off = off, extra = extra,
       alpha = if (family != "ordered_logistic") 0.2)
}

alpha_of <- function(d) if (is.null(d$alpha)) 0 else d$alpha

offset_backends <- function() if (gpu_available()) c("cpu", "opencl") else "cpu"
offset_families <- c("normal_id", "bernoulli_logit", "poisson_log", "neg_binomial_2_log")

lp_call <- function(d, family, x = d$x, y = d$y, beta = d$beta, alpha = d$alpha,
                    extra = d$extra, ...) {
  args <- list(x = x, beta = beta, family = family, ...)
  if (!is.null(y)) args$y <- y
  if (!is.null(alpha)) args$alpha <- alpha
  nm <- switch(family, normal_id = "sigma", neg_binomial_2_log = "phi",
               ordered_logistic = "cuts", NULL)
  if (!is.null(nm)) args[[nm]] <- extra
  do.call(gpu_glm_lp, args)
}

test_that("one point with an offset: value and gradient equal base R on each backend", {
  for (be in offset_backends()) for (family in c(offset_families, "ordered_logistic")) {
    d <- sim_offset(family, n = 1001, k = 3, seed = 1)
    lab <- paste(family, be)
    eta <- alpha_of(d) + drop(d$x %*% d$beta) + d$off
    v <- lp_call(d, family, offset = d$off, gradient = TRUE, backend = be)
    expect_equal(as.numeric(v), ref_ll(family, d$y, eta, d$extra), tolerance = 1e-12,
                 label = lab)
    if (family == "ordered_logistic") next
    r <- ref_d_eta(family, d$y, eta, d$extra)
    g <- attr(v, "gradient")
    expect_equal(g$alpha, sum(r), tolerance = 1e-10, label = lab)
    expect_equal(g$beta, drop(crossprod(d$x, r)), tolerance = 1e-10, label = lab)
    # the same data held by gpu_glm_data (resident on the device when there is one)
    h <- gpu_glm_data(d$x, d$y, offset = d$off)
    expect_true(h$has_offset)
    expect_equal(as.numeric(lp_call(d, family, x = h, y = NULL, backend = be)),
                 ref_ll(family, d$y, eta, d$extra), tolerance = 1e-12, label = lab)
  }
})

test_that("P points with an offset equal base R on each backend and device variant", {
  P <- 5
  for (family in offset_families) {
    d <- sim_offset(family, n = 1203, k = 4, seed = 2)
    set.seed(3)
    B <- matrix(rnorm(4 * P, sd = 0.3), 4, P)
    a <- rnorm(P, 0.2, 0.1)
    ex <- if (is.null(d$extra)) numeric() else d$extra * seq(0.8, 1.2, length.out = P)
    etas <- sweep(d$x %*% B, 2, a, "+") + d$off
    ref_v <- vapply(seq_len(P), function(j) ref_ll(family, d$y, etas[, j], ex[j]), numeric(1))
    ref_b <- vapply(seq_len(P), function(j) {
      drop(crossprod(d$x, ref_d_eta(family, d$y, etas[, j], ex[j])))
    }, numeric(4))
    for (be in offset_backends()) {
      v <- lp_call(d, family, alpha = a, beta = B, extra = if (length(ex)) ex,
                   offset = d$off, gradient = TRUE, backend = be)
      expect_equal(as.numeric(v), ref_v, tolerance = 1e-12, label = paste(family, be))
      expect_equal(attr(v, "gradient")$beta, ref_b, tolerance = 1e-10,
                   label = paste(family, be))
    }
    if (!gpu_available()) next
    # each device path, the GEMMs also in passes over blocks of rows
    h <- clbayes:::.cpp_glm_data(d$x, d$y, TRUE, TRUE, d$off)
    for (v in list(list(path = "single", bytes = 0), list(path = "fused", bytes = 0),
                   list(path = "mma", bytes = 0), list(path = "gemm", bytes = 500 * 8 * P))) {
      dev <- clbayes:::.cpp_glm_lp_batch_path(h, family, a, B, ex, TRUE, FALSE, TRUE, v$path,
                                              v$bytes)
      lab <- sprintf("%s %s block %g", family, v$path, v$bytes)
      expect_equal(dev$value, ref_v, tolerance = 1e-12, label = lab)
      expect_equal(dev$beta, ref_b, tolerance = 1e-10, label = lab)
    }
  }
})

test_that("the offset reaches each single-point device kernel", {
  skip_if_no_device()
  # tiled kernel with alpha per row; row-block kernel for k > 2048 (no tile
  # of at least 4 rows fits its 64 values per item)
  d <- sim_offset("poisson_log", n = 301, k = 3, seed = 4)
  a <- rnorm(301, 0.2, 0.1)
  v <- lp_call(d, "poisson_log", alpha = a, offset = d$off, gradient = TRUE,
               backend = "opencl")
  eta <- a + drop(d$x %*% d$beta) + d$off
  expect_equal(as.numeric(v), ref_ll("poisson_log", d$y, eta), tolerance = 1e-12)
  expect_equal(attr(v, "gradient")$alpha, d$y - exp(eta), tolerance = 1e-10)
  for (family in c("normal_id", "ordered_logistic")) {
    d <- sim_offset(family, n = 40, k = 2100, seed = 5)
    d$beta <- d$beta / 20
    eta <- alpha_of(d) + drop(d$x %*% d$beta) + d$off
    expect_equal(as.numeric(lp_call(d, family, offset = d$off, backend = "opencl")),
                 ref_ll(family, d$y, eta, d$extra), tolerance = 1e-11, label = family)
  }
})

test_that("glm_model with offset(log(exposure)) agrees with glm() at large n", {
  set.seed(41)
  n <- 1500
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), exposure = runif(n, 0.5, 20))
  d$y <- rpois(n, d$exposure * exp(-0.7 + 0.4 * d$x1 - 0.3 * d$x2))
  f <- y ~ x1 + x2 + offset(log(exposure))
  ref <- summary(glm(f, poisson(), d))$coefficients
  m <- glm_model(f, d, family = poisson())
  fit <- sample_model(m, n_iter = 300, chains = 4, seed = 3)
  s <- summary(fit)
  z <- (s$mean - ref[, 1]) / ref[, 2]
  expect_true(all(abs(z) < 0.25), info = paste(round(z, 3), collapse = " "))
  expect_true(all(abs(s$sd / ref[, 2] - 1) < 0.15),
              info = paste(round(s$sd / ref[, 2], 3), collapse = " "))
  # without the offset the intercept would be off by about log(mean exposure)
  expect_gt(abs(coef(glm(y ~ x1 + x2, poisson(), d))[1] - ref[1, 1]) / ref[1, 2], 20)
})

test_that("the offset argument equals the formula term, and the two are summed", {
  set.seed(42)
  d <- data.frame(x = rnorm(80), e = runif(80, 1, 5), w = rnorm(80, sd = 0.3))
  d$y <- rpois(80, d$e * exp(0.3 + 0.5 * d$x + d$w))
  m1 <- glm_model(y ~ x + offset(log(e)), d, family = poisson())
  m2 <- glm_model(y ~ x, d, family = poisson(), offset = log(e))
  expect_equal(m1$offset, log(d$e))
  expect_equal(m2$offset, log(d$e))
  pts <- rbind(c(0.3, 0.5), c(0, 0), c(-0.2, 0.9))
  expect_equal(model_log_density(m2, pts, backend = "cpu"),
               model_log_density(m1, pts, backend = "cpu"))
  expect_equal(m2$init, m1$init)
  # both: summed, as glm() sums them
  m3 <- glm_model(y ~ x + offset(log(e)), d, family = poisson(), offset = w)
  expect_equal(m3$offset, log(d$e) + d$w)
  # (the sampled intercept is that of the centred x, rstanarm's)
  uncentred <- function(init) c(init[[1]] - init[[2]] * mean(d$x), init[[2]])
  expect_equal(uncentred(m3$init),
               unname(coef(glm(y ~ x + offset(log(e)), poisson(), d, offset = w))),
               tolerance = 1e-6)
  # lm_model (gaussian) takes it too
  d$z <- 1 + 2 * d$x + d$w + rnorm(80, sd = 0.5)
  m4 <- lm_model(z ~ x, d, offset = w)
  expect_equal(m4$offset, d$w)
  expect_equal(uncentred(m4$init), unname(coef(lm(z ~ x, d, offset = w))),
               tolerance = 1e-6)
})

test_that("a model's log density with an offset is base R's likelihood + priors, CPU and device", {
  set.seed(43)
  d <- data.frame(x1 = rnorm(203), g = factor(sample(c("a", "b"), 203, TRUE)),
                  t = runif(203, 1, 3))
  eta <- 0.2 + 0.4 * d$x1 + log(d$t)
  d$yn <- rnorm(203, eta, 0.7)
  d$yb <- rbinom(203, 1, plogis(eta - 1))
  d$yp <- rpois(203, exp(eta))
  d$ynb <- rnbinom(203, mu = exp(eta), size = 2)
  X <- model.matrix(~ x1 + g, d)
  X[, -1] <- scale(X[, -1], scale = FALSE)  # the intercept is that of the centred columns
  cases <- list(
    list(fam = gaussian(), y = "yn", ll = function(e, a) dnorm(d$yn, e, a, log = TRUE)),
    list(fam = binomial(), y = "yb", ll = function(e, a) dbinom(d$yb, 1, plogis(e), log = TRUE)),
    list(fam = poisson(), y = "yp", ll = function(e, a) dpois(d$yp, exp(e), log = TRUE)),
    list(fam = neg_binomial_2(), y = "ynb",
         ll = function(e, a) dnbinom(d$ynb, mu = exp(e), size = a, log = TRUE)))
  for (cs in cases) {
    f <- as.formula(paste(cs$y, "~ x1 + g + offset(log(t))"))
    m <- glm_model(f, d, family = cs$fam, prior = normal(0, 1), prior_intercept = normal(0, 5),
                   prior_aux = exponential(1))
    has_aux <- length(m$names) == 4L
    pts <- cbind(matrix(rnorm(15, sd = 0.3), 5, 3), if (has_aux) runif(5, 0.5, 2))
    ref <- apply(pts, 1, function(th) {
      sum(cs$ll(drop(X %*% th[1:3]) + log(d$t), th[4])) + dnorm(th[1], 0, 5, log = TRUE) +
        sum(dnorm(th[2:3], 0, 1, log = TRUE)) + (if (has_aux) dexp(th[4], 1, log = TRUE) else 0)
    })
    cpu <- model_log_density(m, pts, backend = "cpu")
    expect_equal(cpu - cpu[1], ref - ref[1], tolerance = 1e-9, info = cs$fam$family)
    if (gpu_available()) {
      m$use_device <- TRUE
      dev <- clbayes:::.cpp_model_gradient(m, pts)
      m$use_device <- FALSE
      expect_equal(dev, clbayes:::.cpp_model_gradient(m, pts), tolerance = 1e-10,
                   info = cs$fam$family)
    }
  }
  # a two-column binomial response: one Bernoulli row per trial, the
  # offset repeated with its row
  d$n <- rpois(203, 3) + 1
  d$s <- rbinom(203, d$n, plogis(eta - 1))
  m <- glm_model(cbind(s, n - s) ~ x1, d, family = binomial(), offset = log(t) - 1)
  pts <- rbind(c(0.1, 0.5), c(-0.4, 1))
  # rstanarm's defaults: normal(0, 2.5) on the centred intercept and
  # normal(0, 2.5 / sd(x1)) on the coefficient
  ref <- apply(pts, 1, function(th) {
    sum(dbinom(d$s, d$n, plogis(th[1] + th[2] * (d$x1 - mean(d$x1)) + log(d$t) - 1),
               log = TRUE)) +
      dnorm(th[1], 0, 2.5, log = TRUE) + dnorm(th[2], 0, 2.5 / sd(d$x1), log = TRUE)
  })
  ours <- model_log_density(m, pts, backend = "cpu")
  expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
})

test_that("a model rebuilt from its host data (a future's worker) keeps the offset", {
  set.seed(44)
  d <- data.frame(x = rnorm(50), e = runif(50, 1, 5))
  d$y <- rpois(50, d$e * exp(0.2 + 0.3 * d$x))
  m <- glm_model(y ~ x + offset(log(e)), d, family = poisson())
  moved <- unserialize(serialize(m, NULL))  # the data handle does not survive
  rebuilt <- clbayes:::model_rebuild_data(moved)
  pts <- rbind(c(0.2, 0.3), c(0, 1))
  expect_equal(model_log_density(rebuilt, pts, backend = "cpu"),
               model_log_density(m, pts, backend = "cpu"))
})

# A short fit of a Poisson model with an offset term and an offset argument.
fit_offset <- function() {
  set.seed(45)
  d <- data.frame(x = rnorm(40), e = runif(40, 1, 6), w = rnorm(40, sd = 0.2))
  d$y <- rpois(40, d$e * exp(0.3 + 0.4 * d$x + d$w))
  m <- glm_model(y ~ x + offset(log(e)), d, family = poisson(), offset = w)
  list(d = d, fit = suppressWarnings(sample_model(m, n_iter = 100, chains = 2, seed = 2)))
}

test_that("predict(), log_lik() and posterior_predict() include the offset, also in newdata", {
  p <- fit_offset()
  a <- as.array(p$fit)
  dm <- matrix(a, prod(dim(a)[1:2]), dim(a)[3])
  off <- log(p$d$e) + p$d$w
  eta <- sweep(dm %*% t(cbind(1, p$d$x)), 2, off, "+")
  expect_equal(predict(p$fit), colMeans(eta))
  expect_equal(predict(p$fit, type = "response"), colMeans(exp(eta)))
  expect_equal(log_lik(p$fit), matrix(dpois(rep(p$d$y, each = nrow(dm)), exp(eta), log = TRUE),
                                      nrow(dm)))
  # newdata: offset(log(e)) and the offset expression w evaluated in it
  nd <- data.frame(x = c(-1, 0.5, 2), e = c(1, 10, 100), w = c(0, 0.1, -0.1), y = c(0, 7, 300))
  eta_n <- sweep(dm %*% t(cbind(1, nd$x)), 2, log(nd$e) + nd$w, "+")
  expect_equal(predict(p$fit, newdata = nd), colMeans(eta_n))
  expect_equal(log_lik(p$fit, newdata = nd),
               matrix(dpois(rep(nd$y, each = nrow(dm)), exp(eta_n), log = TRUE), nrow(dm)))
  # posterior_predict's draws follow the exposure: mean within 4.5 standard errors
  set.seed(46)
  pp <- posterior_predict(p$fit, newdata = nd)
  mu <- exp(eta_n)
  se <- sqrt((colMeans(mu) + apply(mu, 2, var)) / nrow(dm))
  expect_lt(max(abs(colMeans(pp) - colMeans(mu)) / se), 4.5)
  # an offset given in place of the model's
  expect_equal(predict(p$fit, newdata = nd, offset = c(0, 0, 0)),
               colMeans(dm %*% t(cbind(1, nd$x))))
})

test_that("the matrix form takes a numeric offset; predictions at newdata need one", {
  set.seed(47)
  x <- cbind(x = rnorm(60))
  off <- log(runif(60, 1, 5))
  y <- rpois(60, exp(0.3 + 0.5 * x[, 1] + off))
  m <- glm_model(y, x, "poisson_log", offset = off)
  pts <- rbind(c(0.3, 0.5), c(0, 0.2))
  ref <- apply(pts, 1, function(th) {
    sum(dpois(y, exp(th[1] + th[2] * x[, 1] + off), log = TRUE)) +
      sum(dnorm(th, 0, 10, log = TRUE))
  })
  ours <- model_log_density(m, pts, backend = "cpu")
  expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
  fit <- suppressWarnings(sample_model(m, n_iter = 50, chains = 2, seed = 1))
  a <- as.array(fit)
  dm <- matrix(a, prod(dim(a)[1:2]), dim(a)[3])
  nx <- cbind(x = c(0, 1))
  expect_equal(predict(fit, newdata = nx, offset = c(1, 2)),
               colMeans(sweep(dm %*% t(cbind(1, nx)), 2, c(1, 2), "+")))
  expect_error(predict(fit, newdata = nx), "`offset` must be given with `newdata`")
  expect_error(predict(fit, newdata = nx, offset = 1:3),
               "`offset` must have one value per row of `newdata` \\(2\\), not 3")
})

test_that("bad offsets give errors naming `offset`", {
  set.seed(48)
  d <- data.frame(x = rnorm(20), e = runif(20, 1, 2))
  d$y <- rpois(20, 2)
  x <- cbind(d$x)
  expect_error(glm_model(y ~ x, d, family = poisson(), offset = 1:3),
               "`offset` must have one value per row of `data` \\(20\\), not 3")
  expect_error(glm_model(y ~ x, d, family = poisson(), offset = letters[1:20]),
               "`offset` must be a numeric vector")
  expect_error(glm_model(y ~ x, d, family = poisson(), offset = log(nonexistent)),
               "`offset` could not be evaluated")
  d$inf <- c(Inf, rep(0, 19))
  expect_error(glm_model(y ~ x + offset(inf), d, family = poisson()), "`offset` must be finite")
  d$na <- c(NA, rep(0, 19))
  expect_message(m <- glm_model(y ~ x, d, family = poisson(), offset = na),
                 "1 row\\(s\\) with missing values dropped")
  expect_identical(m$n_obs, 19L)
  expect_error(glm_model(d$y, x, "poisson_log", offset = rep(0, 19)),
               "`offset` must have one value per row of `x` \\(20\\), not 19")
  expect_error(glm_model(d$y, x, "poisson_log", offset = c(NaN, rep(0, 19))),
               "`offset` must be finite")
  expect_error(glm_model(sample(1:3, 20, TRUE), x, "categorical_logit", offset = rep(0, 20)),
               "`offset` is not supported by categorical_logit")
  expect_error(lm_model(d$y, cbind(1, d$x), offset = rep(0, 20)),
               "`offset` is for the formula form")
  expect_error(gpu_glm_lp(d$y, x, 0, 0.1, "poisson_log", offset = rep(0, 5), backend = "cpu"),
               "`offset` must have one value per row of `x` \\(20\\), not 5")
  expect_error(gpu_glm_lp(d$y, x, 0, 0.1, "poisson_log", offset = c(Inf, rep(0, 19)),
                          backend = "cpu"), "`offset` must be finite")
  expect_error(gpu_glm_data(x, d$y, offset = matrix(0, 20, 2)),
               "`offset` must be NULL or a numeric vector")
  h <- gpu_glm_data(x, d$y)
  expect_error(gpu_glm_lp(x = h, alpha = 0, beta = 0.1, family = "poisson_log",
                          offset = rep(0, 20)), "`offset` must be NULL when `x` is a gpu_glm_data")
  # in newdata: an offset term that cannot be evaluated, or the wrong length
  fit <- suppressWarnings(sample_model(glm_model(y ~ x, d, family = poisson(), offset = log(e)),
                                       n_iter = 20, chains = 2, seed = 1))
  expect_error(predict(fit, newdata = data.frame(x = 1:2)), "`offset`: the model's offset")
  expect_error(predict(fit, newdata = data.frame(x = 1:2, e = 1:2), offset = 1),
               "`offset` must have one value per row of `newdata` \\(2\\), not 1")
})
