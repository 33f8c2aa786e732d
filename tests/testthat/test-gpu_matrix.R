test_that("matrices of many shapes round-trip exactly", {
  skip_if_no_device()
  set.seed(1)
  shapes <- list(c(0, 3), c(3, 0), c(0, 0), c(1, 1), c(1, 17), c(17, 1),
                 c(31, 33), c(64, 64), c(65, 129), c(1000, 3))
  for (s in shapes) {
    x <- matrix(rnorm(prod(s)), s[1], s[2])
    g <- gpu_matrix(x)
    expect_identical(dim(g), as.integer(s))
    expect_identical(nrow(g), as.integer(s[1]))
    expect_identical(ncol(g), as.integer(s[2]))
    expect_identical(as.matrix(g), x)
  }
})

test_that("vectors, integers and logicals are accepted as matrices", {
  skip_if_no_device()
  expect_identical(as.matrix(gpu_matrix(1:5)), matrix(as.double(1:5), ncol = 1))
  expect_identical(as.matrix(gpu_matrix(matrix(c(TRUE, FALSE), 1))),
                   matrix(c(1, 0), 1))
  df <- data.frame(a = 1:2, b = c(0.5, 1.5))
  expect_equal(as.matrix(gpu_matrix(df)), unname(as.matrix(df)),
               ignore_attr = TRUE)
})

test_that("triangular views round-trip packed and zero the other triangle", {
  skip_if_no_device()
  for (n in c(1, 2, 5, 33, 100)) {
    set.seed(n)
    x <- matrix(rnorm(n * n), n, n)
    lo <- x
    lo[upper.tri(lo)] <- 0
    up <- x
    up[lower.tri(up)] <- 0
    expect_identical(as.matrix(gpu_matrix(x, view = "lower")), lo)
    expect_identical(as.matrix(gpu_matrix(x, view = "upper")), up)
  }
})

test_that("operators match base R", {
  skip_if_no_device()
  set.seed(2)
  a <- matrix(rnorm(35 * 19), 35, 19)
  b <- matrix(rnorm(35 * 19), 35, 19)
  c <- matrix(rnorm(19 * 40), 19, 40)
  ga <- gpu_matrix(a)
  gb <- gpu_matrix(b)
  gc <- gpu_matrix(c)
  expect_equal(as.matrix(ga + gb), a + b, tolerance = 1e-15)
  expect_equal(as.matrix(ga - gb), a - b, tolerance = 1e-15)
  expect_equal(as.matrix(2.5 * ga), 2.5 * a, tolerance = 1e-15)
  expect_equal(as.matrix(ga * -3), -3 * a, tolerance = 1e-15)
  expect_equal(as.matrix(ga / 4), a / 4, tolerance = 1e-15)
  expect_equal(as.matrix(-ga), -a)
  expect_equal(as.matrix(t(ga)), t(a))
  expect_equal(as.matrix(ga %*% gc), a %*% c, tolerance = 1e-13)
  # sizes that are not multiples of the tile, empty inner dimension
  for (d in list(c(1, 1, 1), c(17, 3, 33), c(50, 70, 2), c(3, 0, 4), c(3, 0, 1),
                c(1, 0, 4))) {
    x <- matrix(rnorm(d[1] * d[2]), d[1], d[2])
    y <- matrix(rnorm(d[2] * d[3]), d[2], d[3])
    expect_equal(as.matrix(gpu_matrix(x) %*% gpu_matrix(y)), x %*% y,
                 tolerance = 1e-13)
  }
})

test_that("views propagate through operators", {
  skip_if_no_device()
  set.seed(3)
  x <- matrix(rnorm(16), 4, 4)
  lo <- gpu_matrix(x, view = "lower")
  up <- gpu_matrix(x, view = "upper")
  view_of <- function(g) sub(".*view (\\w+)>.*", "\\1", capture.output(g)[1])
  expect_identical(view_of(lo + lo), "lower")
  expect_identical(view_of(lo + up), "entire")
  expect_identical(view_of(t(lo)), "upper")
  expect_identical(view_of(lo %*% lo), "lower")
  expect_identical(view_of(2 * up), "upper")
  l <- x
  l[upper.tri(l)] <- 0
  expect_equal(as.matrix(lo %*% lo), l %*% l, tolerance = 1e-14)
  expect_equal(as.matrix(t(lo)), t(l))
})

test_that("a long chain of dependent kernels is ordered by events", {
  skip_if_no_device()
  set.seed(4)
  x <- matrix(runif(300 * 200), 300, 200)
  g <- gpu_matrix(x)
  r <- x
  # each step reads the previous step's output before anything is read back
  for (i in 1:25) {
    g <- (g + g) * 0.5 - g * 0.25
    r <- (r + r) * 0.5 - r * 0.25
  }
  expect_equal(as.matrix(g), r, tolerance = 1e-14)
  # reads of one input by many kernels, then a write that depends on all
  base <- gpu_matrix(x)
  parts <- lapply(1:10, function(k) base * k)
  total <- Reduce(`+`, parts)
  expect_equal(as.matrix(total), x * 55, tolerance = 1e-14)
})

test_that("show() prints dimensions, view and the top-left corner", {
  skip_if_no_device()
  out <- capture.output(gpu_matrix(matrix(1:100, 10)))
  expect_match(out[1], "<gpu_matrix 10 x 10, view entire>")
  expect_true(any(grepl("4 more rows, 4 more columns", out)))
  expect_match(capture.output(gpu_matrix(matrix(0, 0, 2)))[1], "0 x 2")
})

test_that("bad inputs give errors naming the argument", {
  skip_if_no_device()
  expect_error(gpu_matrix(matrix(c(1, NA), 1)), "`x` contains NA")
  expect_error(gpu_matrix(matrix(c(1, NaN), 1)), "`x` contains NA")
  expect_error(gpu_matrix(matrix(c(1, Inf), 1)), "`x` contains infinite")
  expect_error(gpu_matrix("a"), "`x` must be a numeric matrix")
  expect_error(gpu_matrix(matrix("a")), "`x` must be numeric")
  expect_error(gpu_matrix(array(1, c(2, 2, 2))), "`x` must be a matrix")
  expect_error(gpu_matrix(matrix(1:6, 2), view = "lower"), "must be square")
  expect_error(gpu_matrix(diag(2), view = "diag"), "`view` must be one of \"entire\", \"lower\", \"upper\"")
  a <- gpu_matrix(matrix(1:6, 2))
  expect_error(gpu_matrix(a), "already a gpu_matrix")
  b <- gpu_matrix(matrix(1:6, 3))
  expect_error(a + b, "`e2` has dimensions 3 x 2 but `e1` has 2 x 3")
  expect_error(a - b, "`e2` has dimensions")
  expect_error(a %*% a, "`y` has 2 rows but `x` has 3 columns")
  expect_error(a + matrix(1:6, 2), "`e2` must be a gpu_matrix or a single number")
  expect_error(matrix(1:6, 2) + a, "`e1` must be a gpu_matrix or a single number")
  expect_error(a * c(1, 2), "`e2` must be a single finite number")
  expect_error(a * NA_real_, "`e2` must be a single finite number")
  expect_error(a * a, "not supported")
  expect_error(a^2, "not supported")
  # a pointer that did not survive serialisation
  f <- tempfile(fileext = ".rds")
  saveRDS(a, f)
  expect_error(as.matrix(readRDS(f)), "invalid gpu_matrix")
})
