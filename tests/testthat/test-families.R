# The GLM families and links of the core's one table (glm/family.hpp): the
# row math against R's own densities, its gradient against finite
# differences, on the CPU and the device; glm_model() with each against
# glm(); prior weights, subset and proportions with trials as glm() reads
# them.

family_cases <- function() {
  t <- clbayes:::glm_family_table()
  t <- t[t$scalar, ]
  do.call(rbind, lapply(seq_len(nrow(t)), function(i) {
    data.frame(family = t$name[i], r_name = t$r_name[i], extra = t$extra[i],
               link = strsplit(t$links[i], ",", fixed = TRUE)[[1L]], stringsAsFactors = FALSE)
  }))
}

# y, a point (alpha, beta) inside the support, and R's log density of y.
family_data <- function(r_name, link, x) {
  fam <- if (r_name == "neg_binomial_2") poisson(link) else get(r_name)(link)
  mu0 <- switch(r_name, binomial = 0.3, gaussian = 2, 1.5)
  alpha <- fam$linkfun(mu0)
  beta <- c(0.05, -0.03) * (if (link %in% c("inverse", "1/mu^2")) -0.1 else 1) *
    (if (link == "identity") mu0 else 1)
  mu <- fam$linkinv(alpha + drop(x %*% beta))
  n <- nrow(x)
  y <- switch(r_name, gaussian = rnorm(n, mu, 1), binomial = rbinom(n, 1, mu),
              poisson = rpois(n, mu), neg_binomial_2 = rnbinom(n, size = 2, mu = mu),
              Gamma = rgamma(n, 2, 2 / mu), inverse.gaussian = rgamma(n, 4, 4 / mu))
  dens <- function(alpha, beta, ex) {
    m <- fam$linkinv(alpha + drop(x %*% beta))
    sum(switch(r_name, gaussian = dnorm(y, m, ex, log = TRUE),
               binomial = dbinom(y, 1, m, log = TRUE), poisson = dpois(y, m, log = TRUE),
               neg_binomial_2 = dnbinom(y, size = ex, mu = m, log = TRUE),
               Gamma = dgamma(y, ex, ex / m, log = TRUE),
               inverse.gaussian = 0.5 * log(ex / (2 * pi * y^3)) -
                 ex * (y - m)^2 / (2 * m^2 * y)))
  }
  list(y = y, alpha = alpha, beta = beta, dens = dens)
}

test_that("every family and link: the log density is R's, its gradient the finite differences, on each backend", {
  set.seed(11)
  x <- matrix(rnorm(80), 40, 2)
  backends <- c("cpu", if (gpu_available()) "opencl")
  for (i in seq_len(nrow(cases <- family_cases()))) {
    cs <- cases[i, ]
    d <- family_data(cs$r_name, cs$link, x)
    ex <- if (nzchar(cs$extra)) 1.7 else NA
    lp <- function(alpha, beta, ex, backend, gradient = FALSE) {
      args <- list(y = d$y, x = x, alpha = alpha, beta = beta, family = cs$family,
                   link = cs$link, gradient = gradient, backend = backend)
      if (nzchar(cs$extra)) args[[cs$extra]] <- ex
      do.call(gpu_glm_lp, args)
    }
    label <- sprintf("%s, link %s", cs$family, cs$link)
    for (backend in backends) {
      v <- lp(d$alpha, d$beta, ex, backend, TRUE)
      expect_equal(as.numeric(v), d$dens(d$alpha, d$beta, ex), tolerance = 1e-10,
                   label = paste(label, backend))
      g <- attr(v, "gradient")
      h <- 1e-5
      fd <- function(f) (f(h) - f(-h)) / (2 * h)
      expect_equal(g$alpha, fd(function(e) lp(d$alpha + e, d$beta, ex, backend)),
                   tolerance = 1e-6, label = paste(label, backend, "d alpha"))
      expect_equal(g$beta[2], fd(function(e) lp(d$alpha, d$beta + c(0, e), ex, backend)),
                   tolerance = 1e-6, label = paste(label, backend, "d beta"))
      if (nzchar(cs$extra)) {
        expect_equal(g[[cs$extra]], fd(function(e) lp(d$alpha, d$beta, ex + e, backend)),
                     tolerance = 1e-6, label = paste(label, backend, "d", cs$extra))
      }
      # two points in one batched call: the first is the single point
      b2 <- lp(c(d$alpha, d$alpha), cbind(d$beta, d$beta / 2), c(ex, ex)[seq_len(2L)],
               backend)
      expect_equal(b2[1], as.numeric(v), tolerance = 1e-12, label = paste(label, backend, "batch"))
    }
  }
})

