# glm_model: log posterior against an independent R computation, device
# against CPU, and a posterior against numerical integration.

glm_r_loglik <- function(family, y, x, theta, C = NULL) {
  k <- ncol(x)
  switch(family,
    normal_id = sum(dnorm(y, theta[1] + x %*% theta[2:(k + 1)], theta[k + 2], log = TRUE)),
    bernoulli_logit = sum(dbinom(y, 1, plogis(theta[1] + x %*% theta[2:(k + 1)]), log = TRUE)),
    poisson_log = sum(dpois(y, exp(theta[1] + x %*% theta[2:(k + 1)]), log = TRUE)),
    neg_binomial_2_log = sum(dnbinom(y, mu = exp(theta[1] + x %*% theta[2:(k + 1)]),
                                     size = theta[k + 2], log = TRUE)),
    categorical_logit = {
      alpha <- theta[1:C]
      beta <- matrix(theta[(C + 1):(C + k * C)], k, C)
      eta <- sweep(x %*% beta, 2, alpha, "+")
      sum(eta[cbind(seq_along(y), y)] - log(rowSums(exp(eta))))
    },
    ordered_logistic = {
      beta <- theta[1:k]
      cuts <- theta[(k + 1):(k + C - 1)]
      eta <- drop(x %*% beta)
      upper <- c(cuts, Inf)[y]
      lower <- c(-Inf, cuts)[y]
      sum(log(plogis(upper - eta) - plogis(lower - eta)))
    }
  )
}

glm_r_logprior <- function(family, theta, k, C, prior = list(mean = 0, sd = 10, rate = 1)) {
  n_coef <- switch(family, categorical_logit = C + k * C, ordered_logistic = k, k + 1)
  lp <- sum(dnorm(theta[seq_len(n_coef)], prior$mean, prior$sd, log = TRUE))
  rest <- theta[-seq_len(n_coef)]
  if (family %in% c("normal_id", "neg_binomial_2_log")) {
    lp <- lp + dexp(rest, prior$rate, log = TRUE)
  } else if (family == "ordered_logistic") {
    lp <- lp + sum(dnorm(rest, prior$mean, prior$sd, log = TRUE))
  }
  lp
}

make_glm_case <- function(family, n = 60, k = 2, C = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * k), n, k)
  y <- switch(family,
    normal_id = rnorm(n, 1 + x %*% c(0.5, -0.3)[seq_len(k)], 0.7),
    bernoulli_logit = rbinom(n, 1, 0.5),
    poisson_log = rpois(n, 2),
    neg_binomial_2_log = rnbinom(n, mu = 3, size = 2),
    categorical_logit = sample.int(C, n, replace = TRUE),
    ordered_logistic = sample.int(C, n, replace = TRUE)
  )
  list(x = x, y = y, k = k, C = C)
}

random_theta <- function(family, k, C) {
  switch(family,
    normal_id = c(rnorm(k + 1, sd = 0.5), runif(1, 0.5, 2)),
    neg_binomial_2_log = c(rnorm(k + 1, sd = 0.3), runif(1, 0.5, 3)),
    categorical_logit = rnorm(C + k * C, sd = 0.5),
    ordered_logistic = c(rnorm(k, sd = 0.5), sort(rnorm(C - 1))),
    rnorm(k + 1, sd = 0.5)
  )
}

families <- c("normal_id", "bernoulli_logit", "poisson_log", "neg_binomial_2_log",
              "categorical_logit", "ordered_logistic")

test_that("glm_model log density equals likelihood + prior up to one constant", {
  for (f in families) {
    d <- make_glm_case(f)
    m <- glm_model(d$y, d$x, f)
    set.seed(2)
    pts <- t(replicate(5, random_theta(f, d$k, d$C)))
    expect_identical(ncol(pts), length(m$names))
    ours <- model_log_density(m, pts, backend = "cpu")
    ref <- apply(pts, 1, function(th) {
      glm_r_loglik(f, d$y, d$x, th, d$C) + glm_r_logprior(f, th, d$k, d$C)
    })
    # the model drops terms that depend on y only: compare differences
    expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9, info = f)
  }
})

