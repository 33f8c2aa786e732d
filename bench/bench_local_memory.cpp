// How much local memory one work group can really use on the selected
// device: CL_DEVICE_LOCAL_MEM_SIZE against kernels that use more. For each
// size, one kernel with a __local array of that size declared in the
// kernel (static) and one with a __local pointer argument of that size
// (set by clSetKernelArg): built, run over one group of 256 items per
// compute unit, and checked (each item reads back what another wrote).
// On NVIDIA's OpenCL the device reports 48 KB, but static arrays of up to
// 200 KB run (log 2026-11-28-local-memory): room for GEMM stages as deep
// as cuBLAS's.
//   bench_local_memory

#include <clbayes/opencl/context.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

const char* source = R"(
#ifdef STATIC_COUNT
__kernel void fill(__global double* out, int count) {
  __local double buf[STATIC_COUNT];
#else
__kernel void fill(__global double* out, int count, __local double* buf) {
#endif
  const int t = get_local_id(0);
  for (int i = t; i < count; i += get_local_size(0)) buf[i] = i;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = buf[count - 1 - t];
}
)";

// "ran, 0 wrong" or the OpenCL error of the step that failed.
std::string attempt(int count, bool in_kernel) {
  namespace cl_ops = clbayes::opencl;
  cl_ops::context& ctx = cl_ops::context::instance();
  const int groups = ctx.info().compute_units, items = 256;
  try {
    cl::Program prog = ctx.build_program(
        "fill", source, in_kernel ? "-D STATIC_COUNT=" + std::to_string(count) : "");
    cl::Kernel k(prog, "fill");
    cl::Buffer out(ctx.cl_context(), CL_MEM_READ_WRITE, sizeof(double) * groups * items);
    k.setArg(0, out);
    k.setArg(1, count);
    if (!in_kernel) k.setArg(2, cl::Local(sizeof(double) * count));
    ctx.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * items),
                                     cl::NDRange(items));
    std::vector<double> h(static_cast<std::size_t>(groups) * items);
    ctx.queue().enqueueReadBuffer(out, CL_TRUE, 0, sizeof(double) * h.size(), h.data());
    int wrong = 0;
    for (std::size_t i = 0; i < h.size(); ++i) wrong += h[i] != double(count - 1 - int(i % items));
    return "ran, " + std::to_string(wrong) + " wrong";
  } catch (const cl::Error& e) {
    return std::string(e.what()) + " " + std::to_string(e.err());
  } catch (const std::exception& e) {
    return std::string("build failed: ") + std::string(e.what()).substr(0, 60);
  }
}

}  // namespace

int main() {
  try {
    const auto& info = clbayes::opencl::context::instance().info();
    std::printf("device: %s; CL_DEVICE_LOCAL_MEM_SIZE %llu bytes\n\n", info.name.c_str(),
                static_cast<unsigned long long>(info.local_mem));
    std::printf("| local memory (KB) | array in the kernel | __local pointer argument |\n"
                "|---|---|---|\n");
    for (int kb : {32, 48, 64, 96, 128, 160, 200, 227}) {
      const int count = kb * 1024 / 8;
      std::printf("| %d | %s | %s |\n", kb, attempt(count, true).c_str(),
                  attempt(count, false).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_local_memory: %s\n", e.what());
    return 1;
  }
  return 0;
}
