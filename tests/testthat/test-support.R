# The support kernels of stan-opencl.txt section 3.5, each against base R.

test_that("zeros and identity match base R", {
  skip_if_no_device()
  expect_identical(as.matrix(clbayes:::gpu_support_zeros(33, 7)), matrix(0, 33, 7))
  expect_identical(as.matrix(clbayes:::gpu_support_identity(5)), diag(5))
  expect_identical(as.matrix(clbayes:::gpu_support_identity(3, 5)), diag(1, 3, 5))
  expect_identical(dim(clbayes:::gpu_support_zeros(0, 4)), c(0L, 4L))
})

test_that("zeroing a strict triangle matches lower.tri / upper.tri", {
  skip_if_no_device()
  set.seed(5)
  x <- matrix(rnorm(7 * 7), 7)
  g <- gpu_matrix(x)
  lo0 <- x
  lo0[lower.tri(lo0)] <- 0
  up0 <- x
  up0[upper.tri(up0)] <- 0
  expect_identical(as.matrix(clbayes:::gpu_support_zero_triangle(g, "lower")), lo0)
  expect_identical(as.matrix(clbayes:::gpu_support_zero_triangle(g, "upper")), up0)
  expect_identical(as.matrix(clbayes:::gpu_support_zero_triangle(g, "entire")),
                   matrix(0, 7, 7))
  expect_identical(as.matrix(g), x)  # input untouched
  r <- matrix(rnorm(12), 3, 4)
  r0 <- r
  r0[lower.tri(r0)] <- 0
  expect_identical(as.matrix(clbayes:::gpu_support_zero_triangle(gpu_matrix(r), "lower")), r0)
})

test_that("batch identity stacks identities side by side", {
  skip_if_no_device()
  expect_identical(as.matrix(clbayes:::gpu_support_batch_identity(3, 4)),
                   do.call(cbind, rep(list(diag(3)), 4)))
  expect_identical(dim(clbayes:::gpu_support_batch_identity(3, 0)), c(3L, 0L))
})

test_that("triangular transpose makes a symmetric matrix", {
  skip_if_no_device()
  set.seed(6)
  x <- matrix(rnorm(9 * 9), 9)
  sym_from_lower <- x
  sym_from_lower[upper.tri(x)] <- t(x)[upper.tri(x)]
  sym_from_upper <- x
  sym_from_upper[lower.tri(x)] <- t(x)[lower.tri(x)]
  g <- gpu_matrix(x)
  expect_identical(as.matrix(clbayes:::gpu_support_triangular_transpose(g, "lower")),
                   sym_from_lower)
  expect_identical(as.matrix(clbayes:::gpu_support_triangular_transpose(g, "upper")),
                   sym_from_upper)
  expect_error(clbayes:::gpu_support_triangular_transpose(gpu_matrix(matrix(1:6, 2))),
               "must be square")
})

test_that("diagonal scaling matches base R", {
  skip_if_no_device()
  set.seed(7)
  for (d in list(c(6, 6), c(4, 9), c(9, 4))) {
    x <- matrix(rnorm(prod(d)), d[1], d[2])
    y <- x
    k <- seq_len(min(d))
    y[cbind(k, k)] <- 3 * y[cbind(k, k)]
    expect_equal(as.matrix(clbayes:::gpu_support_scale_diagonal(gpu_matrix(x), 3)), y)
  }
})

test_that("sub-block copy matches R sub-assignment", {
  skip_if_no_device()
  set.seed(8)
  dst <- matrix(rnorm(10 * 12), 10, 12)
  src <- matrix(rnorm(8 * 8), 8, 8)
  expect_r <- dst
  expect_r[3:7, 2:5] <- src[2:6, 4:7]
  out <- clbayes:::gpu_support_sub_block(gpu_matrix(dst), gpu_matrix(src),
                                         src_i = 2, src_j = 4, dst_i = 3,
                                         dst_j = 2, rows = 5, cols = 4)
  expect_identical(as.matrix(out), expect_r)
  # lower view copies only the elements on or below src's diagonal
  expect_l <- dst
  blk <- expect_l[1:8, 1:8]
  blk[lower.tri(blk, diag = TRUE)] <- src[lower.tri(src, diag = TRUE)]
  expect_l[1:8, 1:8] <- blk
  out_l <- clbayes:::gpu_support_sub_block(gpu_matrix(dst), gpu_matrix(src), 1, 1,
                                           1, 1, 8, 8, view = "lower")
  expect_identical(as.matrix(out_l), expect_l)
  expect_error(clbayes:::gpu_support_sub_block(gpu_matrix(dst), gpu_matrix(src),
                                               5, 5, 1, 1, 5, 5), "`src` is too small")
  expect_error(clbayes:::gpu_support_sub_block(gpu_matrix(dst), gpu_matrix(src),
                                               1, 1, 8, 1, 5, 5), "`dst` is too small")
})

test_that("device checks find NaN/Inf, asymmetry and zero diagonals", {
  skip_if_no_device()
  set.seed(9)
  x <- crossprod(matrix(rnorm(40 * 40), 40))
  g <- gpu_matrix(x)
  expect_false(clbayes:::gpu_support_has_nonfinite(g))
  expect_true(clbayes:::gpu_support_is_symmetric(g))
  expect_false(clbayes:::gpu_support_has_zero_diagonal(g))

  # a device matrix with an infinite value, made past gpu_matrix()'s checks
  # (a gpu_matrix holds finite values only: arithmetic that overflows stops)
  inf <- clbayes:::new_gpu_matrix(clbayes:::.cpp_gpu_matrix(matrix(c(1, Inf, 1), 3, 3),
                                                            "entire"))
  expect_true(clbayes:::gpu_support_has_nonfinite(inf))

  y <- x
  y[3, 17] <- y[3, 17] * (1 + 1e-6)
  expect_false(clbayes:::gpu_support_is_symmetric(gpu_matrix(y)))
  expect_true(clbayes:::gpu_support_is_symmetric(gpu_matrix(y), tol = 1e-5))
  expect_false(clbayes:::gpu_support_is_symmetric(gpu_matrix(matrix(1:6, 2))))
  # relative tolerance: tiny and huge scales behave alike
  expect_true(clbayes:::gpu_support_is_symmetric(gpu_matrix(x * 1e-200)))
  expect_false(clbayes:::gpu_support_is_symmetric(gpu_matrix(y * 1e200)))

  z <- x
  z[23, 23] <- 0
  expect_true(clbayes:::gpu_support_has_zero_diagonal(gpu_matrix(z)))
})
