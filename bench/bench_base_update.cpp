// Whether the Cholesky base's update (kernels/cholesky_base.hpp: group g's
// 32 x 32 tile of rows times the step's 32 rows, inner dimension kk, read
// from column-major global memory) fits under the leaf's elimination
// (6.6 us on an H100) on the FP64 tensor cores: 31 work groups at once, as
// in a base of 1024 columns, for kk = 32 ... 992. The `mma` path (NVIDIA,
// compute capability 9.0): 32 warps, each one m16n8k8 fragment of the tile
// over a quarter of the depth, fragments loaded from global memory
// straight into registers, the quarters summed in local memory; the
// `scalar` path: one FMA chain per item, for reference. Checked against a
// host sum (error relative to sqrt(kk)). Log 2026-11-27-base-trace.
//   bench_base_update [reps]
#include <clbayes/opencl/context.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

static const char* src = R"(
// out(32 g + i, j) = sum_{q < kk} L(32 (g + 1) + i, q) L(j, q)  (rows of group g + 1, B rows 0..31)
// 32 warps: fragment f = w % 8 (mt = f / 4, nt = f % 4), depth quarter w / 8.
__kernel __attribute__((reqd_work_group_size(32, 32, 1)))
void tc_update(__global const double* L, int n, int kk, __global double* out) {
  __local double part[4][32][33];
  const int lane = get_local_id(0), w = get_local_id(1), g = get_group_id(0);
  const int lg = lane >> 2, lt = lane & 3;
  const int f = w & 7, quarter = w >> 3, mt = f >> 2, nt = f & 3;
  const int r0 = 32 * (g + 1) + mt * 16 + lg;  // A rows r0, r0 + 8
  const int cj = nt * 8 + lg;                   // B row (C column)
  double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#if MMA
#pragma unroll 4
  for (int k8 = quarter * 8; k8 < kk; k8 += 32) {
    const long d0 = (long)(k8 + 2 * lt) * n, d1 = d0 + n;
    const double a0 = L[d0 + r0], a1 = L[d0 + r0 + 8], a2 = L[d1 + r0], a3 = L[d1 + r0 + 8];
    const double b0 = L[d0 + cj], b1 = L[d1 + cj];
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
        : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
  }
  const int row = mt * 16 + lg, col = nt * 8 + 2 * lt;
  part[quarter][row][col] = c0;
  part[quarter][row][col + 1] = c1;
  part[quarter][row + 8][col] = c2;
  part[quarter][row + 8][col + 1] = c3;
#else
  // the scalar update as the base kernel does it: item (i = lane, t = w), one column
  double acc = 0;
  for (int q = 0; q < kk; ++q) acc = fma(L[(long)q * n + 32 * (g + 1) + lane], L[(long)q * n + w], acc);
  part[0][lane][w] = acc; part[1][lane][w] = 0; part[2][lane][w] = 0; part[3][lane][w] = 0;
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  out[(long)(32 * g + w) * 32 + lane] = part[0][lane][w] + part[1][lane][w] + part[2][lane][w] + part[3][lane][w];
}
)";

int main(int argc, char** argv) {
  try {
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 100;
    auto& cc = clbayes::opencl::context::instance();
    cl::Device dev = cc.device();
    cl::Context ctx = cc.cl_context();
    const bool mma_ok = cc.info().nv_compute_capability >= 90;
    const int n = 1024, groups = 31;
    std::mt19937_64 rng(2);
    std::normal_distribution<double> normal;
    std::vector<double> L(static_cast<std::size_t>(n) * n);
    for (double& v : L) v = normal(rng);
    auto at = [n](int r, int q) { return static_cast<std::size_t>(q) * n + r; };
    cl::CommandQueue queue(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
    cl::Buffer d_l(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(double) * L.size(), L.data());
    cl::Buffer d_out(ctx, CL_MEM_READ_WRITE, sizeof(double) * 32 * 32 * groups);
    std::printf("device: %s; %d groups, median of %d launches\n\n| path | kk | kernel (us) | "
                "largest error / sqrt(kk) |\n|---|---|---|---|\n",
                dev.getInfo<CL_DEVICE_NAME>().c_str(), groups, reps);
    for (int mma : {0, 1}) {
      if (mma && !mma_ok) continue;
      cl::Program prog(ctx, src);
      const std::string opts = std::string("-D MMA=") + (mma ? "1" : "0");
      try {
        prog.build({dev}, opts.c_str());
      } catch (const cl::Error&) {
        std::fprintf(stderr, "%s\n", prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
        return 1;
      }
      cl::Kernel kernel(prog, "tc_update");
      for (int kk : {32, 128, 256, 480, 992}) {
        kernel.setArg(0, d_l);
        kernel.setArg(1, n);
        kernel.setArg(2, kk);
        kernel.setArg(3, d_out);
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          cl::Event e;
          queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(32 * groups, 32),
                                     cl::NDRange(32, 32), nullptr, &e);
          queue.finish();
          times.push_back((e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                           e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) / 1e3);
        }
        std::sort(times.begin(), times.end());
        std::vector<double> out(32 * 32 * groups);
        queue.enqueueReadBuffer(d_out, CL_TRUE, 0, sizeof(double) * out.size(), out.data());
        double err = 0.0;
        for (int g = 0; g < groups; ++g)
          for (int j = 0; j < 32; ++j)
            for (int i = 0; i < 32; ++i) {
              double s = 0.0;
              for (int q = 0; q < kk; ++q) s += L[at(32 * (g + 1) + i, q)] * L[at(j, q)];
              const double got = out[static_cast<std::size_t>(32 * g + j) * 32 + i];
              err = std::max(err, std::fabs(got - s) / std::sqrt(static_cast<double>(kk)));
            }
        std::printf("| %s | %d | %.2f | %.1e |\n", mma ? "mma" : "scalar", kk,
                    times[times.size() / 2], err);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
