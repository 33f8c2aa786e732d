# gpu_sum() / gpu_mean() against base R (which accumulates in long double),
# exact cases, and the absorption experiment of accurate-reduction.txt.

methods_all <- c("kahan", "div2", "pairwise")
lengths <- c(1, 2, 3, 5, 127, 128, 129, 1023, 1024, 1025, 2047, 2048, 2049,
             4097, 7919, 65537, 104729)

# |error| bound for a sum of n values: a few units of roundoff times sum|x|
# (kahan), times the tree depth for the tree methods.
sum_tol <- function(x, method, eps = .Machine$double.eps) {
  depth <- max(1, ceiling(log2(length(x))))
  k <- if (method == "kahan") 4 else 2 * depth + 2
  k * eps * sum(abs(x)) + 1e-300
}

check_against_base <- function(backend, lens, data) {
  for (n in lens) {
    set.seed(n)
    x <- data(n)
    for (m in methods_all) {
      s <- gpu_sum(x, m, backend = backend)
      expect_lte(abs(s - sum(x)), sum_tol(x, m), label = paste(backend, m, n, "sum"))
      mu <- gpu_mean(x, m, backend = backend)
      expect_lte(abs(mu - mean(x)), sum_tol(x, m) / n + 4 * .Machine$double.eps * abs(mean(x)),
                 label = paste(backend, m, n, "mean"))
    }
  }
}

test_that("CPU path matches sum() and mean() for many lengths and both signs", {
  check_against_base("cpu", c(lengths, 1e6 + 7), function(n) runif(n))
  check_against_base("cpu", lengths, function(n) rnorm(n, 3, 10))
  x <- runif(1000)
  expect_lte(abs(gpu_sum(x, "naive", backend = "cpu") - sum(x)), 1000 * .Machine$double.eps * sum(x))
})

test_that("device path matches sum() and mean() for many lengths and both signs", {
  skip_if_no_device()
  check_against_base("opencl", c(lengths, 1e6 + 7), function(n) runif(n))
  check_against_base("opencl", lengths[c(1, 3, 7, 9, 13, 15, 17)], function(n) rnorm(n, 3, 10))
})

# Integers up to 1e5 stay exact through sums (< 2^53) and through the at
# most 17 halvings of div2 (17 + 17 bits < 53), so every method must give
# the closed forms n (n + 1) / 2 and (n + 1) / 2 exactly; for div2 this
# checks the power-of-two correction C = 2^D / n for every padding case.
test_that("exactly representable sums are exact (checks the div2 correction)", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) for (n in c(1, 2, 3, 6, 129, 1000, 2049, 4097, 65537, 100000)) {
    x <- seq_len(n)
    for (m in methods_all) {
      expect_identical(gpu_sum(x, m, backend = b), n * (n + 1) / 2, label = paste(b, m, n))
      expect_identical(gpu_mean(x, m, backend = b), (n + 1) / 2, label = paste(b, m, n))
    }
  }
  # in single precision: values < 2^12, sums < 2^24, 12 halvings
  for (b in backends) for (n in c(3, 1025, 4000)) {
    x <- seq_len(n)
    for (m in methods_all) {
      expect_identical(gpu_sum(x, m, "single", backend = b), n * (n + 1) / 2,
                       label = paste(b, m, n, "single"))
      expect_identical(gpu_mean(x, m, "single", backend = b), (n + 1) / 2,
                       label = paste(b, m, n, "single"))
    }
  }
  # dyadic fractions of either sign
  set.seed(5)
  x <- sample(-4096:4096, 30011, replace = TRUE) / 1024
  for (b in backends) for (m in methods_all) {
    expect_identical(gpu_sum(x, m, backend = b), sum(x), label = paste(b, m, "dyadic"))
  }
})

# Longer than block x P_MAX (2048 x 1024), so the device runs all three
# kinds of level: blocks, a level of partials, and the single last block.
# Values 1..3 with 22 halvings need 24 bits: exact even in single precision.
test_that("long inputs are exact through every level of the launch sequence", {
  n <- 3 * 2^20 + 5
  x <- rep_len(c(1, 2, 3), n)
  total <- sum(x)
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) for (m in methods_all) for (p in c("double", "single")) {
    expect_identical(gpu_sum(x, m, p, backend = b), total, label = paste(b, m, p))
    expect_identical(gpu_mean(x, m, p, backend = b), total / n, label = paste(b, m, p))
  }
})

