# Multilevel models (group-level terms of lme4's syntax): gradients against
# finite differences, a random-intercept posterior against quadrature,
# posterior means against lme4's estimates, rstanarm's names, predictions,
# and bad input.
skip_if_not_installed("lme4")

fd_gradient_error <- function(m, theta) {
  g <- clbayes:::.cpp_model_gradient(m, matrix(theta, 1L))$gradient
  f <- function(t) clbayes:::.cpp_model_log_density(m, matrix(t, 1L))
  fd <- vapply(seq_along(theta), function(j) {
    h <- 1e-5 * max(1, abs(theta[j]))
    e <- replace(numeric(length(theta)), j, h)
    (f(theta + e) - f(theta - e)) / (2 * h)
  }, 0)
  max(abs(g - fd) / (1 + abs(fd)))
}

# A point inside the support away from the model's init: every z, tau,
# zeta, rho and z_T moved.
moved_point <- function(m, seed) {
  set.seed(seed)
  th <- m$init
  nm <- names(th)
  pick <- function(p) startsWith(nm, p)
  th[pick("z_b") | pick("z_T")] <- stats::rnorm(sum(pick("z_b") | pick("z_T")), 0, 0.7)
  th[pick("tau") | pick("zeta") | pick("sd[")] <- stats::runif(sum(pick("tau") | pick("zeta") |
                                                                   pick("sd[")), 0.3, 2)
  th[pick("rho")] <- stats::runif(sum(pick("rho")), 0.1, 0.9)
  fixed <- seq_len(which(pick("z_b"))[1L] - 1L)
  th[fixed] <- th[fixed] + stats::rnorm(length(fixed), 0, 0.1)
  th
}

sim_data <- function(n, seed) {
  set.seed(seed)
  d <- data.frame(x = stats::rnorm(n), w = stats::runif(n),
                  a = factor(sample(letters[1:6], n, TRUE)),
                  b = factor(sample(1:4, n, TRUE)))
  d$y_norm <- 1 + d$x + stats::rnorm(n)
  d$y_bin <- stats::rbinom(n, 1, 0.4)
  d$y_count <- stats::rpois(n, 2)
  d$k <- stats::rbinom(n, 5, 0.3)
  d
}

test_that("multilevel gradients agree with finite differences for every family and prior", {
  d <- sim_data(80, 1)
  cases <- list(
    list(y_norm ~ x + (x | a), gaussian(), decov()),
    list(y_norm ~ x + (x + w | a), gaussian(), decov(regularization = 2, concentration = 1.5)),
    list(y_norm ~ x + (x + w | a), gaussian(), lkj(df = 3)),
    list(cbind(k, 5 - k) ~ x + (1 | a) + (1 | b), binomial(), decov(shape = 2, scale = 0.5)),
    list(y_bin ~ x + (x || a), binomial(), lkj()),
    list(y_count ~ x + (1 | a/b), poisson(), decov()),
    list(y_count ~ x + (x | b) + offset(log(1 + w)), neg_binomial_2(), decov())
  )
  for (i in seq_along(cases)) {
    cs <- cases[[i]]
    m <- glm_model(cs[[1]], d, family = cs[[2]], prior_covariance = cs[[3]])
    expect_lt(fd_gradient_error(m, moved_point(m, i)), 1e-6)
  }
})

