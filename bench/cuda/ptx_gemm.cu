// Runs the OpenCL GEMM kernel's PTX through CUDA's driver API, next to
// cublasDgemm on the same arrays, so that Nsight Compute (ncu) can read the
// OpenCL kernel's hardware counters. The PTX comes from
// `kernel_report gemm ... --ptx FILE`, edited by ptx_profile.sh (the
// OpenCL global offsets in %envreg become 0). C = A B, op NN, n x n,
// arrays of random doubles with full mantissas (data with few set bits draws
// less power and runs faster: log 2026-11-25-h200-anchors).
//   ptx_gemm FILE.ptx n reps [TM TN RTSM RTSN]     (NO_CUBLAS=1: ours only)
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(x)                                                  \
  do {                                                            \
    CUresult r_ = (x);                                            \
    if (r_ != CUDA_SUCCESS) {                                     \
      const char* s_;                                             \
      cuGetErrorString(r_, &s_);                                  \
      std::printf("%s: %s\n", #x, s_);                            \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

// x[i] uniform in [-0.5, 0.5) with 53 random bits (splitmix64 of i and seed).
__global__ void fill(double* x, long n, unsigned long long seed) {
  const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long h = (unsigned long long)i + seed * 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  x[i] = (double)(h >> 11) * 0x1.0p-53 - 0.5;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::printf("usage: %s FILE.ptx n reps [TM TN RTSM RTSN]\n", argv[0]);
    return 2;
  }
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  const std::string ptx = text.str();
  const int n = std::atoi(argv[2]), reps = std::atoi(argv[3]);
  const int tm = argc > 4 ? std::atoi(argv[4]) : 128, tn = argc > 5 ? std::atoi(argv[5]) : 128;
  const int rtsm = argc > 6 ? std::atoi(argv[6]) : 16, rtsn = argc > 7 ? std::atoi(argv[7]) : 16;
  cudaFree(0);  // creates the context

  CUmodule mod;
  CUfunction fn;
  char log[8192] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, (void*)(size_t)sizeof(log)};
  if (cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals) != CUDA_SUCCESS) {
    std::printf("loading the PTX failed: %s\n", log);
    return 1;
  }
  CHECK(cuModuleGetFunction(&fn, mod, "gemm"));
  int regs, smem, lmem, groups = 0;
  cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
  cuOccupancyMaxActiveBlocksPerMultiprocessor(&groups, fn, rtsm * rtsn, 0);
  std::printf("gemm: %d registers, %d B shared, %d B local, %d groups per SM\n", regs, smem,
              lmem, groups);

  // The kernel's arguments (kernels/gemm.hpp) at the offsets the PTX declares.
  std::vector<size_t> off, size;
  for (int i = 0;; ++i) {
    size_t o, s;
    if (cuFuncGetParamInfo(fn, i, &o, &s) != CUDA_SUCCESS) break;
    off.push_back(o);
    size.push_back(s);
  }
  if (off.size() != 19) {
    std::printf("expected 19 parameters, the PTX has %zu\n", off.size());
    return 1;
  }
  const long nn = (long)n * n;
  double *A, *B, *C;
  cudaMalloc(&A, nn * 8);
  cudaMalloc(&B, nn * 8);
  cudaMalloc(&C, nn * 8);
  fill<<<(nn + 255) / 256, 256>>>(A, nn, 1);
  fill<<<(nn + 255) / 256, 256>>>(B, nn, 2);
  std::vector<char> args(off.back() + size.back(), 0);
  auto put = [&](int i, const void* v, size_t s) {
    if (s != size[i]) {
      std::printf("parameter %d: %zu bytes, the PTX says %zu\n", i, s, size[i]);
      std::exit(1);
    }
    std::memcpy(&args[off[i]], v, s);
  };
  const long zero = 0;
  const int views = 0, splits = 1;
  const double alpha = 1, beta = 0;
  put(0, &C, 8), put(1, &A, 8), put(2, &B, 8);
  put(3, &n, 4), put(4, &n, 4), put(5, &n, 4);
  put(6, &zero, 8), put(7, &n, 4), put(8, &zero, 8);     // A: offset, ld, stride
  put(9, &zero, 8), put(10, &n, 4), put(11, &zero, 8);   // B
  put(12, &zero, 8), put(13, &n, 4), put(14, &zero, 8);  // C
  put(15, &alpha, 8), put(16, &beta, 8), put(17, &views, 4), put(18, &splits, 4);
  size_t args_size = args.size();
  void* config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                    &args_size, CU_LAUNCH_PARAM_END};
  auto launch = [&] {
    CHECK(cuLaunchKernel(fn, n / tm, n / tn, 1, rtsm, rtsn, 1, 0, 0, nullptr, config));
  };

  const double flops = 2.0 * n * (double)n * n;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto time = [&](auto&& run) {
    run();
    cudaDeviceSynchronize();
    cudaEventRecord(e0);
    for (int r = 0; r < reps; ++r) run();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms / reps;
  };
  float ms = time(launch);
  std::printf("ptx gemm n=%d: %.3f ms, %.1f TFLOP/s\n", n, ms, flops / ms / 1e9);

  // 16 entries against a dot product on the host.
  std::vector<double> ha(nn), hb(nn), hc(nn);
  cudaMemcpy(ha.data(), A, nn * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(hb.data(), B, nn * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(hc.data(), C, nn * 8, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int t = 0; t < 16; ++t) {
    const long i = (t * 7919L) % n, j = (t * 104729L) % n;
    double s = 0, s_abs = 0;
    for (long k = 0; k < n; ++k) {
      s += ha[k * n + i] * hb[j * n + k];
      s_abs += std::fabs(ha[k * n + i] * hb[j * n + k]);
    }
    worst = std::max(worst, std::fabs(s - hc[j * n + i]) / s_abs);
  }
  std::printf("max relative error %.2e\n", worst);

  if (!std::getenv("NO_CUBLAS")) {
    cublasHandle_t h;
    cublasCreate(&h);
    ms = time([&] {
      cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, B, n, &beta, C, n);
    });
    std::printf("cublas n=%d: %.3f ms, %.1f TFLOP/s\n", n, ms, flops / ms / 1e9);
  }
  return 0;
}