test_that("single precision reproduces the paper's absorption (Table 2), CPU path", {
  set.seed(2011)
  n <- 16776960
  x <- rnorm(n, 6, 1)
  ref <- mean(x)
  naive <- gpu_mean(x, "naive", "single", backend = "cpu")
  # the paper reports 6.607 instead of 6: absorption, not rounding noise
  expect_gt(abs(naive / ref - 1), 0.05)
  for (m in c("kahan", "div2")) {
    expect_lt(abs(gpu_mean(x, m, "single", backend = "cpu") / ref - 1), 2e-6)
  }
  x8 <- x[seq_len(8388480)]
  for (m in c("kahan", "div2")) {
    expect_lt(abs(gpu_mean(x8, m, "single", backend = "cpu") / mean(x8) - 1), 2e-6)
  }
})

test_that("single precision on the device avoids absorption (Table 2)", {
  skip_if_no_device()
  set.seed(2012)
  x <- rnorm(16776960, 6, 1)
  ref <- mean(x)
  for (m in c("kahan", "div2")) {
    expect_lt(abs(gpu_mean(x, m, "single", backend = "opencl") / ref - 1), 2e-6)
  }
})

test_that("gpu_matrix input is summed on the device and left unchanged", {
  skip_if_no_device()
  set.seed(3)
  a <- matrix(rnorm(3001 * 7, 1), 3001, 7)
  g <- gpu_matrix(a)
  for (m in methods_all) {
    expect_lte(abs(gpu_sum(g, m) - sum(a)), sum_tol(a, m))
    expect_lte(abs(gpu_mean(g, m) - mean(a)), sum_tol(a, m) / length(a) + 1e-15)
    expect_lte(abs(gpu_mean(g, m, "single") / mean(a) - 1), 1e-5)
  }
  expect_lte(abs(gpu_sum(g, "naive") - sum(a)), 1e-9 * sum(abs(a)))
  expect_lte(abs(gpu_sum(g, backend = "cpu") - sum(a)), sum_tol(a, "kahan"))
  expect_identical(as.matrix(g), a)
  expect_error(gpu_sum(g, "naive", backend = "opencl"), "`method`")
  # a triangular view sums its triangle (the other one is zero on the device)
  b <- a[1:50, 1:7] %*% t(a[1:50, 1:7])
  expect_lte(abs(gpu_sum(gpu_matrix(b, "lower"), "div2") - sum(b[lower.tri(b, diag = TRUE)])),
             sum_tol(b, "div2"))
})

test_that("NA, NaN, Inf, empty and length-one inputs behave like base R", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) for (m in c(methods_all, if (b == "cpu") "naive")) {
    expect_identical(gpu_sum(c(1, NA, 3), m, backend = b), NA_real_)
    expect_identical(gpu_mean(c(1, NA, 3), m, backend = b), NA_real_)
    expect_identical(gpu_sum(c(1, NaN, 3), m, backend = b), NaN)
    expect_identical(gpu_sum(c(1, NA, 3), m, na.rm = TRUE, backend = b), 4)
    expect_identical(gpu_mean(c(NaN, 2, NA, 4), m, na.rm = TRUE, backend = b), 3)
    expect_identical(gpu_sum(c(NA, NaN), m, na.rm = TRUE, backend = b), 0)
    expect_identical(gpu_mean(c(NA, NaN), m, na.rm = TRUE, backend = b), NaN)
    expect_identical(gpu_sum(numeric(0), m, backend = b), sum(numeric(0)))
    expect_identical(gpu_mean(numeric(0), m, backend = b), mean(numeric(0)))
    expect_identical(gpu_sum(2.5, m, backend = b), 2.5)
    expect_identical(gpu_mean(-7.25, m, backend = b), -7.25)
    expect_identical(gpu_sum(c(1, Inf, 2), m, backend = b), Inf)
    expect_identical(gpu_sum(c(-Inf, 1), m, backend = b), -Inf)
    expect_identical(gpu_sum(c(Inf, 1, -Inf), m, backend = b), NaN)
  }
  for (b in backends) for (m in methods_all) {
    # the sum overflows, the mean must not (base R uses long double)
    expect_identical(gpu_mean(c(1e308, 1e308, 1e308), m, backend = b), mean(c(1e308, 1e308, 1e308)))
    expect_identical(gpu_sum(c(1e308, 1e308), m, backend = b), Inf)
  }
  expect_identical(gpu_sum(1:10, backend = "cpu"), 55)
  expect_identical(gpu_sum(c(TRUE, FALSE, TRUE), backend = "cpu"), 2)
  expect_identical(gpu_sum(matrix(1:6, 2), "div2", backend = "cpu"), 21)
})

