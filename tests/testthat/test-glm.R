# gpu_glm_lp against independent references: densities from base R
# (dnorm, dbinom, dpois, dnbinom, a hand-written softmax, plogis differences),
# gradients against central finite differences of those references, and the
# device path against the CPU path.

# ---- references, written from the definitions, not from the package ----

ref_lp <- function(family, y, x, alpha, beta, extra) {
  switch(family,
    normal_id = sum(dnorm(y, alpha + drop(x %*% beta), extra, log = TRUE)),
    bernoulli_logit = sum(dbinom(y, 1, plogis(alpha + drop(x %*% beta)), log = TRUE)),
    poisson_log = sum(dpois(y, exp(alpha + drop(x %*% beta)), log = TRUE)),
    neg_binomial_2_log = sum(dnbinom(y, mu = exp(alpha + drop(x %*% beta)),
                                     size = extra, log = TRUE)),
    categorical_logit = {
      eta <- sweep(x %*% beta, 2, alpha, "+")
      p <- exp(eta) / rowSums(exp(eta))
      sum(log(p[cbind(seq_along(y), y)]))
    },
    ordered_logistic = {
      eta <- drop(x %*% beta)
      cc <- c(-Inf, extra, Inf)
      sum(log(plogis(cc[y + 1] - eta) - plogis(cc[y] - eta)))
    }
  )
}

# Central differences of f at v, one coordinate at a time.
fd_grad <- function(f, v, h = 1e-5) {
  vapply(seq_along(v), function(i) {
    up <- v; dn <- v
    step <- h * max(1, abs(v[i]))
    up[i] <- up[i] + step; dn[i] <- dn[i] - step
    (f(up) - f(dn)) / (2 * step)
  }, numeric(1))
}

# Data and parameters with known truth for each family.
sim_glm <- function(family, n, k, alpha_vec = FALSE, extra_vec = FALSE,
                    n_cat = 3, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * k), n, k)
  beta <- rnorm(k) * 0.4
  alpha <- if (alpha_vec) rnorm(n, 0.3, 0.2) else 0.3
  extra <- NULL
  if (family == "categorical_logit") {
    beta <- matrix(rnorm(k * n_cat) * 0.4, k, n_cat)
    alpha <- rnorm(n_cat)
    eta <- sweep(x %*% beta, 2, alpha, "+")
    p <- exp(eta) / rowSums(exp(eta))
    y <- apply(p, 1, function(pr) sample.int(n_cat, 1, prob = pr))
    return(list(y = y, x = x, alpha = alpha, beta = beta, extra = NULL))
  }
  eta <- alpha + drop(x %*% beta)
  y <- switch(family,
    normal_id = {
      extra <- if (extra_vec) runif(n, 0.5, 2) else 1.3
      rnorm(n, eta, extra)
    },
    bernoulli_logit = rbinom(n, 1, plogis(eta)),
    poisson_log = rpois(n, exp(eta)),
    neg_binomial_2_log = {
      extra <- if (extra_vec) runif(n, 0.5, 4) else 2.5
      rnbinom(n, mu = exp(eta), size = extra)
    },
    ordered_logistic = {
      extra <- c(-1.2, -0.1, 0.6, 1.8)
      e <- drop(x %*% beta)
      vapply(e, function(ei) sum(runif(1) > plogis(extra - ei)) + 1, numeric(1))
    }
  )
  if (family == "ordered_logistic") alpha <- NULL
  list(y = y, x = x, alpha = alpha, beta = beta, extra = extra)
}

extra_arg <- function(family) {
  switch(family, normal_id = "sigma", neg_binomial_2_log = "phi",
         ordered_logistic = "cuts", NULL)
}

# gpu_glm_lp with the family's arguments spelled out.
call_lp <- function(d, family, ..., x = d$x, y = d$y) {
  args <- list(x = x, beta = d$beta, family = family, ...)
  if (!is.null(y)) args$y <- y
  if (!is.null(d$alpha)) args$alpha <- d$alpha
  if (!is.null(extra_arg(family))) args[[extra_arg(family)]] <- d$extra
  do.call(gpu_glm_lp, args)
}

cases <- list(
  list(family = "normal_id"),
  list(family = "normal_id", alpha_vec = TRUE, extra_vec = TRUE),
  list(family = "bernoulli_logit"),
  list(family = "bernoulli_logit", alpha_vec = TRUE),
  list(family = "poisson_log"),
  list(family = "poisson_log", alpha_vec = TRUE),
  list(family = "neg_binomial_2_log"),
  list(family = "neg_binomial_2_log", alpha_vec = TRUE, extra_vec = TRUE),
  list(family = "categorical_logit"),
  list(family = "ordered_logistic")
)
case_data <- function(cs, n = 157, k = 4, seed = 1) {
  sim_glm(cs$family, n, k, isTRUE(cs$alpha_vec), isTRUE(cs$extra_vec), seed = seed)
}
case_name <- function(cs) {
  paste(cs$family, if (isTRUE(cs$alpha_vec)) "vector alpha",
        if (isTRUE(cs$extra_vec)) "vector sigma/phi")
}

