#' Choosing where a computation runs
#'
#' Numeric functions of clbayes take `backend = c("auto", "opencl", "cpu")`;
#' its default is `getOption("clbayes.backend", "auto")`.
#'
#' * `"cpu"`: the C++/Eigen implementation, always available.
#' * `"opencl"`: the selected OpenCL device; an error if there is none.
#' * `"auto"`: the device when one is selected ([gpu_available()]), it is a
#'   GPU or an accelerator, and the problem is at least the function's size
#'   threshold; else the CPU. Thresholds are options named
#'   `clbayes.threshold.<function>`, each documented with its function. An
#'   OpenCL device that is itself the CPU (such as PoCL's) is slower than the
#'   native CPU path for every function, so `"auto"` passes it over unless
#'   `options(clbayes.auto_cpu_device = TRUE)`; `"opencl"` always uses it.
#'
#' @name backends
#' @return `resolve_backend()` returns `"opencl"` or `"cpu"`.
#' @param backend One of `"auto"`, `"opencl"`, `"cpu"`.
#' @param size The problem size compared with the threshold.
#' @param threshold The size from which `"auto"` uses the device.
#' @param on_device `TRUE` when the data already lives on the device (a
#'   [gpu_matrix()]): then `"auto"` keeps the work there whatever the size
#'   or device type, so nothing is copied back.
#' @examples
#' resolve_backend("cpu", size = 10)
#' resolve_backend("auto", size = 10, threshold = 1e6)
#' @export
resolve_backend <- function(backend = getOption("clbayes.backend", "auto"),
                            size = Inf, threshold = 0, on_device = FALSE) {
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
    auto = if (gpu_available() &&
               (isTRUE(on_device) || (size >= threshold && auto_device_ok()))) {
      "opencl"
    } else {
      "cpu"
    }
  )
}

# May "auto" use the selected device? Not when it is a CPU device, unless
# the user opts in.
auto_device_ok <- function() {
  if (isTRUE(getOption("clbayes.auto_cpu_device", FALSE))) return(TRUE)
  devs <- gpu_devices()
  any(devs$selected & devs$type != "cpu")
}
