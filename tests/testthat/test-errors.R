# A size in bytes as the messages print it: three significant digits of
# the largest binary unit that keeps the value at least 1.
format_gib <- function(bytes) {
  units <- c("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
  u <- 1L
  while (bytes >= 1024 && u < length(units)) {
    bytes <- bytes / 1024
    u <- u + 1L
  }
  sprintf("%.3g %s", bytes, units[u])
}

test_that("a kernel that fails to build reports the code and the build log", {
  skip_if_no_device()
  ok <- "__kernel void fine(__global double* x) { x[get_global_id(0)] = 1.0; }"
  expect_true(clbayes:::gpu_compile_kernel(ok, "fine"))
  broken <- "__kernel void broken(__global double* x) { x[0] = undeclared_thing; }"
  err <- tryCatch(clbayes:::gpu_compile_kernel(broken, "broken"),
                  error = function(e) conditionMessage(e))
  expect_match(err, "CL_BUILD_PROGRAM_FAILURE", fixed = TRUE)
  expect_match(err, "building kernel 'broken'", fixed = TRUE)
  expect_match(err, "build log", fixed = TRUE)
  expect_match(err, "undeclared_thing", fixed = TRUE)  # the compiler's own words
  expect_error(clbayes:::gpu_compile_kernel(ok, "missing_name"),
               "CL_INVALID_KERNEL_NAME")
  expect_error(clbayes:::gpu_compile_kernel(1, "x"), "`source` must be a single string")
})

test_that("a device matrix too large for the device is refused before allocation", {
  skip_if_no_device()
  # 2^17 x 2^17 doubles = 128 GiB: beyond any device's single allocation
  err <- tryCatch(clbayes:::gpu_support_zeros(2^17, 2^17),
                  error = function(e) conditionMessage(e))
  expect_match(err, "a 131072 x 131072 device matrix needs 128 GiB of device memory",
               fixed = TRUE)
  # (PoCL reports its memory from the host's free memory, so the numbers
  # may move between two queries: the form is checked, not the values.)
  expect_match(err, "has [0-9.]+ [KMGT]iB of memory \\(CL_DEVICE_GLOBAL_MEM_SIZE\\)")
  expect_match(err, "allows [0-9.]+ [KMGT]iB per buffer \\(CL_DEVICE_MAX_MEM_ALLOC_SIZE\\)")
  # the session goes on working afterwards
  expect_identical(as.matrix(gpu_matrix(diag(2))), diag(2))
})

test_that("the opencl backend without a device, and device-only functions in a CPU build, fail clearly", {
  if (gpu_available()) {
    devs <- gpu_devices()
    sel <- devs[devs$selected, ]
    on.exit(gpu_select(sel$platform, sel$device))
    gpu_select(NULL)
  }
  expect_error(resolve_backend("opencl"), "`backend` is \"opencl\" but no OpenCL device")
  expect_error(gpu_matrix(diag(2)), "no OpenCL device is selected|built without OpenCL")
})

test_that("an n x n result beyond the memory is refused before allocation, with its size", {
  x <- matrix(1, 70000, 1)
  # 70000^2 doubles = 36.5 GiB; on the CPU the C++ result and R's copy.
  expect_error(gpu_tcrossprod(x, backend = "cpu"),
               paste0("`x` has 70000 rows: x %*% t(x), a 70000 x 70000 matrix, needs ",
                      format_gib(2 * 8 * 70000^2)), fixed = TRUE)
  skip_if_no_device()
  expect_error(gpu_tcrossprod(x, backend = "opencl"),
               paste0("`x` has 70000 rows: x %*% t(x), a 70000 x 70000 matrix, needs ",
                      format_gib(8 * 70000^2), " of device memory"), fixed = TRUE)
  expect_error(gpu_tcrossprod(gpu_matrix(x)), "needs 36.5 GiB of device memory",
               fixed = TRUE)
  expect_error(gpu_matrix(x) %*% matrix(1, 1, 70000),
               "`x` %*% `y`, a 70000 x 70000 matrix, needs 36.5 GiB", fixed = TRUE)
})

test_that("choices name their argument", {
  expect_error(gp_loglik_batched(1:3, NULL, 1:3, theta = c(1, 1, 1), cov = "matern",
                                 backend = "cpu"),
               "`cov` must be one of \"exponential\", \"squared_exponential\"", fixed = TRUE)
  expect_error(gpu_sum(1:3, method = "fast"), "`method` must be one of", fixed = TRUE)
  expect_error(gpu_mean(1:3, precision = NA), "`precision` must be one of", fixed = TRUE)
  skip_if_no_device()
  expect_error(gpu_matrix(diag(2), view = "diag"),
               "`view` must be one of \"entire\", \"lower\", \"upper\"", fixed = TRUE)
})

test_that("a device matrix times an R matrix or vector is the product, either way round", {
  skip_if_no_device()
  set.seed(20)
  a <- matrix(rnorm(12), 3, 4)
  b <- matrix(rnorm(8), 4, 2)
  v <- rnorm(4)
  expect_s4_class(gpu_matrix(a) %*% b, "gpu_matrix")
  expect_equal(as.matrix(gpu_matrix(a) %*% b), a %*% b, tolerance = 1e-12)
  expect_equal(as.matrix(a %*% gpu_matrix(b)), a %*% b, tolerance = 1e-12)
  expect_equal(as.matrix(gpu_matrix(a) %*% v), a %*% v, tolerance = 1e-12)
  expect_equal(as.matrix(v %*% gpu_matrix(b)), v %*% b, tolerance = 1e-12)
  # a vector that conforms only as the other orientation, as in base R
  expect_equal(as.matrix(gpu_matrix(matrix(1:3)) %*% c(2, 5)), matrix(1:3) %*% c(2, 5))
  expect_equal(as.matrix(c(2, 5) %*% gpu_matrix(t(1:3))), c(2, 5) %*% t(1:3))
  expect_error(gpu_matrix(a) %*% a, "`y` has 3 rows but `x` has 4 columns", fixed = TRUE)
  expect_error(gpu_matrix(a) %*% 1:3, "`y` has 3 values but must have 4", fixed = TRUE)
  expect_error(gpu_matrix(a) %*% matrix("a", 4, 1), "`y` must be numeric", fixed = TRUE)
  expect_error(gpu_matrix(a) %*% c(NA, 1, 2, 3), "`y` contains NA or NaN", fixed = TRUE)
  expect_error(list(1) %*% gpu_matrix(b), "`x` must be", fixed = TRUE)
})

test_that("arithmetic never leaves NaN or Inf in a device matrix (the NaN policy)", {
  skip_if_no_device()
  a <- matrix(c(2, 1, 1, 3), 2)
  expect_error(gpu_matrix(a) * 0 / 0, "`e2` must not be 0", fixed = TRUE)
  expect_error(gpu_matrix(a) / 0, "`e2` must not be 0", fixed = TRUE)
  expect_error(gpu_matrix(a) / NaN, "`e2` must be a single finite number", fixed = TRUE)
  expect_error(gpu_matrix(a) * Inf, "`e2` must be a single finite number", fixed = TRUE)
  expect_error(1e308 * gpu_matrix(a), "`e1 * e2` overflows", fixed = TRUE)
  big <- gpu_matrix(a * 5e307)  # up to 1.5e308, near .Machine$double.xmax
  expect_error(big + big, "`e1 + e2` overflows", fixed = TRUE)
  expect_error(big - (-big), "`e1 - e2` overflows", fixed = TRUE)
  expect_error(gpu_matrix(a * 1e200) %*% gpu_matrix(a * 1e200), "`x %*% y` overflows",
               fixed = TRUE)
  expect_error(gpu_tcrossprod(gpu_matrix(a * 1e200)), "`x` %*% t(`x`) overflows", fixed = TRUE)
  # finite results go through, and gpu_sum(na.rm = TRUE) is the plain sum
  s <- gpu_matrix(a) * 1e-300 / 1e-8
  expect_equal(as.matrix(s), a * 1e-300 / 1e-8)
  expect_equal(gpu_sum(gpu_matrix(a), na.rm = TRUE), sum(a))
  expect_error(gpu_matrix(c(1, NaN)), "`x` contains NA or NaN values", fixed = TRUE)
  expect_error(gpu_matrix(c(1, Inf)), "`x` contains infinite values", fixed = TRUE)
})

test_that("messages show numbers as R does, never with %f's six decimals", {
  err <- tryCatch(gpu_tcrossprod(matrix(1, 70000, 1), backend = "cpu"),
                  error = conditionMessage)
  expect_false(grepl("[0-9]\\.[0-9]{6}", err))
})

# Runs the R code `code` in a child Rscript (the environment of
# child_env()), sends it SIGINT once it has written the file `ready` (just
# before its long compiled call) and waits for it to end. Returns the
# process and whether it was still alive then (it is killed if so).
interrupted_child <- function(code, ready) {
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("-e", code),
                             stdout = "|", stderr = "|", env = child_env())
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  deadline <- Sys.time() + 120
  while (!file.exists(ready) && p$is_alive() && Sys.time() < deadline) Sys.sleep(0.1)
  Sys.sleep(0.5)  # inside the compiled call by now
  p$interrupt()
  p$wait(60000)
  list(process = p, alive = p$is_alive())
}

