# clbayes demo: what runs where, on the default device.
# Run with `make demo` (installs the package first), or demo("clbayes").
suppressPackageStartupMessages(library(clbayes))

cat("== OpenCL devices\n")
devs <- gpu_devices()
if (nrow(devs) == 0) {
  cat("none found: everything runs on the CPU path\n")
} else {
  print(devs[, c("platform", "device", "name", "type", "fp64", "selected")],
        row.names = FALSE)
}
cat("\ngpu_available():", gpu_available(), "\n")

timed <- function(expr) {
  t <- system.time(value <- force(expr))[["elapsed"]]
  list(value = value, seconds = t)
}

if (gpu_available()) {
  cat("selected:", gpu_info()$name, "\n\n== Device matrices\n")
  set.seed(1)
  n <- 1000
  a <- matrix(rnorm(n * n), n)
  b <- matrix(rnorm(n * n), n)
  up <- timed(list(gpu_matrix(a), gpu_matrix(b)))
  prod_dev <- timed(as.matrix(up$value[[1]] %*% up$value[[2]]))
  prod_cpu <- timed(a %*% b)
  cat(sprintf("upload two %d x %d matrices: %.3f s\n", n, n, up$seconds))
  cat(sprintf("A %%*%% B on the device (with download): %.3f s; base R: %.3f s; max |diff| %.2e\n",
              prod_dev$seconds, prod_cpu$seconds,
              max(abs(prod_dev$value - prod_cpu$value))))
  l <- gpu_matrix(a, view = "lower")
  cat("a lower-triangular view travels packed:", n * (n + 1) / 2, "of", n * n, "values\n")
  print(l)
} else {
  cat("\nNo OpenCL device: gpu_matrix() needs one; the numeric functions use",
      "their CPU paths (backend = \"cpu\").\n")
}
cat("\nDone.\n")
