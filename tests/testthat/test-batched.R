# Batched Cholesky, batched solve and the batched GP log-likelihood, against
# loops of base R (chol, solve, backsolve) and closed forms. Tolerances:
# factors and solutions agree with LAPACK to 1e-10 relative (the matrices
# are well conditioned); log densities to 1e-9 relative.

# B random SPD m x m matrices in an m x m x B array.
spd_batch <- function(m, B, seed = m * 1000 + B) {
  set.seed(seed)
  a <- array(0, c(m, m, B))
  for (b in seq_len(B)) {
    g <- matrix(rnorm(m * m), m, m)
    a[, , b] <- crossprod(g) / m + diag(m)
  }
  a
}

chol_ref <- function(a) {
  out <- a
  for (b in seq_len(dim(a)[3L])) out[, , b] <- t(chol(a[, , b]))
  out
}

rel_err <- function(x, ref) max(abs(x - ref)) / max(1, max(abs(ref)))

# (m, B) pairs: every m and every B of the issue, big m with small B so the
# device tests stay quick on PoCL.
chol_cases <- list(c(1, 1), c(1, 7), c(1, 1000), c(2, 7), c(2, 1000), c(3, 1),
                   c(3, 1000), c(8, 7), c(8, 1000), c(16, 7), c(16, 1000),
                   c(17, 7), c(32, 7), c(64, 7), c(100, 2), c(500, 1))

for (backend in c("cpu", "opencl")) {
  test_that(paste("gpu_chol_batched matches base::chol item by item,", backend), {
    if (backend == "opencl") skip_if_no_device()
    for (cs in chol_cases) {
      a <- spd_batch(cs[1], cs[2])
      l <- gpu_chol_batched(a, backend = backend)
      expect_equal(dim(l), dim(a))
      expect_lt(rel_err(l, chol_ref(a)), 1e-10)
    }
    a <- spd_batch(5, 3)
    u <- gpu_chol_batched(a, upper = TRUE, backend = backend)
    for (b in 1:3) expect_equal(u[, , b], chol(a[, , b]), tolerance = 1e-12)
    m <- spd_batch(6, 1)[, , 1]
    expect_equal(gpu_chol_batched(m, backend = backend), t(chol(m)), tolerance = 1e-12)
  })

  test_that(paste("gpu_chol_batched names the item that is not positive definite,",
                  backend), {
    if (backend == "opencl") skip_if_no_device()
    for (m in c(4, 40)) {
      a <- spd_batch(m, 5)
      a[, , 4] <- -a[, , 4]
      expect_error(gpu_chol_batched(a, backend = backend),
                   "`a\\[, , 4\\]` is not positive definite")
    }
  })

  test_that(paste("gpu_solve_batched matches base::solve item by item,", backend), {
    if (backend == "opencl") skip_if_no_device()
    set.seed(11)
    cases <- list(c(1, 7), c(2, 1000), c(3, 7), c(8, 1000), c(16, 7), c(17, 7),
                  c(32, 1), c(64, 7), c(100, 1), c(500, 1))
    for (cs in cases) {
      m <- cs[1]
      B <- cs[2]
      a <- array(rnorm(m * m * B), c(m, m, B))  # general, needs pivoting
      b <- matrix(rnorm(m * B), m, B)
      x <- gpu_solve_batched(a, b, backend = backend)
      ref <- vapply(seq_len(B), function(i) solve(a[, , i], b[, i]), numeric(m))
      expect_equal(dim(x), dim(b))
      expect_lt(rel_err(x, matrix(ref, m, B)), 1e-8)
    }
    a <- array(rnorm(9 * 9 * 4), c(9, 9, 4))
    b <- array(rnorm(9 * 3 * 4), c(9, 3, 4))
    x <- gpu_solve_batched(a, b, backend = backend)
    for (i in 1:4) expect_equal(x[, , i], solve(a[, , i], b[, , i]), tolerance = 1e-9)
    a <- array(rnorm(40 * 40 * 2), c(40, 40, 2))
    b <- array(rnorm(40 * 5 * 2), c(40, 5, 2))
    x <- gpu_solve_batched(a, b, backend = backend)
    for (i in 1:2) expect_equal(x[, , i], solve(a[, , i], b[, , i]), tolerance = 1e-9)
    # A zero first entry forces a row swap; without pivoting this would fail.
    a1 <- matrix(c(0, 1, 1, 0), 2)
    expect_equal(gpu_solve_batched(a1, c(2, 3), backend = backend), c(3, 2))
  })

  test_that(paste("gpu_solve_batched names the singular item,", backend), {
    if (backend == "opencl") skip_if_no_device()
    for (m in c(3, 30)) {
      a <- array(rnorm(m * m * 3), c(m, m, 3))
      a[, 2, 2] <- 0
      expect_error(gpu_solve_batched(a, matrix(1, m, 3), backend = backend),
                   "`a\\[, , 2\\]` is singular")
    }
  })
}

