#' Choosing where a computation runs
#'
#' Numeric functions of clbayes take `backend = c("auto", "opencl", "cpu")`;
#' its default is `getOption("clbayes.backend", "auto")`.
#'
#' * `"cpu"`: the C++/Eigen implementation, always available.
#' * `"opencl"`: the selected OpenCL device; an error if there is none.
#' * `"auto"`: the device when one is selected ([gpu_available()]) and the
#'   problem is at least the function's size threshold, else the CPU.
#'   Thresholds are options named `clbayes.threshold.<function>`, each
#'   documented with its function.
#'
#' @name backends
#' @return `resolve_backend()` returns `"opencl"` or `"cpu"`.
#' @param backend One of `"auto"`, `"opencl"`, `"cpu"`.
#' @param size The problem size compared with the threshold.
#' @param threshold The size from which `"auto"` uses the device.
#' @examples
#' resolve_backend("cpu", size = 10)
#' resolve_backend("auto", size = 10, threshold = 1e6)
#' @export
resolve_backend <- function(backend = getOption("clbayes.backend", "auto"),
                            size = Inf, threshold = 0) {
  if (!is.character(backend) || length(backend) < 1L) {
    stop("`backend` must be one of \"auto\", \"opencl\", \"cpu\"", call. = FALSE)
  }
  backend <- backend[1L]
  if (!backend %in% c("auto", "opencl", "cpu")) {
    stop(sprintf("`backend` must be one of \"auto\", \"opencl\", \"cpu\", not \"%s\"",
                 backend), call. = FALSE)
  }
  switch(backend,
    cpu = "cpu",
    opencl = {
      if (!gpu_available()) {
        stop("`backend` is \"opencl\" but no OpenCL device is available ",
             "(see gpu_devices())", call. = FALSE)
      }
      "opencl"
    },
    auto = if (gpu_available() && size >= threshold) "opencl" else "cpu"
  )
}