backends <- function() if (gpu_available()) c("cpu", "opencl") else "cpu"

# ---- values ----

test_that("values match base R densities for every family (CPU)", {
  for (cs in cases) {
    d <- case_data(cs)
    expect_equal(call_lp(d, cs$family, backend = "cpu"),
                 ref_lp(cs$family, d$y, d$x, d$alpha, d$beta, d$extra),
                 tolerance = 1e-12, label = case_name(cs))
  }
})

test_that("values match base R densities for every family (device)", {
  skip_if_no_device()
  for (cs in cases) {
    d <- case_data(cs)
    expect_equal(call_lp(d, cs$family, backend = "opencl"),
                 ref_lp(cs$family, d$y, d$x, d$alpha, d$beta, d$extra),
                 tolerance = 1e-12, label = case_name(cs))
  }
})

test_that("propto drops exactly the terms of y and x alone", {
  for (be in backends()) for (cs in cases) {
    d <- case_data(cs)
    full <- call_lp(d, cs$family, gradient = TRUE, backend = be)
    part <- call_lp(d, cs$family, gradient = TRUE, propto = TRUE, backend = be)
    const <- switch(cs$family,
      normal_id = -length(d$y) * 0.5 * log(2 * pi),
      poisson_log = , neg_binomial_2_log = -sum(lgamma(d$y + 1)),
      0)
    expect_equal(as.numeric(full) - as.numeric(part), const, tolerance = 1e-12,
                 label = paste(case_name(cs), be))
    expect_equal(attr(full, "gradient"), attr(part, "gradient"), tolerance = 1e-14)
  }
})

# ---- gradients ----

test_that("gradients match finite differences of the base R reference", {
  for (be in backends()) for (cs in cases) {
    d <- case_data(cs, n = 61, k = 3, seed = 2)
    g <- attr(call_lp(d, cs$family, gradient = TRUE, backend = be), "gradient")
    lab <- paste(case_name(cs), be)
    if (!is.null(d$alpha)) {
      expect_equal(g$alpha, fd_grad(function(a) ref_lp(cs$family, d$y, d$x, a, d$beta, d$extra),
                                    d$alpha), tolerance = 1e-6, label = paste(lab, "alpha"))
    }
    fb <- fd_grad(function(b) ref_lp(cs$family, d$y, d$x, d$alpha,
                                     array(b, dim(as.matrix(d$beta))), d$extra),
                  as.vector(d$beta))
    expect_equal(as.vector(g$beta), fb, tolerance = 1e-6, label = paste(lab, "beta"))
    if (is.matrix(d$beta)) expect_equal(dim(g$beta), dim(d$beta))
    en <- extra_arg(cs$family)
    if (!is.null(en)) {
      fe <- fd_grad(function(e) ref_lp(cs$family, d$y, d$x, d$alpha, d$beta, e), d$extra)
      expect_equal(g[[en]], fe, tolerance = 1e-6, label = paste(lab, en))
    }
    expect_setequal(names(g), c(if (!is.null(d$alpha)) "alpha", "beta", en))
  }
})

# ---- device against CPU ----

rel_close <- function(a, b, tol = 1e-10) {
  max(abs(a - b)) <= tol * max(1, max(abs(b)))
}

expect_paths_agree <- function(d, family, label) {
  cpu <- call_lp(d, family, gradient = TRUE, backend = "cpu")
  dev <- call_lp(d, family, gradient = TRUE, backend = "opencl")
  expect_true(rel_close(as.numeric(dev), as.numeric(cpu)), label = paste(label, "value"))
  gc <- attr(cpu, "gradient")
  gd <- attr(dev, "gradient")
  for (nm in names(gc)) {
    expect_true(rel_close(gd[[nm]], gc[[nm]]), label = paste(label, nm))
  }
}

test_that("device and CPU agree to 1e-10 relative, n not a multiple of the group", {
  skip_if_no_device()
  for (cs in cases) {
    expect_paths_agree(case_data(cs, n = 4999, k = 5, seed = 3), cs$family,
                       paste(case_name(cs), "n = 4999"))
  }
})

test_that("k = 1 and k > n work on both paths", {
  for (cs in cases) {
    for (shape in list(c(200, 1), c(20, 45))) {
      d <- case_data(cs, n = shape[1], k = shape[2], seed = 4)
      lab <- paste(case_name(cs), "n =", shape[1], "k =", shape[2])
      expect_equal(call_lp(d, cs$family, backend = "cpu"),
                   ref_lp(cs$family, d$y, d$x, d$alpha, d$beta, d$extra),
                   tolerance = 1e-12, label = lab)
      if (gpu_available()) expect_paths_agree(d, cs$family, lab)
    }
  }
})