test_that("batched routines reject malformed input by argument name", {
  a <- spd_batch(3, 2)
  expect_error(gpu_chol_batched("x", backend = "cpu"), "`a` must be a numeric array")
  expect_error(gpu_chol_batched(array(1, c(2, 3, 2)), backend = "cpu"),
               "`a` must hold square matrices")
  expect_error(gpu_chol_batched(array(1, c(2, 2, 2, 2)), backend = "cpu"),
               "`a` must be an m x m x B array")
  bad <- a
  bad[1, 2, 2] <- NA
  expect_error(gpu_chol_batched(bad, backend = "cpu"), "`a` must not contain NA")
  bad <- a
  bad[1, 2, 2] <- 5
  expect_error(gpu_chol_batched(bad, backend = "cpu"), "`a\\[, , 2\\]` must be symmetric")
  expect_error(gpu_chol_batched(a, upper = NA, backend = "cpu"), "`upper` must be")
  expect_error(gpu_solve_batched(a, matrix(1, 3, 3), backend = "cpu"),
               "`b` must be an 3 x 2 matrix")
  expect_error(gpu_solve_batched(a, matrix(NA_real_, 3, 2), backend = "cpu"),
               "`b` must not contain NA")
  expect_error(gpu_chol_batched(a, backend = "gpu"), "`backend` must be one of")
})

# Direct R computation of the GP log density (dmvnorm via chol + backsolve),
# with -Inf outside the support and for a numerically singular Sigma.
gp_ref <- function(y, X, coords, beta, theta, cov) {
  n <- length(y)
  r <- drop(y - X %*% beta)
  D <- as.matrix(dist(coords))
  apply(theta, 1, function(p) {
    k <- p[1]
    psi <- p[2]
    phi <- p[3]
    if (!all(is.finite(p)) || k <= 0 || psi < 0 || phi <= 0) return(-Inf)
    S <- if (cov == "exponential") k * exp(-D / phi) else k * exp(-D^2 / (2 * phi^2))
    diag(S) <- k + psi
    U <- tryCatch(chol(S), error = function(e) NULL)
    if (is.null(U) || any(diag(U)^2 <= 16 * n * .Machine$double.eps * (k + psi))) {
      return(-Inf)
    }
    z <- backsolve(U, r, transpose = TRUE)
    -0.5 * (n * log(2 * pi) + 2 * sum(log(diag(U))) + sum(z^2))
  })
}

gp_problem <- function(n, seed = n) {
  set.seed(seed)
  coords <- matrix(runif(2 * n), n, 2)
  X <- cbind(1, rnorm(n))
  y <- drop(X %*% c(1, -0.5)) + rnorm(n)
  list(y = y, X = X, coords = coords, beta = c(0.8, -0.3))
}

gp_theta <- function(rows, seed = 1) {
  set.seed(seed)
  theta <- cbind(runif(rows, 0.3, 3), runif(rows, 0.05, 1), runif(rows, 0.05, 0.8))
  # Outside the support, or not finite: -Inf.
  rbind(theta, c(0, 0.5, 0.2), c(-1, 0.5, 0.2), c(1, -0.1, 0.2), c(1, 0.5, 0),
        c(1, 0.5, -2), c(Inf, 0.5, 0.2), c(1, 0.5, Inf), c(1, 0, 0.3))
}

