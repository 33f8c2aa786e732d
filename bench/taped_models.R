# The models of bench/bench_taped.R, each written three ways: an R log
# density as a user writes it for clbayes (`ld`: a points matrix in, one
# value per row out, or `ld_vector`: one parameter vector in, as in Stan),
# `ld_plain` (today's R path where that differs: the same density with a
# loop over the rows), and the same model in Stan (`stan`, `stan_data`).
# Data are simulated with fixed seeds.

taped_models <- function() {
  list(schools = model_schools(), varint = model_varint(), gp = model_gp_poisson(),
       logistic = model_hier_logistic())
}

# Eight schools, non-centred (Rubin 1981; Stan's reference version).
model_schools <- function() {
  y <- c(28, 8, -3, 7, -1, 1, 18, 12)
  s <- c(15, 10, 16, 11, 9, 11, 10, 18)
  ld <- function(p) {
    n <- nrow(p)
    mu <- p[, 1]
    tau <- p[, 2]
    eta <- p[, 3:10, drop = FALSE]
    theta <- mu + tau * eta
    -0.5 * rowSums(((matrix(y, n, 8, byrow = TRUE) - theta) /
                      matrix(s, n, 8, byrow = TRUE))^2) -
      0.5 * rowSums(eta^2) - mu^2 / 50 - log1p((tau / 5)^2)
  }
  list(name = "eight schools, non-centred", ld = ld,
       init = c(mu = 0, tau = 1, stats::setNames(rep(0, 8), paste0("eta[", 1:8, "]"))),
       lower = c(-Inf, 0, rep(-Inf, 8)),
       stan = "
data { int J; vector[J] y; vector<lower=0>[J] sigma; }
parameters { real mu; real<lower=0> tau; vector[J] eta; }
model {
  mu ~ normal(0, 5); tau ~ cauchy(0, 5); eta ~ normal(0, 1);
  y ~ normal(mu + tau * eta, sigma);
}",
       stan_data = list(J = 8L, y = y, sigma = s))
}

# A varying-intercept regression shaped as the radon model (85 groups,
# 919 observations, one predictor): 89 parameters.
model_varint <- function() {
  set.seed(11)
  J <- 85L
  N <- 919L
  g <- c(seq_len(J), sample(J, N - J, replace = TRUE))
  x <- stats::rbinom(N, 1, 0.2)
  a <- stats::rnorm(J, 1.5, 0.3)
  y <- a[g] - 0.7 * x + stats::rnorm(N, 0, 0.75)
  ld <- function(p) {
    n <- nrow(p)
    a <- p[, 1:J, drop = FALSE]
    mu_a <- p[, J + 1]
    sigma_a <- p[, J + 2]
    b <- p[, J + 3]
    sigma_y <- p[, J + 4]
    eta <- a[, g, drop = FALSE] + b * matrix(x, n, N, byrow = TRUE)
    -0.5 * rowSums(((matrix(y, n, N, byrow = TRUE) - eta) / sigma_y)^2) - N * log(sigma_y) -
      0.5 * rowSums(((a - mu_a) / sigma_a)^2) - J * log(sigma_a) -
      mu_a^2 / 200 - b^2 / 200 - sigma_a^2 / 50 - sigma_y^2 / 50
  }
  list(name = "varying intercept (89 parameters)", ld = ld,
       init = c(stats::setNames(rep(1, J), paste0("a[", 1:J, "]")), mu_a = 1,
                sigma_a = 1, b = 0, sigma_y = 1),
       lower = c(rep(-Inf, J + 1), 0, -Inf, 0),
       stan = "
data { int N; int J; int g[N]; vector[N] x; vector[N] y; }
parameters { vector[J] a; real mu_a; real<lower=0> sigma_a; real b; real<lower=0> sigma_y; }
model {
  mu_a ~ normal(0, 10); b ~ normal(0, 10); sigma_a ~ normal(0, 5); sigma_y ~ normal(0, 5);
  a ~ normal(mu_a, sigma_a);
  y ~ normal(a[g] + b * x, sigma_y);
}",
       stan_data = list(N = N, J = J, g = g, x = x, y = y))
}