test_that("glm_model is -Inf outside the support", {
  d <- make_glm_case("normal_id")
  m <- glm_model(d$y, d$x, "normal_id")
  expect_identical(model_log_density(m, c(0, 0, 0, -1), backend = "cpu"), -Inf)
  expect_identical(model_log_density(m, c(0, 0, 0, 0), backend = "cpu"), -Inf)
  expect_true(is.finite(model_log_density(m, c(0, 0, 0, 1), backend = "cpu")))
  # so the sampler runs on log(sigma)
  expect_equal(m$lower, c(-Inf, -Inf, -Inf, 0))
  expect_equal(m$upper, rep(Inf, 4))
  d <- make_glm_case("ordered_logistic", C = 4)
  m <- glm_model(d$y, d$x, "ordered_logistic", n_categories = 4)
  expect_identical(model_log_density(m, c(0, 0, 1, 0.5, 2), backend = "cpu"), -Inf)
  expect_identical(model_log_density(m, c(0, 0, Inf, 0.5, 2), backend = "cpu"), -Inf)
})

test_that("glm_model on the device matches the CPU", {
  skip_if_no_device()
  for (f in families[c(5, 6, 1:4)]) {  # the batched families last (see the helper)
    d <- make_glm_case(f, n = 301)
    m <- glm_model(d$y, d$x, f)
    set.seed(3)
    pts <- t(replicate(4, random_theta(f, d$k, d$C)))
    expect_equal(device_eval_or_skip(model_log_density(m, pts, backend = "opencl")),
                 model_log_density(m, pts, backend = "cpu"), tolerance = 1e-10, info = f)
  }
})

test_that("the sampler recovers a Poisson regression posterior computed on a grid", {
  set.seed(11)
  n <- 40
  x <- matrix(rnorm(n, sd = 0.5), n, 1, dimnames = list(NULL, "z"))
  y <- rpois(n, exp(0.7 + 0.8 * x[, 1]))
  m <- glm_model(y, x, "poisson_log", prior = list(sd = 10))
  expect_identical(m$names, c("alpha", "beta[z]"))
  # exact posterior moments by numerical integration on a fine grid
  a <- seq(0, 1.4, length.out = 281)
  b <- seq(-0.3, 1.9, length.out = 281)
  g <- expand.grid(a = a, b = b)
  eta <- outer(rep(1, n), g$a) + x[, 1] %o% g$b
  lp <- colSums(y * eta - exp(eta)) + dnorm(g$a, 0, 10, log = TRUE) +
    dnorm(g$b, 0, 10, log = TRUE)
  w <- exp(lp - max(lp))
  w <- w / sum(w)
  mu <- c(sum(w * g$a), sum(w * g$b))
  sdv <- sqrt(c(sum(w * g$a^2), sum(w * g$b^2)) - mu^2)
  fit <- slice_sample_mv(m, init = c(0, 0), n_iter = 1500, width = 0.5, chains = 4,
                         seed = 5, backend = "cpu")
  s <- summary(fit)
  mcse <- s$sd / sqrt(s$ess_bulk)
  expect_true(all(abs(s$mean - mu) < 4 * mcse), info = paste(s$mean, mu))
  expect_true(all(abs(s$sd / sdv - 1) < 0.1), info = paste(s$sd, sdv))
})

test_that("glm_model checks its arguments", {
  d <- make_glm_case("bernoulli_logit")
  expect_error(glm_model(d$y, d$x, "gaussianx"), "`family` must be")
  expect_error(glm_model(d$y + 2, d$x, "bernoulli_logit"), "`y`")
  expect_error(glm_model(d$y, d$x, prior = list(sd = -1)), "`prior\\$sd` must be")
  expect_error(glm_model(d$y, d$x, prior = 3), "`prior` must be a prior")
  expect_error(glm_model(d$y, d$x, prior = list(shape = 1)), "`prior` has unknown entries \\(shape\\)")
  expect_error(glm_model(d$y[-1], d$x), "`y` must have one value per row")
  d <- make_glm_case("categorical_logit")
  expect_error(glm_model(d$y, d$x, "categorical_logit", n_categories = 1.5),
               "`n_categories` must be")
  expect_error(glm_model(d$y, d$x, "bernoulli_logit"), "`y` must be 0 or 1")
  d <- make_glm_case("bernoulli_logit")
  m <- glm_model(d$y, d$x, "bernoulli_logit")
  expect_error(model_log_density(m, c(1, 2)), "`points` must have 3 columns")
  expect_error(model_log_density(list(), 1), "`model` must be a clbayes model")
})

