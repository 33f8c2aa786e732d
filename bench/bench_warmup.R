# ChEES-HMC's warmup on multilevel models (RESULTS.md, "Warmup on
# high-dimensional hierarchical models"): hmc_sample_mv() with its
# defaults on the CPU path, on sleepstudy, cbpp and simulated
# random-intercept logits with many groups. Prints per model and seed the
# wall time, the smallest bulk ESS over the variables a user reads (fixed
# effects, b[...], sigma, Sigma[...]), min ES/s, that ESS per 1000 leapfrog
# steps (each one batched call: a measure that the load of a shared machine
# does not move), the adapted step size and trajectory length, leapfrog
# steps per iteration, and divergences. Run it
# once per installed version to compare them in the same session:
#
#   R_LIBS=/path/to/lib OMP_NUM_THREADS=1 Rscript bench/bench_warmup.R \
#     [sleepstudy] [cbpp] [logit N G] [seeds S]
suppressPackageStartupMessages({
  library(clbayes)
  library(posterior)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 0L) args <- c("sleepstudy", "cbpp", "logit", "2e4", "2000")
seeds <- if ("seeds" %in% args) seq_len(as.integer(args[match("seeds", args) + 1L])) else 1L

models <- list()
if ("sleepstudy" %in% args) {
  data(sleepstudy, package = "lme4")
  models$sleepstudy <- list(formula = Reaction ~ Days + (Days | Subject), data = sleepstudy,
                            family = gaussian())
}
if ("cbpp" %in% args) {
  data(cbpp, package = "lme4")
  models$cbpp <- list(formula = cbind(incidence, size - incidence) ~ period + (1 | herd),
                      data = cbpp, family = binomial())
}
for (at in which(args == "logit")) {
  n <- as.numeric(args[at + 1L])
  G <- as.numeric(args[at + 2L])
  set.seed(45)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), g = factor(sample.int(G, n, replace = TRUE)))
  u <- rnorm(G, 0, 0.7)
  d$y <- rbinom(n, 1, plogis(-0.5 + 0.8 * d$x1 - 0.4 * d$x2 + u[d$g]))
  models[[sprintf("logit %g rows %g groups", n, G)]] <- list(
    formula = y ~ x1 + x2 + (1 | g), data = d, family = binomial())
}

rows <- list()
for (name in names(models)) {
  cfg <- models[[name]]
  m <- glm_model(cfg$formula, cfg$data, family = cfg$family)
  for (seed in seeds) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(hmc_sample_mv(m, seed = seed, backend = "cpu"))
    wall <- proc.time()[["elapsed"]] - t0
    a <- as.array(fit)
    vars <- grep("^z\\[", dimnames(a)[[3L]], value = TRUE, invert = TRUE)
    s <- summarise_draws(subset_draws(as_draws_array(a), variable = vars),
                         "ess_bulk", "rhat")
    rows[[length(rows) + 1L]] <- data.frame(
      model = name, seed = seed, wall_s = round(wall, 1),
      min_ess_bulk = round(min(s$ess_bulk)), min_es_per_s = round(min(s$ess_bulk) / wall, 1),
      ess_per_1k_leapfrog = round(1000 * min(s$ess_bulk) / fit$n_leapfrog, 1),
      max_rhat = round(max(s$rhat), 3), step_size = signif(fit$step_size, 3),
      trajectory_length = signif(fit$trajectory_length, 3),
      leapfrog_per_iter = round(fit$n_leapfrog / (fit$warmup + fit$n_iter), 1),
      divergent = sum(fit$n_divergent), divergent_warmup = fit$n_divergent_warmup)
    print(rows[[length(rows)]], row.names = FALSE)
  }
}
cat(sprintf("\n%s, %s, clbayes %s from %s, OMP_NUM_THREADS=%s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), Sys.info()[["nodename"]],
            utils::packageDescription("clbayes")$Version, find.package("clbayes"),
            Sys.getenv("OMP_NUM_THREADS")))
print(do.call(rbind, rows), row.names = FALSE)
