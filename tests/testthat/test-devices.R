test_that("gpu_devices() lists devices with the documented columns", {
  devs <- gpu_devices()
  expect_s3_class(devs, "data.frame")
  expect_true(all(c("platform", "device", "name", "type", "fp64", "global_mem",
                    "compute_units", "selected") %in% names(devs)))
  expect_lte(sum(devs$selected), 1L)
  expect_true(all(devs$type %in% c("gpu", "cpu", "accelerator", "other")))
  expect_identical(gpu_available(), any(devs$selected))
})

test_that("a selected device has double precision and matches gpu_info()", {
  skip_if_no_device()
  devs <- gpu_devices()
  sel <- devs[devs$selected, ]
  expect_true(sel$fp64)
  expect_gt(sel$global_mem, 0)
  info <- gpu_info()
  expect_identical(info$name, sel$name)
  expect_identical(info$platform, sel$platform)
})

test_that("gpu_select() switches, deselects and refuses bad indices", {
  skip_if_no_device()
  devs <- gpu_devices()
  sel <- devs[devs$selected, ]
  on.exit(gpu_select(sel$platform, sel$device), add = TRUE)

  a <- gpu_matrix(matrix(1:4, 2))
  big <- gpu_matrix(matrix(0, 400, 400))  # 1.2 MiB: kept when released
  gpu_select(NULL)
  expect_false(gpu_available())
  expect_message(expect_null(gpu_info()), "no OpenCL device")
  expect_error(gpu_matrix(diag(2)), "no OpenCL device is selected")
  expect_error(resolve_backend("opencl"), "no OpenCL device")
  expect_identical(gpu_empty_cache(), 0)
  expect_identical(resolve_backend("auto", size = 1e9, threshold = 0), "cpu")

  res <- gpu_select(sel$platform, sel$device)
  expect_true(gpu_available())
  expect_identical(res$name, sel$name)
  # matrices made before the switch belong to another context
  expect_error(as.matrix(a), "no longer selected")
  # and their buffers are released, not kept for the new one
  rm(big)
  invisible(gc())
  expect_identical(.cpp_cache_stats()[["kept_bytes"]], 0)

  expect_error(gpu_select(99L, 0L), "`platform` must be a platform index from 0 to")
  expect_error(gpu_select(sel$platform, 99L), "`device` must be a device index from 0 to")
  expect_error(gpu_select(-1), "`platform` must be a single non-negative")
  expect_error(gpu_select("a"), "`platform` must be a single non-negative")
  expect_error(gpu_select(0, 1.5), "`device` must be a single non-negative")
})

test_that("released device matrices are reused, and gpu_empty_cache() gives them back", {
  skip_if_no_device()
  stats <- function() .cpp_cache_stats()
  gpu_empty_cache()
  set.seed(1)
  x <- matrix(rnorm(400 * 400), 400)  # 1.2 MiB: kept when released
  g <- gpu_matrix(x)
  rm(g)
  invisible(gc())
  kept <- stats()
  expect_gte(kept[["kept_bytes"]], 8 * 400 * 400)
  # the kept buffer, now holding y's values and not x's
  y <- matrix(rnorm(400 * 400), 400)
  h <- gpu_matrix(y)
  expect_identical(stats()[["hits"]] - kept[["hits"]], 1)
  expect_identical(as.matrix(h), y)
  # the Cholesky's working matrix and temporaries, kept between two calls
  a <- random_spd(600)
  for (i in 1:2) {
    l <- gpu_chol(gpu_matrix(a))
    expect_equal(as.matrix(l), t(chol(a)), tolerance = 1e-12)
    rm(l)
    invisible(gc())
  }
  expect_gt(stats()[["hits"]], kept[["hits"]] + 1)
  expect_gt(gpu_empty_cache(), 0)
  expect_identical(stats()[["kept_bytes"]], 0)
  expect_identical(gpu_empty_cache(), 0)
  expect_identical(as.matrix(h), y)  # a live matrix is not touched
})

test_that("resolve_backend() follows the option and the threshold", {
  expect_identical(resolve_backend("cpu"), "cpu")
  expect_error(resolve_backend("gpu"), "`backend` must be one of")
  expect_error(resolve_backend(1), "`backend` must be one of")
  old <- options(clbayes.backend = "cpu", clbayes.auto_cpu_device = NULL)
  on.exit(options(old))
  expect_identical(resolve_backend(), "cpu")
  skip_if_no_device()
  options(clbayes.auto_cpu_device = TRUE)
  expect_identical(resolve_backend("auto", size = 10, threshold = 100), "cpu")
  expect_identical(resolve_backend("auto", size = 100, threshold = 100), "opencl")
  expect_identical(resolve_backend("opencl"), "opencl")
  # without the opt-in, "auto" passes over a CPU-type OpenCL device
  options(clbayes.auto_cpu_device = FALSE)
  is_cpu <- with(gpu_devices(), type[selected] == "cpu")
  expect_identical(resolve_backend("auto", size = 100, threshold = 100),
                   if (is_cpu) "cpu" else "opencl")
})

test_that("CLBAYES_PLATFORM / CLBAYES_DEVICE select at load in a new session", {
  skip_if_no_device()
  rscript <- file.path(R.home("bin"), "Rscript")
  run <- function(env) {
    out <- suppressWarnings(system2(rscript, c("-e", shQuote(
      "suppressPackageStartupMessages(library(clbayes)); cat(gpu_available())"
    )), env = env, stdout = TRUE, stderr = TRUE))
    paste(out, collapse = "\n")
  }
  devs <- gpu_devices()
  sel <- devs[devs$selected, ]
  ok <- run(c(sprintf("CLBAYES_PLATFORM=%d", sel$platform),
              sprintf("CLBAYES_DEVICE=%d", sel$device)))
  expect_match(ok, "TRUE")
  bad <- run(c("CLBAYES_PLATFORM=57", "CLBAYES_DEVICE=0"))
  expect_match(bad, "FALSE")
})

test_that("data already on the device keeps 'auto' on the device", {
  skip_if_no_device()
  old <- options(clbayes.auto_cpu_device = FALSE)
  on.exit(options(old))
  expect_identical(resolve_backend("auto", size = 1, threshold = 1e9, on_device = TRUE),
                   "opencl")
  expect_identical(resolve_backend("cpu", on_device = TRUE), "cpu")
})
