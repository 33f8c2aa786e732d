#ifndef CLBAYES_KERNELS_GLM_BATCH_MMA_HPP
#define CLBAYES_KERNELS_GLM_BATCH_MMA_HPP

// Many points of a GLM in one pass over x on the FP64 tensor cores
// (glm/glm_batch_opencl.hpp, P from glm_batch_settings::mma_from): the
// fused kernel of kernels/glm_batch.hpp with both products as
// mma.sync.m16n8k8 (PTX, sm_90; fragment layouts as in kernels/gemm.hpp).
// A group of WARPS warps owns a chunk of 8 WARPS points; warp w owns the 8
// points 8w..8w+7 of it and keeps their coefficients in registers as the
// B fragments of X B for the whole run (k <= 8 KS). Per tile of 16 rows:
//   1. eta (16 x 8 per warp) = X_tile B_w: KS mma, X_tile from local memory;
//   2. the row math on the accumulators in registers: each lane holds rows
//      lg, lg + 8 and points 2 lt, 2 lt + 1 (lane = 4 lg + lt); the log
//      density and d alpha, d sigma|phi are summed per lane across tiles,
//      D = d lp / d eta goes to local memory;
//   3. G_w (16 MG x 8) += X_tile' D_w: 2 MG mma, the gradient by beta kept
//      in registers across tiles.
// x is read once per chunk of points, eta and D never leave the chip, and
// the tile's reads overlap the tensor-core work (the next tile is loaded
// into registers before the products of this one). Without MMA (any other
// device) the same fragments go through an emulation in local memory: slow,
// for testing the layouts only.

#include "../opencl/kernel_cl.hpp"
#include "glm_row_math.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* glm_batch_mma_source = R"(
#define WG (32 * WARPS)
#define PCH (8 * WARPS)     /* points per chunk */
#define TR 16               /* rows per tile */
#define TRP (TR + 4)        /* local row stride of the x tile: conflict-free fragments */
#define KX (16 * MG)        /* rows of the x tile (columns of x, zero beyond k) */
#define DSP (PCH + 4)       /* local row stride of D */
#define LX ((TR * KX + WG - 1) / WG)
#define XS_SIZE (KX * TRP > 24 * PCH ? KX * TRP : 24 * PCH)  /* also the final sums */

#if MMA
#define MMA_16x8x8(c, a, b)                                                        \
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "                         \
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"            \
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])                              \
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]))
#else
/* c += A B for one warp's fragments, through local memory (every item of the
   group must call it: it holds barriers). */
