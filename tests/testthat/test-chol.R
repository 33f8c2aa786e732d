# gpu_chol() and gpu_chol_grad() against base R: chol(), finite differences
# and closed forms. Device tests run on any OpenCL device (PoCL in CI) at
# sizes up to 257; n = 1000 runs on the CPU path only (time on PoCL).

rel_err <- function(x, y) max(abs(x - y)) / max(abs(y))

toeplitz_spd <- function(n) {  # stan-opencl.txt, section 3.3.3
  a <- n - abs(outer(seq_len(n), seq_len(n), "-"))
  diag(a) <- n^2
  a
}

sizes_device <- c(1, 2, 31, 32, 33, 100, 257)
sizes_cpu <- c(sizes_device, 1000)

check_chol <- function(a, backend) {
  r <- chol(a)
  expect_lt(rel_err(gpu_chol(a, upper = TRUE, backend = backend), r), 1e-10)
  expect_lt(rel_err(gpu_chol(a, backend = backend), t(r)), 1e-10)
}

test_that("gpu_chol on the CPU equals chol()", {
  for (n in sizes_cpu) {
    check_chol(random_spd(n), "cpu")
    check_chol(toeplitz_spd(n), "cpu")
  }
})

test_that("gpu_chol on the device equals chol()", {
  skip_if_no_device()
  for (n in sizes_device) {
    check_chol(random_spd(n), "opencl")
    check_chol(toeplitz_spd(n), "opencl")
  }
})

# The device schedule of linalg/cholesky_panel.hpp at small n, through the
# internal hook .cpp_chol_tuned(x, settings, upper, host), which factors x
# with the device's linalg_settings modified by the named values, from host
# memory (gpu_chol()'s path for a matrix: block columns copied in and out
# while the rest is factored, linalg/cholesky_host.hpp) or from a device
# copy (its path for a gpu_matrix): panels (and the host path's
# left-looking block columns) of 64, 96 or 128 rows, so that 257 rows take
# several steps and a ragged last one, leaves of 16 and of 64 rows, bases of
# one leaf (no update inside a step) and of a whole 256-column panel (the
# longest update, 7 chunks), narrow tiles up to 64 columns, one panel
# for the whole matrix, and (host path) staging chunks of 40 KB that
# straddle the block columns of 96, so that a chunk copied back waits for
# the block column of its last byte.
chol_settings <- list(
  one_panel = c(outer_block = 1024L, outer_block_large = 0L, host_block = 1024L),
  lookahead = c(outer_block = 64L, outer_block_large = 0L, host_block = 64L),
  lookahead_ragged = c(outer_block = 96L, outer_block_large = 0L, host_block = 96L),
  staged_chunks = c(outer_block = 96L, host_block = 96L, pinned_chunk_kb = 40L),
  large_from = c(outer_block = 1024L, outer_block_large = 64L, large_from = 200L),
  leaf16 = c(outer_block = 64L, step_cols = 16L, step_threads = 8L, host_block = 64L),
  leaf64 = c(outer_block = 128L, step_cols = 64L, step_threads = 16L, host_block = 128L),
  base_one_leaf = c(outer_block = 64L, step_base = 32L, host_block = 64L),
  base_whole_panel = c(outer_block = 256L, step_base = 256L, host_block = 256L),
  narrow = c(outer_block = 64L, gemm_narrow_cols = 64L, gemm_small_below_pct = 0L,
             host_block = 64L)
)

