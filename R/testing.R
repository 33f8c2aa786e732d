# For the tests only: nothing here is exported or called by the package's
# own functions. The test-only entry points of the C++ glue live in
# src/r_testing.cpp; the tests call most of them directly
# (.cpp_chol_tuned(), .cpp_chol_grad_tuned(), .cpp_sum_tuned(),
# .cpp_glm_lp_batch_path(), .cpp_glm_row_grid(), .cpp_model_gradient(),
# .cpp_cache_stats()), and through the wrappers below, which check their
# arguments as a user-facing function would, the support kernels of
# stan-opencl.txt section 3.5 that have no operator of their own
# (clbayes:::gpu_support_*(); results are new gpu_matrix objects, inputs
# are never modified) and the kernel compiler (gpu_compile_kernel()).

gpu_support_zeros <- function(rows, cols) {
  new_gpu_matrix(.cpp_zeros(check_count(rows, "rows"), check_count(cols, "cols")))
}

gpu_support_zero_triangle <- function(x, part = c("lower", "upper", "entire")) {
  new_gpu_matrix(.cpp_zero_triangle(x@ptr, match.arg(part)))
}

gpu_support_identity <- function(rows, cols = rows) {
  new_gpu_matrix(.cpp_identity(check_count(rows, "rows"), check_count(cols, "cols")))
}

gpu_support_batch_identity <- function(n, batch) {
  new_gpu_matrix(.cpp_batch_identity(check_count(n, "n"), check_count(batch, "batch")))
}

# 1-based R indices, as in dst[dst_i + 0:(rows-1), dst_j + 0:(cols-1)].
gpu_support_sub_block <- function(dst, src, src_i, src_j, dst_i, dst_j, rows,
                                  cols, view = c("entire", "lower", "upper")) {
  new_gpu_matrix(.cpp_sub_block(
    dst@ptr, src@ptr, check_count(src_i, "src_i") - 1L,
    check_count(src_j, "src_j") - 1L, check_count(dst_i, "dst_i") - 1L,
    check_count(dst_j, "dst_j") - 1L, check_count(rows, "rows"),
    check_count(cols, "cols"), match.arg(view)
  ))
}

gpu_support_triangular_transpose <- function(x, from = c("lower", "upper")) {
  new_gpu_matrix(.cpp_triangular_transpose(x@ptr, match.arg(from)))
}

gpu_support_scale_diagonal <- function(x, s) {
  new_gpu_matrix(.cpp_scale_diagonal(x@ptr, check_scalar(s, "s")))
}

gpu_support_has_nonfinite <- function(x) .cpp_has_nonfinite(x@ptr)

gpu_support_is_symmetric <- function(x, tol = 1e-8) .cpp_is_symmetric(x@ptr, tol)

gpu_support_has_zero_diagonal <- function(x) .cpp_has_zero_diagonal(x@ptr)

# Compile an OpenCL source on the selected device and create kernel `name`;
# TRUE, or an error carrying the compiler's build log.
gpu_compile_kernel <- function(source, name) {
  if (!is.character(source) || length(source) != 1L) {
    stop("`source` must be a single string", call. = FALSE)
  }
  if (!is.character(name) || length(name) != 1L || !nzchar(name)) {
    stop("`name` must be a single non-empty string", call. = FALSE)
  }
  .cpp_compile_kernel(name, source)
}
