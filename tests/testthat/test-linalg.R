# gpu_tri_inv(), gpu_tri_solve(), gpu_tcrossprod() and the device %*%
# against base R: solve(), forwardsolve(), backsolve(), tcrossprod(), %*%.

rel_err <- function(x, y) max(abs(x - y)) / max(abs(y))

sizes_device <- c(1, 2, 31, 32, 33, 100, 257)
lower_factor <- function(n) t(chol(random_spd(n)))

check_tri <- function(n, backend) {
  L <- lower_factor(n)
  expect_lt(rel_err(gpu_tri_inv(L, backend = backend), solve(L)), 1e-10)
  U <- t(L)
  expect_lt(rel_err(gpu_tri_inv(U, lower = FALSE, backend = backend), solve(U)), 1e-10)
  set.seed(n)
  b <- matrix(rnorm(n * 3), n)
  expect_lt(rel_err(gpu_tri_solve(L, b, backend = backend), forwardsolve(L, b)), 1e-10)
  expect_lt(rel_err(gpu_tri_solve(U, b, lower = FALSE, backend = backend), backsolve(U, b)), 1e-10)
  v <- rnorm(n)
  y <- gpu_tri_solve(L, v, backend = backend)
  expect_null(dim(y))
  expect_lt(rel_err(y, forwardsolve(L, v)), 1e-10)
  # only the chosen triangle is read
  junk <- L + upper.tri(L) * 5
  expect_lt(rel_err(gpu_tri_inv(junk, backend = backend), solve(L)), 1e-10)
  junk <- U + lower.tri(U) * 5
  expect_lt(rel_err(gpu_tri_inv(junk, lower = FALSE, backend = backend), solve(U)), 1e-10)
  # against the triangular solves of base R, and exact zeros outside the triangle
  li <- gpu_tri_inv(L, backend = backend)
  expect_lt(rel_err(li, forwardsolve(L, diag(n))), 1e-10)
  expect_true(all(li[upper.tri(li)] == 0))
  ui <- gpu_tri_inv(U, lower = FALSE, backend = backend)
  expect_lt(rel_err(ui, backsolve(U, diag(n))), 1e-10)
  expect_true(all(ui[lower.tri(ui)] == 0))
}

test_that("gpu_tri_inv and gpu_tri_solve on the CPU equal solve / backsolve", {
  for (n in c(sizes_device, 1000)) check_tri(n, "cpu")
})

test_that("gpu_tri_inv and gpu_tri_solve on the device equal solve / backsolve", {
  skip_if_no_device()
  for (n in sizes_device) check_tri(n, "opencl")
  L <- lower_factor(50)
  li <- gpu_tri_inv(gpu_matrix(L))
  expect_s4_class(li, "gpu_matrix")
  expect_equal(clbayes:::.cpp_view(li@ptr), "lower")
  expect_lt(rel_err(as.matrix(li), solve(L)), 1e-10)
  b <- matrix(rnorm(100), 50)
  y <- gpu_tri_solve(gpu_matrix(L), b)
  expect_s4_class(y, "gpu_matrix")
  expect_lt(rel_err(as.matrix(y), forwardsolve(L, b)), 1e-10)
})

test_that("gpu_tcrossprod equals tcrossprod()", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) {
    for (d in list(c(1, 1), c(2, 5), c(33, 7), c(100, 257), c(130, 3))) {
      set.seed(d[1])
      x <- matrix(rnorm(d[1] * d[2]), d[1])
      expect_lt(rel_err(gpu_tcrossprod(x, backend = b), tcrossprod(x)), 1e-12)
    }
  }
  skip_if_no_device()
  x <- matrix(rnorm(60), 12)
  g <- gpu_tcrossprod(gpu_matrix(x))
  expect_s4_class(g, "gpu_matrix")
  expect_lt(rel_err(as.matrix(g), tcrossprod(x)), 1e-12)
})

test_that("square_order() is the order of the square product of the same work", {
  expect_equal(clbayes:::square_order(4096, 4096, 1), 256)
  expect_equal(clbayes:::square_order(300, 300, 300), 300)
  expect_equal(clbayes:::square_order(2048, 2048, 1), 2048^(2 / 3))
  expect_equal(clbayes:::square_order(2e5, 2e5, 2e5), 2e5)  # no integer overflow
})

test_that("'auto' sends gpu_tri_solve and gpu_tcrossprod by the work, not the rows", {
  skip_if_no_device()
  seen <- new.env()
  ns <- asNamespace("clbayes")
  for (f in c(".cpp_tri_solve", ".cpp_tcrossprod")) {
    suppressMessages(trace(f, where = ns, print = FALSE,
                           tracer = bquote(assign(.(f), device, envir = .(seen)))))
  }
  on.exit(for (f in c(".cpp_tri_solve", ".cpp_tcrossprod")) {
    suppressMessages(untrace(f, where = ns))
  }, add = TRUE)
  old <- options(clbayes.auto_cpu_device = TRUE, clbayes.threshold.tri_solve = 10,
                 clbayes.threshold.tcrossprod = 10)
  on.exit(options(old), add = TRUE)
  L <- lower_factor(20)
  b1 <- rnorm(20)  # order (20^2 * 1)^(1/3) = 7.4: the CPU
  expect_lt(rel_err(gpu_tri_solve(L, b1, backend = "auto"), forwardsolve(L, b1)), 1e-10)
  expect_false(seen$.cpp_tri_solve)
  b20 <- matrix(rnorm(400), 20)  # order 20: the device
  expect_lt(rel_err(gpu_tri_solve(L, b20, backend = "auto"), forwardsolve(L, b20)), 1e-10)
  expect_true(seen$.cpp_tri_solve)
  x <- matrix(rnorm(20), 20)  # 20 x 1: order 7.4
  expect_lt(rel_err(gpu_tcrossprod(x, backend = "auto"), tcrossprod(x)), 1e-12)
  expect_false(seen$.cpp_tcrossprod)
  x <- matrix(rnorm(400), 20)
  expect_lt(rel_err(gpu_tcrossprod(x, backend = "auto"), tcrossprod(x)), 1e-12)
  expect_true(seen$.cpp_tcrossprod)
})

