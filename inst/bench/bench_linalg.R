# gpu_chol(backend = "cpu") and the device path against base::chol(), and
# gpu_tcrossprod() against tcrossprod(), from R on this machine. Prints a
# markdown table of median times (ms) over `reps` runs after a warm-up.
# Usage: Rscript inst/bench/bench_linalg.R [n ...]   (default n: 500 1000 2000)
# The device columns use the selected OpenCL device (PoCL on a CPU-only
# machine, where they are not expected to win).

library(clbayes)

args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(500L, 1000L, 2000L)
reps <- 5L

# Median milliseconds per call over `reps` measurements after a warm-up;
# each measurement repeats f until it lasts 50 ms, since system.time()
# counts in milliseconds.
median_ms <- function(f) {
  f()
  inner <- 1
  repeat {
    t <- system.time(for (i in seq_len(inner)) f())[["elapsed"]]
    if (t >= 0.05 || inner >= 1024) break
    inner <- inner * 4
  }
  t <- vapply(seq_len(reps), function(i) {
    system.time(for (j in seq_len(inner)) f())[["elapsed"]] / inner
  }, numeric(1))
  1000 * stats::median(t)
}

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
  t_base <- median_ms(function() chol(a))
  t_cpu <- median_ms(function() gpu_chol(a, upper = TRUE, backend = "cpu"))
  t_dev <- if (dev) median_ms(function() gpu_chol(a, upper = TRUE, backend = "opencl")) else NA
  x <- a[, seq_len(n %/% 2)]
  t_tc <- median_ms(function() tcrossprod(x))
  t_tc_cpu <- median_ms(function() gpu_tcrossprod(x, backend = "cpu"))
  cat(sprintf("| %d | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2f | %.1e |\n", n, t_base,
              t_cpu, t_base / t_cpu, t_dev, t_tc, t_tc_cpu, err))
}
