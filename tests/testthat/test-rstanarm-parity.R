# One sequence of calls on an rstanarm fit and on a clbayes fit of the same
# logistic regression, with both packages attached (rstanarm last, so its
# exports mask clbayes's): no call fails on either, and the numbers agree
# within Monte Carlo error (issue 47's targets: loo elpd within 1 se,
# interval ends within 0.1 posterior sd).

parity_fits <- function() {
  set.seed(11)
  n <- 200
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- rbinom(n, 1, plogis(-0.3 + 0.8 * d$x1 - 0.5 * d$x2))
  # the same priors in both (rstanarm's without autoscaling; the intercept's
  # is on the centred predictors there, near enough here where x has mean 0)
  rs <- rstanarm::stan_glm(y ~ x1 + x2, stats::binomial(), d, chains = 4, iter = 2000,
                           refresh = 0, seed = 1,
                           prior = rstanarm::normal(0, 2.5, autoscale = FALSE),
                           prior_intercept = rstanarm::normal(0, 10, autoscale = FALSE))
  m <- glm_model(y ~ x1 + x2, d, family = stats::binomial(),
                 prior = clbayes::normal(0, 2.5), prior_intercept = clbayes::normal(0, 10))
  cl <- hmc_sample_mv(m, seed = 1, refresh = 0, backend = "cpu")
  list(rs = rs, cl = cl, d = d)
}

