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

test_that("a failed allocation names the OpenCL error and the operation", {
  skip_if_no_device()
  # 2^17 x 2^17 doubles = 128 GiB: beyond any device's single allocation
  err <- tryCatch(clbayes:::gpu_support_zeros(2^17, 2^17),
                  error = function(e) conditionMessage(e))
  expect_match(err, "OpenCL error CL_[A-Z_]+ \\(-[0-9]+\\) in allocating")
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
