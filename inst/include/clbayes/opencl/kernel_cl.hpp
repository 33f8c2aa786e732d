#ifndef CLBAYES_OPENCL_KERNEL_CL_HPP
#define CLBAYES_OPENCL_KERNEL_CL_HPP

// A typed OpenCL kernel (stan-opencl.txt, section 2.3). The template
// arguments say what each kernel argument is: in_buffer, out_buffer or
// in_out_buffer for a matrix_cl, any other type for a scalar passed by value
// (int, double, cl::LocalSpaceArg). A call
//   - waits on the write events of every input and on all events of every
//     output, so it runs after exactly the operations it depends on;
//   - records its own event on each matrix it reads or writes.
// No call site handles events by hand.
//
// The source is compiled lazily on first use, once per selected device, with
// the kernel's options passed as -D defines (e.g. THREAD_BLOCK_SIZE), and the
// program is cached by the context for the rest of the session.

#include "context.hpp"
#include "matrix_cl.hpp"
#include "profile.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

struct in_buffer {};
struct out_buffer {};
struct in_out_buffer {};

namespace internal {

// How one kernel argument is passed, which events it waits for and which
// events it records.
using arg_cache = std::vector<std::vector<unsigned char>>;

// clSetKernelArg for a scalar unless argument i already holds these bytes
// (the cache is updated only after a successful set).
inline void set_scalar(cl::Kernel& k, arg_cache& cache, cl_uint i, const void* value,
                       std::size_t size) {
  const unsigned char* bytes = static_cast<const unsigned char*>(value);
  if (cache.size() <= i) cache.resize(i + 1);
  std::vector<unsigned char>& held = cache[i];
  if (held.size() == size && std::equal(held.begin(), held.end(), bytes)) return;
  const cl_int err = ::clSetKernelArg(k(), i, size, value);
  if (err != CL_SUCCESS) throw cl::Error(err, "clSetKernelArg");
  held.assign(bytes, bytes + size);
}

template <typename T>
struct kernel_arg {
  using param = const T&;
  static void set(cl::Kernel& k, arg_cache& cache, cl_uint i, const T& v) {
    static_assert(std::is_trivially_copyable<T>::value, "kernel scalars are plain values");
    set_scalar(k, cache, i, &v, sizeof(T));
  }
  static void wait_list(const T&, std::vector<cl::Event>&) {}
  static void record(const T&, const cl::Event&) {}
};

template <>
struct kernel_arg<in_buffer> {
  using param = const matrix_cl&;
  static void set(cl::Kernel& k, arg_cache&, cl_uint i, const matrix_cl& m) {
    k.setArg(i, m.buffer());
  }
  static void wait_list(const matrix_cl& m, std::vector<cl::Event>& w) {
    w.insert(w.end(), m.write_events().begin(), m.write_events().end());
  }
  static void record(const matrix_cl& m, const cl::Event& e) {
    m.add_read_event(e);
  }
};

template <>
struct kernel_arg<out_buffer> {
  using param = matrix_cl&;
  static void set(cl::Kernel& k, arg_cache&, cl_uint i, const matrix_cl& m) {
    k.setArg(i, m.buffer());
  }
  static void wait_list(const matrix_cl& m, std::vector<cl::Event>& w) {
    std::vector<cl::Event> rw = m.read_write_events();
    w.insert(w.end(), rw.begin(), rw.end());
  }
  static void record(const matrix_cl& m, const cl::Event& e) {
    m.add_write_event(e);
  }
};

template <>
struct kernel_arg<in_out_buffer> : kernel_arg<out_buffer> {};

// A raw buffer (a flag or counter the caller orders itself): set every
// launch, no events.
template <>
struct kernel_arg<cl::Buffer> {
  using param = const cl::Buffer&;
  static void set(cl::Kernel& k, arg_cache&, cl_uint i, const cl::Buffer& v) {
    k.setArg(i, v);
  }
  static void wait_list(const cl::Buffer&, std::vector<cl::Event>&) {}
  static void record(const cl::Buffer&, const cl::Event&) {}
};

// Local memory sizes: set every launch (no value to compare).
template <>
struct kernel_arg<cl::LocalSpaceArg> {
  using param = const cl::LocalSpaceArg&;
  static void set(cl::Kernel& k, arg_cache&, cl_uint i, const cl::LocalSpaceArg& v) {
    k.setArg(i, v);
  }
  static void wait_list(const cl::LocalSpaceArg&, std::vector<cl::Event>&) {}
  static void record(const cl::LocalSpaceArg&, const cl::Event&) {}
};

template <typename T>
struct is_buffer_arg : std::false_type {};
template <>
struct is_buffer_arg<in_buffer> : std::true_type {};
template <>
struct is_buffer_arg<out_buffer> : std::true_type {};
template <>
struct is_buffer_arg<in_out_buffer> : std::true_type {};

// Buffers are checked to belong to the selected device before a launch.
template <typename T, typename V>
void check_arg_device(const V& v, typename std::enable_if<is_buffer_arg<T>::value>::type* = nullptr) {
  v.check_device("matrix");
}
template <typename T, typename V>
void check_arg_device(const V&, typename std::enable_if<!is_buffer_arg<T>::value>::type* = nullptr) {}

// A key that starts with '-' is a compiler flag, passed as key=value and
// left out when the value is 0 (-cl-nv-maxrregcount); every other key is a
// define.
inline std::string build_options(const std::map<std::string, int>& options) {
  std::string out;
  for (const auto& kv : options) {
    if (kv.first[0] != '-')
      out += "-D " + kv.first + "=" + std::to_string(kv.second) + " ";
    else if (kv.second != 0)
      out += kv.first + "=" + std::to_string(kv.second) + " ";
  }
  return out;
}

}  // namespace internal