test_that("the device Cholesky equals chol() and names the failing pivot at every panel width", {
  skip_if_no_device()
  tuned <- function(a, p, upper = FALSE, host = TRUE) {
    clbayes:::.cpp_chol_tuned(a, chol_settings[[p]], upper, host)
  }
  for (p in names(chol_settings)) for (host in c(TRUE, FALSE)) {
    label <- paste(p, if (host) "host" else "device")
    for (n in c(33, 100, 257)) {
      a <- random_spd(n)
      expect_lt(rel_err(tuned(a, p, host = host), t(chol(a))), 1e-10, label = paste(label, n))
      a <- toeplitz_spd(n)
      expect_lt(rel_err(tuned(a, p, upper = TRUE, host = host), chol(a)), 1e-10,
                label = paste(label, n, "Toeplitz, upper"))
    }
    for (k in c(200, 240)) {  # in the first and the second half of a 64-row leaf (192-255)
      a <- random_spd(257)
      a[k, k] <- -1e4
      expect_error(tuned(a, p, host = host), paste0("order ", k, " "), label = label)
    }
  }
  # the checks of the host path on the way in, block column by block column
  a <- random_spd(257)
  b <- a
  b[10, 250] <- b[10, 250] * (1 + 1e-6)  # the mirror arrives in the last block
  expect_error(tuned(b, "lookahead"), "`x` must be symmetric")
  b <- a
  b[250, 10] <- NaN  # in the first block, below the diagonal ...
  expect_error(tuned(b, "lookahead"), "`x` contains NA or NaN")
  b <- a
  b[10, 250] <- Inf  # ... and in the last one, above it
  expect_error(tuned(b, "lookahead"), "`x` contains infinite")
  expect_error(clbayes:::.cpp_chol_tuned(diag(2), c(no_such = 1L), FALSE, TRUE),
               "unknown linear algebra setting")
})

test_that("a gpu_matrix stays on the device with a triangular view", {
  skip_if_no_device()
  a <- random_spd(70)
  l <- gpu_chol(gpu_matrix(a))
  expect_s4_class(l, "gpu_matrix")
  expect_equal(clbayes:::.cpp_view(l@ptr), "lower")
  expect_lt(rel_err(as.matrix(l), t(chol(a))), 1e-10)
  u <- gpu_chol(gpu_matrix(a), upper = TRUE)
  expect_equal(clbayes:::.cpp_view(u@ptr), "upper")
  expect_lt(rel_err(as.matrix(u), chol(a)), 1e-10)
  # the factor reconstructs x through the device GEMM
  expect_lt(rel_err(as.matrix(l %*% t(l)), a), 1e-12)
  u_cpu <- gpu_chol(gpu_matrix(a), upper = TRUE, backend = "cpu")
  expect_s4_class(u_cpu, "gpu_matrix")
  expect_lt(rel_err(as.matrix(u_cpu), chol(a)), 1e-10)
})

test_that("gpu_chol rejects bad input with errors naming `x`", {
  not_pd <- diag(c(2, 1, -1, 3))
  # the failing pivot matches the order base::chol() reports
  expect_error(chol(not_pd), "order 3")
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) {
    expect_error(gpu_chol(matrix(1, 3, 4), backend = b), "`x` must be square")
    expect_error(gpu_chol(matrix(c(1, NA, NA, 1), 2), backend = b), "`x` contains NA")
    expect_error(gpu_chol(matrix(c(1, Inf, Inf, 1), 2), backend = b), "`x` contains infinite")
    expect_error(gpu_chol(matrix(c(2, 1, 1.1, 2), 2), backend = b), "`x` must be symmetric")
    expect_error(gpu_chol(not_pd, backend = b),
                 "`x` is not positive definite.*order 3")
    a <- random_spd(100)
    a[80, 80] <- -1e4
    expect_error(gpu_chol(a, backend = b), "order 80 ")
    expect_error(gpu_chol("a", backend = b), "`x` must be")
  }
  expect_error(gpu_chol(diag(2), upper = NA), "`upper` must be TRUE or FALSE")
  expect_error(gpu_chol(diag(2), backend = "gpu"), "`backend` must be one of")
})

