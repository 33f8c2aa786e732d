# rstan's warnings at the end of a run (sampler_warnings()), for both
# samplers, and the per-iteration sampler settings of nuts_params() against
# the engine's own leapfrog count.

with_convergence_checks <- function(code) {
  old <- options(clbayes.check_convergence = TRUE)
  on.exit(options(old))
  force(code)
}

# every warning's message, the value kept
warnings_of <- function(code) {
  msgs <- character()
  value <- withCallingHandlers(code, warning = function(w) {
    msgs <<- c(msgs, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, messages = msgs)
}

# A logistic regression with predictors on very different scales, in the
# matrix form (uncentred, priors not autoscaled): 10 warmup iterations
# cannot adapt to it.
badly_scaled_logit <- function() {
  set.seed(1)
  n <- 300
  d <- data.frame(x1 = rnorm(n, 0, 10), x2 = rnorm(n, 50, 1))
  d$y <- rbinom(n, 1, plogis(-5 + 0.05 * d$x1 + 0.1 * d$x2))
  glm_model(y = d$y, x = cbind(d$x1 * 100, d$x2), family = binomial())
}

test_that("HMC and slice with warmup = 10 warn as rstan: R-hat and ESS", {
  m <- badly_scaled_logit()
  for (run in list(function() hmc_sample_mv(m, warmup = 10, n_iter = 100, seed = 1,
                                            backend = "cpu"),
                   function() slice_sample_mv(m, warmup = 10, warmup_extend = 0,
                                              n_iter = 50, seed = 1, backend = "cpu"))) {
    w <- with_convergence_checks(warnings_of(run()))
    rhat <- max(summary(w$value)$rhat)
    expect_gt(rhat, 1.05)
    expect_true(any(grepl(sprintf(paste0("^The largest R-hat is %s \\(.*\\), indicating chains ",
                                         "have not mixed.\nRunning the chains for more ",
                                         "iterations may help"), round(rhat, 2)),
                          w$messages)))
    expect_true(any(grepl("^Bulk Effective Samples Size \\(ESS\\) is too low", w$messages)))
    expect_true(any(grepl("^Tail Effective Samples Size \\(ESS\\) is too low", w$messages)))
  }
})

test_that("a converged run of the default size is silent, and the ESS bound is 100 per chain up to 400", {
  f <- with_convergence_checks(expect_no_warning(
    hmc_sample_mv(function(x) -0.5 * rowSums(x^2), c(0, 0), function(x) -x, warmup = 200,
                  seed = 2)))
  expect_lt(max(summary(f)$rhat), 1.01)
  # 2 chains x 150 draws of independent normals: ESS about 300 > 200
  set.seed(5)
  fake <- list(draws = array(stats::rnorm(300), c(150, 2, 1), list(NULL, NULL, "x")),
               sampler = "slice")
  ess <- clbayes:::.ess_bulk(matrix(fake$draws, 150, 2))
  expect_gt(ess, 200)
  expect_no_warning(with_convergence_checks(clbayes:::sampler_warnings(fake)))
  # the same 300 draws as 6 chains of 50: 100 per chain is 600, above the ESS
  fake$draws <- array(fake$draws, c(50, 6, 1), list(NULL, NULL, "x"))
  w <- with_convergence_checks(warnings_of(clbayes:::sampler_warnings(fake)))
  expect_true(any(grepl("^Bulk Effective Samples Size", w$messages)))
  # and with the option off, no R-hat / ESS warnings
  old <- options(clbayes.check_convergence = FALSE)
  on.exit(options(old))
  expect_no_warning(clbayes:::sampler_warnings(fake))
})

test_that("divergences warn in rstan's words, whatever the option", {
  ld <- function(x) -0.5 * rowSums(x^2) - 2000 * (x[, 1] > 1)
  expect_warning(f <- hmc_sample_mv(ld, init = c(0, 0), gradient = function(x) -x,
                                    n_iter = 200, warmup = 200, chains = 4, seed = 6),
                 "^There were [0-9]+ divergent transitions after warmup. See\nhttps://mc-stan.org")
  expect_gt(sum(f$n_divergent), 0)
})

test_that("nuts_params() rebuilds the engine's leapfrog steps; the trajectory cap warns", {
  ld <- function(x) -0.5 * rowSums(x^2)
  gr <- function(x) -x
  f <- hmc_sample_mv(ld, c(0, 0), gr, n_iter = 100, warmup = 100, chains = 4, seed = 8)
  # the engine counts the leapfrog steps of the whole batch of chains
  steps <- clbayes:::hmc_iteration_params(f)$n_leapfrog
  expect_equal(dim(steps), c(100, 4))
  expect_equal(sum(steps[, 1]), f$n_leapfrog - f$n_leapfrog_warmup)
  # chain groups adapt on their own: each group's steps by its own settings
  g2 <- hmc_sample_mv(ld, c(0, 0), gr, n_iter = 100, warmup = 100, chains = 8,
                      chain_groups = 2, seed = 8)
  steps2 <- clbayes:::hmc_iteration_params(g2)$n_leapfrog
  for (g in 1:2) {
    expect_equal(sum(steps2[, 4 * g]),
                 g2$groups[[g]]$n_leapfrog - g2$groups[[g]]$n_leapfrog_warmup)
  }
  if (requireNamespace("bayesplot", quietly = TRUE)) {
    np <- bayesplot::nuts_params(f)
    expect_identical(levels(np$Parameter), c("stepsize__", "n_leapfrog__"))
    expect_equal(nrow(np), 2 * 100 * 4)
    expect_equal(np$Value[np$Parameter == "n_leapfrog__"], c(steps))
    expect_equal(unique(np$Value[np$Parameter == "stepsize__"]), f$step_size)
    expect_error(bayesplot::nuts_params(f, pars = "energy__"), "`pars`: energy__ not recorded")
    expect_error(bayesplot::nuts_params(slice_sample_mv(ld, c(0, 0), iter = 20, chains = 2,
                                                        seed = 1)),
                 "must be a fit of hmc_sample_mv")
  }
  # the engine's base-2 Halton numbers, by hand
  expect_equal(clbayes:::halton(0:6), c(1 / 2, 1 / 4, 3 / 4, 1 / 8, 5 / 8, 3 / 8, 7 / 8))
  # a run whose trajectories (of 4 * h steps: 2, 1, 3, 1) meet a cap of 2
  fake <- list(draws = array(0, c(4, 2, 1), list(NULL, NULL, "x")), sampler = "hmc",
               warmup = 0, n_iter = 4, step_size = 1, trajectory_length = 4,
               max_leapfrog = 2, n_divergent = c(0, 0))
  expect_equal(unname(clbayes:::hmc_iteration_params(fake)$n_leapfrog[, 1]), c(2, 1, 2, 1))
  expect_equal(clbayes:::hmc_capped_transitions(fake), 2)
  old <- options(clbayes.check_convergence = FALSE)
  on.exit(options(old))
  expect_warning(clbayes:::sampler_warnings(fake),
                 "^There were 2 transitions after warmup that hit the trajectory cap of 2 ")
})
