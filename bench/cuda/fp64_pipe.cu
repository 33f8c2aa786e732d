// Do the FP64 tensor-core products (mma.m16n8k8, SASS DMMA) and the FP64
// FMA units (DFMA) run at the same time, or do they share one pipe? One
// group of 8 warps per compute unit; the "dmma" warps run independent
// mma chains, the "dfma" warps independent FMA chains, sized so that each
// kind alone takes about as long as the other. If the two ran on separate
// units, 4 + 4 warps of both would take about as long as either alone; if
// they share a pipe, about the sum. This bounds what glm_batch_mma can
// reach: its row math is FP64 arithmetic between the products.
//   nvcc -O3 -arch=sm_90 fp64_pipe.cu -o fp64_pipe && ./fp64_pipe
#include <cuda_runtime.h>

#include <cstdio>

__device__ void dmma_work(double* out, int iters) {
  double acc[8][4] = {};
  double a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = 1e-3 * (threadIdx.x + i);
  for (int i = 0; i < 2; ++i) b[i] = 1e-3 * (threadIdx.x - i);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int f = 0; f < 8; ++f)
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
          "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
          : "+d"(acc[f][0]), "+d"(acc[f][1]), "+d"(acc[f][2]), "+d"(acc[f][3])
          : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  }
  double s = 0;
  for (int f = 0; f < 8; ++f)
    for (int c = 0; c < 4; ++c) s += acc[f][c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__device__ void dfma_work(double* out, int iters) {
  double acc[8];
  const double x = 1.0 + 1e-9 * threadIdx.x, y = 1e-9 * threadIdx.x;
  for (int f = 0; f < 8; ++f) acc[f] = f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int r = 0; r < 16; ++r)
#pragma unroll
      for (int f = 0; f < 8; ++f) acc[f] = fma(acc[f], x, y);
  }
  double s = 0;
  for (int f = 0; f < 8; ++f) s += acc[f];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Warps below `dmma_warps` run the products, the others the FMAs.
__global__ void mixed(double* out, int dmma_warps, int dmma_iters, int dfma_iters) {
  if (threadIdx.x / 32 < dmma_warps) dmma_work(out, dmma_iters);
  else dfma_work(out, dfma_iters);
}

float time_ms(double* out, int units, int dmma_warps, int dmma_iters, int dfma_iters) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  mixed<<<units, 256>>>(out, dmma_warps, 10, 10);
  cudaEventRecord(e0);
  mixed<<<units, 256>>>(out, dmma_warps, dmma_iters, dfma_iters);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  return ms;
}

int main() {
  int units;
  cudaDeviceGetAttribute(&units, cudaDevAttrMultiProcessorCount, 0);
  double* out;
  cudaMalloc(&out, sizeof(double) * units * 256);
  const int dmma_iters = 4000, dfma_iters = 4000;
  // 4 warps of each kind; a kind with 0 iterations exits at once.
  const float t_dmma = time_ms(out, units, 4, dmma_iters, 0);
  const float t_dfma = time_ms(out, units, 4, 0, dfma_iters);
  const float t_both = time_ms(out, units, 4, dmma_iters, dfma_iters);
  const double dmma_flops = 2.0 * 16 * 8 * 8 * 8 * dmma_iters * 4 * 32 / 32 * units;
  const double dfma_flops = 2.0 * 16 * 8 * dfma_iters * 4 * 32 * units;
  std::printf("4 warps of mma alone:  %.3f ms (%.1f TFLOP/s)\n", t_dmma,
              dmma_flops / t_dmma / 1e9);
  std::printf("4 warps of FMA alone:  %.3f ms (%.1f TFLOP/s)\n", t_dfma,
              dfma_flops / t_dfma / 1e9);
  std::printf("4 + 4 warps together:  %.3f ms; sum of the two alone %.3f, larger %.3f\n",
              t_both, t_dmma + t_dfma, t_dmma > t_dfma ? t_dmma : t_dfma);
  std::printf("together / sum = %.2f (1: one shared pipe; 0.5 when equal and separate)\n",
              t_both / (t_dmma + t_dfma));
  return 0;
}