test_that("gpu_chol checks data already on the device", {
  skip_if_no_device()
  expect_error(gpu_chol(gpu_matrix(matrix(1, 3, 4))), "`x` must be square")
  # a gpu_matrix cannot hold NaN (?gpu_matrix): the division itself stops
  expect_error(gpu_chol(gpu_matrix(diag(3)) / 0), "`e2` must not be 0")
  expect_error(gpu_chol(gpu_matrix(matrix(c(2, 1, 1.1, 2), 2))), "`x` must be symmetric")
  a <- random_spd(100)
  a[90, 90] <- -1e4
  expect_error(gpu_chol(gpu_matrix(a)), "`x` is not positive definite.*order 90 ")
  expect_error(gpu_chol(gpu_matrix(diag(c(1, 0, 1)))), "order 2 ")
  # The checks run in the copy kernel, tile by tile (32 x 32): a bad element
  # in a tile away from the diagonal, above or below it, is still found,
  # and the input errors win over the pivot error they would cause.
  # (A gpu_matrix holds finite values only, so these device matrices are
  # made by the glue directly, past gpu_matrix()'s checks.)
  raw_device <- function(m) clbayes:::new_gpu_matrix(clbayes:::.cpp_gpu_matrix(m, "entire"))
  for (pos in list(c(80, 10), c(10, 80), c(40, 40))) {
    for (bad in c(Inf, NaN)) {
      x <- a  # a is not positive definite at pivot 90 as well
      x[pos[1], pos[2]] <- bad
      expect_error(gpu_chol(raw_device(x)), "`x` contains NaN or infinite")
    }
  }
  b <- random_spd(100)
  b[10, 80] <- b[10, 80] * (1 + 1e-6)
  expect_error(gpu_chol(gpu_matrix(b)), "`x` must be symmetric")
  b[10, 80] <- b[80, 10] * (1 + 1e-10)  # within the relative tolerance 1e-8
  expect_equal(as.matrix(gpu_chol(gpu_matrix(b))), t(chol(b)), tolerance = 1e-8)
})

# f(A) = sum(W * t(chol(A))) has L_adj = W (lower triangle).
fd_directional <- function(a, w, v, h = 1e-6) {
  f <- function(x) sum(w * t(chol(x)))
  (f(a + h * v) - f(a - h * v)) / (2 * h)
}

# A random lower-triangular n x n matrix (an adjoint of L), from `seed`.
lower_random <- function(n, seed) {
  set.seed(seed)
  w <- matrix(rnorm(n * n), n)
  w[upper.tri(w)] <- 0
  w
}

check_grad_fd <- function(n, backend, directions = 3) {
  a <- random_spd(n, seed = n + 1)
  w <- lower_random(n, seed = n + 2)
  g <- gpu_chol_grad(t(chol(a)), w, backend = backend)
  expect_equal(g, t(g), tolerance = 1e-12)
  for (d in seq_len(directions)) {
    v <- matrix(rnorm(n * n), n)
    v <- v + t(v)
    expect_equal(sum(g * v), fd_directional(a, w, v), tolerance = 1e-6)
  }
}

test_that("gpu_chol_grad matches finite differences", {
  for (n in c(1, 2, 5, 33, 150, 257)) check_grad_fd(n, "cpu")
  skip_if_no_device()
  for (n in c(1, 2, 5, 33, 257)) check_grad_fd(n, "opencl")
})

# n x n: G = L^-T sym(Phi(L^T W)) L^-1, Phi = lower triangle, half diagonal
chol_grad_closed_form <- function(l, w) {
  p <- t(l) %*% w
  p[upper.tri(p)] <- 0
  diag(p) <- diag(p) / 2
  li <- solve(l)
  t(li) %*% ((p + t(p)) / 2) %*% li
}

test_that("gpu_chol_grad matches closed forms", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  # 2 x 2 by hand: L11 = sqrt(a), L21 = b / sqrt(a), L22 = sqrt(c - b^2 / a)
  A <- matrix(c(4, 1.2, 1.2, 3), 2)
  w <- matrix(c(0.7, -1.3, 0, 2.1), 2)
  a <- A[1, 1]; b <- A[2, 1]; c <- A[2, 2]
  l22 <- sqrt(c - b^2 / a)
  d_a <- w[1, 1] / (2 * sqrt(a)) - w[2, 1] * b / (2 * a^1.5) + w[2, 2] * b^2 / (2 * a^2 * l22)
  d_b <- w[2, 1] / sqrt(a) - w[2, 2] * b / (a * l22)
  d_c <- w[2, 2] / (2 * l22)
  G2 <- matrix(c(d_a, d_b / 2, d_b / 2, d_c), 2)
  L6 <- t(chol(random_spd(6)))
  W6 <- lower_random(6, seed = 3)
  G6 <- chol_grad_closed_form(L6, W6)
  for (bk in backends) {
    expect_equal(gpu_chol_grad(t(chol(A)), w, backend = bk), G2, tolerance = 1e-12)
    expect_equal(gpu_chol_grad(L6, W6, backend = bk), G6, tolerance = 1e-10)
    # 1 x 1: d sqrt(a) / da = 1 / (2 sqrt(a))
    expect_equal(gpu_chol_grad(matrix(3), matrix(2), backend = bk), matrix(2 / 6))
  }
})

