#ifndef CLBAYES_OPENCL_MEMORY_HPP
#define CLBAYES_OPENCL_MEMORY_HPP

// Device memory as the user is told about it: a buffer too large for the
// device is refused before OpenCL is asked, and an OpenCL allocation
// failure (which some drivers report only at the first launch that uses
// the buffer) says how much memory the device has.

#include "context.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** "device 'NAME' has 15.6 GiB of memory (CL_DEVICE_GLOBAL_MEM_SIZE) and
 *  allows 3.9 GiB per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)". */
inline std::string device_memory_note() {
  const device_info& i = context::instance().info();
  return "device '" + i.name + "' has " + format_bytes(static_cast<double>(i.global_mem)) +
         " of memory (CL_DEVICE_GLOBAL_MEM_SIZE) and allows " +
         format_bytes(static_cast<double>(i.max_alloc)) +
         " per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)";
}

/** The OpenCL codes a failed or deferred allocation gives. */
inline bool is_allocation_failure(int code) {
  return code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_INVALID_BUFFER_SIZE ||
         code == CL_OUT_OF_RESOURCES;
}

/** Throws out_of_memory when one buffer of `bytes` cannot exist on the
 *  selected device; `what` names the matrix ("a 70000 x 70000 device
 *  matrix"). */
inline void check_device_allocation(double bytes, const std::string& what) {
  const device_info& i = context::instance().info();
  if (bytes > static_cast<double>(i.max_alloc) || bytes > static_cast<double>(i.global_mem))
    throw out_of_memory(what + " needs " + format_bytes(bytes) + " of device memory, but the " +
                        device_memory_note() +
                        "; use backend = \"cpu\" or split the problem");
}

/** The opencl_error for `code` in `operation`, with the device's memory
 *  when the code can mean that memory ran out. */
inline opencl_error cl_failure(const std::string& operation, int code) {
  return opencl_error(operation, code,
                      is_allocation_failure(code)
                          ? "the device may be out of memory: the " + device_memory_note()
                          : std::string());
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