test_that("bad arguments give errors that name them", {
  expect_error(gpu_sum(1:3, method = "fast"), "`method` must be one of")
  expect_error(gpu_sum(1:3, method = c("kahan", "div2")), "`method`")
  expect_error(gpu_mean(1:3, precision = "half"), "`precision` must be one of")
  expect_error(gpu_sum(1:3, na.rm = NA), "`na.rm` must be TRUE or FALSE")
  expect_error(gpu_sum(1:3, na.rm = "yes"), "`na.rm`")
  expect_error(gpu_sum(letters), "`x` must be a numeric")
  expect_error(gpu_sum(list(1, 2)), "`x` must be a numeric")
  expect_error(gpu_sum(data.frame(a = 1)), "`x` must be a numeric")
  expect_error(gpu_sum(1:3, backend = "gpu"), "`backend`")
  if (gpu_available()) {
    expect_error(gpu_sum(1:3, "naive", backend = "opencl"), "`method` \"naive\" runs on the CPU only")
  }
  expect_identical(gpu_sum(1:3, "naive", backend = "auto"), 6)
})

test_that("the threshold option decides where 'auto' runs", {
  skip_if_no_device()
  x <- runif(100)
  old <- options(clbayes.threshold.gpu_sum = 10, clbayes.threshold.gpu_mean = 1e9,
                 clbayes.auto_cpu_device = TRUE)
  on.exit(options(old), add = TRUE)
  expect_lte(abs(gpu_sum(x) - sum(x)), sum_tol(x, "kahan"))
  expect_lte(abs(gpu_mean(x) - mean(x)), 1e-15)
  expect_identical(resolve_backend("auto", length(x), getOption("clbayes.threshold.gpu_sum")), "opencl")
})

# The launch sequence of reduce/sum_device.hpp with small blocks, reached
# through the internal hook .cpp_sum_tuned(): knobs c(block, work_group,
# p_max), 0 = the default. Blocks of 8 and 4 partials per later block give
# many levels at small n, and lengths around their powers (and primes) give
# a padded last block at every level.
level_settings <- list(
  default = c(0L, 0L, 0L),
  block8_p4 = c(8L, 2L, 4L),
  block16_p2 = c(16L, 4L, 2L),
  block64_wg1 = c(64L, 1L, 8L)
)
level_lengths <- c(1, 2, 3, 7, 9, 31, 33, 63, 65, 127, 255, 257, 1021, 1031, 4093, 4099,
                   8191, 8193, 65521)

test_that("the launch sequence with small blocks matches sum() and mean()", {
  skip_if_no_device()
  for (v in names(level_settings)) for (n in level_lengths) {
    set.seed(n)
    x <- if (n %% 2 == 1) runif(n) else rnorm(n, 3, 10)
    for (m in methods_all) {
      r <- clbayes:::.cpp_sum_tuned(x, m, "double", level_settings[[v]])
      expect_lte(abs(r[1] - sum(x)), sum_tol(x, m), label = paste(v, m, n, "sum"))
      expect_lte(abs(r[2] - mean(x)), sum_tol(x, m) / n + 4 * .Machine$double.eps * abs(mean(x)),
                 label = paste(v, m, n, "mean"))
    }
  }
})

# Integer data stays exact through every halving (see above), so each
# setting must return n (n + 1) / 2 and (n + 1) / 2 exactly: this checks the
# div2 correction C = 2^D / n through every level's padding, in both
# precisions.
test_that("the launch sequence with small blocks is exact on integer data", {
  skip_if_no_device()
  for (v in names(level_settings)) for (n in c(3, 1031, 4099, 8193, 65537)) {
    x <- seq_len(n)
    for (m in methods_all) {
      r <- clbayes:::.cpp_sum_tuned(as.double(x), m, "double", level_settings[[v]])
      expect_identical(r, c(n * (n + 1) / 2, (n + 1) / 2), label = paste(v, m, n))
    }
  }
  for (v in names(level_settings)) for (n in c(7, 1031, 4000)) {
    x <- as.double(seq_len(n))
    for (m in methods_all) {
      r <- clbayes:::.cpp_sum_tuned(x, m, "single", level_settings[[v]])
      expect_identical(r, c(n * (n + 1) / 2, (n + 1) / 2), label = paste(v, m, n, "single"))
    }
  }
  expect_error(clbayes:::.cpp_sum_tuned(1:10 + 0, "div2", "double", c(12L, 0L, 0L)),
               "`block` must be a power of two")
})