# The device gradient's look-ahead schedule (linalg/cholesky_grad.hpp) at
# small n, through the internal hook .cpp_chol_grad_tuned(L, L_adj,
# settings): blocks of 7, 40 and 64 rows, so that 150 rows take 22, 4 and 3
# blocks with a ragged first one (both parities of the work matrices
# reused), one block of all rows, the large matrices' block size (from
# large_from rows), and the default.
test_that("the device gradient equals the closed form at every block size", {
  skip_if_no_device()
  l <- t(chol(random_spd(150)))
  w <- lower_random(150, seed = 5)
  g <- chol_grad_closed_form(l, w)
  for (b in c(7L, 40L, 64L, 150L)) {
    got <- clbayes:::.cpp_chol_grad_tuned(l, w, c(grad_block = b))
    expect_lt(rel_err(got, g), 1e-10, label = paste("blocks of", b))
  }
  large <- c(large_from = 100L, grad_block = 7L, grad_block_large = 40L)
  expect_lt(rel_err(clbayes:::.cpp_chol_grad_tuned(l, w, large), g), 1e-10)
  expect_lt(rel_err(clbayes:::.cpp_chol_grad_tuned(l, w, integer()), g), 1e-10)
})

test_that("gpu_chol_grad keeps gpu_matrix arguments on the device", {
  skip_if_no_device()
  a <- random_spd(40)
  l <- t(chol(a))
  w <- matrix(rnorm(1600), 40)
  g <- gpu_chol_grad(gpu_matrix(l), w)
  expect_s4_class(g, "gpu_matrix")
  expect_lt(rel_err(as.matrix(g), gpu_chol_grad(l, w, backend = "cpu")), 1e-10)
})

test_that("gpu_chol_grad rejects bad input", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) {
    expect_error(gpu_chol_grad(matrix(1, 2, 3), matrix(1, 2, 3), backend = b),
                 "`L` must be square")
    expect_error(gpu_chol_grad(diag(3), diag(2), backend = b),
                 "`L_adj` must have the dimensions of `L`")
    expect_error(gpu_chol_grad(diag(c(1, 0, 1)), diag(3), backend = b), "`L` must have a positive diagonal")
    expect_error(gpu_chol_grad(diag(3), matrix(NA_real_, 3, 3), backend = b), "`L_adj` contains NA")
    # Every element is checked (on the device in the copies), in a matrix of
    # several work groups: below, on and above the diagonal; L before L_adj,
    # bad values before a zero diagonal.
    L <- t(chol(random_spd(70)))
    W <- matrix(1, 70, 70)
    for (at in list(c(50, 20), c(33, 33), c(5, 60))) {
      bad <- L
      bad[at[1], at[2]] <- NaN
      expect_error(gpu_chol_grad(bad, W, backend = b), "`L` contains NA or NaN")
      bad[at[1], at[2]] <- -Inf
      expect_error(gpu_chol_grad(bad, W, backend = b), "`L` contains infinite")
      bad_w <- W
      bad_w[at[1], at[2]] <- Inf
      expect_error(gpu_chol_grad(L, bad_w, backend = b), "`L_adj` contains infinite")
      expect_error(gpu_chol_grad(bad, bad_w, backend = b), "`L` contains infinite")
      zero <- L
      zero[40, 40] <- 0
      expect_error(gpu_chol_grad(zero, bad_w, backend = b), "`L_adj` contains infinite")
      expect_error(gpu_chol_grad(zero, W, backend = b), "`L` must have a positive diagonal")
    }
  }
})