test_that("wide designs (k = 300, 5000) and many categories work on the device", {
  skip_if_no_device()
  d <- sim_glm("bernoulli_logit", 700, 300, seed = 5)
  expect_paths_agree(d, "bernoulli_logit", "k = 300")
  d <- sim_glm("categorical_logit", 500, 7, n_cat = 9, seed = 6)
  expect_paths_agree(d, "categorical_logit", "C = 9")
  # k = 5000: blocks of fewer rows, each work item holding 20 columns
  d <- sim_glm("normal_id", 60, 5000, seed = 12)
  expect_paths_agree(d, "normal_id", "k = 5000")
})

test_that("large n on the CPU path matches base R value and gradient", {
  d <- sim_glm("bernoulli_logit", 200003, 3, seed = 7)
  v <- call_lp(d, "bernoulli_logit", gradient = TRUE, backend = "cpu")
  eta <- d$alpha + drop(d$x %*% d$beta)
  expect_equal(as.numeric(v), sum(dbinom(d$y, 1, plogis(eta), log = TRUE)),
               tolerance = 1e-12)
  expect_equal(attr(v, "gradient")$beta, drop(crossprod(d$x, d$y - plogis(eta))),
               tolerance = 1e-10)
  expect_equal(attr(v, "gradient")$alpha, sum(d$y - plogis(eta)), tolerance = 1e-10)
})

test_that("the row math stays finite where exp() of the linear predictor overflows", {
  # |eta| = 800: exp(eta) is Inf or 0 in doubles
  y <- c(0, 1, 0, 1)
  eta <- c(-800, -800, 800, 800)
  for (width in c(0L, 1L)) {
    b <- clbayes:::.cpp_glm_row_grid("bernoulli_logit", y, eta, rep(1, 4), FALSE, FALSE, width)
    # the limits: log p(y) = -softplus(eta) or -softplus(-eta); d = y - inv_logit(eta)
    expect_equal(b[, 1], c(0, -800, -800, 0), label = width)
    expect_equal(b[, 2], c(0, 1, -1, 0), label = width)
    nb <- clbayes:::.cpp_glm_row_grid("neg_binomial_2_log", y, eta, rep(2.5, 4), FALSE, FALSE,
                                      width)
    expect_true(all(is.finite(nb)), label = width)
    # y = 0 with mu near 0 has probability 1; y = 1 with mu = exp(-800): lp
    # = log(mu) + O(mu), d lp / d eta = 1 - (1 + phi) mu / (mu + phi) = 1
    expect_equal(nb[1:2, 1], c(0, -800), label = width)
    expect_equal(nb[1:2, 2], c(0, 1), label = width)
    if (gpu_available()) {
      dev <- clbayes:::.cpp_glm_row_grid("neg_binomial_2_log", y, eta, rep(2.5, 4), FALSE, TRUE)
      expect_equal(nb, dev, tolerance = 1e-12, label = width)
    }
  }
})

test_that("extreme linear predictors stay finite and accurate", {
  x <- matrix(c(-40, -5, 0, 5, 40), ncol = 1)
  for (be in backends()) {
    v <- gpu_glm_lp(c(1, 0, 1, 0, 1), x, 0, 1, "bernoulli_logit", gradient = TRUE,
                    backend = be)
    expect_equal(as.numeric(v), sum(dbinom(c(1, 0, 1, 0, 1), 1, plogis(x), log = TRUE)),
                 tolerance = 1e-12)
    y <- c(1, 1, 2, 3, 3)
    v <- gpu_glm_lp(y, x, beta = 1, family = "ordered_logistic", cuts = c(-1, 1),
                    backend = be)
    cc <- c(-Inf, -1, 1, Inf)
    ref <- sum(plogis(cc[y + 1] - x, log.p = TRUE) +
               log1p(-exp(plogis(cc[y] - x, log.p = TRUE) - plogis(cc[y + 1] - x, log.p = TRUE))))
    expect_equal(as.numeric(v), ref, tolerance = 1e-10)
  }
})

# ---- resident data ----

test_that("gpu_glm_data keeps data for repeated calls and frees it on GC", {
  d <- sim_glm("poisson_log", 333, 4, seed = 8)
  h <- gpu_glm_data(d$x, d$y)
  expect_s3_class(h, "gpu_glm_data")
  expect_output(print(h), "333 rows, 4 columns")
  for (b in list(d$beta, d$beta * 0.5)) {
    expect_equal(gpu_glm_lp(x = h, alpha = 0.3, beta = b, family = "poisson_log"),
                 ref_lp("poisson_log", d$y, d$x, 0.3, b, NULL), tolerance = 1e-12)
  }
  v <- gpu_glm_lp(x = h, alpha = 0.3, beta = d$beta, family = "poisson_log",
                  gradient = TRUE, backend = "cpu")
  expect_equal(attr(v, "gradient")$beta,
               drop(crossprod(d$x, d$y - exp(0.3 + d$x %*% d$beta))), tolerance = 1e-10)
  # the handle keeps its own y: changing the R copy afterwards changes nothing
  x2 <- d$x
  h2 <- gpu_glm_data(x2, d$y)
  x2[1, 1] <- 100
  expect_equal(gpu_glm_lp(x = h2, alpha = 0.3, beta = d$beta, family = "poisson_log",
                          backend = "cpu"),
               ref_lp("poisson_log", d$y, d$x, 0.3, d$beta, NULL), tolerance = 1e-12)
  rm(h, h2)
  gc()
  expect_true(TRUE)  # reached without a crash after the finalisers ran
  expect_error(gpu_glm_lp(d$y, gpu_glm_data(d$x, d$y), 0, d$beta, "poisson_log"),
               "`y` must be missing")
})

