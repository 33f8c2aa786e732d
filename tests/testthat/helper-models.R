# Sampling a model for the model tests: every argument of slice_sample_mv()
# given, so the tests do not move with its defaults.
sample_model <- function(m, n_iter, chains = 4, seed = 1, init = m$init, width = 1) {
  slice_sample_mv(m, init = init, n_iter = n_iter, width = width, method = "univariate",
                  n_proposals = 1, chains = chains, warmup = n_iter, seed = seed,
                  stepout = "warmup", max_steps = 100, metric = "dense",
                  lower = NULL, upper = NULL, backend = "cpu")
}

# Central finite differences of model_log_density() at each row of `pts`.
finite_diff_gradient <- function(m, pts, h = 1e-5) {
  t(apply(pts, 1, function(th) {
    vapply(seq_along(th), function(j) {
      e <- replace(numeric(length(th)), j, h * max(1, abs(th[j])))
      (model_log_density(m, th + e, backend = "cpu") -
         model_log_density(m, th - e, backend = "cpu")) / (2 * e[j])
    }, numeric(1))
  }))
}

# Skip a device comparison of the scalar GLM families while the batched
# GLM likelihood has no device path on this branch (branch glm-batch).
device_eval_or_skip <- function(expr) {
  tryCatch(expr, error = function(e) {
    if (grepl("batched GLM likelihood has no device path", conditionMessage(e))) {
      skip("the batched GLM likelihood's device path is not merged yet")
    }
    stop(e)
  })
}

# The variables a fit of model `m` reports (its sampled parameters unless
# they differ: a centred intercept, hs()'s z_beta).
model_variables <- function(m) if (is.null(m$reported_names)) m$names else m$reported_names
