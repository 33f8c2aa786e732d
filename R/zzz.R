#' clbayes: fast Bayesian computation on OpenCL devices
#'
#' clbayes moves the expensive parts of Bayesian computation onto OpenCL
#' devices and gives the same answers on the CPU when no device is present.
#'
#' @section Devices and backends:
#' At load, clbayes selects the device named by the environment variables
#' `CLBAYES_PLATFORM` and `CLBAYES_DEVICE` (0-based indices, as printed by
#' `clinfo -l` and [gpu_devices()]) or, when they are unset, the first GPU
#' with double precision, then the first device of any type with double
#' precision. [gpu_select()] changes the choice. Numeric functions take a
#' `backend` argument, `"auto"`, `"opencl"` or `"cpu"`, whose default is
#' `getOption("clbayes.backend", "auto")`.
#'
#' @keywords internal
#' @useDynLib clbayes, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @import methods
"_PACKAGE"

.onLoad <- function(libname, pkgname) {
  op <- options()
  defaults <- list(clbayes.backend = "auto")
  toset <- !(names(defaults) %in% names(op))
  if (any(toset)) options(defaults[toset])
  .clbayes_state$load_error <- NULL
  tryCatch(.cpp_init_device(), error = function(e) {
    .clbayes_state$load_error <- conditionMessage(e)
  })
  invisible()
}

.onAttach <- function(libname, pkgname) {
  if (!is.null(.clbayes_state$load_error)) {
    packageStartupMessage(
      "clbayes: no OpenCL device selected at load: ",
      .clbayes_state$load_error
    )
  }
}

.clbayes_state <- new.env(parent = emptyenv())