for (backend in c("cpu", "opencl")) {
  test_that(paste("gp_loglik_batched matches chol + backsolve in R,", backend), {
    if (backend == "opencl") skip_if_no_device()
    pr <- gp_problem(40)
    theta <- gp_theta(60)
    for (cov in c("exponential", "squared_exponential")) {
      got <- gp_loglik_batched(pr$y, pr$X, pr$coords, pr$beta, theta, cov = cov,
                               backend = backend)
      ref <- gp_ref(pr$y, pr$X, pr$coords, pr$beta, theta, cov)
      expect_false(anyNA(got))
      expect_identical(is.infinite(got), is.infinite(ref))
      # The last row has no nugget (psi = 0): with the squared-exponential
      # kernel its Sigma is so ill-conditioned that only ~1e-7 agreement
      # with LAPACK is meaningful; every other row agrees to 1e-9.
      ok <- is.finite(ref)
      ok[nrow(theta)] <- FALSE
      expect_equal(got[ok], ref[ok], tolerance = 1e-9)
      expect_equal(got[nrow(theta)], ref[nrow(theta)], tolerance = 1e-7)
      expect_true(all(got[61:67] == -Inf))
    }
    # Without covariates, and n = 1 against dnorm.
    expect_equal(gp_loglik_batched(3, NULL, 0.5, NULL, c(2, 0.25, 1), backend = backend),
                 dnorm(3, 0, sqrt(2.25), log = TRUE), tolerance = 1e-12)
    # phi tiny: Sigma = (kappa + psi) I exactly, a sum of univariate normals.
    got <- gp_loglik_batched(pr$y, pr$X, pr$coords, pr$beta, c(1.5, 0.5, 1e-6),
                             backend = backend)
    r <- drop(pr$y - pr$X %*% pr$beta)
    expect_equal(got, sum(dnorm(r, 0, sqrt(2), log = TRUE)), tolerance = 1e-12)
  })

  test_that(paste("gp_loglik_batched gives -Inf, not NaN, for singular Sigma,", backend), {
    if (backend == "opencl") skip_if_no_device()
    pr <- gp_problem(25)
    pr$coords[7, ] <- pr$coords[3, ]  # a repeated location: singular without nugget
    theta <- rbind(c(1, 0, 0.3), c(2, 0, 0.1), c(1, 0.2, 0.3), c(1, 0, 0.05))
    for (cov in c("exponential", "squared_exponential")) {
      got <- gp_loglik_batched(pr$y, pr$X, pr$coords, pr$beta, theta, cov = cov,
                               backend = backend)
      ref <- gp_ref(pr$y, pr$X, pr$coords, pr$beta, theta, cov)
      expect_equal(got[c(1, 2, 4)], rep(-Inf, 3))
      expect_equal(got[3], ref[3], tolerance = 1e-9)
    }
  })
}

test_that("gp_loglik_batched: device and CPU agree beyond local memory", {
  skip_if_no_device()
  # n = 400: Sigma (1.3 MB) exceeds PoCL's 1 MB of local memory, so the
  # device works in global scratch.
  pr <- gp_problem(400)
  theta <- rbind(c(1, 0.3, 0.2), c(2, 0.1, 0.05), c(-1, 0.3, 0.2))
  data <- gpu_gp_data(pr$y, pr$X, pr$coords)
  got <- gp_loglik_batched(data, beta = pr$beta, theta = theta, backend = "opencl")
  ref <- gp_ref(pr$y, pr$X, pr$coords, pr$beta, theta, "exponential")
  expect_equal(got, ref, tolerance = 1e-9)
})

test_that("gpu_gp_data keeps the data for repeated calls", {
  pr <- gp_problem(30)
  data <- gpu_gp_data(pr$y, pr$X, pr$coords)
  expect_s3_class(data, "gpu_gp_data")
  expect_output(print(data), "30 locations in 2 dimensions, 2 covariates")
  theta <- gp_theta(5)
  ref <- gp_ref(pr$y, pr$X, pr$coords, pr$beta, theta, "exponential")
  backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
  for (backend in backends) {
    for (i in 1:2) {
      expect_equal(gp_loglik_batched(data, beta = pr$beta, theta = theta,
                                     backend = backend), ref, tolerance = 1e-9)
    }
  }
})

