# The 10^5 x 20 logistic posterior of issue 15 sampled on the CPU by the
# clbayes installed in LIB, with fixed sampler settings that both the
# current API and the one before the batched GLM accept (univariate slices,
# 2 proposals, slice width 0.02, dense metric, stepping out in warmup).
# Run it once per installed version and compare the min ES/s:
#   git archive <commit> | tar -x -C /tmp/old && R CMD INSTALL --library=/tmp/lib-old /tmp/old
#   OMP_NUM_THREADS=2 Rscript bench/posterior_against_version.R /tmp/lib-old 8 75
#   OMP_NUM_THREADS=2 Rscript bench/posterior_against_version.R /tmp/lib-new 8 75
# Arguments: LIB, chains, iterations (as many warmup iterations again).
# Prints the wall time, the smallest bulk and tail ESS over the parameters,
# min ES/s (the smaller ESS over the wall time) and the largest
# |posterior mean - truth| / posterior sd of the coefficients.

args <- commandArgs(TRUE)
if (length(args) != 3L) stop("usage: posterior_against_version.R LIB CHAINS ITERATIONS")
lib <- args[1]
chains <- as.integer(args[2])
iters <- as.integer(args[3])
library(clbayes, lib.loc = lib)
options(clbayes.backend = "cpu")

set.seed(1)
n <- 1e5
k <- 20
x <- matrix(rnorm(n * k), n, k, dimnames = list(NULL, paste0("x", 1:k)))
beta <- rnorm(k, sd = 0.3)
y <- rbinom(n, 1, plogis(0.3 + x %*% beta))
new_api <- "formula" %in% names(formals(glm_model))
model <- if (new_api) {
  glm_model(y = y, x = x, family = binomial())
} else {
  glm_model(y, x, "bernoulli_logit")  # the API before issue 15
}
init <- matrix(rnorm(chains * (k + 1), sd = 0.05), chains, k + 1)

t0 <- proc.time()[["elapsed"]]
settings <- list(model, init = init, n_iter = iters, warmup = iters, width = 0.02,
                 method = "univariate", n_proposals = 2, chains = chains, seed = 3)
if (new_api) settings$warmup_extend <- 0  # the API before issue 15 had no extension
fit <- do.call(slice_sample_mv, settings)
elapsed <- proc.time()[["elapsed"]] - t0

s <- summary(fit)
ess <- vapply(grep("ess", names(s), value = TRUE), function(col) min(s[[col]]), numeric(1))
z <- max(abs(s$mean[2:(k + 1)] - beta) / s$sd[2:(k + 1)])
cat(sprintf("%s (clbayes %s): %d chains, %d + %d iterations, %.1f s; min %s; min ES/s %.3f; max |mean - truth| / sd %.2f\n",
            lib, utils::packageVersion("clbayes", lib.loc = lib), chains, iters, iters, elapsed,
            paste(names(ess), sprintf("%.0f", ess), collapse = ", "), min(ess) / elapsed, z))
