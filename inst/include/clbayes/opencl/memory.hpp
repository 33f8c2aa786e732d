#ifndef CLBAYES_OPENCL_MEMORY_HPP
#define CLBAYES_OPENCL_MEMORY_HPP

// Device memory as the user is told about it: a buffer too large for the
// device is refused before OpenCL is asked, and an OpenCL allocation
// failure (which some drivers report only at the first launch that uses
// the buffer) says how much memory the device has. Matrix buffers come
// from and go back to the context's pool (opencl/buffer_pool.hpp).

#include "context.hpp"

#include <cstddef>
#include <string>
#include <vector>

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

/** The device memory of one matrix (shared by its aliases): taken from
 *  the context's pool when a kept buffer of its size is idle, otherwise
 *  allocated; given back to the pool when the last owner lets go. */
class device_buffer {
 public:
  /** `what` names the matrix in errors ("a 70000 x 70000 device matrix"). */
  device_buffer(std::size_t bytes, const std::string& what)
      : bytes_(bytes), generation_(context::instance().generation()) {
    context& ctx = context::instance();
    buffer_pool& pool = ctx.pool();
    buffer_ = pool.take(bytes);
    if (buffer_() == nullptr) {
      // Kept buffers give way to a new one that would not fit beside them
      // (a driver may report the shortage only at the first launch).
      pool.make_room(bytes, static_cast<std::size_t>(ctx.info().global_mem) / 10 * 9);
      auto allocate = [&] {
        try {
          buffer_ = cl::Buffer(ctx.cl_context(), CL_MEM_READ_WRITE, bytes);
          return CL_SUCCESS;
        } catch (const cl::Error& e) {
          return e.err();
        }
      };
      cl_int code = allocate();
      if (is_allocation_failure(code) && pool.clear() > 0) code = allocate();  // once more
      if (code != CL_SUCCESS)
        throw cl_failure("allocating " + what + " (" + format_bytes(double(bytes)) + ")", code);
    }
    pool.add_live(bytes);
  }

  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  /** Into the pool, behind a marker on every queue, unless it is small,
   *  from an earlier device, or the context is gone. At most a quarter of
   *  the device's memory is kept, a sixteenth on a CPU device (whose
   *  memory is the host's, shared with R). */
  ~device_buffer() {
    if (context::gone()) return;
    try {
      context& ctx = context::instance();
      if (generation_ != ctx.generation()) return;
      buffer_pool& pool = ctx.pool();
      pool.remove_live(bytes_);
      if (bytes_ < buffer_pool::smallest) return;
      std::vector<cl::Event> markers;
      for (cl::CommandQueue* q : ctx.made_queues()) {
        cl::Event m;
        q->enqueueMarkerWithWaitList(nullptr, &m);
        q->flush();
        markers.push_back(m);
      }
      const device_info& info = ctx.info();
      pool.keep(buffer_, bytes_, std::move(markers),
                static_cast<std::size_t>(info.global_mem) / (info.type == "cpu" ? 16 : 4));
    } catch (...) {
      // Not kept: released as any buffer is (OpenCL waits for its work).
    }
  }

  const cl::Buffer& get() const { return buffer_; }

 private:
  cl::Buffer buffer_;
  std::size_t bytes_;
  unsigned generation_;
};

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
