// Registers and spills of a kernel on an NVIDIA device: builds one of the
// package's kernel sources with the given defines and NVIDIA's
// -cl-nv-verbose, and prints the build log (ptxas: registers, spill
// stores and loads) and the kernel's private memory; with --ptx FILE it
// also writes the program binary (PTX on NVIDIA), for ptxas / cuobjdump.
//   ./kernel_report glm_batch_mma FAMILY=1 WARPS=8 KS=13 MG=7 MMA=1 [-cl-nv-maxrregcount=128]
//   ./kernel_report gemm TM=128 TN=128 TK=8 WPTM=8 WPTN=8 TRANS_A=0 TRANS_B=0
//       PERSISTENT=0 MMA=1 --ptx gemm.ptx
//   ./kernel_report cholesky_base CHOLESKY_BLOCK=32 LEAF_T=32 NV_PTX=1 MMA=1
// Other platforms print their own build log (often empty).

#include <clbayes/kernels/cholesky_base.hpp>
#include <clbayes/kernels/gemm.hpp>
#include <clbayes/kernels/glm_batch_mma.hpp>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s glm_batch_mma|gemm|cholesky_base [NAME=VALUE ...] [-option ...] "
                 "[--ptx FILE]\n",
                 argv[0]);
    return 2;
  }
  namespace k = clbayes::opencl::kernels;
  const std::string name = argv[1];
  const char* source = nullptr;
  if (name == "glm_batch_mma") source = k::glm_program<&k::glm_batch_mma_source>();
  if (name == "gemm") source = k::gemm_source;
  if (name == "cholesky_base") source = k::cholesky_base_source;
  if (source == nullptr) {
    std::fprintf(stderr, "unknown kernel %s\n", name.c_str());
    return 2;
  }
  auto& ctx = clbayes::opencl::context::instance();
  std::string options =
      ctx.info().vendor.find("NVIDIA") != std::string::npos ? "-cl-nv-verbose " : "";
  std::string ptx_file;
  for (int a = 2; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--ptx" && a + 1 < argc) {
      ptx_file = argv[++a];
      continue;
    }
    options += (s[0] == '-' ? s : "-D " + s) + " ";
  }
  cl::Program program(ctx.cl_context(), source);
  try {
    program.build(std::vector<cl::Device>{ctx.device()}, options.c_str());
  } catch (const cl::Error&) {
  }
  std::printf("%s %s\n%s\n", name.c_str(), options.c_str(),
              program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(ctx.device()).c_str());
  if (!ptx_file.empty()) {
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (!binaries.empty()) {
      std::ofstream(ptx_file, std::ios::binary)
          .write(reinterpret_cast<const char*>(binaries[0].data()),
                 static_cast<std::streamsize>(binaries[0].size()));
      std::printf("program binary (%zu bytes) written to %s\n", binaries[0].size(),
                  ptx_file.c_str());
    }
  }
  try {
    cl::Kernel kern(program, name.c_str());
    std::printf("private memory per item: %zu bytes\n",
                static_cast<std::size_t>(
                    kern.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(ctx.device())));
  } catch (const cl::Error& e) {
    std::printf("no kernel: %s (%d)\n", e.what(), e.err());
  }
  return 0;
}
