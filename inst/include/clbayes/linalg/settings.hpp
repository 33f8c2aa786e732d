#ifndef CLBAYES_LINALG_SETTINGS_HPP
#define CLBAYES_LINALG_SETTINGS_HPP

// Tuned settings of the dense linear algebra on a device: the GEMM kernels
// (linalg/gemm.hpp), the Cholesky's schedule (linalg/cholesky.hpp) and its
// gradient, and the triangular inverse. tuned_settings() looks the
// selected device up in the table below (opencl/device_table.hpp); every
// algorithm takes the settings as an argument whose default is that
// lookup, so the benchmark drivers tune by passing a modified copy.

#include "../opencl/device_table.hpp"

#ifdef CLBAYES_OPENCL
#include "../opencl/context.hpp"
#endif

namespace clbayes {
namespace linalg {

/** The GEMM kernel's tile of C per work group (TM x TN), its depth per
 *  local-memory step (TK) and the block of C per work item (WPTM x WPTN):
 *  the work group is (TM / WPTM) x (TN / WPTN) work items. On the tensor
 *  cores, `stages` steps are in local memory at once (MMA_STAGES). */
struct gemm_tiles {
  int tm, tn, tk, wptm, wptn;
  int stages = 2;
};

struct gemm_settings {
  /** The GEMM kernel's (kernels/gemm.hpp) large tiles (H200 tile sweep at
   *  n = 4096, 2026-11-24; RESULTS.md, "Dense linear algebra defaults"), ... */
  gemm_tiles large = {128, 128, 8, 8, 8};
  /** ... its small tiles, for products with fewer large tiles than
   *  small_below_pct percent of the compute units (0: never): the short
   *  products on the Cholesky's critical path are latency bound, and one
   *  large tile per unit leaves most units idle; ... */
  gemm_tiles small = {64, 64, 16, 4, 4};
  int small_below_pct = 100;
  /** ... and its narrow tiles, for products with at most narrow_cols
   *  columns of C (0: never): tall-skinny products (swept on the
   *  Cholesky's leaf solves before the step kernel took them over, H200,
   *  n = 8192, 2026-11-24; RESULTS.md, "Dense linear algebra defaults"). */
  gemm_tiles narrow = {64, 32, 16, 4, 2};
  int narrow_cols = 32;
  /** The kernel multiplies on the FP64 tensor cores (MMA = 1 in
   *  kernels/gemm.hpp: mma.sync.m16n8k8 by inline PTX) where the
   *  tiles fit the warp layout and the device's compiler builds it. */
  bool tensor_cores = false;
  /** Bytes of local memory a work group's arrays may take; 0: what the
   *  device reports (CL_DEVICE_LOCAL_MEM_SIZE). NVIDIA's OpenCL reports 48
   *  KB but runs kernels whose own arrays take up to the unit's shared
   *  memory (RESULTS.md, "Dense linear algebra defaults"). */
  unsigned local_bytes = 0;
};

/** The Cholesky's device schedule (linalg/cholesky_panel.hpp). */
struct cholesky_settings {
  /** Columns per panel (rounded to a multiple of step_cols): few steps,
   *  each ending in one large lower-triangle update of the trailing
   *  matrix (H200 sweep at n = 8192, 2026-11-24; RESULTS.md,
   *  "Dense linear algebra defaults") ... */
  int outer_block = 1024;
  /** ... and for matrices of at least large_from rows: the larger the
   *  trailing products, the more a wide panel pays (H200 sweep at n =
   *  16384, same section). */
  int outer_block_large = 2048;
  int large_from = 12288;
  /** Columns per block column of a matrix streamed in from the host
   *  (linalg/cholesky_host.hpp, left-looking), at every size (H200: 1024
   *  against 512 and 2048; RESULTS.md, "Dense linear algebra defaults"). */
  int host_block = 1024;
  /** The base kernel (kernels/cholesky_base.hpp): columns of a step, the
   *  leaf (CHOLESKY_BLOCK, at most the work-group limit / step_threads),
   *  work items per row (LEAF_T), and columns of a base (a multiple of
   *  step_cols), factored left-looking by one launch: the longer the
   *  base, the longer each step's update, and the fewer launches (512
   *  where the update runs on the tensor cores; RESULTS.md, "Dense linear algebra defaults"). */
  int step_cols = 32;
  int step_threads = 32;
  int step_base = 128;
  /** > 0: the trailing updates run on at most (compute units -
   *  trailing_reserve) work groups, so that the panel on the side queue
   *  finds free units, on devices with more than 4 * trailing_reserve units
   *  (H200, 2026-11-24: 8 to 32 within 0.5 ms at n = 8192; the step
   *  kernel, H100: 16 against 8 faster or equal in 7 of 8 A/Bs, 0 slower
   *  by 1.1x; RESULTS.md, "Dense linear algebra defaults"). */
  int trailing_reserve = 16;
  /** Rows per diagonal block of the blocked gradient, and for matrices of
   *  at least large_from rows (H100; RESULTS.md, "Dense linear algebra defaults"). */
  int grad_block = 1024;
  int grad_block_large = 2048;
};

struct linalg_settings {
  gemm_settings gemm;
  cholesky_settings cholesky;
  /** Rows of the diagonal blocks that the triangular inverse inverts in
   *  one work group each (DIAG_BLOCK of kernels/tri_inverse.hpp). */
  int diag_block = 32;
};

namespace internal {

inline linalg_settings with_tensor_cores() {
  linalg_settings s;
  s.gemm.tensor_cores = true;
  s.gemm.local_bytes = 200 * 1024;  // the largest that ran (227 KB did not build)
  // The ring's stages (H200 sweep at n = 8192; RESULTS.md, "Dense linear algebra defaults";
  // the small and narrow tiles' 3 stages are not swept).
  s.gemm.large = {128, 128, 16, 8, 8, 3};
  s.gemm.small = {64, 64, 16, 4, 4, 3};
  s.gemm.narrow = {64, 32, 16, 4, 2, 3};
  s.cholesky.step_base = 512;
  return s;
}

}  // namespace internal

/** The settings for device `d`. Every value was swept on the H200 or the
 *  H100 and holds on both (RESULTS.md, "Kernels" and "Dense linear algebra defaults"); other devices get the same values without the
 *  tensor cores (the f64 mma shape needs compute capability 9.0). */
inline linalg_settings tuned_settings(const opencl::device_info& d) {
  static const opencl::device_entry<linalg_settings> table[] = {
      {"NVIDIA", "", 90, internal::with_tensor_cores()},  // H100, H200
      {"", "", 0, linalg_settings()},                      // any other device
  };
  return opencl::lookup(table, d);
}

#ifdef CLBAYES_OPENCL
/** The settings for the selected device. */
inline linalg_settings tuned_settings() {
  return tuned_settings(opencl::context::instance().info());
}
#endif

}  // namespace linalg
}  // namespace clbayes

#endif