/** True while an untracked_scope is alive. */
inline bool& untracked_launches() {
  static bool on = false;
  return on;
}

/** While alive, kernel_cl launches neither wait for nor record the events
 *  of their matrices (and make no event unless a profile sink wants it):
 *  for an algorithm of many short launches that orders its work itself,
 *  by the in-order queue and explicit markers between queues (the
 *  Cholesky's panel loop, linalg/cholesky_panel.hpp). Event bookkeeping
 *  costs several microseconds of host time per launch, which for hundreds
 *  of short launches is longer than the device work. The algorithm must
 *  wait for its inputs' events on entry and record its result's on exit. */
class untracked_scope {
 public:
  untracked_scope() : was_(untracked_launches()) { untracked_launches() = true; }
  ~untracked_scope() { untracked_launches() = was_; }
  untracked_scope(const untracked_scope&) = delete;
  untracked_scope& operator=(const untracked_scope&) = delete;

 private:
  bool was_;
};

template <typename... Args>
class kernel_cl {
 public:
  /** `name` is the __kernel function in `source`; `options` become -D defines. */
  kernel_cl(const char* name, const char* source,
            std::map<std::string, int> options = {})
      : name_(name), source_(source), options_(std::move(options)) {}

  /** Launch over `global` work items in groups of `local` (cl::NullRange
   *  lets the runtime choose). A launch with an empty range does nothing. */
  cl::Event operator()(const cl::NDRange& global, const cl::NDRange& local,
                       typename internal::kernel_arg<Args>::param... args) const {
    for (cl::size_type d = 0; d < global.dimensions(); ++d)
      if (global.get()[d] == 0) return cl::Event();
    context& ctx = context::instance();
    int dummy[] = {0, (internal::check_arg_device<Args>(args), 0)...};
    (void)dummy;
    context::compiled_kernel& entry = compiled(ctx);
    cl::Kernel& k = entry.kernel;
    std::vector<cl::Event> waits;
    cl_uint index = 0;
    try {
      int set[] = {
          0, (internal::kernel_arg<Args>::set(k, entry.scalar_args, index++, args), 0)...};
      (void)set;
      cl::Event event;
      if (untracked_launches()) {
        ctx.queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr,
                                         profile_wants_events() ? &event : nullptr);
        profile_launch(event);
        return event;
      }
      int wl[] = {0, (internal::kernel_arg<Args>::wait_list(args, waits), 0)...};
      (void)wl;
      ctx.queue().enqueueNDRangeKernel(k, cl::NullRange, global, local,
                                       waits.empty() ? nullptr : &waits, &event);
      profile_launch(event);
      int rec[] = {0, (internal::kernel_arg<Args>::record(args, event), 0)...};
      (void)rec;
      return event;
    } catch (const cl::Error& e) {
      throw cl_failure(std::string(e.what()) + " running kernel '" + name_ + "'", e.err());
    }
  }

  /** Launch with the work-group size chosen by the runtime. */
  cl::Event operator()(const cl::NDRange& global,
                       typename internal::kernel_arg<Args>::param... args) const {
    return (*this)(global, cl::NullRange, args...);
  }

  /** CL_KERNEL_WORK_GROUP_SIZE of the variant built with the current
   *  options: the largest group this kernel can run with on the selected
   *  device (registers and local memory may make it smaller than the
   *  device's limit). Builds and caches the variant if needed. */
  std::size_t max_work_group_size() const {
    context& ctx = context::instance();
    cl::Kernel& k = compiled(ctx).kernel;
    try {
      return k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(ctx.device());
    } catch (const cl::Error& e) {
      throw opencl_error(std::string(e.what()) + " querying the work-group size of '" +
                             name_ + "'",
                         e.err());
    }
  }

  const std::string& name() const { return name_; }
  int option(const std::string& key) const { return options_.at(key); }
  /** Change a tuning define (or flag, see build_options); the next launch
   *  builds (and caches) that variant. */
  void set_option(const std::string& key, int value) {
    auto it = options_.find(key);
    if (it != options_.end() && it->second == value) return;
    options_[key] = value;
    compiled_ = nullptr;
  }

 private:
  // The context's cached kernel for the current options, remembered here
  // (a pointer into the context's cache, which owns it) so that a launch
  // skips building the options string and the lookup: the Cholesky's
  // panels are hundreds of short launches. Valid while the device
  // selection (generation, which clears the cache) and the options are
  // unchanged.
  context::compiled_kernel& compiled(context& ctx) const {
    if (compiled_ == nullptr || compiled_generation_ != ctx.generation()) {
      compiled_ = &ctx.kernel_entry(name_, source_, internal::build_options(options_));
      compiled_generation_ = ctx.generation();
    }
    return *compiled_;
  }

  std::string name_;
  const char* source_;
  std::map<std::string, int> options_;
  mutable context::compiled_kernel* compiled_ = nullptr;
  mutable unsigned compiled_generation_ = 0;
};

/** Round n up to a multiple of m (global sizes for fixed work groups). */
inline std::size_t round_up(std::size_t n, std::size_t m) {
  return ((n + m - 1) / m) * m;
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
