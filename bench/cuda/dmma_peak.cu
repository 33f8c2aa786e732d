// FP64 tensor-core peak by mma shape and warps per unit: each warp runs 8
// independent accumulator fragments, one group per compute unit. The
// ceiling the GEMM kernel (kernels/gemm.hpp, mma.m16n8k8) is measured
// against (log 2026-11-25-h200-gemm-mbarrier).
//   nvcc -O3 -arch=sm_90 dmma_peak.cu -o dmma_peak && ./dmma_peak
#include <cuda_runtime.h>

#include <cstdio>

// SHAPE: 884 = m8n8k4, 1684 = m16n8k4, 1688 = m16n8k8, 16816 = m16n8k16.
template <int SHAPE>
__global__ void peak(double* out, int iters) {
  double acc[8][4] = {};
  double a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = 1e-3 * (threadIdx.x + i);
  for (int i = 0; i < 4; ++i) b[i] = 1e-3 * (threadIdx.x - i);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int f = 0; f < 8; ++f) {
      if (SHAPE == 1688) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+d"(acc[f][0]), "+d"(acc[f][1]), "+d"(acc[f][2]), "+d"(acc[f][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
      } else if (SHAPE == 16816) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
            : "+d"(acc[f][0]), "+d"(acc[f][1]), "+d"(acc[f][2]), "+d"(acc[f][3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
              "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
      } else if (SHAPE == 1684) {
        asm volatile(
            "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%0,%1,%2,%3};"
            : "+d"(acc[f][0]), "+d"(acc[f][1]), "+d"(acc[f][2]), "+d"(acc[f][3])
            : "d"(a[0]), "d"(a[1]), "d"(b[0]));
      } else {
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(acc[f][0]), "+d"(acc[f][1])
                     : "d"(a[0]), "d"(b[0]));
      }
    }
  }
  double s = 0;
  for (int f = 0; f < 8; ++f)
    for (int c = 0; c < 4; ++c) s += acc[f][c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int SHAPE>
void run(const char* name, long flops_per_mma, int warps, double* out, int units) {
  const int iters = 4000;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  peak<SHAPE><<<units, warps * 32>>>(out, 10);
  cudaEventRecord(e0);
  peak<SHAPE><<<units, warps * 32>>>(out, iters);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::printf("%-8s warps/unit %2d: %s\n", name, warps, cudaGetErrorString(err));
    return;
  }
  const double flops = double(units) * warps * iters * 8 * flops_per_mma;
  std::printf("%-8s warps/unit %2d: %6.2f TFLOP/s\n", name, warps, flops / ms / 1e9);
}

int main() {
  int units;
  cudaDeviceGetAttribute(&units, cudaDevAttrMultiProcessorCount, 0);
  double* out;
  cudaMalloc(&out, sizeof(double) * units * 1024);
  for (int w : {4, 8}) {
    run<884>("m8n8k4", 2L * 8 * 8 * 4, w, out, units);
    run<1684>("m16n8k4", 2L * 16 * 8 * 4, w, out, units);
    run<1688>("m16n8k8", 2L * 16 * 8 * 8, w, out, units);
    run<16816>("m16n8k16", 2L * 16 * 8 * 16, w, out, units);
  }
  return 0;
}