make_gp_case <- function(n, seed = 1) {
  set.seed(seed)
  coords <- matrix(runif(2 * n), n, 2)
  S <- 1 * exp(-as.matrix(dist(coords)) / 0.2) + 0.5 * diag(n)
  X <- cbind(1, coords[, 1])
  y <- drop(X %*% c(1, -0.5) + t(chol(S)) %*% rnorm(n))
  list(y = y, X = X, coords = coords)
}

# log N(y - X beta; 0, Sigma) by chol + backsolve, plus the inverse-gamma
# kernels of the priors
gp_r_logpost <- function(d, beta, theta, cov = "exponential") {
  D <- as.matrix(dist(d$coords))
  K <- if (cov == "exponential") exp(-D / theta[3]) else exp(-D^2 / (2 * theta[3]^2))
  S <- theta[1] * K + theta[2] * diag(length(d$y))
  R <- chol(S)
  z <- backsolve(R, d$y - d$X %*% beta, transpose = TRUE)
  -sum(log(diag(R))) - 0.5 * sum(z^2) - 3 * log(theta[1]) - 1 / theta[1] -
    3 * log(theta[2]) - 1 / theta[2]
}

test_that("gp_model log density equals the Gaussian likelihood + priors", {
  d <- make_gp_case(30)
  for (cv in c("exponential", "squared_exponential")) {
    m <- gp_model(d$y, d$X, d$coords, cov = cv)
    expect_identical(m$names, c("kappa", "psi", "phi"))
    pts <- rbind(c(1, 0.5, 0.2), c(2, 0.1, 0.5), c(0.3, 1.5, 1), c(1, 1, 4.9))
    ours <- model_log_density(m, pts, backend = "cpu")
    ref <- apply(pts, 1, function(th) gp_r_logpost(d, m$beta, th, cv))
    expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9, info = cv)
  }
  m <- gp_model(d$y, d$X, d$coords)
  out <- model_log_density(m, rbind(c(-1, 1, 0.2), c(1, 0, 0.2), c(1, 1, 6),
                                    c(1, 1, 0.005)), backend = "cpu")
  expect_identical(out, rep(-Inf, 4))
  # the default beta is the GLS estimate at the documented starting value
  r <- lm.fit(d$X, d$y)$residuals
  s2 <- var(r) / 2
  D <- as.matrix(dist(d$coords))
  phi <- median(D[upper.tri(D)]) / 3
  S <- s2 * exp(-D / phi) + s2 * diag(30)
  Si <- solve(S)
  expect_equal(unname(m$beta), drop(solve(t(d$X) %*% Si %*% d$X, t(d$X) %*% Si %*% d$y)),
               tolerance = 1e-8)
  # and the model starts the sampler there
  expect_equal(m$init, c(kappa = s2, psi = s2, phi = phi))
})

test_that("gp_model on the device matches the CPU", {
  skip_if_no_device()
  d <- make_gp_case(50)
  m <- gp_model(d$y, d$X, d$coords)
  pts <- rbind(c(1, 0.5, 0.2), c(2, 0.1, 0.5), c(-1, 1, 1), c(0.3, 1.5, 1))
  expect_equal(model_log_density(m, pts, backend = "opencl"),
               model_log_density(m, pts, backend = "cpu"), tolerance = 1e-10)
})

test_that("the sampler recovers gp_model posterior quantiles computed on a grid", {
  d <- make_gp_case(12, seed = 4)
  m <- gp_model(d$y, d$X, d$coords, priors = list(phi = c(0.01, 1)))
  # the marginal posteriors on a grid, using the density checked above
  gk <- exp(seq(log(0.02), log(40), length.out = 48))
  gp <- seq(0.0105, 0.9995, length.out = 48)
  g <- as.matrix(expand.grid(kappa = gk, psi = gk, phi = gp))
  lp <- model_log_density(m, g, backend = "cpu")
  # cell volumes: log-spaced kappa and psi
  w <- exp(lp - max(lp)) * g[, 1] * g[, 2]
  w <- w / sum(w)
  fit <- slice_sample_mv(m, init = c(1, 0.5, 0.3), n_iter = 2000, width = 1,
                         chains = 4, seed = 9, backend = "cpu")
  # sampled on log kappa, log psi and the logit of phi on its prior's range
  expect_equal(unname(fit$lower), c(0, 0, 0.01))
  expect_equal(unname(fit$upper), c(Inf, Inf, 1))
  draws <- as.array(fit)
  s <- summary(fit)
  for (j in 1:3) {
    marg <- tapply(w, g[, j], sum)
    grid_vals <- as.numeric(names(marg))
    cdf <- cumsum(marg)
    med <- grid_vals[which(cdf >= 0.5)[1]]
    frac <- mean(draws[, , j] < med)
    se <- sqrt(0.25 / s$ess_bulk[j])
    # the grid median is exact to one cell: allow the cell's probability
    cell <- max(marg[which(cdf >= 0.5)[1]], marg[max(1, which(cdf >= 0.5)[1] - 1)])
    expect_lt(abs(frac - 0.5), 4 * se + cell, label = m$names[j])
  }
})