test_that("gpu_glm_data puts the data on the device when there is one", {
  skip_if_no_device()
  d <- sim_glm("bernoulli_logit", 100, 2, seed = 9)
  h <- gpu_glm_data(d$x, d$y)
  expect_true(h$on_device)
  expect_output(print(h), "on the device")
})

# ---- validation ----

test_that("bad inputs give errors that name the argument", {
  set.seed(10)
  x <- matrix(rnorm(20), 10, 2)
  y01 <- rep(0:1, 5)
  lp <- function(...) gpu_glm_lp(..., backend = "cpu")
  expect_error(lp(y01, x, 0, c(1, 1)), "`family` must be given")
  expect_error(lp(y01, x, 0, c(1, 1), "logit"), "`family` must be one of")
  expect_error(lp(y01[-1], x, 0, c(1, 1), "bernoulli_logit"), "`y` must have one value per row")
  expect_error(lp(y01, x, 0, c(1, 1, 1), "bernoulli_logit"), "`beta` must have one value per column")
  expect_error(lp(y01, x, c(0, 1), c(1, 1), "bernoulli_logit"), "`alpha` must be a single number")
  expect_error(lp(y01, x, beta = c(1, 1), family = "bernoulli_logit"), "`alpha` must be given")
  x_bad <- x; x_bad[3, 2] <- NaN
  expect_error(lp(y01, x_bad, 0, c(1, 1), "bernoulli_logit"), "`x` contains NA, NaN or infinite")
  x_bad[3, 2] <- Inf
  expect_error(lp(y01, x_bad, 0, c(1, 1), "bernoulli_logit"), "`x` contains NA, NaN or infinite")
  x_bad[3, 2] <- NA
  expect_error(lp(y01, x_bad, 0, c(1, 1), "bernoulli_logit"), "`x` contains NA, NaN or infinite")
  # in a late row block of a larger x, on every path
  x_big <- matrix(rnorm(10000), 5000, 2)
  x_big[4801, 1] <- -Inf
  y_big <- rep(0:1, 2500)
  for (be in backends()) {
    expect_error(gpu_glm_lp(y_big, x_big, 0, c(1, 1), "bernoulli_logit", backend = be),
                 "`x` contains NA, NaN or infinite", label = be)
  }
  expect_error(gpu_glm_data(x_big, y_big), "`x` contains NA, NaN or infinite")
  expect_error(lp(y01, matrix("a", 10, 2), 0, c(1, 1), "bernoulli_logit"), "`x` must be numeric")
  expect_error(lp(replace(y01, 2, 2), x, 0, c(1, 1), "bernoulli_logit"), "`y` must be 0 or 1")
  expect_error(lp(replace(y01, 2, NA), x, 0, c(1, 1), "bernoulli_logit"), "`y` must be finite")
  expect_error(lp(replace(y01, 2, -1), x, 0, c(1, 1), "poisson_log"), "`y` must be non-negative whole")
  expect_error(lp(replace(y01, 2, 0.5), x, 0, c(1, 1), "neg_binomial_2_log", phi = 1),
               "`y` must be non-negative whole")
  expect_error(lp(y01 + 1, x, 0, c(1, 1), "normal_id", sigma = 0), "`sigma` must be positive")
  expect_error(lp(y01 + 1, x, 0, c(1, 1), "normal_id", sigma = c(1, -1, rep(1, 8))),
               "`sigma` must be positive")
  expect_error(lp(y01 + 1, x, 0, c(1, 1), "normal_id", sigma = c(1, 2)), "`sigma` must be a single")
  expect_error(lp(y01 + 1, x, 0, c(1, 1), "normal_id"), "`sigma` must be given")
  expect_error(lp(y01, x, 0, c(1, 1), "poisson_log", sigma = 1), "`sigma` is not used")
  expect_error(lp(y01, x, 0, c(1, 1), "neg_binomial_2_log", phi = -2), "`phi` must be positive")
  expect_error(lp(y01, x, 0, c(1, 1), "neg_binomial_2_log", phi = NA), "`phi` must be finite")
  B <- matrix(0, 2, 3)
  expect_error(lp(y01 + 1, x, c(0, 0), B, "categorical_logit"), "`alpha` must be one value per category")
  expect_error(lp(y01 + 1, x, c(0, 0, 0), c(1, 1), "categorical_logit"), "`beta` must be a k x C matrix")
  expect_error(lp(y01 + 3, x, c(0, 0, 0), B, "categorical_logit"), "`y` must be whole numbers in 1..ncol")
  expect_error(lp(y01 + 1, x, beta = c(1, 1), family = "ordered_logistic", cuts = c(1, 0)),
               "`cuts` must be strictly increasing")
  expect_error(lp(y01 + 1, x, beta = c(1, 1), family = "ordered_logistic", cuts = c(0, 0)),
               "`cuts` must be strictly increasing")
  expect_error(lp(y01 + 3, x, beta = c(1, 1), family = "ordered_logistic", cuts = c(0, 1)),
               "`y` must be whole numbers in 1..\\(length\\(cuts\\) \\+ 1\\)")
  expect_error(lp(y01 + 1, x, 0, c(1, 1), "ordered_logistic", cuts = 0), "`alpha` is not used")
  expect_error(lp(y01 + 1, x, beta = c(1, 1), family = "ordered_logistic", cuts = numeric()),
               "`cuts` must have at least one value")
  expect_error(lp(y01, x, 0, c(1, NA), "bernoulli_logit"), "`beta` must be finite")
  expect_error(lp(y01, x, Inf, c(1, 1), "bernoulli_logit"), "`alpha` must be finite")
  expect_error(lp(y01, x, 0, c(1, 1), "bernoulli_logit", gradient = NA), "`gradient` must be TRUE or FALSE")
  expect_error(lp(y01, x, 0, c(1, 1), "bernoulli_logit", propto = "yes"), "`propto` must be TRUE or FALSE")
  expect_error(gpu_glm_lp(y01, x, 0, c(1, 1), "bernoulli_logit", backend = "gpu"), "`backend`")
  expect_error(gpu_glm_data(x, y01[-1]), "`y` must have one value per row")
  expect_error(gpu_glm_data(x, replace(y01, 1, NaN)), "`y` must be finite")
  expect_error(gpu_glm_lp(x = x, alpha = 0, beta = c(1, 1), family = "bernoulli_logit"),
               "`y` must be given")
})

