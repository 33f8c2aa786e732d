# Multilevel models against rstanarm's stan_glmer in the same run (issue:
# multilevel models). Both with their defaults, one thread each:
# rstanarm 4 chains x 2000 iterations (cores = 1); clbayes hmc_sample_mv()
# on the CPU path. Prints wall and CPU seconds, the smallest bulk and tail
# ESS over the variables both report (fixed effects, b[...], sigma,
# Sigma[...]), ES/s by wall time, the largest R-hat, and the largest
# |mean difference| in rstanarm's posterior sds.
#
#   OMP_NUM_THREADS=1 Rscript bench/bench_multilevel.R [sleepstudy] [cbpp] [logit N G]
#
# Needs rstanarm (Debian: r-cran-rstanarm, precompiled), lme4 and posterior.
suppressPackageStartupMessages({
  library(clbayes)
  library(rstanarm)
  library(posterior)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 0L) args <- c("sleepstudy", "cbpp", "logit", "1e5", "1000")

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
if ("logit" %in% args) {
  at <- match("logit", args)
  n <- as.numeric(args[at + 1L])
  G <- as.numeric(args[at + 2L])
  set.seed(45)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), g = factor(sample.int(G, n, replace = TRUE)))
  u <- rnorm(G, 0, 0.7)
  d$y <- rbinom(n, 1, plogis(-0.5 + 0.8 * d$x1 - 0.4 * d$x2 + u[d$g]))
  models[[sprintf("logit_%g_rows_%g_groups", n, G)]] <- list(
    formula = y ~ x1 + x2 + (1 | g), data = d, family = binomial())
}

timed <- function(expr) {
  t0 <- proc.time()
  value <- force(expr)
  t <- proc.time() - t0
  list(value = value, wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]] +
         t[["user.child"]] + t[["sys.child"]])
}
min_ess <- function(a, vars) {
  s <- summarise_draws(subset_draws(as_draws_array(a), variable = vars),
                       "mean", "sd", "ess_bulk", "ess_tail", "rhat")
  s
}

rows <- list()
for (name in names(models)) {
  cfg <- models[[name]]
  rs <- timed(stan_glmer(cfg$formula, data = cfg$data, family = cfg$family, chains = 4,
                         cores = 1, seed = 1, refresh = 0))
  m <- glm_model(cfg$formula, cfg$data, family = cfg$family)
  cl <- timed(hmc_sample_mv(m, seed = 1, backend = "cpu"))
  vars <- intersect(dimnames(as.array(cl$value))[[3L]], colnames(as.matrix(rs$value)))
  s_rs <- min_ess(as.array(rs$value), vars)
  s_cl <- min_ess(as.array(cl$value), vars)
  z <- (s_cl$mean - s_rs$mean) / s_rs$sd
  worst <- order(-abs(z))[1:3]
  cat(sprintf("%s: largest |mean difference| / rstanarm sd: %s\n", name,
              paste(sprintf("%s %.3f (%.4g vs %.4g)", vars[worst], z[worst], s_cl$mean[worst],
                            s_rs$mean[worst]), collapse = "; ")))
  for (who in c("rstanarm", "clbayes")) {
    s <- if (who == "rstanarm") s_rs else s_cl
    t <- if (who == "rstanarm") rs else cl
    rows[[length(rows) + 1L]] <- data.frame(
      model = name, sampler = who, wall_s = round(t$wall, 1), cpu_s = round(t$cpu, 1),
      min_ess_bulk = round(min(s$ess_bulk)), min_ess_tail = round(min(s$ess_tail)),
      min_es_per_s = round(min(s$ess_bulk) / t$wall, 1), max_rhat = sprintf("%.4f", max(s$rhat)),
      max_abs_z = if (who == "clbayes") sprintf("%.3f", max(abs(z))) else "",
      divergent = if (who == "clbayes") sum(cl$value$n_divergent) else
        sum(rstan::get_divergent_iterations(rs$value$stanfit)))
  }
  out <- do.call(rbind, rows)
  out$ratio <- NA
  for (nm in unique(out$model)) {
    i <- which(out$model == nm)
    out$ratio[i[2L]] <- round(out$min_es_per_s[i[2L]] / out$min_es_per_s[i[1L]], 2)
  }
  print(out[out$model == name, ], row.names = FALSE)
}
cat(sprintf("\n%s, %s, R %s, rstanarm %s, clbayes %s, OMP_NUM_THREADS=%s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), Sys.info()[["nodename"]],
            getRversion(), packageVersion("rstanarm"), utils::packageDescription("clbayes")$Version,
            Sys.getenv("OMP_NUM_THREADS")))
print(do.call(rbind, rows), row.names = FALSE)
