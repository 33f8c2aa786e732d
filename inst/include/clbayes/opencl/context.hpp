#ifndef CLBAYES_OPENCL_CONTEXT_HPP
#define CLBAYES_OPENCL_CONTEXT_HPP

// The one OpenCL context of the process (stan-opencl.txt, section 2.1): it
// lists every platform and device, holds the selected device with its single
// in-order command queue, and caches compiled programs for the session.
//
// Selection happens on first use: env CLBAYES_PLATFORM / CLBAYES_DEVICE when
// set, otherwise the first GPU with double precision, otherwise the first
// device of any type with double precision. select() switches devices; every
// switch bumps generation(), so matrices made on an earlier device are
// recognised and refused instead of being handed to the wrong context.

#include "../config.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "buffer_pool.hpp"
#include "device_info.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** The in-order queues of the selected device: the main one, a side queue
 *  for work that overlaps with it (the Cholesky's look-ahead panels) and a
 *  transfer queue for copies between host and device that overlap with
 *  both. Ordering between queues is by events only. (A fourth queue,
 *  context::download_queue(), carries copies from device to host beside
 *  the transfer queue's copies to the device; no kernel runs on it.) */
enum class queue_role { main, side, transfer };

class context {
 public:
  static context& instance() {
    static context ctx;
    return ctx;
  }

  /** Every device of every platform, in clinfo order. */
  std::vector<device_info> devices() const {
    std::vector<device_info> out;
    std::vector<cl::Platform> platforms = all_platforms();
    for (std::size_t p = 0; p < platforms.size(); ++p) {
      std::vector<cl::Device> devs = platform_devices(platforms[p]);
      for (std::size_t d = 0; d < devs.size(); ++d)
        out.push_back(describe(platforms[p], devs[d], static_cast<int>(p),
                               static_cast<int>(d)));
    }
    return out;
  }

  /** Select device `device` of platform `platform` (0-based). */
  void select(int platform, int device) {
    std::vector<cl::Platform> platforms = all_platforms();
    if (platform < 0 || platform >= static_cast<int>(platforms.size()))
      throw invalid_argument("platform", "must be a platform index from 0 to " +
                                             std::to_string(static_cast<int>(platforms.size()) - 1) +
                                             "; there are " +
                                             std::to_string(platforms.size()) +
                                             " OpenCL platforms");
    std::vector<cl::Device> devs = platform_devices(platforms[platform]);
    if (device < 0 || device >= static_cast<int>(devs.size()))
      throw invalid_argument("device", "must be a device index from 0 to " +
                                           std::to_string(static_cast<int>(devs.size()) - 1) +
                                           " on platform " + std::to_string(platform) +
                                           " (it has " + std::to_string(devs.size()) +
                                           " devices)");
    device_info info = describe(platforms[platform], devs[device], platform,
                                device);
    if (!info.fp64)
      throw invalid_argument("device", "'" + info.name +
                                           "' has no double precision "
                                           "(cl_khr_fp64); clbayes needs it");
    try {
      cl::Context ctx(devs[device]);
      cl::CommandQueue queue(ctx, devs[device], queue_properties());  // in-order
      context_ = ctx;
      queue_ = queue;
      side_queue_ = cl::CommandQueue();
      transfer_queue_ = cl::CommandQueue();
      download_queue_ = cl::CommandQueue();
      role_ = queue_role::main;
      device_ = devs[device];
      pool_ = buffer_pool();  // the old device's buffers are released, not kept
    } catch (const cl::Error& e) {
      throw opencl_error("creating a context on '" + info.name + "'", e.err());
    }
    info_ = info;
    programs_.clear();
    selected_ = true;
    ++generation_;
  }

  /** Drop the selected device: later work runs on the CPU paths. */
  void deselect() {
    if (selected_) finish_all();
    pool_ = buffer_pool();
    programs_.clear();
    context_ = cl::Context();
    queue_ = cl::CommandQueue();
    side_queue_ = cl::CommandQueue();
    transfer_queue_ = cl::CommandQueue();
    download_queue_ = cl::CommandQueue();
    role_ = queue_role::main;
    device_ = cl::Device();
    info_ = device_info();
    selected_ = false;
    ++generation_;
  }

  /** Select from the environment or by the default rule; no-op if done. */
  void ensure_initialised() {
    if (initialised_) return;
    initialised_ = true;
    const char* env_p = std::getenv("CLBAYES_PLATFORM");
    const char* env_d = std::getenv("CLBAYES_DEVICE");
    if ((env_p && *env_p) || (env_d && *env_d)) {
      select(parse_env("CLBAYES_PLATFORM", env_p),
             parse_env("CLBAYES_DEVICE", env_d));
      return;
    }
    std::vector<device_info> all = devices();
    for (int pass = 0; pass < 2; ++pass) {
      for (const device_info& d : all) {
        if (!d.fp64 || (pass == 0 && d.type != "gpu")) continue;
        select(d.platform, d.device);
        return;
      }
    }
  }

  bool selected() {
    ensure_initialised();
    return selected_;
  }

  const device_info& info() {
    require_device();
    return info_;
  }
  cl::Context& cl_context() {
    require_device();
    return context_;
  }
  /** The queue work is enqueued on: the main queue, or the one a
   *  queue_scope selects. */
  cl::CommandQueue& queue() {
    require_device();
    switch (role_) {
      case queue_role::side: return side_queue();
      case queue_role::transfer: return transfer_queue();
      default: return queue_;
    }
  }
  /** The main queue, whatever scope is active. */
  cl::CommandQueue& main_queue() {
    require_device();
    return queue_;
  }
  /** The side queue, made on first use. */
  cl::CommandQueue& side_queue() { return extra_queue(side_queue_, "a second command queue"); }
  /** The transfer queue, made on first use. */
  cl::CommandQueue& transfer_queue() {
    return extra_queue(transfer_queue_, "a transfer command queue");
  }
  /** The download queue, made on first use: copies from device to host
   *  that run beside the transfer queue's uploads (the bus is full duplex);
   *  linalg/cholesky_host.hpp drains it from a second host thread, so it
   *  must be made (first called) on the main thread. */
  cl::CommandQueue& download_queue() {
    return extra_queue(download_queue_, "a download command queue");
  }
  /** Route queue() to the queue of `role`; returns the previous role. See
   *  queue_scope. */
  queue_role use_queue(queue_role role) {
    if (role == queue_role::side) side_queue();  // made before the first use
    if (role == queue_role::transfer) transfer_queue();
    const queue_role was = role_;
    role_ = role;
    return was;
  }
  /** Wait for every queue of the selected device. */
  void finish_all() {
    queue_.finish();
    if (side_queue_() != nullptr) side_queue_.finish();
    if (transfer_queue_() != nullptr) transfer_queue_.finish();
    if (download_queue_() != nullptr) download_queue_.finish();
  }
#ifdef CLBAYES_PROFILE
  /** Queues made from now on record profiling times in their events
   *  (benchmarks only: opencl/profile.hpp); recreates the queues after
   *  finishing them. */
  void set_profiling(bool on) {
    if (on == profiling_) return;
    profiling_ = on;
    if (!selected()) return;
    finish_all();
    try {
      queue_ = cl::CommandQueue(context_, device_, queue_properties());
      side_queue_ = cl::CommandQueue();
      transfer_queue_ = cl::CommandQueue();
      download_queue_ = cl::CommandQueue();
      role_ = queue_role::main;
    } catch (const cl::Error& e) {
      throw opencl_error("creating a profiling command queue", e.err());
    }
  }
  bool profiling() const { return profiling_; }
#endif
  /** The queues made so far (the main one first). */
  std::vector<cl::CommandQueue*> made_queues() {
    std::vector<cl::CommandQueue*> out{&queue_};
    for (cl::CommandQueue* q : {&side_queue_, &transfer_queue_, &download_queue_})
      if ((*q)() != nullptr) out.push_back(q);
    return out;
  }
  /** Device buffers kept for reuse (opencl/memory.hpp). */
  buffer_pool& pool() { return pool_; }
  /** True once the context is destroyed (at exit): a matrix released
   *  later must not touch it. */
  static bool& gone() {
    static bool g = false;
    return g;
  }
  cl::Device& device() {
    require_device();
    return device_;
  }
  unsigned generation() const { return generation_; }

  /** Kernel `name` from `source` built with `options`, compiled once per
   *  device and cached: the key is the source's address (kernel sources are
   *  string literals with static storage), the name and the options. */
  cl::Kernel& kernel(const std::string& name, const char* source,
                     const std::string& options) {
    return kernel_entry(name, source, options).kernel;
  }

  /** A compiled kernel with the scalar arguments last set on it
   *  (kernel_cl skips clSetKernelArg for a value that is already set: a
   *  GEMM launch has 17 scalars, most unchanged between launches). */
  struct compiled_kernel {
    cl::Program program;
    cl::Kernel kernel;
    std::vector<std::vector<unsigned char>> scalar_args;
  };

  /** kernel(), with the argument cache. */
  compiled_kernel& kernel_entry(const std::string& name, const char* source,
                                const std::string& options) {
    require_device();
    const std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(source)) +
                            '\n' + name + '\n' + options;
    auto it = programs_.find(key);
    if (it == programs_.end()) {
      cl::Program program = build_program(name, source, options);
      cl::Kernel kernel;
      try {
        kernel = cl::Kernel(program, name.c_str());
      } catch (const cl::Error& e) {
        throw opencl_error("creating kernel '" + name + "'", e.err());
      }
      it = programs_.emplace(key, compiled_kernel{program, kernel, {}}).first;
    }
    return it->second;
  }

  /** Compile `source` (double precision enabled) for the selected device.
   *  A failed build throws an opencl_error that carries the build log;
   *  `name` says which kernel the program was built for. */
  cl::Program build_program(const std::string& name, const std::string& source,
                            const std::string& options = "") {
    require_device();
    cl::Program program;
    try {
      program = cl::Program(
          context_, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + source);
      program.build(std::vector<cl::Device>{device_}, options.c_str());
    } catch (const cl::Error& e) {
      // A build that Ctrl-C cut short is the interrupt, not a broken kernel:
      // PoCL's compiler (LLVM's signal handler) deletes its temporary files
      // on SIGINT and the build fails on a missing file. As an error, R's
      // tryCatch(error = ) would see it before the interrupt. Nothing is
      // cached, so the next call builds again.
      check_interrupt();
      std::string log;
      try {
        log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
      } catch (const cl::Error&) {
        log = "(no build log)";
      }
      throw opencl_error("building kernel '" + name + "' with options '" +
                             options + "'",
                         e.err(), "build log:\n" + log);
    }
    return program;
  }

  /** Throws clbayes::no_device unless a device is selected. */
  void require_device() {
    ensure_initialised();
    if (!selected_)
      throw no_device(
          "no OpenCL device is selected: use gpu_select() or backend = "
          "\"cpu\"");
  }

 private:
  context() = default;
  ~context() { gone() = true; }

  cl_command_queue_properties queue_properties() const {
    return profiling_ ? CL_QUEUE_PROFILING_ENABLE : 0;
  }

  cl::CommandQueue& extra_queue(cl::CommandQueue& q, const char* what) {
    require_device();
    if (q() == nullptr) {
      try {
        q = cl::CommandQueue(context_, device_, queue_properties());
      } catch (const cl::Error& e) {
        throw opencl_error(std::string("creating ") + what, e.err());
      }
    }
    return q;
  }

  static std::vector<cl::Platform> all_platforms() {
    std::vector<cl::Platform> platforms;
    try {
      cl::Platform::get(&platforms);
    } catch (const cl::Error&) {
      platforms.clear();  // no ICD or no platform: an empty list, not an error
    }
    return platforms;
  }

  static std::vector<cl::Device> platform_devices(const cl::Platform& p) {
    std::vector<cl::Device> devs;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
    } catch (const cl::Error&) {
      devs.clear();
    }
    return devs;
  }

  static device_info describe(const cl::Platform& p, const cl::Device& d,
                              int pi, int di) {
    device_info info;
    info.platform = pi;
    info.device = di;
    info.platform_name = trim(p.getInfo<CL_PLATFORM_NAME>());
    info.name = trim(d.getInfo<CL_DEVICE_NAME>());
    info.vendor = trim(d.getInfo<CL_DEVICE_VENDOR>());
    cl_device_type t = d.getInfo<CL_DEVICE_TYPE>();
    info.type = (t & CL_DEVICE_TYPE_GPU)           ? "gpu"
                : (t & CL_DEVICE_TYPE_CPU)         ? "cpu"
                : (t & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                   : "other";
    info.version = trim(d.getInfo<CL_DEVICE_VERSION>());
    const std::string extensions = d.getInfo<CL_DEVICE_EXTENSIONS>();
    info.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
    info.global_mem = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
    info.local_mem = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
    info.max_alloc = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
    info.compute_units = static_cast<int>(d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
    info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
    if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
      // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV / _MINOR_NV (cl_ext.h)
      cl_uint major = 0, minor = 0;
      if (::clGetDeviceInfo(d(), 0x4000, sizeof(major), &major, nullptr) == CL_SUCCESS &&
          ::clGetDeviceInfo(d(), 0x4001, sizeof(minor), &minor, nullptr) == CL_SUCCESS)
        info.nv_compute_capability = static_cast<int>(10 * major + minor);
    }
    return info;
  }

  static std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
    return s;
  }

  static int parse_env(const char* name, const char* value) {
    if (value == nullptr || *value == '\0') return 0;
    char* end = nullptr;
    long v = std::strtol(value, &end, 10);
    if (*end != '\0' || v < 0)
      throw invalid_argument(name, std::string("must be a non-negative integer, not '") +
                                       value + "'");
    return static_cast<int>(v);
  }

  bool initialised_ = false;
  bool selected_ = false;
  unsigned generation_ = 0;
  cl::Context context_;
  cl::CommandQueue queue_;
  cl::CommandQueue side_queue_;
  cl::CommandQueue transfer_queue_;
  cl::CommandQueue download_queue_;
  queue_role role_ = queue_role::main;
  bool profiling_ = false;
  cl::Device device_;
  device_info info_;
  std::map<std::string, compiled_kernel> programs_;
  buffer_pool pool_;  // last: released before the context's queues
};

/** While alive, work enqueued through context::queue() (every kernel_cl
 *  launch) goes to the queue of `role`. */
class queue_scope {
 public:
  explicit queue_scope(queue_role role) : was_(context::instance().use_queue(role)) {}
  ~queue_scope() { context::instance().use_queue(was_); }
  queue_scope(const queue_scope&) = delete;
  queue_scope& operator=(const queue_scope&) = delete;

 private:
  queue_role was_;
};

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
