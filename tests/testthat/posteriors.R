# Posteriors with answers known independently of any sampler, shared by
# tests/testthat/test-posteriors.R (the fast ones) and bench/bench_posteriors.R
# (all of them). Each is a list: name, log_density (a vectorised R function
# of a points matrix, or a clbayes model), init, lower, mean and sd (the
# reference), and stan (a Stan program and its data, for the NUTS
# comparison of the bench). Sourced, not part of the package's R code.

# Conjugate normal: y_i ~ N(mu, 1), mu ~ N(0, 10^2); mu | y is normal.
posterior_conjugate_normal <- function() {
  y <- c(1.2, 0.4, 2.3, 1.9, 0.8, 1.5, 2.7, 0.1, 1.1, 1.6)
  prec <- length(y) + 1 / 100
  list(name = "conjugate normal (1)",
       log_density = function(x) -0.5 * rowSums(outer(x[, 1], y, "-")^2) - x[, 1]^2 / 200,
       init = c(mu = 0), mean = sum(y) / prec, sd = sqrt(1 / prec),
       stan = list(code = "data { int n; vector[n] y; } parameters { real mu; }
                   model { mu ~ normal(0, 10); y ~ normal(mu, 1); }",
                   data = list(n = length(y), y = y)))
}

# A Gaussian with covariance Sigma: exact moments.
posterior_gaussian <- function(name, mu, Sigma) {
  P <- solve(Sigma)
  k <- length(mu)
  list(name = name,
       log_density = function(x) {
         d <- x - rep(mu, each = nrow(x))
         -0.5 * rowSums((d %*% P) * d)
       },
       init = stats::setNames(numeric(k), paste0("x", seq_len(k))),
       mean = mu, sd = sqrt(diag(Sigma)),
       stan = list(code = "data { int k; vector[k] mu; matrix[k, k] L; }
                   parameters { vector[k] x; }
                   model { x ~ multi_normal_cholesky(mu, L); }",
                   data = list(k = k, mu = mu, L = t(chol(Sigma)))))
}

# 10-d, unit variances, correlation 0.9 between every pair.
posterior_correlated10 <- function() {
  k <- 10
  Sigma <- matrix(0.9, k, k) + diag(0.1, k)
  posterior_gaussian("correlated Gaussian (10, rho 0.9)", seq(-1, 1, length.out = k), Sigma)
}

# 100-d with condition number 1e4 and random orientation.
posterior_gaussian100 <- function(seed = 3) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  k <- 100
  Q <- qr.Q(qr(matrix(stats::rnorm(k * k), k)))
  Sigma <- Q %*% diag(10^seq(-2, 2, length.out = k)) %*% t(Q)
  Sigma <- (Sigma + t(Sigma)) / 2
  posterior_gaussian("Gaussian (100, cond 1e4)", stats::rnorm(k), Sigma)
}

# Banana: x1 ~ N(0, 2^2), x2 | x1 ~ N(x1^2 / 2, 1). Reference moments by
# quadrature on a grid (not the closed forms E x2 = 2, sd x2 = 3).
posterior_banana <- function() {
  ld1 <- function(a, b) -a^2 / 8 - (b - a^2 / 2)^2 / 2
  g1 <- seq(-16, 16, length.out = 801)
  g2 <- seq(-10, 80, length.out = 1801)
  w <- exp(outer(g1, g2, ld1))
  w <- w / sum(w)
  m1 <- sum(w * g1)
  m2 <- sum(w * rep(g2, each = length(g1)))
  s1 <- sqrt(sum(w * (g1 - m1)^2))
  s2 <- sqrt(sum(w * (rep(g2, each = length(g1)) - m2)^2))
  list(name = "banana (2)",
       log_density = function(x) ld1(x[, 1], x[, 2]),
       init = c(x1 = 0, x2 = 0), mean = c(m1, m2), sd = c(s1, s2),
       stan = list(code = "parameters { real x1; real x2; }
                   model { x1 ~ normal(0, 2); x2 ~ normal(square(x1) / 2, 1); }",
                   data = list()))
}