test_that("the linked rows stay finite where p or mu underflows", {
  eta <- c(-40, -38, -20, 0, 20, 38, 40)
  for (link in c("probit", "cloglog", "cauchit")) {
    for (y in 0:1) {
      r <- clbayes:::.cpp_glm_row_grid("bernoulli_logit", rep(y, length(eta)), eta,
                                       rep(1, length(eta)), FALSE, FALSE, 0L, link)
      s <- if (y == 1) eta else -eta
      ref <- switch(link, probit = pnorm(s, log.p = TRUE), cauchit = pcauchy(s, log.p = TRUE),
                    cloglog = if (y == 1) log(-expm1(-exp(eta))) else -exp(eta))
      ok <- is.finite(ref)
      expect_equal(r[ok, 1], ref[ok], tolerance = 1e-9, label = paste(link, y))
      expect_true(all(!is.nan(r[, 2])), label = paste(link, y, "derivative"))
    }
  }
  # log Phi(-40) by its asymptotic series, against pnorm's log
  r <- clbayes:::.cpp_glm_row_grid("bernoulli_logit", 1, -40, 1, FALSE, FALSE, 0L, "probit")
  expect_equal(r[1, 1], pnorm(-40, log.p = TRUE), tolerance = 1e-12)
  expect_equal(r[1, 2], exp(dnorm(-40, log = TRUE) - pnorm(-40, log.p = TRUE)), tolerance = 1e-10)
})

test_that("glm_model() with other families and links: the posterior mode is glm()'s, the mean within Monte Carlo error", {
  set.seed(12)
  n <- 400
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  eta <- 0.3 + 0.4 * d$x1 - 0.2 * d$x2
  cases <- list(
    list(Gamma("log"), rgamma(n, 3, 3 / exp(eta))),
    list(inverse.gaussian("log"), clbayes:::rinvgauss(n, exp(eta), 4)),
    list(binomial("probit"), rbinom(n, 1, pnorm(eta))),
    list(binomial("cloglog"), rbinom(n, 1, 1 - exp(-exp(eta)))),
    list(poisson("sqrt"), rpois(n, (2 + eta)^2)),
    list(gaussian("log"), rnorm(n, exp(eta), 0.5)))
  flat <- normal(0, 1e3)
  for (cs in cases) {
    d$y <- cs[[2]]
    fam <- cs[[1]]
    label <- paste(fam$family, fam$link)
    g <- glm(y ~ x1 + x2, family = fam, data = d, start = c(0.3, 0.4, -0.2) *
               (if (fam$link == "sqrt") 0 else 1) + c(if (fam$link == "sqrt") 2 else 0, 0, 0))
    m <- glm_model(y ~ x1 + x2, d, family = fam, prior = flat, prior_intercept = flat,
                   prior_aux = exponential(1e-3))
    # the mode of the coefficients, the extra parameter held at its start
    k <- 3L
    start <- m$init
    f <- function(b) -model_log_density(m, c(b, start[-seq_len(k)]), backend = "cpu")
    mode <- optim(start[seq_len(k)], f, method = "BFGS", control = list(reltol = 1e-14))$par
    # the sampled intercept is that of the centred predictors (rstanarm's)
    mode[1] <- mode[1] - sum(mode[2:3] * colMeans(d[c("x1", "x2")]))
    if (fam$family %in% c("binomial", "poisson")) {
      expect_equal(unname(mode), unname(coef(g)), tolerance = 1e-4, label = label)
    }
    fit <- hmc_sample_mv(m, n_iter = 250, warmup = 400, chains = 8, seed = 3)
    s <- summary(fit)
    z <- (s$mean[1:3] - coef(g)) / sqrt(diag(vcov(g)))
    expect_lt(max(abs(z)), 0.3, label = label)
  }
})

