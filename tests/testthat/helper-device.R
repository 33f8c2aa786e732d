# Device tests run wherever an OpenCL device with double precision is
# selected (PoCL's CPU device in CI); elsewhere they skip and the CPU paths
# are still tested.
skip_if_no_device <- function() {
  testthat::skip_if_not(gpu_available(), "no OpenCL device selected")
}

# Random symmetric positive-definite n x n matrix.
random_spd <- function(n, seed = n) {
  set.seed(seed)
  a <- matrix(rnorm(n * n), n, n)
  crossprod(a) + n * diag(n)
}
