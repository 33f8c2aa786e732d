# Batched routines from R: gpu_chol_batched(), gpu_solve_batched() and
# gp_loglik_batched() on each backend against a loop of base R, including
# every conversion and transfer a user pays. Prints markdown tables.
#   Rscript bench/bench_batched.R            # small sizes (any machine)
#   Rscript bench/bench_batched.R large      # the issue's sizes (a GPU)
library(clbayes)

large <- identical(commandArgs(TRUE)[1], "large")
chol_sizes <- if (large) {
  list(c(100000, 8), c(20000, 32), c(5000, 64), c(1000, 128), c(200, 256), c(60, 500))
} else {
  list(c(2000, 8), c(500, 32), c(100, 64), c(10, 128))
}
gp_sizes <- if (large) {
  list(c(100, 30), c(100, 240), c(500, 30), c(500, 240), c(1000, 30), c(2000, 30))
} else {
  list(c(50, 30), c(100, 30), c(200, 8))
}
backends <- c("cpu", if (gpu_available()) "opencl")

median_time <- function(f, reps = 3) {
  f()
  median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}

spd_batch <- function(m, B) {
  a <- array(0, c(m, m, B))
  for (b in seq_len(B)) {
    rho <- runif(1, 0.1, 0.9)
    a[, , b] <- rho^abs(outer(seq_len(m), seq_len(m), "-")) + diag(0.1, m)
  }
  a
}

cat(sprintf("device: %s\n\n", if (gpu_available()) gpu_info()$name else "none"))
cat("| B | m | routine | base R loop (s) |",
    paste(sprintf("%s (s)", backends), collapse = " | "), "|\n")
cat("|---|---|---|---|", paste(rep("---", length(backends)), collapse = "|"), "|\n")
set.seed(1)
for (s in chol_sizes) {
  B <- s[1]
  m <- s[2]
  a <- spd_batch(m, B)
  b <- matrix(rnorm(m * B), m, B)
  base_chol <- median_time(function() for (i in seq_len(B)) chol(a[, , i]), 1)
  ours <- vapply(backends, function(be) median_time(function() gpu_chol_batched(a, backend = be)), 0)
  cat(sprintf("| %d | %d | chol | %.3g | %s |\n", B, m, base_chol,
              paste(sprintf("%.3g", ours), collapse = " | ")))
  base_solve <- median_time(function() for (i in seq_len(B)) solve(a[, , i], b[, i]), 1)
  ours <- vapply(backends, function(be) median_time(function() gpu_solve_batched(a, b, backend = be)), 0)
  cat(sprintf("| %d | %d | solve | %.3g | %s |\n", B, m, base_solve,
              paste(sprintf("%.3g", ours), collapse = " | ")))
}

cat("\n| n | rows | base R loop (s) |",
    paste(sprintf("%s (s)", backends), collapse = " | "), "|\n")
cat("|---|---|---|", paste(rep("---", length(backends)), collapse = "|"), "|\n")
for (s in gp_sizes) {
  n <- s[1]
  rows <- s[2]
  coords <- matrix(runif(2 * n), n, 2)
  X <- cbind(1, rnorm(n))
  y <- drop(X %*% c(1, 2)) + rnorm(n)
  theta <- cbind(runif(rows, 0.5, 2), runif(rows, 0.1, 1), runif(rows, 0.05, 0.5))
  data <- gpu_gp_data(y, X, coords)
  D <- as.matrix(dist(coords))
  base <- median_time(function() {
    for (i in seq_len(rows)) {
      S <- theta[i, 1] * exp(-D / theta[i, 3])
      diag(S) <- theta[i, 1] + theta[i, 2]
      U <- chol(S)
      z <- backsolve(U, y - X %*% c(1, 2), transpose = TRUE)
      -0.5 * (n * log(2 * pi) + 2 * sum(log(diag(U))) + sum(z^2))
    }
  }, 1)
  ours <- vapply(backends, function(be) median_time(function()
    gp_loglik_batched(data, beta = c(1, 2), theta = theta, backend = be)), 0)
  cat(sprintf("| %d | %d | %.3g | %s |\n", n, rows, base,
              paste(sprintf("%.3g", ours), collapse = " | ")))
}