test_that("the device path checks y against the family on resident data", {
  skip_if_no_device()
  set.seed(11)
  x <- matrix(rnorm(20), 10, 2)
  h <- gpu_glm_data(x, 0:9)
  expect_error(gpu_glm_lp(x = h, alpha = 0, beta = c(1, 1), family = "bernoulli_logit"),
               "`y` must be 0 or 1")
  expect_error(gpu_glm_lp(x = h, alpha = 0, beta = c(1, 1), family = "normal_id", sigma = -1),
               "`sigma` must be positive")
  expect_true(is.finite(gpu_glm_lp(x = h, alpha = 0, beta = c(1, 1), family = "poisson_log")))
})

# ---- P points per call (a k x P beta) ----

# Data for P points of a scalar family, and each point's value and gradient
# from base R: densities from dnorm / dbinom / dpois / dnbinom, gradients
# in closed form (d alpha = sum d, d beta = x' d with d = d lp / d eta).
sim_points <- function(family, n, k, P, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * k), n, k)
  beta <- matrix(rnorm(k * P) * 0.3, k, P)
  alpha <- rnorm(P, 0.2, 0.3)
  extra <- switch(family, normal_id = runif(P, 0.5, 2), neg_binomial_2_log = runif(P, 0.7, 5))
  eta <- drop(x %*% beta[, 1]) + alpha[1]
  y <- switch(family,
    normal_id = rnorm(n, eta, 1.2),
    bernoulli_logit = rbinom(n, 1, plogis(eta)),
    poisson_log = rpois(n, exp(eta)),
    neg_binomial_2_log = rnbinom(n, mu = exp(eta), size = 2)
  )
  list(y = y, x = x, alpha = alpha, beta = beta, extra = extra)
}

ref_point <- function(family, y, x, alpha, beta, extra) {
  eta <- alpha + drop(x %*% beta)
  mu <- exp(eta)
  switch(family,
    normal_id = list(value = sum(dnorm(y, eta, extra, log = TRUE)),
                     d = (y - eta) / extra^2,
                     extra = sum(((y - eta)^2 / extra^2 - 1) / extra)),
    bernoulli_logit = list(value = sum(dbinom(y, 1, plogis(eta), log = TRUE)),
                           d = y - plogis(eta)),
    poisson_log = list(value = sum(dpois(y, mu, log = TRUE)), d = y - mu),
    neg_binomial_2_log = list(
      value = sum(dnbinom(y, mu = mu, size = extra, log = TRUE)),
      d = y - (y + extra) * mu / (mu + extra),
      extra = sum(1 - (y + extra) / (mu + extra) + log(extra) - log(mu + extra) +
                    digamma(y + extra) - digamma(extra)))
  )
}

scalar_families <- c("normal_id", "bernoulli_logit", "poisson_log", "neg_binomial_2_log")

call_points <- function(d, family, ...) {
  args <- list(y = d$y, x = d$x, alpha = d$alpha, beta = d$beta, family = family, ...)
  if (!is.null(extra_arg(family))) args[[extra_arg(family)]] <- d$extra
  do.call(gpu_glm_lp, args)
}