test_that("gp_loglik_batched rejects malformed input by argument name", {
  pr <- gp_problem(10)
  th <- c(1, 0.5, 0.2)
  f <- function(...) gp_loglik_batched(backend = "cpu", ...)
  y <- pr$y
  y[2] <- NA
  expect_error(f(y, pr$X, pr$coords, pr$beta, th), "`y` must not contain NA")
  expect_error(f(pr$y, pr$X[1:5, ], pr$coords, pr$beta, th), "`X` must be a numeric matrix with 10 rows")
  expect_error(f(pr$y, pr$X, pr$coords[1:5, ], pr$beta, th), "`coords` must be a numeric matrix with 10 rows")
  co <- pr$coords
  co[1, 1] <- Inf
  expect_error(f(pr$y, pr$X, co, pr$beta, th), "`coords` must not contain")
  expect_error(f(pr$y, pr$X, pr$coords, 1, th), "`beta` must be 2 finite numbers")
  expect_error(f(pr$y, pr$X, pr$coords, pr$beta, cbind(1, 2)), "`theta` must be a numeric matrix with 3 columns")
  expect_error(f(pr$y, pr$X, pr$coords, pr$beta, c(1, NA, 2)), "`theta` must not contain NA")
  expect_error(f(pr$y, pr$X, pr$coords, pr$beta, th, cov = "matern"), "`cov` must be one of")
  data <- gpu_gp_data(pr$y, pr$X, pr$coords)
  expect_error(f(data, pr$X, beta = pr$beta, theta = th), "`X` and `coords` must be omitted")
})

# Every device building block on its own, at both levels, with both layouts,
# and at the team level in local and in global memory, against base R.
test_that("each batched device function matches base R in every configuration", {
  skip_if_no_device()
  configs <- list(
    list(level = "serial", layout = "contiguous", local = TRUE),
    list(level = "serial", layout = "interleaved", local = TRUE),
    list(level = "team", layout = "contiguous", local = TRUE),
    list(level = "team", layout = "interleaved", local = TRUE),
    list(level = "team", layout = "contiguous", local = FALSE),
    list(level = "team", layout = "interleaved", local = FALSE)
  )
  it <- function(x, i) matrix(x[, , i], dim(x)[1L], dim(x)[2L])
  set.seed(5)
  B <- 7
  r <- 3
  for (m in c(1, 3, 8, 17, 40)) {
    gen <- array(rnorm(m * m * B), c(m, m, B))
    dd <- gen
    for (i in seq_len(B)) dd[, , i] <- gen[, , i] + m * diag(m)  # no pivoting needed
    spd <- spd_batch(m, B)
    b <- array(rnorm(m * r * B), c(m, r, B))
    c0 <- array(rnorm(m * r * B), c(m, r, B))
    v <- array(rnorm(m * B), c(m, 1, B))
    y0 <- array(rnorm(m * B), c(m, 1, B))
    for (cf in configs) {
      run <- function(op, a, ...) {
        batched_device_op(op, a, ..., level = cf$level, layout = cf$layout,
                          local = cf$local)
      }
      what <- sprintf("m = %d, %s, %s, local = %s", m, cf$level, cf$layout, cf$local)
      ch <- run("chol", spd)
      lu <- run("lu", dd)
      lp <- run("lu_piv", gen)
      tl <- run("trsm_lower", dd, b, b)
      tu <- batched_device_op("trsm_upper", dd, b, b, unit = TRUE, level = cf$level,
                              layout = cf$layout, local = cf$local)
      gm <- batched_device_op("gemm", gen, b, c0, alpha = 2, beta = 0.5,
                              level = cf$level, layout = cf$layout, local = cf$local)
      gv <- batched_device_op("gemv", gen, v, y0, alpha = -1, beta = 2,
                              level = cf$level, layout = cf$layout, local = cf$local)
      sv <- run("trsv_upper", dd, v, v)
      expect_true(all(c(ch$info, lu$info, lp$info) == 0), label = what)
      err <- 0
      for (i in seq_len(B)) {
        err <- max(err, abs(it(ch$a, i) - t(chol(it(spd, i)))))
        L <- it(lu$a, i)
        U <- L
        L[upper.tri(L, diag = TRUE)] <- 0
        diag(L) <- 1
        U[lower.tri(U)] <- 0
        err <- max(err, abs(L %*% U - it(dd, i)) / m)
        L <- it(lp$a, i)
        U <- L
        L[upper.tri(L, diag = TRUE)] <- 0
        diag(L) <- 1
        U[lower.tri(U)] <- 0
        pa <- it(gen, i)
        for (k in seq_len(m)) pa[c(k, lp$piv[k, i]), ] <- pa[c(lp$piv[k, i], k), ]
        err <- max(err, abs(L %*% U - pa) / m)
        a <- it(dd, i)
        err <- max(err, abs(it(tl$c, i) - forwardsolve(a, it(b, i))))
        a1 <- a
        diag(a1) <- 1
        err <- max(err, abs(it(tu$c, i) - backsolve(a1, it(b, i))))
        err <- max(err, abs(it(gm$c, i) - (2 * it(gen, i) %*% it(b, i) + 0.5 * it(c0, i))))
        err <- max(err, abs(it(gv$c, i) - (-it(gen, i) %*% it(v, i) + 2 * it(y0, i))))
        err <- max(err, abs(it(sv$c, i) - backsolve(a, it(v, i))))
      }
      expect_lt(err, 1e-10, label = what)
    }
  }
  # Pivoting picks the largest entry, ties to the lowest row (as LAPACK).
  a <- array(c(1, -3, 3, 2, 0, 1, 1, 1, 1), c(3, 3, 1))
  for (level in c("serial", "team")) {
    expect_equal(batched_device_op("lu_piv", a, level = level)$piv[1, 1], 2L)
    expect_equal(batched_device_op("lu", array(c(0, 1, 1, 0), c(2, 2, 1)),
                                   level = level)$info, 1L)
  }
})