# Eight schools, non-centred: theta_j = mu + tau eta_j, y_j ~ N(theta_j,
# s_j), mu ~ N(0, 5^2), tau ~ half-Cauchy(0, 5), eta_j ~ N(0, 1). Reference
# by numerical integration over tau: given tau, (mu, theta) | y is Gaussian.
posterior_eight_schools <- function() {
  y <- c(28, 8, -3, 7, -1, 1, 18, 12)
  s <- c(15, 10, 16, 11, 9, 11, 10, 18)
  J <- length(y)
  # Conditional moments given tau: E and Var of mu, and of eta_j.
  given_tau <- function(tau) {
    S <- diag(s^2 + tau^2) + 25
    Si <- solve(S)
    one <- rep(1, J)
    m_mu <- 25 * drop(one %*% Si %*% y)
    v_mu <- 25 - 625 * drop(one %*% Si %*% one)
    a <- (1 / s^2) / (1 / s^2 + 1 / tau^2)
    b <- 1 - a
    v_theta <- 1 / (1 / s^2 + 1 / tau^2)
    d_mean <- a * y + (b - 1) * m_mu         # E[theta_j - mu]
    d_var <- (b - 1)^2 * v_mu + v_theta      # Var[theta_j - mu]
    logml <- -0.5 * (determinant(S)$modulus + drop(y %*% Si %*% y))
    list(logp = logml + stats::dcauchy(tau, 0, 5, log = TRUE),
         m = c(m_mu, tau, d_mean / tau),
         m2 = c(v_mu + m_mu^2, tau^2, (d_var + d_mean^2) / tau^2))
  }
  lt <- seq(log(1e-4), log(1e4), length.out = 4000)
  parts <- lapply(exp(lt), given_tau)
  logw <- vapply(parts, `[[`, 0, "logp") + lt  # d tau = tau d log tau
  w <- exp(logw - max(logw))
  w <- w / sum(w)
  m <- colSums(w * t(vapply(parts, `[[`, numeric(J + 2), "m")))
  m2 <- colSums(w * t(vapply(parts, `[[`, numeric(J + 2), "m2")))
  ymat <- function(n) matrix(y, n, J, byrow = TRUE)
  smat <- function(n) matrix(s, n, J, byrow = TRUE)
  list(name = "eight schools non-centred (10)",
       log_density = function(x) {
         n <- nrow(x)
         eta <- x[, 3:(J + 2), drop = FALSE]
         theta <- x[, 1] + x[, 2] * eta
         -0.5 * rowSums(((ymat(n) - theta) / smat(n))^2) - 0.5 * rowSums(eta^2) -
           x[, 1]^2 / 50 - log1p((x[, 2] / 5)^2)
       },
       init = stats::setNames(c(0, 1, numeric(J)), c("mu", "tau", paste0("eta", 1:J))),
       lower = c(-Inf, 0, rep(-Inf, J)),
       mean = m, sd = sqrt(m2 - m^2),
       stan = list(code = "data { int J; vector[J] y; vector[J] s; }
                   parameters { real mu; real<lower=0> tau; vector[J] eta; }
                   model { mu ~ normal(0, 5); tau ~ cauchy(0, 5); eta ~ normal(0, 1);
                           y ~ normal(mu + tau * eta, s); }",
                   data = list(J = J, y = y, s = s)))
}

# Regression with known unit noise and flat priors on correlated predictors
# (lm_model(): its posterior is N((X'X)^-1 X'y, (X'X)^-1)).
posterior_regression <- function(k, rho, n = 200, seed = 4) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  Z <- matrix(stats::rnorm(n * (k - 1)), n) %*% chol(rho^abs(outer(1:(k - 1), 1:(k - 1), "-")))
  X <- cbind(1, Z + 3)
  colnames(X) <- c("alpha", paste0("b", 1:(k - 1)))
  y <- drop(X %*% stats::rnorm(k)) + stats::rnorm(n)
  m <- lm_model(y, X)
  list(name = sprintf("lm_model regression (%d, cond %.0e)", k, kappa(crossprod(X), exact = TRUE)),
       log_density = m, init = stats::setNames(numeric(k), colnames(X)),
       mean = m$mean, sd = sqrt(diag(m$cov)),
       stan = list(code = "data { int n; int k; matrix[n, k] X; vector[n] y; }
                   parameters { vector[k] b; } model { y ~ normal(X * b, 1); }",
                   data = list(n = n, k = k, X = X, y = y)))
}

# Neal's funnel in 10 dimensions: v ~ N(0, 3^2), x_i | v ~ N(0, exp(v)).
# Centred: the sampler sees (v, x); non-centred: (v, z) with x = exp(v/2) z.
# Reference for (v, x1): mean 0, sd 3 and sd(x1) = sqrt(E exp(v)) = exp(9/4).
posterior_funnel <- function(centred) {
  k <- 9
  nm <- c("v", paste0(if (centred) "x" else "z", 1:k))
  ld <- if (centred) {
    function(p) -p[, 1]^2 / 18 - 0.5 * rowSums(p[, -1, drop = FALSE]^2) * exp(-p[, 1]) -
      k * p[, 1] / 2
  } else {
    function(p) -p[, 1]^2 / 18 - 0.5 * rowSums(p[, -1, drop = FALSE]^2)
  }
  list(name = sprintf("funnel (10, %s)", if (centred) "centred" else "non-centred"),
       log_density = ld, init = stats::setNames(numeric(k + 1), nm),
       mean = numeric(k + 1),
       sd = c(3, rep(if (centred) exp(9 / 4) else 1, k)),
       stan = list(code = if (centred) {
         "parameters { real v; vector[9] x; } model { v ~ normal(0, 3); x ~ normal(0, exp(v / 2)); }"
       } else {
         "parameters { real v; vector[9] z; } model { v ~ normal(0, 3); z ~ normal(0, 1); }"
       }, data = list()))
}

# The checks of issue 14 on one fit: |z| of every mean against the reference
# (with the Monte Carlo error of the fit's bulk ESS), sd ratios, R-hat and
# the smallest bulk ESS.
check_posterior <- function(fit, p, z_max = 4, sd_range = c(0.9, 1.1),
                            rhat_max = 1.01, ess_min = 400) {
  s <- summary(fit)
  z <- (s$mean - p$mean) / (s$sd / sqrt(s$ess_bulk))
  ratio <- s$sd / p$sd
  out <- list(max_z = max(abs(z)), sd_ratio = range(ratio), rhat = max(s$rhat),
              ess = min(s$ess_bulk))
  out$pass <- out$max_z <= z_max && all(ratio >= sd_range[1] & ratio <= sd_range[2]) &&
    out$rhat < rhat_max && out$ess >= ess_min
  out
}