test_that("P points: values and gradients match base R for every scalar family", {
  for (be in backends()) for (family in scalar_families) for (P in c(3, 64)) {
    d <- sim_points(family, n = 97, k = 4, P = P, seed = P)
    got <- call_points(d, family, gradient = TRUE, backend = be)
    g <- attr(got, "gradient")
    lab <- sprintf("%s P = %d %s", family, P, be)
    expect_length(got, P)
    expect_equal(dim(g$beta), c(4L, P), label = lab)
    expect_setequal(names(g), c("alpha", "beta", extra_arg(family)))
    for (j in seq_len(P)) {
      r <- ref_point(family, d$y, d$x, d$alpha[j], d$beta[, j], d$extra[j])
      expect_equal(got[j], r$value, tolerance = 1e-12, label = paste(lab, "value", j))
      expect_equal(g$alpha[j], sum(r$d), tolerance = 1e-10, label = paste(lab, "alpha", j))
      expect_equal(g$beta[, j], drop(crossprod(d$x, r$d)), tolerance = 1e-10,
                   label = paste(lab, "beta", j))
      if (!is.null(extra_arg(family))) {
        expect_equal(g[[extra_arg(family)]][j], r$extra, tolerance = 1e-10,
                     label = paste(lab, extra_arg(family), j))
      }
    }
  }
})

test_that("P points: gradients match finite differences of the base R density", {
  for (be in backends()) for (family in scalar_families) {
    d <- sim_points(family, n = 41, k = 2, P = 3, seed = 7)
    g <- attr(call_points(d, family, gradient = TRUE, backend = be), "gradient")
    j <- 2
    f <- function(v) ref_point(family, d$y, d$x, v[1], v[2:3], v[4])$value
    fd <- fd_grad(f, c(d$alpha[j], d$beta[, j], if (is.null(d$extra)) 1 else d$extra[j]))
    got <- c(g$alpha[j], g$beta[, j], if (!is.null(d$extra)) g[[extra_arg(family)]][j])
    expect_equal(got, fd[seq_along(got)], tolerance = 1e-6, label = paste(family, be))
  }
})

test_that("P points: alpha and sigma / phi of length 1 are recycled; propto", {
  d <- sim_points("neg_binomial_2_log", n = 50, k = 3, P = 5, seed = 3)
  one <- gpu_glm_lp(d$y, d$x, 0.4, d$beta, "neg_binomial_2_log", phi = 2, backend = "cpu")
  for (j in 1:5) {
    expect_equal(one[j], sum(dnbinom(d$y, mu = exp(0.4 + d$x %*% d$beta[, j]), size = 2,
                                     log = TRUE)), tolerance = 1e-12)
  }
  part <- gpu_glm_lp(d$y, d$x, 0.4, d$beta, "neg_binomial_2_log", phi = 2, propto = TRUE,
                     backend = "cpu")
  expect_equal(one - part, rep(-sum(lgamma(d$y + 1)), 5), tolerance = 1e-10)
})

test_that("P points: a gpu_glm_data object and the device agree with the CPU path", {
  skip_if_no_device()
  for (family in scalar_families) {
    d <- sim_points(family, n = 3001, k = 5, P = 6, seed = 5)
    h <- gpu_glm_data(d$x, d$y)
    args <- list(x = h, alpha = d$alpha, beta = d$beta, family = family, gradient = TRUE,
                 backend = "opencl")
    if (!is.null(extra_arg(family))) args[[extra_arg(family)]] <- d$extra
    dev <- do.call(gpu_glm_lp, args)
    cpu <- call_points(d, family, gradient = TRUE, backend = "cpu")
    expect_true(rel_close(as.numeric(dev), as.numeric(cpu)), label = paste(family, "value"))
    for (nm in names(attr(cpu, "gradient"))) {
      expect_true(rel_close(attr(dev, "gradient")[[nm]], attr(cpu, "gradient")[[nm]]),
                  label = paste(family, nm))
    }
  }
})

test_that("every device path of the batch agrees with the CPU path", {
  # single-point calls, the fused kernel (a ragged last chunk of points),
  # the tensor-core kernel (its fragments emulated where the device has no
  # FP64 mma), and the GEMMs in one pass and in passes over blocks of rows
  # (partial sums and X' D added over the passes, a ragged last block)
  skip_if_no_device()
  paths <- list(list(path = "single", bytes = 0), list(path = "fused", bytes = 0),
                list(path = "mma", bytes = 0),
                list(path = "gemm", bytes = 0), list(path = "gemm", bytes = 1024 * 8 * 11))
  for (family in scalar_families) {
    d <- sim_points(family, n = 2500, k = 6, P = 11, seed = 9)
    ex <- if (is.null(d$extra)) numeric() else d$extra
    cpu <- clbayes:::.cpp_glm_lp_batch(clbayes:::.cpp_glm_data(d$x, d$y, FALSE, TRUE), family,
                                       d$alpha, d$beta, ex, TRUE, FALSE, FALSE)
    h <- clbayes:::.cpp_glm_data(d$x, d$y, TRUE, TRUE)
    for (v in paths) {
      for (gradient in c(TRUE, FALSE)) {
        dev <- clbayes:::.cpp_glm_lp_batch_path(h, family, d$alpha, d$beta, ex, gradient,
                                                FALSE, TRUE, v$path, v$bytes)
        lab <- sprintf("%s %s block %g gradient %s", family, v$path, v$bytes, gradient)
        expect_equal(names(dev), if (gradient) names(cpu) else "value", label = lab)
        for (nm in names(dev)) {
          expect_equal(length(dev[[nm]]), length(cpu[[nm]]), label = paste(lab, nm))
          if (length(cpu[[nm]])) {
            expect_true(rel_close(dev[[nm]], cpu[[nm]]), label = paste(lab, nm))
          }
        }
      }
    }
  }
  expect_error(clbayes:::.cpp_glm_lp_batch_path(h, "normal_id", 0, matrix(0, 6, 1), 1, TRUE,
                                                FALSE, TRUE, "fastest"), "`path` must be")
})