# The blocked multi-work-group Cholesky (batched/chol_blocked.hpp) and the
# GP likelihood built on it: reached by default from the device's
# blocked_min_m (gp_blocked_min_n for the GP), and at small sizes through
# settings passed with the call (.chol_batched, .gp_loglik_batched) that
# lower the switch points, with block widths that do and do not divide m.

# SPD batch whose item `bad` has pivot k (1-based) equal to -1: its leading
# k - 1 minors stay positive, so Cholesky must fail exactly at k.
batch_failing_at <- function(m, B, bad, k) {
  a <- spd_batch(m, B)
  L <- t(chol(a[, , bad]))
  a[k, k, bad] <- a[k, k, bad] - L[k, k]^2 - 1
  a
}

test_that("blocked batched Cholesky matches base::chol around the switch and at 500", {
  skip_if_no_device()
  for (cs in list(c(127, 2), c(128, 2), c(130, 3), c(500, 2))) {
    a <- spd_batch(cs[1], cs[2])
    expect_lt(rel_err(gpu_chol_batched(a, backend = "opencl"), chol_ref(a)), 1e-10,
              label = sprintf("m = %d", cs[1]))
  }
  cases <- list(c(9, 16, 7), c(17, 16, 5), c(40, 16, 7), c(100, 16, 3), c(33, 7, 4),
                c(64, 64, 2), c(130, 32, 2))
  for (cs in cases) {
    s <- c(blocked_min_m = 9, blocked_nb = cs[2], blocked_tile = 16, blocked_wpt = 2)
    a <- spd_batch(cs[1], cs[3])
    expect_lt(rel_err(.chol_batched(a, FALSE, "opencl", s), chol_ref(a)), 1e-10,
              label = sprintf("m = %d, nb = %d", cs[1], cs[2]))
    expect_lt(rel_err(.chol_batched(a, TRUE, "opencl", s)[, , 1], chol(a[, , 1])), 1e-10)
  }
  # settings are named, known and in range
  a <- spd_batch(12, 2)
  expect_error(.chol_batched(a, FALSE, "opencl", c(no_such = 1)),
               "unknown batched setting `no_such`")
  expect_error(.chol_batched(a, FALSE, "opencl", 9L), "batched settings must be named")
  expect_error(.chol_batched(a, FALSE, "opencl", c(blocked_tile = 0)),
               "`blocked_tile` must be a whole number of at least 1")
})

