# rstan's sampler arguments with rstan's meaning, for both samplers: iter
# (warmup included), warmup = floor(iter / 2), thin, refresh, control and
# init's forms; about 4000 kept draws by default whatever the chains.

std_normal <- function(x) -0.5 * rowSums(x^2)
std_normal_gr <- function(x) -x

test_that("iter counts the warmup, and warmup defaults to floor(iter / 2), in both samplers", {
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, iter = 101, chains = 4, seed = 1)
  expect_equal(f$warmup, 50)
  expect_equal(dim(f$draws)[1L], 51)
  s <- slice_sample_mv(std_normal, c(0, 0), iter = 101, chains = 4, seed = 1)
  expect_equal(s$warmup, 50)  # not extended: chains from one point agree
  expect_equal(dim(s$draws)[1L], 51)
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, iter = 100, warmup = 60,
                     chains = 4, seed = 1)
  expect_equal(c(f$warmup, dim(f$draws)[1L]), c(60, 40))
  for (sampler in list(function(...) hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, ...),
                       function(...) slice_sample_mv(std_normal, c(0, 0), ...))) {
    expect_error(sampler(iter = 100, warmup = 100, chains = 4),
                 "`iter` \\(100\\) must be greater than `warmup` \\(100\\)")
    expect_error(sampler(iter = 100, n_iter = 50, chains = 4), "`iter` .* or `n_iter` .*, not both")
    expect_error(sampler(iter = 1.5, chains = 4), "`iter` must be a whole number")
    expect_error(sampler(refresh = -1, chains = 4), "`refresh` must be a whole number")
    expect_error(sampler(thin = 0, chains = 4), "`thin` must be a whole number of at least 1")
  }
})

test_that("the default run keeps about 4000 draws whatever the number of chains", {
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, warmup = 50, chains = 3, seed = 1)
  expect_equal(dim(f$draws)[1:2], c(1334, 3))
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, warmup = 50, seed = 1)
  expect_equal(dim(f$draws)[1:2], c(250, 16))
  s <- slice_sample_mv(std_normal, c(0, 0), warmup = 50, seed = 1)
  expect_equal(dim(s$draws)[1:2], c(63, 64))
  expect_equal(nsamples(s), 63 * 64)
})

test_that("thin keeps every thin-th draw of the same run", {
  a <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 30, warmup = 20,
                     chains = 4, seed = 3)
  b <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 30, warmup = 20,
                     chains = 4, seed = 3, thin = 3)
  expect_equal(b$draws, a$draws[c(1, 4, 7, 10, 13, 16, 19, 22, 25, 28), , , drop = FALSE])
  expect_equal(b$thin, 3)
  a <- slice_sample_mv(std_normal, c(0, 0), iter = 60, chains = 4, seed = 3)
  b <- slice_sample_mv(std_normal, c(0, 0), iter = 60, chains = 4, seed = 3, thin = 2)
  expect_equal(b$draws, a$draws[seq(1, 30, by = 2), , , drop = FALSE])
})

test_that("control: adapt_delta, max_treedepth and metric as rstan names them", {
  a <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 20, warmup = 30,
                     chains = 4, seed = 4, adapt_delta = 0.9)
  b <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 20, warmup = 30,
                     chains = 4, seed = 4, control = list(adapt_delta = 0.9))
  expect_identical(a$draws, b$draws)
  expect_equal(b$adapt_delta, 0.9)
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 20, warmup = 30,
                     chains = 4, seed = 4, control = list(max_treedepth = 3, metric = "dense_e"))
  expect_equal(f$max_leapfrog, 7)  # a tree of depth 3 runs at most 2^3 - 1 steps
  expect_equal(f$metric, "dense")
  expect_error(hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 4,
                             control = list(stepsize = 0.1)),
               "`control`: `stepsize` not supported \\(supported: adapt_delta, max_treedepth, metric\\)")
  expect_error(hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 4, adapt_delta = 0.8,
                             control = list(adapt_delta = 0.9)),
               "`adapt_delta` or `control\\$adapt_delta`, not both")
  expect_error(hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 4, control = 0.9),
               "`control` must be a named list")
  expect_error(slice_sample_mv(std_normal, c(0, 0), control = list(adapt_delta = 0.9)),
               "`adapt_delta` not supported .*slice sampler has no step size")
  s <- slice_sample_mv(std_normal, c(0, 0), iter = 40, chains = 4, seed = 1,
                       control = list(metric = "diag_e"))
  expect_equal(s$metric, "diagonal")
})

test_that("init in rstan's forms: a function of chain_id, a list per chain, \"0\", \"random\"", {
  m <- lm_model(mpg ~ wt, mtcars)
  # the model samples the intercept of the centred predictors (rstanarm's)
  got <- clbayes:::resolve_init(function(chain_id) list(sigma = chain_id, wt = -1,
                                                        alpha_centred = 30), m, 3)
  expect_equal(unname(got), cbind(30, -1, 1:3))
  expect_equal(colnames(got), m$names)
  expect_error(clbayes:::resolve_init(function() list(sigma = 1, wt = -1, `(Intercept)` = 30),
                                      m, 2), "lack `alpha_centred`")
  expect_equal(clbayes:::resolve_init(function() c(1, 2), std_normal, 2),
               rbind(c(1, 2), c(1, 2)))
  lst <- list(list(a = 1, b = 2), list(a = 3, b = 4))
  expect_equal(clbayes:::resolve_init(lst, std_normal, 2), rbind(c(a = 1, b = 2), c(3, 4)))
  expect_error(clbayes:::resolve_init(lst, std_normal, 3), "one element per chain \\(3\\), not 2")
  # "0": every unconstrained coordinate 0, so sigma (lower bound 0) at 1
  z <- clbayes:::resolve_init("0", m, 2)
  expect_equal(unname(z[1, ]), c(0, 0, 1))
  expect_identical(clbayes:::resolve_init("random", m, 2), m$init)
  expect_error(clbayes:::resolve_init("0", std_normal, 2), "needs a model object")
  expect_error(clbayes:::resolve_init("zero", m, 2), "`init` must be \"random\", \"0\"")
  # a run from a list of starts uses them as given
  f <- hmc_sample_mv(std_normal, init = lst, gradient = std_normal_gr, n_iter = 10,
                     warmup = 10, chains = 2, seed = 1)
  expect_equal(dimnames(f$draws)[[3L]], c("a", "b"))
  f <- hmc_sample_mv(m, init = 0, iter = 200, chains = 4, seed = 1, refresh = 0,
                     backend = "cpu")
  expect_equal(dim(f$draws)[1:2], c(100, 4))
})

test_that("chains = 1 runs HMC and keeps n_iter draws of one chain; chains = 0 is an error", {
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 1, iter = 400, seed = 1,
                     refresh = 0)
  expect_equal(dim(f$draws)[1:2], c(200L, 1L))
  expect_error(hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 0), "`chains`")
})

test_that("cmdstanr's iter_warmup and iter_sampling are warmup and n_iter", {
  f <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 2, iter_warmup = 30,
                     iter_sampling = 20, seed = 1, refresh = 0)
  g <- hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, chains = 2, warmup = 30,
                     n_iter = 20, seed = 1, refresh = 0)
  expect_equal(f$draws, g$draws)
  expect_error(slice_sample_mv(std_normal, c(0, 0), warmup = 5, iter_warmup = 5),
               "`warmup` or `iter_warmup`, not both")
  expect_error(hmc_sample_mv(std_normal, c(0, 0), std_normal_gr, n_iter = 5, iter_sampling = 5),
               "`n_iter` or `iter_sampling`, not both")
})
