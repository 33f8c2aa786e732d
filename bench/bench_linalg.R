# gpu_chol(backend = "cpu") and the device path against base::chol(), and
# gpu_tcrossprod() against tcrossprod(), from R on this machine. Prints a
# markdown table of median times (ms) over `reps` runs after a warm-up.
# Usage: Rscript bench/bench_linalg.R [n ...]   (default n: 500 1000 2000)
# The device columns use the selected OpenCL device (PoCL on a CPU-only
# machine, where they are not expected to win).

library(clbayes)

args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(500L, 1000L, 2000L)
reps <- 5L

# median_ms() from timing.R, found beside this script
local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])
  source(file.path(dirname(file), "timing.R"), local = globalenv())
})

spd <- function(n) {
  set.seed(n)
  a <- matrix(rnorm(n * n), n)
  crossprod(a) + n * diag(n)
}

dev <- gpu_available()
cat(sprintf("R %s, BLAS %s\n", getRversion(), extSoftVersion()[["BLAS"]]))
if (dev) cat("device:", gpu_info()$name, "\n")
cat("\n| n | base::chol | gpu_chol cpu | speed-up | gpu_chol opencl | tcrossprod | gpu_tcrossprod cpu | max rel diff |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (n in sizes) {
  a <- spd(n)
  r <- chol(a)
  u <- gpu_chol(a, upper = TRUE, backend = "cpu")
  err <- max(abs(u - r)) / max(abs(r))
  t_base <- median_ms(function() chol(a), reps)
  t_cpu <- median_ms(function() gpu_chol(a, upper = TRUE, backend = "cpu"), reps)
  t_dev <- if (dev) median_ms(function() gpu_chol(a, upper = TRUE, backend = "opencl"), reps) else NA
  x <- a[, seq_len(n %/% 2)]
  t_tc <- median_ms(function() tcrossprod(x), reps)
  t_tc_cpu <- median_ms(function() gpu_tcrossprod(x, backend = "cpu"), reps)
  cat(sprintf("| %d | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2f | %.1e |\n", n, t_base,
              t_cpu, t_base / t_cpu, t_dev, t_tc, t_tc_cpu, err))
}