void mma_emulated(double* c, const double* a, const double* b, __local double* scr,
                  int lane) {
  const int lg = lane >> 2, lt = lane & 3;
  __local double* sa = scr;        /* 16 x 8, row-major */
  __local double* sb = scr + 128;  /* 8 x 8, row-major */
  for (int i = 0; i < 4; ++i) sa[(lg + 8 * (i % 2)) * 8 + lt + 4 * (i / 2)] = a[i];
  for (int i = 0; i < 2; ++i) sb[(lt + 4 * i) * 8 + lg] = b[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int q = 0; q < 4; ++q) {
    const int row = lg + 8 * (q / 2), col = 2 * lt + q % 2;
    double v = c[q];
    for (int kk = 0; kk < 8; ++kk) v += sa[row * 8 + kk] * sb[kk * 8 + col];
    c[q] = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#define MMA_16x8x8(c, a, b) mma_emulated(c, a, b, scratch + warp * 192, lane)
#endif

/* Registers <- the TR x k tile of x from row i0 (column-major x), zero past
   n and k; element e of the tile is row e % TR, column e / TR. */
void mma_load_x(double* st, __global const double* x, int n, int k, int i0, int lid) {
#pragma unroll
  for (int l = 0; l < LX; ++l) {
    const int e = lid + l * WG;
    const int r = e % TR, jc = e / TR;
    st[l] = (jc < k && i0 + r < n) ? x[(long)jc * n + i0 + r] : 0.0;
  }
}

/* y of rows r and r + 8 (zero past n). */
void mma_load_y(double* yv, __global const double* y, int n, int r) {
  yv[0] = r < n ? y[r] : 0.0;
  yv[1] = r + 8 < n ? y[r + 8] : 0.0;
}

void mma_store_x(__local double* xs, const double* st, int lid) {
#pragma unroll
  for (int l = 0; l < LX; ++l) {
    const int e = lid + l * WG;
    if (e < TR * KX) xs[(e / TR) * TRP + e % TR] = st[l];
  }
}

/**
 * partials  out, groups x (3 + k) P, as glm_batch_fused's: per group of
 *           rows [g * (3 + k) P + j] point j's log density, [.. + P + j]
 *           d alpha, [.. + 2P + j] d sigma|phi, [.. + 3P + j k + i] d beta_i
 * offset    n values, read only when OFFSET is 1
 * params    alpha (P), then sigma|phi (P) where the family has one
 * beta      k x P, column-major
 * Launch: 1-D, groups = chunks x row groups (the chunk varies fastest, so
 * that the chunks of a row group read the same tiles at about the same
 * time, from L2); local size WG. Row group g takes tiles g, g + G, ...
 * Options: FAMILY, OFFSET, WARPS, KS = ceil(k / 8), MG = ceil(k / 16), MMA.
 */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void glm_batch_mma(__global double* partials, __global const double* x,
                   __global const double* y, __global const double* offset,
                   __global const double* params, __global const double* beta,
                   int n, int k, int P, int chunks, int gradient, int propto) {
  __local double xs[XS_SIZE];
  __local double ds[TR * DSP];
#if !MMA
  __local double scratch[WARPS * 192];
#endif
  const int lid = get_local_id(0);
  const int lane = lid % 32, warp = lid / 32;
  const int lg = lane >> 2, lt = lane & 3;
  const int chunk = get_group_id(0) % chunks;
  const int g = get_group_id(0) / chunks;
  const int n_groups = get_num_groups(0) / chunks;
  const int p_warp = chunk * PCH + 8 * warp;  /* the warp's first point */

  /* B fragments of this warp's 8 points: B(row lt + 4 i, col lg) of step s. */
  double bf[KS][2];
  {
    const int j = p_warp + lg;
#pragma unroll
    for (int s = 0; s < KS; ++s)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int jc = 8 * s + lt + 4 * i;
        bf[s][i] = (j < P && jc < k) ? beta[(long)j * k + jc] : 0.0;
      }
  }
  /* This lane's two points (columns 2 lt + h of the warp's eta). */
  double al[2], ex[2], lp[2] = {0.0, 0.0}, da[2] = {0.0, 0.0}, dx[2] = {0.0, 0.0};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int j = p_warp + 2 * lt + h;
    al[h] = j < P ? params[j] : 0.0;
#if FAMILY_EXTRA
    ex[h] = j < P ? params[P + j] : 1.0;
#else
    ex[h] = 1.0;
#endif
  }
  double gacc[MG][4];
#pragma unroll
  for (int mt = 0; mt < MG; ++mt)
#pragma unroll
    for (int c = 0; c < 4; ++c) gacc[mt][c] = 0.0;

  const int n_tiles = (n + TR - 1) / TR;
  double st[LX];
  double yv[2], yn[2];  /* y of rows lg, lg + 8 of this tile and of the next */
  if (g < n_tiles) {
    mma_load_x(st, x, n, k, g * TR, lid);
    mma_store_x(xs, st, lid);
    mma_load_y(yv, y, n, g * TR + lg);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = g; t < n_tiles; t += n_groups) {
    const int i0 = t * TR;
    const int more = t + n_groups < n_tiles;  /* uniform over the group */
    if (more) {  /* in flight during this tile's work */
      mma_load_x(st, x, n, k, i0 + n_groups * TR, lid);
      mma_load_y(yn, y, n, i0 + n_groups * TR + lg);
    }

    /* 1. eta = X_tile B_w, in two chains of mma (even and odd steps) that
       the tensor cores can overlap */
    double acc[4] = {0.0, 0.0, 0.0, 0.0}, acc2[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
    for (int s = 0; s < KS; ++s) {
      double af[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)  /* A(row lg + 8 (i % 2), col lt + 4 (i / 2)) */
        af[i] = xs[(8 * s + lt + 4 * (i / 2)) * TRP + lg + 8 * (i % 2)];
      if (s % 2 == 0) {
        MMA_16x8x8(acc, af, bf[s]);
      } else {
        MMA_16x8x8(acc2, af, bf[s]);
      }
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] += acc2[c];

    /* 2. the row math; C(row lg + 8 (c / 2), col 2 lt + c % 2) */
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int r = lg + 8 * (c / 2), h = c % 2;
      const int i = i0 + r, j = p_warp + 2 * lt + h;
      double d = 0.0;
      if (i < n && j < P) {
        double d_ex;
        lp[h] += scalar_row(yv[c / 2], acc[c] + al[h] + ROW_OFFSET(offset, i), ex[h], propto,
                            &d, &d_ex);
        da[h] += d;
        dx[h] += d_ex;
      }
      ds[r * DSP + 8 * warp + 2 * lt + h] = d;
    }
    /* Each warp reads back only its own columns of D: its lanes need only
       each other's stores (the emulation's mma holds group barriers). */
#if MMA
    asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
#else
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    /* 3. G_w += X_tile' D_w */
    if (gradient) {
#pragma unroll
      for (int kk = 0; kk < TR; kk += 8) {
        double bd[2];
#pragma unroll
        for (int i = 0; i < 2; ++i)  /* B(row lt + 4 i, col lg) = D(row kk + lt + 4 i) */
          bd[i] = ds[(kk + lt + 4 * i) * DSP + 8 * warp + lg];
#pragma unroll
        for (int mt = 0; mt < MG; ++mt) {
          double af[4];
#pragma unroll
          for (int i = 0; i < 4; ++i)  /* X'(row mt 16 + lg + 8 (i % 2), col kk + lt + 4 (i / 2)) */
            af[i] = xs[(16 * mt + lg + 8 * (i % 2)) * TRP + kk + lt + 4 * (i / 2)];
          MMA_16x8x8(gacc[mt], af, bd);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (more) {
      mma_store_x(xs, st, lid);
      yv[0] = yn[0];
      yv[1] = yn[1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  /* Each point's sums over the 8 lanes (lg) that hold it, in xs (free now). */
  __local double* red = xs;
  __global double* out = partials + (long)g * (3 + k) * P;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int q = 8 * warp + 2 * lt + h;  /* point within the chunk */
    red[(0 * PCH + q) * 8 + lg] = lp[h];
    red[(1 * PCH + q) * 8 + lg] = da[h];
    red[(2 * PCH + q) * 8 + lg] = dx[h];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 3 * PCH) {
    const int w = lid / PCH, q = lid % PCH, j = chunk * PCH + q;
    double v = 0.0;
    for (int l = 0; l < 8; ++l) v += red[lid * 8 + l];
    if (j < P) out[w * P + j] = v;
  }
  if (gradient) {
#pragma unroll
    for (int mt = 0; mt < MG; ++mt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {  /* G(row mt 16 + lg + 8 (c / 2), col 2 lt + c % 2) */
        const int jc = 16 * mt + lg + 8 * (c / 2), j = p_warp + 2 * lt + c % 2;
        if (jc < k && j < P) out[3 * P + (long)j * k + jc] = gacc[mt][c];
      }
  }
}
)";

/** Options: FAMILY (a scalar family), OFFSET (0 or 1), WARPS (1 to 8),
 *  KS = ceil(k / 8), MG = ceil(k / 16), MMA (1: the tensor cores, sm_90). */
inline kernel_cl<out_buffer, in_buffer, in_buffer, in_buffer, in_buffer, in_buffer, int, int,
                 int, int, int, int>
    glm_batch_mma("glm_batch_mma", glm_program<&glm_batch_mma_source>(),
                  {{"FAMILY", 1}, {"OFFSET", 0}, {"WARPS", 8}, {"KS", 13}, {"MG", 7},
                   {"MMA", 0}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