skip_unless_ctrl_c <- function() {
  skip_on_os("windows")
  skip_on_cran()
  skip_if_not_installed("processx")
}

# The child's long compiled call: gp_loglik_batched() on the CPU over a
# million parameter rows (many minutes in one call, which checks for Ctrl-C
# between chunks of rows), one thread.
long_call_code <- function(ready) {
  sprintf(paste0(
    "library(clbayes); set.seed(1); n <- 200; ",
    "d <- gpu_gp_data(rnorm(n), NULL, matrix(runif(2 * n), n)); ",
    "theta <- cbind(1, 0.1, runif(1e6, 0.1, 1)); writeLines('ready', '%s'); "), ready)
}

child_env <- function() {
  c("current", OMP_NUM_THREADS = "1",
    R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
}

test_that("Ctrl-C during a compiled loop is an R interrupt condition", {
  skip_unless_ctrl_c()
  ready <- tempfile()
  code <- paste0(long_call_code(ready),
                 "res <- tryCatch({ gp_loglik_batched(d, theta = theta, backend = 'cpu'); ",
                 "'finished' }, interrupt = function(e) 'interrupt', ",
                 "error = function(e) paste('error:', conditionMessage(e))); ",
                 "cat('result:', res, '\\n')")
  child <- interrupted_child(code, ready)
  expect_false(child$alive)
  p <- child$process
  expect_match(p$read_all_output(), "result: interrupt", fixed = TRUE)
})

test_that("Ctrl-C during a compiled loop stops Rscript as it does in R code", {
  skip_unless_ctrl_c()
  ready <- tempfile()
  code <- paste0(long_call_code(ready),
                 "gp_loglik_batched(d, theta = theta, backend = 'cpu'); cat('after\\n')")
  child <- interrupted_child(code, ready)
  expect_false(child$alive)
  p <- child$process
  expect_false(p$get_exit_status() == 0)
  expect_false(grepl("after", p$read_all_output()))
  # an interrupt, not an error: R prints no "Error" line
  expect_false(grepl("Error|interrupted by the user", p$read_all_error()))
})

test_that("Ctrl-C during gpu_chol's streamed transfers is an interrupt; the next call works", {
  skip_unless_ctrl_c()
  skip_if_no_device()
  ready <- tempfile()
  # Two block columns of a 1500 x 1500 matrix: copied in and back by the
  # host path's two threads (linalg/cholesky_host.hpp) while it is factored.
  code <- sprintf(paste0(
    "library(clbayes); set.seed(1); n <- 1500; ",
    "x <- crossprod(matrix(rnorm(n * n), n)) + diag(n); writeLines('ready', '%s'); ",
    "res <- tryCatch({ for (i in 1:1000) l <- gpu_chol(x, backend = 'opencl'); 'finished' }, ",
    "interrupt = function(e) 'interrupt', ",
    "error = function(e) paste('error:', conditionMessage(e))); ",
    "y <- x[1:300, 1:300]; l <- gpu_chol(y, backend = 'opencl'); ",
    "cat('result:', res, 'after:', max(abs(tcrossprod(l) - y)) / max(abs(y)) < 1e-12, '\\n')"),
    ready)
  child <- interrupted_child(code, ready)
  expect_false(child$alive)
  p <- child$process
  expect_match(p$read_all_output(), "result: interrupt after: TRUE", fixed = TRUE)
})

test_that("Ctrl-C during a kernel build is an interrupt, not a build error", {
  skip_unless_ctrl_c()
  skip_if_no_device()
  # Only where the build is known to outlast the 0.5 s before Ctrl-C (PoCL:
  # about 3 s on the 2-core dev machine); a faster compiler would finish
  # first and report its error.
  skip_if_not(grepl("Portable Computing Language", gpu_info()$platform_name),
              "the build's duration is measured on PoCL only")
  ready <- tempfile()
  # A program that takes seconds to build (60000 small functions) and then
  # fails (an undeclared name): Ctrl-C arrives while it builds. On PoCL the
  # compiler's signal handler also deletes its temporary files, so that a
  # build cut short fails whatever its source.
  code <- sprintf(paste0(
    "library(clbayes); ",
    "src <- paste0(paste(sprintf('double f%%d(double x) { return x * %%d.0; }', 1:60000, 1:60000), ",
    "collapse = '\\n'), '\\n__kernel void k(__global double* a) { a[0] = undeclared_thing; }'); ",
    "writeLines('ready', '%s'); ",
    "res <- tryCatch({ clbayes:::gpu_compile_kernel(src, 'k'); 'built' }, ",
    "interrupt = function(e) 'interrupt', ",
    "error = function(e) paste('error:', conditionMessage(e))); ",
    "cat('result:', res, '\\n')"), ready)
  child <- interrupted_child(code, ready)
  expect_false(child$alive)
  expect_match(child$process$read_all_output(), "result: interrupt", fixed = TRUE)
})

test_that("model_log_density refuses NA points instead of returning -Inf", {
  set.seed(1)
  x <- matrix(rnorm(20), 10)
  m <- glm_model(rbinom(10, 1, 0.5), x, "bernoulli_logit")
  expect_error(model_log_density(m, rep(NA_real_, 3), backend = "cpu"),
               "`points` must not contain NA")
  expect_error(model_log_density(m, rep(NA, 3), backend = "cpu"), "`points`")
})

test_that("model constructors' errors name the argument and the problem (issue 50)", {
  set.seed(2)
  d <- data.frame(x = rnorm(12))
  d$y <- 1 + d$x + rnorm(12)
  d$n <- rpois(12, 3)
  # a response whose squares overflow: the start would have sigma = Inf
  expect_error(lm_model(y ~ x, transform(d, y = y * 1e300)),
               "`y` is too large in magnitude .* `sigma` is not finite; rescale `y`")
  d$n[1] <- 1e300
  expect_error(glm_model(n ~ x, d, family = poisson()),
               "`y` has a count of 1e\\+300, larger than this family takes")
  d$n[1] <- 3
  weibull <- normal()
  weibull$dist <- "weibull"
  expect_error(glm_model(y ~ x, d, prior = weibull),
               "`prior` must be normal\\(\\), .*: \"weibull\" is not supported by clbayes")
  expect_error(glm_model(y ~ x, d, prior_aux = weibull),
               "`prior_aux` must be .*: \"weibull\" is not supported by clbayes")
  # glm() names `x` for Inf in a predictor: so do the models
  expect_error(glm(y ~ x, data = transform(d, x = replace(x, 4, Inf))), "'x'")
  expect_error(lm_model(y ~ x, transform(d, x = replace(x, 4, Inf))),
               "NA/NaN/Inf in `x`, the design matrix of `formula`: column \"x\" is Inf in row 4")
  expect_error(glm_model(n ~ 0, d, family = poisson()),
               "`formula` has no terms and no intercept")
  expect_error(glm_model("y ~ x", d), "`formula` must be a formula, not a string")
  expect_error(lm_model("y ~ x", d), "`formula` must be a formula, not a string")
  expect_error(glm_model(y ~ x, d, prior_intercept = normal(c(0, 1), 1)),
               "`prior_intercept` must have location of length 1 \\(one per parameter\\), not 2")
  m <- glm_model(y ~ x, d)
  expect_error(model_log_density(m, matrix(0, 0, 3)),
               "`points` has no rows: give one point \\(3 parameter values\\) per row")
})

test_that("sampler counts beyond an integer, and one group's error, read plainly", {
  ld <- function(x) -0.5 * rowSums(x^2)
  expect_error(slice_sample_mv(ld, c(0, 0), n_iter = 1e12),
               "`n_iter` must be at most 2147483647, not 1e\\+12")
  expect_error(hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, warmup = 1e12),
               "`warmup` must be at most 2147483647")
  boom <- function(x) stop("the density broke")
  err <- tryCatch(slice_sample_mv(boom, c(0, 0), n_iter = 5, warmup = 5, chains = 2, seed = 1),
                  error = conditionMessage)
  expect_match(err, "the density broke")
  expect_no_match(err, "chain group")
})
