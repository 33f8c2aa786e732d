#' List the OpenCL devices
#'
#' Every device of every OpenCL platform, in the order `clinfo -l` prints
#' them. Indices are 0-based, as in `clinfo` and the environment variables
#' `CLBAYES_PLATFORM` / `CLBAYES_DEVICE`.
#'
#' @return A data frame with one row per device and columns `platform`,
#'   `device` (indices), `name`, `type` (`"gpu"`, `"cpu"`, `"accelerator"`
#'   or `"other"`), `fp64` (double precision available; clbayes needs it),
#'   `global_mem` (bytes), `compute_units`, `selected`, and, for
#'   information, `platform_name`, `version`, `local_mem` (bytes) and
#'   `max_work_group_size`. With no OpenCL (or a build without it) the data
#'   frame has no rows.
#' @seealso [gpu_select()], [gpu_info()], [gpu_available()]
#' @examples
#' gpu_devices()
#' @export
gpu_devices <- function() {
  cols <- .cpp_devices()
  if (length(cols) == 0L) {
    cols <- list(
      platform = integer(), device = integer(), name = character(),
      type = character(), fp64 = logical(), global_mem = numeric(),
      compute_units = integer(), selected = logical(),
      platform_name = character(), version = character(),
      local_mem = numeric(), max_work_group_size = numeric()
    )
  }
  as.data.frame(cols, stringsAsFactors = FALSE)
}

#' Select the OpenCL device that clbayes uses
#'
#' @param platform,device 0-based indices of a row of [gpu_devices()]. With
#'   `platform = NULL` no device is selected and every function runs on the
#'   CPU.
#' @details Device matrices ([gpu_matrix()]) live on the device that was
#'   selected when they were made; after a switch they can no longer be used
#'   and must be created again. The device needs double precision.
#' @return The new selection as a one-row data frame (invisibly), or an
#'   empty one when deselected.
#' @seealso [gpu_devices()]
#' @examples
#' devs <- gpu_devices()
#' if (nrow(devs) > 0 && any(devs$fp64)) {
#'   first <- devs[devs$fp64, ][1, ]
#'   gpu_select(first$platform, first$device)
#' }
#' @export
gpu_select <- function(platform, device = 0L) {
  if (is.null(platform)) {
    .cpp_deselect()
    return(invisible(gpu_devices()[0L, ]))
  }
  platform <- check_index(platform, "platform")
  device <- check_index(device, "device")
  if (!.cpp_opencl_built()) {
    stop("clbayes was built without OpenCL; no device can be selected",
         call. = FALSE)
  }
  .cpp_select(platform, device)
  devs <- gpu_devices()
  invisible(devs[devs$selected, , drop = FALSE])
}

#' Information on the selected device
#'
#' @return A list with the fields of the selected row of [gpu_devices()],
#'   or `NULL` (with a message) when no device is selected.
#' @examples
#' gpu_info()
#' @export
gpu_info <- function() {
  devs <- gpu_devices()
  sel <- devs[devs$selected, , drop = FALSE]
  if (nrow(sel) == 0L) {
    message("no OpenCL device is selected; clbayes runs on the CPU")
    return(invisible(NULL))
  }
  as.list(sel)
}

#' Is an OpenCL device available?
#'
#' @return `TRUE` when clbayes was built with OpenCL and a device with
#'   double precision is selected, else `FALSE`.
#' @examples
#' gpu_available()
#' @export
gpu_available <- function() {
  .cpp_available()
}

#' Give cached device memory back to the driver
#'
#' A device matrix of 1 MiB or more that is no longer used (removed and
#' garbage-collected, or a temporary inside a call such as [gpu_chol()])
#' keeps its device buffer for the next matrix of the same size, as
#' torch's caching allocator does: a fresh buffer costs the driver's
#' allocation and the mapping of its pages, about 0.5 ms for a 8192 x 8192
#' matrix on an H200. At most a quarter of the device's memory is kept (a
#' sixteenth on a CPU device such as PoCL, whose memory is R's), and kept
#' buffers are given back by themselves when a new matrix needs the room.
#' `gpu_empty_cache()` gives them back now, for memory that other programs
#' on the same device need.
#'
#' @return The number of bytes given back, invisibly (0 with no device).
#' @examples
#' gpu_empty_cache()
#' @export
gpu_empty_cache <- function() {
  invisible(.cpp_empty_cache())
}

check_index <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x < 0 || x != round(x) ||
      x > .Machine$integer.max) {
    stop(sprintf("`%s` must be a single non-negative whole number (0-based)", arg),
         call. = FALSE)
  }
  as.integer(x)
}