test_that("variables are named as rstanarm names them", {
  data(cbpp, package = "lme4")
  m <- glm_model(cbind(incidence, size - incidence) ~ period + (1 | herd), cbpp, binomial())
  expect_equal(m$reported_names[1:6], c("(Intercept)", "period2", "period3", "period4",
                                        "b[(Intercept) herd:1]", "b[(Intercept) herd:2]"))
  expect_equal(tail(m$reported_names, 1), "Sigma[herd:(Intercept),(Intercept)]")
  data(sleepstudy, package = "lme4")
  m <- lm_model(Reaction ~ Days + (Days | Subject), sleepstudy)
  expect_equal(tail(m$reported_names, 4),
               c("sigma", "Sigma[Subject:(Intercept),(Intercept)]",
                 "Sigma[Subject:Days,(Intercept)]", "Sigma[Subject:Days,Days]"))
  expect_true("b[Days Subject:308]" %in% m$reported_names)
  # rstanarm's autoscaled defaults (prior_summary() of stan_glmer on sleepstudy)
  a <- m$prior_adjusted
  expect_equal(a$prior_intercept$location, mean(sleepstudy$Reaction))
  expect_equal(a$prior_intercept$scale, 2.5 * sd(sleepstudy$Reaction))
  expect_equal(a$prior$scale, 2.5 * sd(sleepstudy$Reaction) / sd(sleepstudy$Days))
  expect_equal(a$prior_aux$rate, 1 / sd(sleepstudy$Reaction))
  # the specified priors, as rstanarm's prior_summary() shows them
  expect_equal(m$prior$scale, 2.5)
  expect_true(m$prior$autoscale)
})

test_that("a random-intercept posterior agrees with quadrature", {
  # y_ij = alpha + b_j + e_ij, b_j ~ N(0, (tau sigma)^2): with alpha and b
  # integrated out, the posterior of (sigma, tau) is two-dimensional.
  set.seed(11)
  J <- 5
  g <- factor(rep(seq_len(J), each = 6))
  y <- 3 + rnorm(J, 0, 1.5)[g] + rnorm(length(g))
  d <- data.frame(y = y, g = g)
  n <- length(y)
  m_a <- mean(y)
  s_a <- 2.5 * sd(y)
  rate <- 1 / sd(y)
  Z <- stats::model.matrix(~ 0 + g)
  grid <- expand.grid(ls = seq(log(0.3), log(4), length.out = 70),
                      lt = seq(log(0.01), log(6), length.out = 70))
  post <- t(vapply(seq_len(nrow(grid)), function(i) {
    sigma <- exp(grid$ls[i])
    tau <- exp(grid$lt[i])
    V <- sigma^2 * (diag(n) + tau^2 * tcrossprod(Z))
    C <- V + s_a^2
    R <- chol(C)
    r <- backsolve(R, y - m_a, transpose = TRUE)
    lp <- -sum(log(diag(R))) - 0.5 * sum(r^2) +
      stats::dexp(sigma, rate, log = TRUE) + stats::dgamma(tau, 1, 1, log = TRUE) +
      grid$ls[i] + grid$lt[i]
    Vi1 <- solve(V, rep(1, n))
    alpha <- (m_a / s_a^2 + sum(Vi1 * y)) / (1 / s_a^2 + sum(Vi1))
    c(lp, sigma, (tau * sigma)^2, alpha)
  }, numeric(4)))
  w <- exp(post[, 1] - max(post[, 1]))
  w <- w / sum(w)
  exact <- colSums(w * post[, 2:4])

  m <- lm_model(y ~ 1 + (1 | g), d)
  fit <- hmc_sample_mv(m, n_iter = 500, warmup = 500, chains = 8, seed = 3, backend = "cpu",
                       adapt_delta = 0.9)
  s <- summary(fit)
  got <- s[match(c("sigma", "Sigma[g:(Intercept),(Intercept)]", "(Intercept)"), s$variable), ]
  se <- got$sd / sqrt(got$ess_bulk)
  expect_true(all(abs(got$mean - exact) < 5 * se + 0.02 * abs(exact)),
              info = paste(format(got$mean), format(exact), collapse = " / "))
})