test_that("%*% of gpu_matrix objects equals %*%", {
  skip_if_no_device()
  dims <- list(c(1, 1, 1), c(2, 3, 4), c(65, 63, 67), c(128, 64, 1), c(1, 64, 130),
               c(3, 2000, 5), c(100, 257, 33), c(5, 1, 7))
  for (d in dims) {
    set.seed(sum(d))
    a <- matrix(rnorm(d[1] * d[2]), d[1])
    b <- matrix(rnorm(d[2] * d[3]), d[2])
    expect_lt(rel_err(as.matrix(gpu_matrix(a) %*% gpu_matrix(b)), a %*% b), 1e-12)
  }
  # triangular views skip zeros and set the view of the result
  L1 <- lower_factor(70)
  L2 <- lower_factor(70) + 1  # the upper triangle is not zero here: the view says it is
  B <- matrix(rnorm(70 * 9), 70)
  p <- gpu_matrix(L1, "lower") %*% gpu_matrix(L2, "lower")
  expect_equal(clbayes:::.cpp_view(p@ptr), "lower")
  L2l <- L2 * lower.tri(L2, diag = TRUE)
  expect_lt(rel_err(as.matrix(p), L1 %*% L2l), 1e-12)
  u <- gpu_matrix(t(L2), "upper") %*% gpu_matrix(B)
  expect_lt(rel_err(as.matrix(u), t(L2l) %*% B), 1e-12)
  bt <- gpu_matrix(t(B)) %*% gpu_matrix(L1, "lower")
  expect_lt(rel_err(as.matrix(bt), t(B) %*% L1), 1e-12)
  v <- gpu_matrix(L1, "lower") %*% gpu_matrix(B[, 1])
  expect_lt(rel_err(as.matrix(v), L1 %*% B[, 1]), 1e-12)
  w <- gpu_matrix(t(B[, 2])) %*% gpu_matrix(t(L1), "upper")
  expect_lt(rel_err(as.matrix(w), t(B[, 2]) %*% t(L1)), 1e-12)
  expect_error(gpu_matrix(diag(2)) %*% gpu_matrix(diag(3)), "`y` has 3 rows but `x` has 2 columns")
})

test_that("triangular functions reject bad input", {
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (b in backends) {
    expect_error(gpu_tri_inv(matrix(1, 2, 3), backend = b), "`L` must be square")
    expect_error(gpu_tri_inv(diag(c(1, 0, 2)), backend = b), "`L` is singular")
    expect_error(gpu_tri_inv(matrix(NaN, 2, 2), backend = b), "`L` contains NA")
    expect_error(gpu_tri_solve(diag(3), diag(2), backend = b), "`b` must have 3 rows")
    expect_error(gpu_tri_solve(diag(c(1, 0, 2)), 1:3, backend = b), "`L` is singular")
    expect_error(gpu_tri_solve(diag(3), c(1, Inf, 1), backend = b), "`b` contains infinite")
    expect_error(gpu_tcrossprod(matrix(c(1, NA), 1), backend = b), "`x` contains NA")
    expect_error(gpu_tri_inv(diag(2), lower = "yes", backend = b), "`lower` must be TRUE or FALSE")
    # Every element is checked (on the device in the copy), in a matrix of
    # several work groups: below, on and above the diagonal, and before the
    # diagonal's zeros.
    L <- lower_factor(70)
    for (at in list(c(50, 20), c(33, 33), c(5, 60))) {
      bad <- L
      bad[at[1], at[2]] <- NaN
      expect_error(gpu_tri_inv(bad, backend = b), "`L` contains NA or NaN")
      expect_error(gpu_tri_inv(t(bad), lower = FALSE, backend = b), "`L` contains NA or NaN")
      bad[at[1], at[2]] <- -Inf
      expect_error(gpu_tri_inv(bad, backend = b), "`L` contains infinite")
      bad[40, 40] <- 0
      expect_error(gpu_tri_inv(bad, backend = b), "`L` contains infinite")
    }
    expect_error(gpu_tri_inv(diag(c(1, 0, 2)), lower = FALSE, backend = b), "`L` is singular")
  }
  skip_if_no_device()
  expect_error(gpu_tri_inv(gpu_matrix(diag(c(1, 0, 2)))), "`L` is singular")
  expect_error(gpu_tri_inv(gpu_matrix(matrix(1, 2, 3))), "`L` must be square")
  expect_error(gpu_tri_solve(gpu_matrix(diag(3)), gpu_matrix(diag(2))), "`b` has 2 rows")
})