test_that("gp_model gradients match finite differences, both covariances", {
  # n = 75 puts the recursive inverse of cholesky_inverse_cpu.hpp (leaves
  # of 32) through two levels with odd halves; n = 20 is one leaf
  for (n in c(20, 75)) {
    d <- make_gp_case(n, seed = n)
    for (cv in c("exponential", "squared_exponential")) {
      m <- gp_model(d$y, d$X, d$coords, cov = cv)
      pts <- rbind(c(1, 0.5, 0.2), c(2, 0.1, 0.5), c(0.3, 1.5, 1), c(0.7, 0.9, 3.9))
      g <- clbayes:::.cpp_model_gradient(m, pts)
      expect_equal(g$value, model_log_density(m, pts, backend = "cpu"), tolerance = 1e-12)
      expect_equal(g$gradient, finite_diff_gradient(m, pts), tolerance = 1e-6,
                   info = paste(cv, n))
    }
  }
  # outside the support: -Inf with a zero gradient, the other rows as alone
  m <- gp_model(d$y, d$X, d$coords)
  pts <- rbind(c(1, 0.5, 0.2), c(-1, 1, 0.2), c(1, 1, 6), c(1, 0, 0.2))
  g <- clbayes:::.cpp_model_gradient(m, pts)
  expect_identical(g$value[2:4], rep(-Inf, 3))
  expect_identical(g$gradient[2:4, ], matrix(0, 3, 3))
  expect_equal(g$gradient[1, ], drop(clbayes:::.cpp_model_gradient(m, pts[1, , drop = FALSE])$gradient))
})

test_that("a device-resident gp_model computes its gradient on the CPU", {
  skip_if_no_device()
  d <- make_gp_case(40)
  m <- gp_model(d$y, d$X, d$coords)
  pts <- rbind(c(1, 0.5, 0.2), c(2, 0.1, 0.5), c(-1, 1, 1))
  cpu <- clbayes:::.cpp_model_gradient(m, pts)
  m$use_device <- TRUE
  expect_equal(clbayes:::.cpp_model_gradient(m, pts), cpu, tolerance = 1e-12)
})

test_that("hmc_sample_mv recovers gp_model posterior moments computed on a grid", {
  d <- make_gp_case(12, seed = 4)
  m <- gp_model(d$y, d$X, d$coords, priors = list(phi = c(0.01, 1)))
  # moments of log kappa, log psi and phi by quadrature on a grid (log-
  # spaced kappa and psi, cell midpoints in phi), with the density checked
  # above; the grid's error is below 1e-4 (against 80 points a side)
  gk <- exp(seq(log(0.02), log(40), length.out = 48))
  gp <- seq(0.01, 1, length.out = 49)
  gp <- (gp[-1] + gp[-49]) / 2
  g <- as.matrix(expand.grid(kappa = gk, psi = gk, phi = gp))
  lp <- model_log_density(m, g, backend = "cpu")
  w <- exp(lp - max(lp)) * g[, 1] * g[, 2]
  w <- w / sum(w)
  f <- cbind(log(g[, 1]), log(g[, 2]), g[, 3])
  grid_mean <- colSums(w * f)
  grid_sd <- sqrt(colSums(w * f^2) - grid_mean^2)
  fit <- hmc_sample_mv(m, n_iter = 1500, warmup = 500, chains = 16, seed = 3,
                       backend = "cpu")
  dr <- as.array(fit)
  s <- summary(fit)
  draws <- cbind(log(c(dr[, , 1])), log(c(dr[, , 2])), c(dr[, , 3]))
  # bulk ESS is rank based: the same for a variable and its logarithm
  z <- (colMeans(draws) - grid_mean) / (apply(draws, 2, sd) / sqrt(s$ess_bulk))
  expect_true(all(abs(z) <= 4), info = paste(round(z, 2), collapse = " "))
  ratio <- apply(draws, 2, sd) / grid_sd
  expect_true(all(ratio >= 0.9 & ratio <= 1.1), info = paste(round(ratio, 3), collapse = " "))
  expect_true(all(s$rhat < 1.01))
  expect_true(all(s$ess_bulk >= 400))
  expect_gt(fit$n_gradients, 0)
})

