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
#' Data already on the device (a [gpu_matrix()], or [gpu_glm_data()]
#' uploaded there) stay there under `"auto"` whatever their size or the
#' device's type, so nothing is copied back.
#'
#' One internal function applies this rule for every numeric function, so
#' that they all choose alike; it is not exported, as a user would have to
#' repeat each function's measure of size to call it.
#' @name backends
#' @examples
#' getOption("clbayes.backend")
#' gpu_available()  # "auto" can use a device only when one is selected
NULL

# The backend a computation runs on under the rule of ?backends: "opencl"
# or "cpu". `size` is compared with `threshold`; `on_device` is TRUE when
# the data already live on the device (a gpu_matrix). Internal: every
# numeric function calls it, and tests reach it as clbayes:::resolve_backend().
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