# A latent Gaussian process Poisson regression: 11 locations, the latent
# values non-centred (f = L z with L the Cholesky factor of the squared
# exponential covariance), lengthscale and marginal sd: 13 parameters.
model_gp_poisson <- function() {
  set.seed(12)
  N <- 11L
  x <- seq(0, 10, length.out = N)
  y <- stats::rpois(N, exp(1 + sin(x / 2)))
  d2 <- outer(x, x, "-")^2
  ld_vector <- function(th) {
    rho <- th[1]
    alpha <- th[2]
    z <- th[3:13]
    K <- alpha^2 * exp(-0.5 * d2 / rho^2) + diag(1e-6, N)
    f <- t(chol(K)) %*% z
    sum(dpois(y, exp(f), log = TRUE)) - 6 * log(rho) - 5 / rho - alpha^2 / 8 - 0.5 * sum(z^2)
  }
  list(name = "latent GP Poisson (11 + 2)", ld = ld_vector,
       ld_plain = function(p) apply(p, 1, ld_vector),
       init = c(rho = 2, alpha = 1, stats::setNames(rep(0, N), paste0("z[", 1:N, "]"))),
       lower = c(0, 0, rep(-Inf, N)),
       stan = "
data { int N; real x[N]; int y[N]; }
parameters { real<lower=0> rho; real<lower=0> alpha; vector[N] z; }
model {
  matrix[N, N] K = cov_exp_quad(x, alpha, rho);
  for (i in 1:N) K[i, i] = K[i, i] + 1e-6;
  rho ~ inv_gamma(5, 5); alpha ~ normal(0, 2); z ~ std_normal();
  y ~ poisson_log(cholesky_decompose(K) * z);
}",
       stan_data = list(N = N, x = x, y = y))
}

# A hierarchical logistic regression written by hand: 95 group effects
# (non-centred), their mean and sd, 3 slopes; 1000 observations: 100
# parameters.
model_hier_logistic <- function() {
  set.seed(13)
  G <- 95L
  N <- 1000L
  K <- 3L
  g <- c(seq_len(G), sample(G, N - G, replace = TRUE))
  X <- matrix(stats::rnorm(N * K), N, K)
  eta <- -0.3 + stats::rnorm(G, 0, 0.8)[g] + X %*% c(0.5, -0.5, 0.25)
  y <- stats::rbinom(N, 1, stats::plogis(eta))
  tX <- t(X)
  ld <- function(p) {
    n <- nrow(p)
    mu <- p[, 1]
    tau <- p[, 2]
    z <- p[, 3:(G + 2), drop = FALSE]
    beta <- p[, (G + 3):(G + 2 + K), drop = FALSE]
    eta <- mu + tau * z[, g, drop = FALSE] + beta %*% tX
    rowSums(matrix(y, n, N, byrow = TRUE) * eta - log1p(exp(eta))) -
      mu^2 / 8 - tau^2 / 2 - 0.5 * rowSums(z^2) - 0.5 * rowSums(beta^2)
  }
  list(name = "hierarchical logistic (100)", ld = ld,
       init = c(mu = 0, tau = 0.5, stats::setNames(rep(0, G), paste0("z[", 1:G, "]")),
                stats::setNames(rep(0, K), paste0("beta[", 1:K, "]"))),
       lower = c(-Inf, 0, rep(-Inf, G + K)),
       stan = "
data { int N; int G; int K; int g[N]; matrix[N, K] X; int y[N]; }
parameters { real mu; real<lower=0> tau; vector[G] z; vector[K] beta; }
model {
  mu ~ normal(0, 2); tau ~ normal(0, 1); z ~ std_normal(); beta ~ normal(0, 1);
  y ~ bernoulli_logit(mu + tau * z[g] + X * beta);
}",
       stan_data = list(N = N, G = G, K = K, g = g, X = X, y = y))
}
