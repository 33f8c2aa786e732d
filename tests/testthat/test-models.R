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
  d <- make_glm_case("ordered_logistic", C = 4)
  m <- glm_model(d$y, d$x, "ordered_logistic", n_categories = 4)
  expect_identical(model_log_density(m, c(0, 0, 1, 0.5, 2), backend = "cpu"), -Inf)
  expect_identical(model_log_density(m, c(0, 0, Inf, 0.5, 2), backend = "cpu"), -Inf)
})

test_that("glm_model on the device matches the CPU", {
  skip_if_no_device()
  for (f in families) {
    d <- make_glm_case(f, n = 301)
    m <- glm_model(d$y, d$x, f)
    set.seed(3)
    pts <- t(replicate(4, random_theta(f, d$k, d$C)))
    expect_equal(model_log_density(m, pts, backend = "opencl"),
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
  expect_error(glm_model(d$y, d$x, "binomial"), "should be one of")
  expect_error(glm_model(d$y + 2, d$x, "bernoulli_logit"), "`y`")
  expect_error(glm_model(d$y, d$x, prior = list(sd = -1)), "`prior\\$sd` must be")
  expect_error(glm_model(d$y, d$x, prior = 3), "`prior` must be a list")
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