test_that("blocked batched Cholesky reports the failing pivot and spares the others", {
  skip_if_no_device()
  for (cs in list(c(130, 32, 70), c(130, 32, 1), c(130, 32, 130), c(45, 16, 20))) {
    m <- cs[1]
    s <- c(blocked_min_m = 9, blocked_nb = cs[2])
    local({
      a <- batch_failing_at(m, 4, bad = 2, k = cs[3])
      res <- .cpp_chol_batched(a, m, 4L, TRUE, s)
      expect_equal(res$info, c(0L, cs[3], 0L, 0L))
      expect_false(anyNA(res$factor))
      f <- array(res$factor, dim(a))
      for (b in c(1, 3, 4)) {
        expect_lt(rel_err(f[, , b], t(chol(a[, , b]))), 1e-10)
      }
      expect_error(.chol_batched(a, FALSE, "opencl", s),
                   "`a\\[, , 2\\]` is not positive definite")
    })
  }
})

test_that("gp_loglik_batched on the blocked path matches chol + backsolve in R", {
  skip_if_no_device()
  check <- function(pr, theta, cov, settings = integer(0)) {
    got <- .gp_loglik_batched(pr$y, pr$X, pr$coords, pr$beta, theta, cov, "opencl",
                              settings)
    ref <- gp_ref(pr$y, pr$X, pr$coords, pr$beta, theta, cov)
    expect_false(anyNA(got))
    expect_identical(is.infinite(got), is.infinite(ref))
    list(got = got, ref = ref)
  }
  for (nb in c(16, 7)) {
    s <- c(gp_blocked_min_n = 1, blocked_nb = nb, blocked_tile = 16, blocked_wpt = 2)
    local({
      pr <- gp_problem(40)
      theta <- gp_theta(30)
      for (cov in c("exponential", "squared_exponential")) {
        r <- check(pr, theta, cov, s)
        ok <- is.finite(r$ref)
        ok[nrow(theta)] <- FALSE  # psi = 0: see the fused-path test above
        expect_equal(r$got[ok], r$ref[ok], tolerance = 1e-9)
        expect_equal(r$got[nrow(theta)], r$ref[nrow(theta)], tolerance = 1e-7)
        expect_true(all(r$got[31:37] == -Inf))
      }
      # A repeated location without nugget: singular, -Inf, never NaN.
      pr <- gp_problem(25)
      pr$coords[7, ] <- pr$coords[3, ]
      theta <- rbind(c(1, 0, 0.3), c(2, 0, 0.1), c(1, 0.2, 0.3), c(1, 0, 0.05))
      for (cov in c("exponential", "squared_exponential")) {
        r <- check(pr, theta, cov, s)
        expect_equal(r$got[c(1, 2, 4)], rep(-Inf, 3))
        expect_equal(r$got[3], r$ref[3], tolerance = 1e-9)
      }
      # n = 1 against dnorm, without covariates.
      expect_equal(.gp_loglik_batched(3, NULL, 0.5, NULL, c(2, 0.25, 1), "exponential",
                                      "opencl", s),
                   dnorm(3, 0, sqrt(2.25), log = TRUE), tolerance = 1e-12)
    })
  }
  # The default switch point, and n = 500.
  theta <- rbind(c(1, 0.3, 0.2), c(2, 0.1, 0.05), c(-1, 0.3, 0.2), c(1.5, 0.5, 0.4))
  for (n in c(127, 128, 500)) {
    pr <- gp_problem(n)
    r <- check(pr, theta, "exponential")
    expect_equal(r$got, r$ref, tolerance = 1e-9, label = sprintf("n = %d", n))
  }
})