test_that("posterior means agree with lme4's estimates at large n", {
  set.seed(21)
  n <- 3000
  G <- 30
  d <- data.frame(x = rnorm(n), g = factor(sample.int(G, n, TRUE)))
  u <- cbind(rnorm(G, 0, 0.8), rnorm(G, 0, 0.3))
  d$y <- 0.5 + 0.7 * d$x + u[d$g, 1] + u[d$g, 2] * d$x + rnorm(n)
  d$yb <- rbinom(n, 1, plogis(-0.3 + 0.6 * d$x + u[d$g, 1]))

  fit <- hmc_sample_mv(lm_model(y ~ x + (x | g), d), n_iter = 250, warmup = 250, chains = 8,
                       seed = 1, backend = "cpu")
  ref <- lme4::lmer(y ~ x + (x | g), d)
  s <- summary(fit)
  fe <- s[match(c("(Intercept)", "x"), s$variable), ]
  expect_true(all(abs(fe$mean - lme4::fixef(ref)) < 0.2 * fe$sd + 3 * fe$sd / sqrt(fe$ess_bulk)))
  sd_fit <- attr(VarCorr(fit)$g, "stddev")
  sd_ref <- attr(lme4::VarCorr(ref)$g, "stddev")
  expect_true(all(abs(sd_fit - sd_ref) / sd_ref < 0.25))
  expect_equal(rownames(ranef(fit)$g), levels(d$g))
  expect_equal(cor(ranef(fit)$g[, 1], lme4::ranef(ref)$g[, 1]), 1, tolerance = 0.02)

  fitb <- hmc_sample_mv(glm_model(yb ~ x + (1 | g), d, family = binomial()), n_iter = 250,
                        warmup = 250, chains = 8, seed = 2, backend = "cpu")
  refb <- lme4::glmer(yb ~ x + (1 | g), d, family = binomial())
  s <- summary(fitb)
  fe <- s[match(c("(Intercept)", "x"), s$variable), ]
  expect_true(all(abs(fe$mean - lme4::fixef(refb)) < 0.2 * fe$sd + 3 * fe$sd / sqrt(fe$ess_bulk)))
})

test_that("HMC's trajectory length stays many steps long with thousands of groups", {
  # 2000 varying intercepts (dimension 2004). ChEES sets T near half a
  # period of the widest direction, about pi / 2 or more on the metric's
  # unit scales, and at this dimension the step size is a few tenths, so T
  # spans many leapfrog steps. When the criterion's gradient carried the
  # acceptance-weighted centring of the proposals, T fell to 1-4 steps here
  # (RESULTS.md, "Warmup on high-dimensional hierarchical models").
  set.seed(45)
  G <- 2000
  d <- data.frame(x = rnorm(5 * G), g = factor(rep(seq_len(G), each = 5)))
  d$y <- rbinom(nrow(d), 1, plogis(0.3 + 0.5 * d$x + rnorm(G)[d$g]))
  fit <- suppressWarnings(hmc_sample_mv(glm_model(y ~ x + (1 | g), d, family = binomial()),
                                        n_iter = 10, warmup = 200, seed = 1, backend = "cpu"))
  expect_gt(fit$trajectory_length / fit$step_size, 5)
})

test_that("slice_sample_mv() samples a multilevel model too", {
  data(sleepstudy, package = "lme4")
  d <- sleepstudy[sleepstudy$Subject %in% levels(sleepstudy$Subject)[1:6], ]
  m <- lm_model(Reaction ~ Days + (1 | Subject), d)
  fit <- slice_sample_mv(m, n_iter = 300, warmup = 300, chains = 4, seed = 1, backend = "cpu")
  ref <- lme4::lmer(Reaction ~ Days + (1 | Subject), d)
  expect_equal(unname(fixef(fit)), unname(lme4::fixef(ref)), tolerance = 0.05)
  expect_equal(dimnames(as.array(fit))[[3L]], m$reported_names)
})