test_that("gp_model checks its arguments", {
  d <- make_gp_case(10)
  expect_error(gp_model(d$y[-1], d$X, d$coords), "`X` must be a finite numeric matrix with 9")
  expect_error(gp_model(d$y, d$X, d$coords[-1, ]), "`coords` must be a finite numeric matrix")
  expect_error(gp_model(d$y, d$X, d$coords, priors = list(kappa = c(-1, 1))),
               "`priors\\$kappa` must be")
  expect_error(gp_model(d$y, d$X, d$coords, priors = list(phi = c(2, 1))),
               "`priors\\$phi` must be")
  expect_error(gp_model(d$y, d$X, d$coords, beta = 1), "`beta` must be 2 finite numbers")
  expect_error(gp_model(c(1, NA), matrix(1, 2), matrix(1:2)), "`y` must be a finite")
  expect_error(gp_model(d$y, d$X, d$coords, cov = "matern"), "`cov` must be one of")
})

test_that("models print their number of observations and parameters", {
  d <- make_glm_case("poisson_log", n = 37, k = 3)
  expect_output(print(glm_model(d$y, d$x, "poisson_log")),
                "<clbayes_glm_model> 37 observations, parameters: alpha, beta\\[x1\\]")
  g <- make_gp_case(11)
  expect_output(print(gp_model(g$y, g$X, g$coords)), "11 observations, parameters: kappa, psi, phi")
})

# ---- formula models ---------------------------------------------------------

make_formula_data <- function(n = 80, seed = 1) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n),
                  g = factor(sample(c("a", "b", "c"), n, replace = TRUE)))
  eta <- 0.3 + 0.5 * d$x1 - 0.4 * d$x2 + c(a = 0, b = 0.3, c = -0.2)[as.character(d$g)]
  d$yn <- rnorm(n, eta, 0.8)
  d$yb <- rbinom(n, 1, plogis(eta))
  d$yp <- rpois(n, exp(eta))
  d$ynb <- rnbinom(n, mu = exp(eta), size = 3)
  d
}

test_that("formula models name their variables as coef(glm()) does", {
  d <- make_formula_data()
  f <- yb ~ x1 * g + x2
  m <- glm_model(f, d, family = binomial())
  expect_identical(model_variables(m), names(coef(glm(f, binomial(), d))))
  # the sampled intercept is that of the centred predictors (rstanarm's)
  expect_identical(m$names, c("alpha_centred", names(coef(glm(f, binomial(), d)))[-1]))
  m <- glm_model(yn ~ x1 + g, d)
  expect_identical(model_variables(m), c(names(coef(lm(yn ~ x1 + g, d))), "sigma"))
  expect_identical(m$lower, c(rep(-Inf, 4), 0))
  m <- glm_model(ynb ~ x1, d, family = neg_binomial_2())
  expect_identical(model_variables(m), c("(Intercept)", "x1", "phi"))
  m <- glm_model(yp ~ 0 + x1 + x2, d, family = poisson())
  expect_identical(m$names, c("x1", "x2"))
  expect_identical(names(m$init), m$names)
  # family functions, names and Stan's names give the same model
  for (fam in list(poisson, "poisson", "poisson_log")) {
    expect_identical(glm_model(yp ~ x1, d, family = fam)$family, "poisson_log")
  }
})