test_that("the tensor-core kernel: several chunks of points, k past one fragment", {
  # 70 points: chunks of 64 and a ragged one of 6; k = 19 spans three
  # 8-column steps of X B and two 16-row tiles of X' D; 1001 rows end in a
  # partial tile of 16
  skip_if_no_device()
  d <- sim_points("bernoulli_logit", n = 1001, k = 19, P = 70, seed = 12)
  h <- clbayes:::.cpp_glm_data(d$x, d$y, TRUE, TRUE)
  dev <- clbayes:::.cpp_glm_lp_batch_path(h, "bernoulli_logit", d$alpha, d$beta, numeric(),
                                          TRUE, FALSE, TRUE, "mma")
  eta <- sweep(d$x %*% d$beta, 2, d$alpha, "+")
  ll <- colSums(dbinom(d$y, 1, plogis(eta), log = TRUE))
  expect_equal(dev$value, ll, tolerance = 1e-12)
  expect_equal(dev$alpha, colSums(d$y - plogis(eta)), tolerance = 1e-10)
  expect_equal(dev$beta, crossprod(d$x, d$y - plogis(eta)), tolerance = 1e-10)
})

test_that("P points with no predictors (k = 0): alpha alone", {
  y <- rep(0:1, 25)
  x <- matrix(numeric(), 50, 0)
  a <- c(-0.5, 0, 1.2)
  for (be in backends()) {
    v <- gpu_glm_lp(y, x, a, matrix(numeric(), 0, 3), "bernoulli_logit", gradient = TRUE,
                    backend = be)
    expect_equal(as.numeric(v), vapply(a, function(ai) sum(dbinom(y, 1, plogis(ai), log = TRUE)),
                                       numeric(1)), tolerance = 1e-12, label = be)
    expect_equal(attr(v, "gradient")$alpha, vapply(a, function(ai) sum(y - plogis(ai)),
                                                   numeric(1)), tolerance = 1e-12, label = be)
    expect_equal(dim(attr(v, "gradient")$beta), c(0L, 3L), label = be)
  }
})

test_that("one point through the batched core equals the single-point call", {
  # P = 1 of glm_lp_batch: the fused single-point kernel on the device
  d <- sim_points("normal_id", n = 301, k = 3, P = 1, seed = 8)
  for (be in backends()) {
    h <- clbayes:::.cpp_glm_data(d$x, d$y, be == "opencl", TRUE)
    got <- clbayes:::.cpp_glm_lp_batch(h, "normal_id", d$alpha, d$beta, d$extra, TRUE,
                                       FALSE, be == "opencl")
    r <- ref_point("normal_id", d$y, d$x, d$alpha, d$beta[, 1], d$extra)
    expect_equal(got$value, r$value, tolerance = 1e-12, label = be)
    expect_equal(drop(got$beta), drop(crossprod(d$x, r$d)), tolerance = 1e-10, label = be)
    expect_equal(got$extra, r$extra, tolerance = 1e-10, label = be)
  }
})

test_that("P points: bad input names the argument, the sizes and the column", {
  d <- sim_points("bernoulli_logit", n = 20, k = 3, P = 4)
  lp <- function(...) gpu_glm_lp(d$y, d$x, ..., backend = "cpu")
  expect_error(lp(0, matrix(0, 2, 4), "bernoulli_logit"),
               "`beta` must have one row per column of `x` \\(3\\), not 2 rows")
  expect_error(lp(c(0, 0), d$beta, "bernoulli_logit"),
               "`alpha` must be a single number or one per column of `beta` \\(4\\), not of length 2")
  b <- d$beta; b[2, 3] <- NA
  expect_error(lp(0, b, "bernoulli_logit"), "`beta` must be finite: column 3")
  b[2, 3] <- Inf
  expect_error(lp(0, b, "bernoulli_logit"), "`beta` must be finite: column 3")
  expect_error(lp(c(0, 0, NaN, 0), d$beta, "bernoulli_logit"), "`alpha` must be finite: column 3")
  expect_error(lp(0, d$beta, "normal_id", sigma = c(1, 1, 1, Inf)),
               "`sigma` must be finite: column 4")
  expect_error(lp(0, d$beta, "normal_id", sigma = c(1, -1, 1, 1)),
               "`sigma` must be positive: column 2")
  expect_error(lp(0, d$beta, "neg_binomial_2_log", phi = c(1, 2)),
               "`phi` must be a single number or one per column of `beta` \\(4\\)")
  expect_error(lp(0, d$beta, "normal_id"), "`sigma` must be given")
  expect_error(gpu_glm_lp(d$y + 1, d$x, beta = d$beta, family = "ordered_logistic",
                          cuts = 0, backend = "cpu"),
               "take one parameter vector per call")
})

