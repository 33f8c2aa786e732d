// Glue for the support kernels of stan-opencl.txt section 3.5 that have no
// operator of their own (R/support.R, internal): initialisation, sub-block
// copy, triangular transpose, diagonal scaling and the device-side checks.
// Functions that work in place copy first, so R's value semantics hold.

#include "glue.hpp"


// [[Rcpp::export(.cpp_zeros)]]
SEXP cpp_zeros(int rows, int cols) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::zeros(rows, cols)));
}

// [[Rcpp::export(.cpp_zero_triangle)]]
SEXP cpp_zero_triangle(SEXP a, std::string part) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::zeros_in_place(m, clbayes::parse_view(part, "part"));
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)part;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_identity)]]
SEXP cpp_identity(int rows, int cols) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::identity(rows, cols)));
}

// [[Rcpp::export(.cpp_batch_identity)]]
SEXP cpp_batch_identity(int n, int batch) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::batch_identity(n, batch)));
}

// [[Rcpp::export(.cpp_sub_block)]]
SEXP cpp_sub_block(SEXP dst, SEXP src, int src_i, int src_j, int dst_i,
                   int dst_j, int rows, int cols, std::string view) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl out = cl_ops::copy(glue::as_matrix_cl(dst, "dst"));
  cl_ops::sub_block(out, glue::as_matrix_cl(src, "src"), src_i, src_j, dst_i,
                    dst_j, rows, cols, clbayes::parse_view(view));
  return glue::wrap_matrix_cl(std::move(out));
#else
  (void)dst; (void)src; (void)src_i; (void)src_j; (void)dst_i; (void)dst_j;
  (void)rows; (void)cols; (void)view;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_triangular_transpose)]]
SEXP cpp_triangular_transpose(SEXP a, std::string from) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::triangular_transpose(m, clbayes::parse_view(from, "from"));
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)from;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_scale_diagonal)]]
SEXP cpp_scale_diagonal(SEXP a, double s) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::scalar_multiply_diagonal(m, s);
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)s;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_has_nonfinite)]]
bool cpp_has_nonfinite(SEXP a) {
  CLBAYES_DEVICE_ONLY(cl_ops::has_nonfinite(glue::as_matrix_cl(a, "x")));
}

// [[Rcpp::export(.cpp_is_symmetric)]]
bool cpp_is_symmetric(SEXP a, double tol) {
  CLBAYES_DEVICE_ONLY(cl_ops::is_symmetric(glue::as_matrix_cl(a, "x"), tol));
}

// [[Rcpp::export(.cpp_has_zero_diagonal)]]
bool cpp_has_zero_diagonal(SEXP a) {
  CLBAYES_DEVICE_ONLY(cl_ops::has_zero_diagonal(glue::as_matrix_cl(a, "x")));
}

// Compile `source` and create kernel `name` on the selected device: lets
// the tests (and users diagnosing a device's compiler) see a build failure
// surface as an R error carrying the build log.
// [[Rcpp::export(.cpp_compile_kernel)]]
bool cpp_compile_kernel(std::string name, std::string source) {
#ifdef CLBAYES_OPENCL
  cl::Program program = cl_ops::context::instance().build_program(name, source);
  try {
    cl::Kernel k(program, name.c_str());
  } catch (const cl::Error& e) {
    throw clbayes::opencl_error("creating kernel '" + name + "'", e.err());
  }
  return true;
#else
  (void)name;
  (void)source;
  glue::stop_no_opencl();
#endif
}