test_that("formula models' log density is the likelihood + priors of glm()'s design", {
  d <- make_formula_data()
  X <- model.matrix(~ x1 + g, d)
  set.seed(5)
  cases <- list(
    list(fam = gaussian(), y = d$yn, aux = "sigma",
         ll = function(eta, a) dnorm(d$yn, eta, a, log = TRUE)),
    list(fam = binomial(), y = d$yb, aux = NULL,
         ll = function(eta, a) dbinom(d$yb, 1, plogis(eta), log = TRUE)),
    list(fam = poisson(), y = d$yp, aux = NULL,
         ll = function(eta, a) dpois(d$yp, exp(eta), log = TRUE)),
    list(fam = neg_binomial_2(), y = d$ynb, aux = "phi",
         ll = function(eta, a) dnbinom(d$ynb, mu = exp(eta), size = a, log = TRUE)))
  for (cs in cases) {
    d$resp <- cs$y
    m <- glm_model(resp ~ x1 + g, d, family = cs$fam, prior = student_t(4, 0.5, 2),
                   prior_intercept = cauchy(0, 3), prior_aux = normal(0, 2))
    k <- ncol(X)
    pts <- cbind(matrix(rnorm(5 * k, sd = 0.4), 5, k),
                 if (!is.null(cs$aux)) runif(5, 0.5, 2))
    # the point's intercept is that of the centred columns (rstanarm's)
    Xc <- cbind(1, sweep(X[, -1], 2L, colMeans(X[, -1])))
    ref <- apply(pts, 1, function(th) {
      eta <- drop(Xc %*% th[1:k])
      sum(cs$ll(eta, th[k + 1])) + dcauchy(th[1], 0, 3, log = TRUE) +
        sum(dt((th[2:k] - 0.5) / 2, 4, log = TRUE) - log(2)) +
        (if (!is.null(cs$aux)) dnorm(th[k + 1], 0, 2, log = TRUE) else 0)
    })
    ours <- model_log_density(m, pts, backend = "cpu")
    expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9, info = cs$fam$family)
  }
})

test_that("the models' gradients match finite differences", {
  d <- make_formula_data(n = 50)
  set.seed(6)
  for (fam in list(gaussian(), binomial(), poisson(), neg_binomial_2())) {
    d$resp <- switch(fam$family, gaussian = d$yn, binomial = d$yb, poisson = d$yp, d$ynb)
    m <- glm_model(resp ~ x1 * x2 + g, d, family = fam, prior = student_t(3, 0, 1),
                   prior_aux = cauchy(0, 1))
    pts <- t(replicate(3, m$init + rnorm(length(m$init), sd = 0.1)))
    g <- clbayes:::.cpp_model_gradient(m, pts)
    expect_equal(g$value, model_log_density(m, pts, backend = "cpu"))
    expect_equal(g$gradient, finite_diff_gradient(m, pts), tolerance = 1e-6,
                 info = fam$family)
  }
  # without an intercept; and outside the support the value is -Inf
  m <- glm_model(yn ~ 0 + x1, d, prior = NULL, prior_aux = exponential(2))
  pts <- rbind(c(0.3, 0.9), c(-0.2, 1.4), c(0.1, -1))
  g <- clbayes:::.cpp_model_gradient(m, pts)
  expect_identical(g$value[3], -Inf)
  expect_equal(g$gradient[1:2, ], finite_diff_gradient(m, pts[1:2, ]), tolerance = 1e-6)
  # the matrix forms, categorical families included
  for (f in families) {
    dd <- make_glm_case(f, n = 40)
    m <- glm_model(dd$y, dd$x, f)
    pts <- t(replicate(2, random_theta(f, dd$k, dd$C)))
    expect_equal(clbayes:::.cpp_model_gradient(m, pts)$gradient,
                 finite_diff_gradient(m, pts), tolerance = 1e-6, info = f)
  }
  e <- lm_model(d$yn, cbind(1, d$x1))
  pts <- rbind(c(0.1, 0.2), c(1, -1))
  expect_equal(clbayes:::.cpp_model_gradient(e, pts)$gradient,
               finite_diff_gradient(e, pts), tolerance = 1e-6)
})

test_that("a two-column binomial response is one Bernoulli row per trial", {
  set.seed(7)
  d <- data.frame(x = rnorm(12), n = rpois(12, 4) + 1)
  d$s <- rbinom(12, d$n, plogis(0.2 + 0.7 * d$x))
  m <- glm_model(cbind(s, n - s) ~ x, d, family = binomial())
  expect_identical(m$n_obs, 12L)
  pts <- rbind(c(0.1, 0.5), c(-0.3, 1.2), c(0.4, 0))
  # rstanarm's defaults: the centred intercept ~ normal(0, 2.5) and the
  # coefficient ~ normal(0, 2.5 / sd(x)), sd over the rows of `d`
  ref <- apply(pts, 1, function(th) {
    sum(dbinom(d$s, d$n, plogis(th[1] + th[2] * (d$x - mean(d$x))), log = TRUE)) +
      dnorm(th[1], 0, 2.5, log = TRUE) + dnorm(th[2], 0, 2.5 / sd(d$x), log = TRUE)
  })
  ours <- model_log_density(m, pts, backend = "cpu")
  expect_equal(ours - ours[1], ref - ref[1], tolerance = 1e-9)
  # factor and logical responses as glm() reads them
  d$f <- factor(ifelse(d$s > 2, "yes", "no"))
  m1 <- glm_model(f ~ x, d, family = binomial())
  m2 <- glm_model(I(s > 2) ~ x, d, family = binomial())
  expect_equal(model_log_density(m1, pts, backend = "cpu"),
               model_log_density(m2, pts, backend = "cpu"))
})

