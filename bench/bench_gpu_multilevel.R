# The multilevel benchmark from R (issues 45 and 49): the varying-intercept,
# varying-slope logit of bench_multilevel.cpp, y ~ x1 + ... + xk + (1 + x1 | g),
# fitted as a user would (glm_model() + hmc_sample_mv(), rstanarm's default
# priors) on the selected device; writes the data for
# anchors_numpyro_multilevel.py (x.bin, y.bin, g.bin) so that numpyro's NUTS
# runs on the same rows in the same device call. Prints the minimum bulk
# ESS over the fixed effects, b and Sigma, wall and CPU seconds (warmup
# included) and min ES/s.
#   Rscript bench/bench_gpu_multilevel.R n k groups chains warmup n_iter data_dir
library(clbayes)
a <- commandArgs(TRUE)
n <- as.numeric(a[1]); k <- as.integer(a[2]); G <- as.integer(a[3])
chains <- as.integer(a[4]); warmup <- as.integer(a[5]); n_iter <- as.integer(a[6])
dir <- a[7]
set.seed(45)
x <- matrix(rnorm(n * k), n, k, dimnames = list(NULL, paste0("x", seq_len(k))))
g <- sample.int(G, n, TRUE)
b <- cbind(rnorm(G, 0, 0.8), rnorm(G, 0, 0.4))
beta <- rnorm(k, 0, 0.3)
eta <- -0.3 + drop(x %*% beta) + b[g, 1] + b[g, 2] * x[, 1]
y <- rbinom(n, 1, plogis(eta))
dir.create(dir, showWarnings = FALSE, recursive = TRUE)
writeBin(as.double(x), file.path(dir, "x.bin"))
writeBin(as.double(y), file.path(dir, "y.bin"))
writeBin(as.integer(g - 1L), file.path(dir, "g.bin"), size = 4)
d <- data.frame(y = y, x, g = factor(g))
f <- stats::as.formula(paste("y ~", paste(colnames(x), collapse = " + "), "+ (1 + x1 | g)"))
cat(sprintf("device: %s\n", paste(format(gpu_devices()[gpu_devices()$selected, "name"]), collapse = "")))
t0 <- proc.time(); w0 <- Sys.time()
m <- glm_model(f, d, family = binomial())
t_model <- as.numeric(Sys.time() - w0, units = "secs")
fit <- hmc_sample_mv(m, chains = chains, warmup = warmup, n_iter = n_iter, seed = 1,
                     backend = "opencl", refresh = 0)
wall <- as.numeric(Sys.time() - w0, units = "secs")
cpu <- sum((proc.time() - t0)[1:2])
s <- summary(fit)
groups <- ifelse(startsWith(s$variable, "b["), "b",
                 ifelse(startsWith(s$variable, "Sigma["), "Sigma", "fixed"))
ess <- tapply(s$ess_bulk, groups, min)
cat(sprintf("R: n = %g, k = %d, groups = %d, chains = %d, warmup %d + %d: model %.1f s, total wall %.1f s, CPU %.1f s\n",
            n, k, G, chains, warmup, n_iter, t_model, wall, cpu))
cat(sprintf("  min bulk ESS: fixed %.0f, b %.0f, Sigma %.0f; min ES/s (warmup included) %.2f; max R-hat %.3f\n",
            ess["fixed"], ess["b"], ess["Sigma"], min(ess) / wall, max(s$rhat, na.rm = TRUE)))
cat(sprintf("  step size %.4g, trajectory length %.4g\n", fit$step_size,
            fit$trajectory_length))
print(as.data.frame(s)[groups == "Sigma", c("variable", "mean", "sd", "ess_bulk", "rhat")], row.names = FALSE)
