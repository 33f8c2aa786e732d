#ifndef CLBAYES_OPENCL_DEVICE_INFO_HPP
#define CLBAYES_OPENCL_DEVICE_INFO_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace clbayes {
namespace opencl {

/** What the user is told about one OpenCL device (one row of gpu_devices()). */
struct device_info {
  int platform = -1;  // 0-based index, as clinfo numbers them
  int device = -1;    // 0-based index within the platform
  std::string platform_name;
  std::string name;
  std::string vendor;  // CL_DEVICE_VENDOR
  std::string type;  // "gpu", "cpu", "accelerator" or "other"
  std::string version;
  bool fp64 = false;
  std::uint64_t global_mem = 0;  // bytes
  std::uint64_t max_alloc = 0;   // bytes in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)
  std::uint64_t local_mem = 0;   // bytes
  int compute_units = 0;
  std::size_t max_work_group_size = 0;
  /** NVIDIA's compute capability as 10 major + minor (90: Hopper); 0 on
   *  devices without cl_nv_device_attribute_query. */
  int nv_compute_capability = 0;
};

}  // namespace opencl
}  // namespace clbayes

#endif