test_that("predictions follow re.form, and new levels draw from the population", {
  data(sleepstudy, package = "lme4")
  m <- lm_model(Reaction ~ Days + (Days | Subject), sleepstudy)
  fit <- hmc_sample_mv(m, n_iter = 100, warmup = 150, chains = 4, seed = 5, backend = "cpu")
  d <- as.matrix(as.data.frame(fit)[, -(1:2)])
  nd <- data.frame(Days = c(2, 7), Subject = c("309", "309"))
  by_hand <- colMeans(d[, "(Intercept)"] + d[, "b[(Intercept) Subject:309]"] +
                        outer(d[, "Days"] + d[, "b[Days Subject:309]"], nd$Days))
  expect_equal(predict(fit, nd), unname(by_hand), tolerance = 1e-10)
  fixed_only <- colMeans(d[, "(Intercept)"] + outer(d[, "Days"], nd$Days))
  expect_equal(predict(fit, nd, re.form = NA), unname(fixed_only), tolerance = 1e-10)
  expect_equal(predict(fit, nd, re.form = ~ (Days | Subject)), unname(by_hand),
               tolerance = 1e-10)
  # the model's own rows, with every term
  expect_equal(length(predict(fit)), nrow(sleepstudy))
  expect_equal(dim(log_lik(fit)), c(400L, nrow(sleepstudy)))
  # a new level: effects drawn from N(0, Sigma) per draw, so the spread of
  # the linear predictor grows by about the group sd
  set.seed(1)
  pp_new <- posterior_predict(fit, data.frame(Days = 0, Subject = "new"))
  pp_fix <- posterior_predict(fit, data.frame(Days = 0, Subject = "new"), re.form = NA)
  sd_int <- sqrt(mean(d[, "Sigma[Subject:(Intercept),(Intercept)]"]))
  expect_gt(var(c(pp_new)), var(c(pp_fix)) + 0.3 * sd_int^2)
  expect_error(predict(fit, nd, re.form = ~ (1 | Other)), "re.form")
  expect_equal(names(coef(fit)), "Subject")
  expect_equal(as.matrix(coef(fit)$Subject),
               as.matrix(sweep(ranef(fit)$Subject, 2L, fixef(fit), "+")))
  expect_s3_class(VarCorr(fit), "VarCorr.merMod")
})

test_that("bad group-level terms give errors naming the term", {
  d <- sim_data(40, 3)
  d$one <- factor("A")
  expect_error(glm_model(y_norm ~ x + (1 | one), d), "\\(1 \\| one\\).*at least two")
  d2 <- d
  d2$a[3] <- NA
  expect_error(glm_model(y_norm ~ x + (1 | a), d2), "\\(1 \\| a\\).*missing values")
  expect_error(glm_model(y_norm ~ x + (nope | a), d), "\\(nope \\| a\\).*`nope`")
  expect_error(glm_model(y_norm ~ x + (1 | a), d, family = "categorical_logit"), "family")
  expect_error(glm_model(y_norm ~ x + (1 | a), d, prior_covariance = normal()),
               "prior_covariance")
  # an unused level is dropped, as lme4 drops it
  d$a <- factor(d$a, levels = c(levels(d$a), "unused"))
  m <- glm_model(y_norm ~ x + (1 | a), d)
  expect_false("b[(Intercept) a:unused]" %in% m$reported_names)
  expect_equal(length(m$group_terms[[1]]$levels), 6L)
})

test_that("the device path of a multilevel model matches the CPU path", {
  skip_if_no_device()
  d <- sim_data(300, 7)
  cases <- list(
    list(y_norm ~ x + w + (x | a) + (1 | b), gaussian()),
    list(cbind(k, 5 - k) ~ x + (1 | a/b), binomial()),
    list(y_count ~ x + (x || a) + offset(log(1 + w)), poisson()),
    list(y_count ~ x + (1 | a), neg_binomial_2())
  )
  for (i in seq_along(cases)) {
    m <- glm_model(cases[[i]][[1]], d, family = cases[[i]][[2]])
    pts <- t(vapply(1:20, function(s) moved_point(m, 100 * i + s), m$init))
    cpu <- clbayes:::.cpp_model_gradient(m, pts)
    m$use_device <- TRUE
    dev <- clbayes:::.cpp_model_gradient(m, pts)
    expect_equal(dev$value, cpu$value, tolerance = 1e-10)
    expect_equal(dev$gradient, cpu$gradient, tolerance = 1e-9)
  }
})