test_that("rows with NA follow na.action with a message", {
  d <- make_formula_data(n = 30)
  d$x1[c(3, 9)] <- NA
  expect_message(m <- glm_model(yn ~ x1, d), "2 row\\(s\\) with missing values dropped")
  expect_identical(m$n_obs, 28L)
  expect_error(glm_model(yn ~ x1, d, na.action = na.fail), "missing values")
  # a missing offset drops its row too (offsets: test-offsets.R)
  expect_message(m <- glm_model(yp ~ x2 + offset(x1), d, family = poisson()),
                 "2 row\\(s\\) with missing values dropped")
  expect_equal(m$offset, d$x1[-c(3, 9)])
})

test_that("formula models check their arguments", {
  d <- make_formula_data(n = 30)
  expect_error(glm_model(yn ~ x1, d, family = "gaussianx"), "`family` must be")
  expect_error(glm_model(yn ~ x1, d, family = quasi()), "`family` must be .*quasi\\(\\)")
  expect_error(glm_model(yb ~ x1, d, family = binomial(make.link("sqrt"))),
               "`family` binomial\\(\\) has the link \"sqrt\"")
  expect_error(glm_model(yn ~ x1, d, family = binomial()), "`y` \\(the response of `formula`\\) must be 0/1")
  expect_error(glm_model(I(-yp) ~ x1, d, family = poisson()), "`y` .* must be non-negative whole")
  expect_error(glm_model(yn ~ x1 + x2, d, prior = normal(0, c(1, 2, 3))),
               "`prior` must have scale of length 1 or 2")
  expect_error(glm_model(yn ~ x1, d, prior_intercept = normal(c(0, 1), 1)),
               "`prior_intercept` must have location of length 1 \\(one per parameter\\), not 2")
  expect_error(normal(0, -1), "`scale` must be positive")
  expect_error(student_t(-2, 0, 1), "`df` must be positive")
  expect_error(exponential(0), "`rate` must be positive")
  expect_error(glm_model(yn ~ x1, d, prior = list(shape = 1)),
               "`prior` has unknown entries \\(shape\\)")
  expect_error(glm_model(yn ~ x1, d, prior_aux = list(rate = 1)),
               "`prior_aux` must be a prior made by .*\\(a list with a `dist` entry\\)")
  expect_error(glm_model(yn ~ x1, d, prior = exponential(1)), "exponential\\(\\) is for `prior_aux`")
  expect_error(glm_model(yn ~ x1, d, family = "ordered_logistic"), "matrix form")
  d$x3 <- 2 * d$x1
  expect_error(glm_model(yn ~ x1 + x3, d), "`formula` gives collinear columns .*x3")
  expect_error(lm_model(yn ~ x1, d, prior = cauchy(0, -1)), "`scale` must be positive")
  expect_error(lm_model(d$yn, cbind(1, d$x1), prior = normal()), "formula form")
})

test_that("formula models agree with glm() at large n (binomial, poisson, gaussian)", {
  set.seed(21)
  n <- 1500
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$yb <- rbinom(n, 1, plogis(-0.3 + 0.8 * d$x1 - 0.5 * d$x2))
  d$yp <- rpois(n, exp(0.4 + 0.3 * d$x1 - 0.2 * d$x2))
  d$yn <- 1 + 0.5 * d$x1 - 0.7 * d$x2 + rnorm(n, sd = 0.6)
  for (cs in list(list(yb ~ x1 + x2, binomial()), list(yp ~ x1 + x2, poisson()),
                  list(yn ~ x1 + x2, gaussian()))) {
    ref <- summary(glm(cs[[1]], cs[[2]], d))$coefficients
    m <- glm_model(cs[[1]], d, family = cs[[2]])
    fit <- sample_model(m, n_iter = 300, chains = 4, seed = 3)
    s <- summary(fit)
    z <- (s$mean[1:3] - ref[, 1]) / ref[, 2]
    expect_true(all(abs(z) < 0.25), info = paste(cs[[2]]$family, paste(round(z, 3), collapse = " ")))
    expect_true(all(abs(s$sd[1:3] / ref[, 2] - 1) < 0.15),
                info = paste(cs[[2]]$family, paste(round(s$sd[1:3] / ref[, 2], 3), collapse = " ")))
  }
})