test_that("the same calls work on an rstanarm fit and a clbayes fit, with both attached", {
  skip_on_cran()
  for (p in c("rstanarm", "loo", "posterior", "bayesplot")) skip_if_not_installed(p)
  attached <- "package:rstanarm" %in% search()
  suppressPackageStartupMessages(library(rstanarm))
  if (!attached) on.exit(detach("package:rstanarm"), add = TRUE)
  f <- parity_fits()
  d <- f$d
  nd <- d[1:5, ]
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  # the generics found from the global environment are rstanarm's exports
  # (rstantools' generics), which the clbayes methods extend
  expect_identical(environment(get("log_lik", globalenv())), asNamespace("rstantools"))
  out <- lapply(list(rs = f$rs, cl = f$cl), function(fit) {
    list(
      log_lik = log_lik(fit), log_lik_new = log_lik(fit, newdata = nd),
      pp = posterior_predict(fit, draws = 100), pp_new = posterior_predict(fit, newdata = nd),
      linpred = posterior_linpred(fit), epred = posterior_epred(fit, newdata = nd),
      pi50 = posterior_interval(fit, prob = 0.5), pi90 = posterior_interval(fit),
      pred_int = predictive_interval(fit, newdata = nd, seed = 2),
      prior = prior_summary(fit), r2 = bayes_R2(fit), loo_r2 = suppressWarnings(loo_R2(fit)),
      nsamples = nsamples(fit),
      loo = loo::loo(fit), waic = suppressWarnings(loo::waic(fit)),
      rhat = bayesplot::rhat(fit), neff = bayesplot::neff_ratio(fit),
      nuts = bayesplot::nuts_params(fit), ppc = bayesplot::pp_check(fit),
      fitted = fitted(fit), resid = residuals(fit), vcov = vcov(fit), nobs = nobs(fit),
      formula = formula(fit), family = family(fit), mf = model.frame(fit),
      sigma = sigma(fit), matrix = as.matrix(fit), coef = coef(fit),
      predict = predict(fit, newdata = nd, type = "response"),
      print = utils::capture.output(print(fit)), summary = summary(fit)
    )
  })
  rs <- out$rs
  cl <- out$cl
  sd_rs <- apply(as.matrix(f$rs), 2L, stats::sd)
  # shapes as rstanarm's
  for (nm in c("log_lik", "log_lik_new", "pp_new", "linpred", "epred", "pred_int", "fitted",
               "resid", "vcov", "pi50", "pi90")) {
    expect_identical(dim(as.matrix(cl[[nm]]))[-1L], dim(as.matrix(rs[[nm]]))[-1L], label = nm)
  }
  expect_equal(dim(cl$pp), c(100L, 200L))
  expect_equal(cl$nsamples, 4000)
  expect_equal(posterior::ndraws(f$cl), 4000)  # (rstanarm 2.21 has no ndraws method)
  # posterior's formats (rstanarm 2.21 has no as_draws methods of its own;
  # posterior's default reads its draws matrix)
  ref <- posterior::as_draws_df(as.matrix(f$rs))
  for (conv in list(posterior::as_draws_df, posterior::as_draws_matrix, posterior::as_draws_list,
                    posterior::as_draws_array, posterior::as_draws_rvars, posterior::as_draws)) {
    x <- conv(f$cl)
    expect_identical(posterior::variables(x), posterior::variables(ref))
    expect_equal(posterior::ndraws(x), 4000)
    expect_equal(posterior::nchains(x), 16)
  }
  expect_equal(posterior::extract_variable(posterior::as_draws_df(f$cl), "x1"),
               unname(as.matrix(f$cl)[, "x1"]))
  expect_identical(cl$nobs, rs$nobs)
  expect_identical(cl$family$family, rs$family$family)
  expect_identical(cl$family$link, rs$family$link)
  expect_identical(dim(cl$mf), dim(rs$mf))
  expect_equal(cl$sigma, 1)  # no sigma in a binomial model, as rstanarm
  expect_s3_class(cl$ppc, "ggplot")
  expect_true(all(c("stepsize__", "n_leapfrog__") %in% levels(cl$nuts$Parameter)))
  # the posterior: interval ends, medians and covariances within 0.1 sd
  for (nm in c("pi50", "pi90")) {
    expect_lt(max(abs(cl[[nm]] - rs[[nm]]) / sd_rs), 0.1, label = nm)
  }
  expect_lt(max(abs(cl$coef - rs$coef) / sd_rs), 0.1)
  expect_lt(max(abs(sqrt(diag(cl$vcov)) / sqrt(diag(rs$vcov)) - 1)), 0.1)
  expect_lt(max(abs(cl$fitted - rs$fitted)), 0.02)
  expect_lt(max(abs(cl$predict - rs$predict)), 0.02)
  expect_lt(abs(mean(cl$r2) - mean(rs$r2)), 0.1 * stats::sd(rs$r2))
  expect_lt(abs(mean(cl$loo_r2) - mean(rs$loo_r2)), 0.1 * stats::sd(rs$loo_r2))
  # loo: elpd within 1 se, and loo_compare takes both (no warning about y)
  e_cl <- cl$loo$estimates["elpd_loo", ]
  e_rs <- rs$loo$estimates["elpd_loo", ]
  expect_lt(abs(e_cl[["Estimate"]] - e_rs[["Estimate"]]), e_rs[["SE"]])
  expect_lt(abs(e_cl[["Estimate"]] - e_rs[["Estimate"]]), 1)
  expect_no_warning(cmp <- loo::loo_compare(cl$loo, rs$loo))
  expect_lt(max(abs(cmp[, "elpd_diff"])), 1)
  expect_equal(nrow(loo::loo_compare(f$cl, f$rs)), 2L)
  # diagnostics: both converged
  expect_lt(max(cl$rhat), 1.01)
  expect_gt(min(cl$neff), 0.1)
  # print as rstanarm: Median and MAD_SD, and R-hat to 3 decimals
  expect_true(any(grepl("Median +MAD_SD", cl$print)))
  expect_true(any(grepl("x1 .* 1\\.00[0-9]$", cl$print)))
  # update() runs the model again
  f2 <- update(f$cl, formula. = . ~ . - x2, iter = 600, chains = 4, seed = 2)
  expect_identical(names(coef(f2)), c("(Intercept)", "x1"))
})