test_that("the row math of the kernels equals its C++ twin on a grid", {
  skip_if_no_device()
  grid <- expand.grid(y = c(0, 1, 2, 7, 40), eta = c(-30, -3, -0.2, 0, 0.4, 5, 30),
                      ex = c(0.05, 1, 3.5, 200))
  for (family in scalar_families) {
    y <- if (family == "bernoulli_logit") pmin(grid$y, 1) else grid$y
    y <- if (family == "normal_id") y - 1.5 else y
    for (propto in c(FALSE, TRUE)) {
      dev <- clbayes:::.cpp_glm_row_grid(family, y, grid$eta, grid$ex, propto, TRUE)
      # the C++ twin in SIMD lanes (most rows) and one row at a time (the rest)
      for (width in c(0L, 1L)) {
        cpu <- clbayes:::.cpp_glm_row_grid(family, y, grid$eta, grid$ex, propto, FALSE, width)
        expect_true(all(is.finite(cpu)), label = family)
        expect_equal(dev, cpu, tolerance = 1e-13, label = paste(family, propto, width))
        # and each value: relative where it is above 1, absolute below
        expect_lt(max(abs(dev - cpu) / pmax(abs(dev), 1)), 1e-12,
                  label = paste(family, propto, width))
      }
    }
  }
})

test_that("log y! of the count families, from its table and past it, matches dpois", {
  # counts around the end of the CPU path's table of log y! (0..1023)
  set.seed(21)
  y <- c(0, 1, 5, 1022, 1023, 1024, 1100, 5000)
  x <- matrix(rnorm(length(y)), ncol = 1)
  eta <- log(y + 0.5) + 0.1 * x[, 1]
  for (be in backends()) {
    v <- gpu_glm_lp(y, x, alpha = log(y + 0.5), beta = 0.1, family = "poisson_log",
                    backend = be)
    expect_equal(as.numeric(v), sum(dpois(y, exp(eta), log = TRUE)), tolerance = 1e-12,
                 label = be)
  }
})

test_that("the kernels' own exp and log1p match R's over their whole range", {
  # poisson_log's d lp / d eta at y = 0 is -exp(eta); bernoulli_logit's
  # rows are -log1p(exp(-+eta)) and y - plogis(eta)
  skip_if_no_device()
  eta <- c(seq(-745, 709.7, length.out = 4001), runif(2000, -40, 40), 0, -1e-300)
  dev <- clbayes:::.cpp_glm_row_grid("poisson_log", numeric(length(eta)), eta,
                                     rep(1, length(eta)), TRUE, TRUE)
  ref <- exp(eta)
  normal <- ref > .Machine$double.xmin
  expect_lt(max(abs(-dev[normal, 2] - ref[normal]) / ref[normal]), 5e-16)
  expect_lt(max(abs(-dev[!normal, 2] - ref[!normal])), 1e-322)
  edge <- clbayes:::.cpp_glm_row_grid("poisson_log", c(0, 0, 0), c(-746, 709.79, 709.78),
                                      c(1, 1, 1), TRUE, TRUE)
  expect_equal(-edge[, 2], exp(c(-746, 709.79, 709.78)))
  e2 <- c(seq(-40, 40, length.out = 8001), -700, 700)
  for (y in 0:1) {
    b <- clbayes:::.cpp_glm_row_grid("bernoulli_logit", rep(y, length(e2)), e2,
                                     rep(1, length(e2)), FALSE, TRUE)
    ref_lp <- -log1p(exp(if (y == 1) -e2 else e2))
    expect_lt(max(abs(b[, 1] - ref_lp) / pmax(abs(ref_lp), 1e-300)), 1e-14, label = y)
    expect_lt(max(abs(b[, 2] - (y - plogis(e2)))), 1e-15, label = y)
  }
})

test_that("y outside the support is reported as R prints numbers", {
  x <- matrix(1, 3, 1)
  expect_error(gpu_glm_lp(c(0, 4, 1), x, 0, 1, "bernoulli_logit", backend = "cpu"),
               "[0, 4]", fixed = TRUE)
  expect_error(gpu_glm_lp(c(0.5, 2, 1), x, 0, 1, "poisson_log", backend = "cpu"),
               "[0.5, 2], not all whole numbers", fixed = TRUE)
})
