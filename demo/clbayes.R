# clbayes demo: what runs where, on the default device.
# Run with `make demo` (installs the package first), or demo("clbayes").
# Under two minutes on a 2-core machine without a GPU.
suppressPackageStartupMessages(library(clbayes))

timed <- function(expr) {
  t <- system.time(value <- force(expr))[["elapsed"]]
  list(value = value, seconds = t)
}
rule <- function(title) cat("\n==", title, "\n")

rule("OpenCL devices")
devs <- gpu_devices()
if (nrow(devs) == 0) {
  cat("none found: everything runs on the CPU path\n")
} else {
  print(devs[, c("platform", "device", "name", "type", "fp64", "selected")],
        row.names = FALSE)
}
has_device <- gpu_available()
cat("gpu_available():", has_device, "\n")
if (has_device) {
  info <- gpu_info()
  cat(sprintf("selected: %s (%s)\n", info$name, info$type))
  if (info$type == "cpu") {
    cat("This OpenCL device is the CPU itself: backend = \"auto\" passes it over\n",
        "and uses the native CPU path; the device path is shown with\n",
        "backend = \"opencl\".\n", sep = "")
  }
}

rule("Cholesky of a 2000 x 2000 covariance matrix")
# A squared-exponential covariance of 2000 points on [-10, 10] plus a nugget.
set.seed(1)
n <- 2000
s <- sort(runif(n, -10, 10))
K <- exp(-0.5 * outer(s, s, "-")^2) + diag(0.1, n)
base <- timed(chol(K))
cat(sprintf("base::chol                     %7.3f s\n", base$seconds))
auto <- timed(gpu_chol(K, upper = TRUE))
cat(sprintf("gpu_chol (backend = \"auto\")    %7.3f s, max |diff| to base::chol %.1e\n",
            auto$seconds, max(abs(auto$value - base$value))))
if (has_device) {
  invisible(gpu_chol(K[1:300, 1:300], backend = "opencl"))  # warm-up: compiles the kernels
  dev <- timed(gpu_chol(K, upper = TRUE, backend = "opencl"))
  cat(sprintf("gpu_chol (backend = \"opencl\")  %7.3f s, max |diff| to base::chol %.1e\n",
              dev$seconds, max(abs(dev$value - base$value))))
  gK <- gpu_matrix(K)
  res <- timed(gpu_chol(gK))
  cat(sprintf("gpu_chol of a gpu_matrix       %7.3f s (stays on the device, no copy back)\n",
              res$seconds))
}

rule("Logistic-regression log-likelihood and gradient")
# The data of section 4.1 of Cesnovar et al.: mu = 3 x1 - 2 x2 + 1.
set.seed(2)
n_obs <- 100000
k <- 20
X <- matrix(rnorm(n_obs * k), n_obs, k)
y <- rbinom(n_obs, 1, plogis(3 * X[, 1] - 2 * X[, 2] + 1))
beta <- c(3, -2, rep(0, k - 2))
up <- timed(gpu_glm_data(X, y))
cat(sprintf("gpu_glm_data: %d x %d, %s (%.3f s)\n", n_obs, k,
            if (up$value$on_device) "uploaded to the device" else "kept on the host",
            up$seconds))
invisible(gpu_glm_lp(x = up$value, alpha = 1, beta = beta,  # warm-up (kernel compilation)
                     family = "bernoulli_logit", gradient = TRUE))
lp <- timed(gpu_glm_lp(x = up$value, alpha = 1, beta = beta,
                       family = "bernoulli_logit", gradient = TRUE))
eta <- drop(1 + X %*% beta)
ref <- timed(list(sum(dbinom(y, 1, plogis(eta), log = TRUE)),
                  crossprod(X, y - plogis(eta))))
cat(sprintf("gpu_glm_lp value + gradient   %7.4f s: log-likelihood %.6f\n",
            lp$seconds, lp$value))
cat(sprintf("base R (dbinom, crossprod)    %7.4f s: log-likelihood %.6f\n",
            ref$seconds, ref$value[[1]]))
cat(sprintf("relative difference: value %.1e, gradient %.1e\n",
            abs(lp$value - ref$value[[1]]) / abs(ref$value[[1]]),
            max(abs(attr(lp$value, "gradient")$beta - ref$value[[2]])) /
              max(abs(ref$value[[2]]))))

rule("Posterior of a logistic regression: formula model, both samplers")
set.seed(3)
n_small <- 1000
Xs <- matrix(rnorm(n_small * 3), n_small, 3, dimnames = list(NULL, c("x1", "x2", "x3")))
ys <- rbinom(n_small, 1, plogis(3 * Xs[, 1] - 2 * Xs[, 2] + 1))
dat <- data.frame(y = ys, Xs)
m <- glm_model(y ~ x1 + x2 + x3, data = dat, family = binomial())
fit <- slice_sample_mv(m, seed = 42)           # every other argument defaulted
print(fit)
hfit <- hmc_sample_mv(m, seed = 42)            # ChEES-HMC on the model's batched gradient
print(hfit)
cat("glm() for comparison:\n")
print(round(coef(summary(glm(y ~ x1 + x2 + x3, data = dat, family = binomial())))[, 1:2], 3))
png_file <- file.path(tempdir(), "clbayes-demo-trace.png")
grDevices::png(png_file, width = 900, height = 900)
plot(fit)
invisible(grDevices::dev.off())
cat("trace and density plot written to", png_file, "\n")

rule("Gaussian-process regression (Example 2 of parallel-slice.txt)")
# 200 locations on the unit square, kappa = psi = 1, phi = 0.2, as in the
# paper; every batch of densities is one call of the fused likelihood
# (build, factor, solve per point), on the device when "auto" picks it.
set.seed(2010)
n_loc <- 200
coords <- matrix(runif(2 * n_loc), n_loc, 2)
Xg <- cbind(intercept = 1, s1 = coords[, 1])
Sg <- exp(-as.matrix(dist(coords)) / 0.2) + diag(n_loc)
yg <- drop(Xg %*% c(1, -0.5) + t(chol(Sg)) %*% rnorm(n_loc))
gm <- gp_model(yg, Xg, coords)
print(gm)
gfit <- timed(slice_sample_mv(gm, init = c(1, 1, 0.2), n_iter = 300,
                              width = c(1, 1, 0.2), method = "univariate",
                              chains = 4, seed = 7))
cat(sprintf("slice_sample_mv: %.1f s on the %s path\n", gfit$seconds,
            gfit$value$backend))
print(summary(gfit$value))
gp_png <- file.path(tempdir(), "clbayes-demo-gp-trace.png")
grDevices::png(gp_png, width = 900, height = 700)
plot(gfit$value)
invisible(grDevices::dev.off())
cat("trace and density plot written to", gp_png, "\n")

cat("\nDone.\n")