test_that("weights are glm()'s prior weights; proportions with weights are trials; subset selects rows", {
  set.seed(13)
  n <- 120
  d <- data.frame(x = rnorm(n))
  d$y <- rpois(n, exp(0.2 + 0.5 * d$x))
  w <- sample(1:3, n, TRUE)
  # flat priors: differences between points are the likelihood's; each
  # model's sampled intercept is that of its own centred x (rstanarm's:
  # the unweighted mean of the rows it is given)
  m_w <- glm_model(y ~ x, d, poisson(), weights = w, prior = NULL, prior_intercept = NULL)
  rows <- rep(seq_len(n), w)
  m_rep <- glm_model(y ~ x, d[rows, ], poisson(), prior = NULL, prior_intercept = NULL)
  ab <- rbind(c(0.1, 0.4), c(0.3, 0.6))  # (intercept, slope) of x as given
  at <- function(xbar) cbind(ab[, 1] + ab[, 2] * xbar, ab[, 2])
  expect_equal(diff(model_log_density(m_w, at(mean(d$x)))),
               diff(model_log_density(m_rep, at(mean(d$x[rows])))), tolerance = 1e-10)
  th <- ab
  ll <- log_lik(hmc_sample_mv(m_w, n_iter = 20, warmup = 50, seed = 1))
  expect_equal(dim(ll), c(20L * 16L, n))
  d$tr <- sample(1:6, n, TRUE)
  d$s <- rbinom(n, d$tr, plogis(0.3 * d$x))
  m_p <- glm_model(s / tr ~ x, d, binomial(), weights = tr)
  m_c <- glm_model(cbind(s, tr - s) ~ x, d, binomial())
  expect_equal(diff(model_log_density(m_p, th)), diff(model_log_density(m_c, th)),
               tolerance = 1e-10)
  m_s <- glm_model(y ~ x, d, poisson(), subset = x > 0)
  expect_equal(m_s$n_obs, sum(d$x > 0))
  expect_equal(diff(model_log_density(m_s, th)),
               diff(model_log_density(glm_model(y ~ x, d[d$x > 0, ], poisson()), th)),
               tolerance = 1e-10)
})

test_that("bad families, links and weights are errors naming them", {
  d <- data.frame(y = c(1, 0, 1, 1), x = c(0.1, 0.5, -0.3, 1))
  expect_error(glm_model(y ~ x, d, binomial(link = "identity")),
               "binomial.*identity.*\"logit\", \"probit\"")
  expect_error(glm_model(y ~ x, d, quasipoisson()), "`family`")
  expect_error(neg_binomial_2("logit"), "`link` of neg_binomial_2\\(\\)")
  expect_error(gpu_glm_lp(d$y, cbind(d$x), 0, 1, "gamma", shape = 1, link = "probit"),
               "`link` \"probit\" is not a link of gamma")
  expect_error(glm_model(y ~ x, d, binomial(), weights = c(1, -1, 1, 1)), "`weights`")
  expect_error(glm_model(y = d$y, x = cbind(d$x), family = binomial(),
                         weights = c(1, NA, 1, 1)), "`weights`")
  expect_error(glm_model(y ~ x, d, binomial(), weights = 1:3), "`weights`")
  expect_error(glm_model(y ~ x, d, Gamma("log")), "positive for Gamma")
  expect_error(glm_model(y / 3 ~ x, d, binomial(), weights = c(2, 2, 2, 2)),
               "y \\* weights must be whole")
})