test_that("lm_model with unknown sigma agrees with lm(), and with flat priors with the multivariate t", {
  set.seed(22)
  n <- 400
  d <- data.frame(x = rnorm(n), z = runif(n))
  d$y <- 2 - 0.5 * d$x + 1.5 * d$z + rnorm(n, sd = 0.7)
  ref <- summary(lm(y ~ x + z, d))
  fit <- sample_model(lm_model(y ~ x + z, d), n_iter = 500, chains = 4, seed = 4)
  s <- summary(fit)
  expect_identical(s$variable, c("(Intercept)", "x", "z", "sigma"))
  expect_true(all(abs((s$mean[1:3] - ref$coefficients[, 1]) / ref$coefficients[, 2]) < 0.25))
  expect_lt(abs(s$mean[4] / ref$sigma - 1), 0.05)
  # flat priors on b and sigma: b | y is multivariate t with n - p - 1
  # degrees of freedom, location bhat and scale SSE / (n - p - 1) (X'X)^-1
  small <- d[1:10, ]
  X <- model.matrix(~ x, small)
  bhat <- qr.coef(qr(X), small$y)
  nu <- nrow(X) - ncol(X) - 1
  sse <- sum(qr.resid(qr(X), small$y)^2)
  scl <- sqrt(sse / nu * diag(solve(crossprod(X))))
  m <- lm_model(y ~ x, small, prior = NULL, prior_intercept = NULL, prior_aux = NULL)
  fit <- sample_model(m, n_iter = 1500, chains = 4, seed = 5)
  s <- summary(fit)
  sd_t <- scl * sqrt(nu / (nu - 2))
  mcse <- s$sd[1:2] / sqrt(s$ess_bulk[1:2])
  expect_true(all(abs(s$mean[1:2] - bhat) < 4 * mcse))
  expect_true(all(abs(s$sd[1:2] / sd_t - 1) < 0.1), info = paste(s$sd[1:2] / sd_t))
  # the t's tails: the fraction of draws beyond its 5% and 95% quantiles
  dr <- as.array(fit)
  for (j in 1:2) {
    u <- (dr[, , j] - bhat[j]) / scl[j]
    frac <- mean(abs(u) > qt(0.95, nu))
    expect_lt(abs(frac - 0.1), 4 * sqrt(0.1 * 0.9 / s$ess_bulk[j]))
  }
})

test_that("MASS::negative.binomial works as the negative binomial family", {
  skip_if_not_installed("MASS")
  d <- make_formula_data(n = 40)
  m <- glm_model(ynb ~ x1, d, family = MASS::negative.binomial(2))
  expect_identical(model_variables(m), c("(Intercept)", "x1", "phi"))
  expect_identical(m$family, "neg_binomial_2_log")
})

test_that("formula models on the device match the CPU, values and gradients", {
  skip_if_no_device()
  d <- make_formula_data(n = 301)
  set.seed(8)
  for (fam in list(gaussian(), binomial(), poisson(), neg_binomial_2())) {
    d$resp <- switch(fam$family, gaussian = d$yn, binomial = d$yb, poisson = d$yp, d$ynb)
    m <- glm_model(resp ~ x1 * g, d, family = fam, prior = student_t(3, 0, 1))
    pts <- t(replicate(5, m$init + rnorm(length(m$init), sd = 0.1)))
    cpu <- clbayes:::.cpp_model_gradient(m, pts)
    m$use_device <- TRUE
    dev <- device_eval_or_skip(clbayes:::.cpp_model_gradient(m, pts))
    expect_equal(dev$value, cpu$value, tolerance = 1e-10, info = fam$family)
    expect_equal(dev$gradient, cpu$gradient, tolerance = 1e-9, info = fam$family)
  }
  # without predictors (k = 0)
  m <- glm_model(yp ~ 1, d, family = poisson())
  pts <- matrix(c(0.5, 1, 1.5), ncol = 1)
  cpu <- clbayes:::.cpp_model_gradient(m, pts)
  m$use_device <- TRUE
  expect_equal(clbayes:::.cpp_model_gradient(m, pts), cpu, tolerance = 1e-10)
})
