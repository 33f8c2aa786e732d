#ifndef CLBAYES_ERROR_HPP
#define CLBAYES_ERROR_HPP

// Exceptions thrown by the core. The R glue turns every std::exception into
// an R error, so a message here is what the user reads: it names the
// argument or the OpenCL operation and says what is wrong.

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace clbayes {

/** A bad argument; the message starts with the argument's name. */
class invalid_argument : public std::invalid_argument {
 public:
  invalid_argument(const std::string& arg, const std::string& problem)
      : std::invalid_argument("`" + arg + "` " + problem) {}
};

/** No OpenCL device is available or selected. */
class no_device : public std::runtime_error {
 public:
  explicit no_device(const std::string& what) : std::runtime_error(what) {}
};

/** An OpenCL call failed: carries the numeric code and its CL_* name. */
class opencl_error : public std::runtime_error {
 public:
  opencl_error(const std::string& operation, int code,
               const std::string& detail = "")
      : std::runtime_error(format(operation, code, detail)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
  static std::string format(const std::string& operation, int code,
                            const std::string& detail);
};

/** Not enough memory (host or device) for a result or working copy; the
 *  message says which matrix, how large, and how much memory there is. */
class out_of_memory : public std::runtime_error {
 public:
  explicit out_of_memory(const std::string& what) : std::runtime_error(what) {}
};

/** A size in bytes as people read it: "36.5 GiB", "512 MiB", "800 bytes"
 *  (three significant digits, as R's format() prints). */
inline std::string format_bytes(double bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g %s", bytes, units[u]);
  return buf;
}

/** "rows x cols" of a matrix. */
inline std::string format_dims(long long rows, long long cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

/** Throws unless the rows x cols matrix passed as `arg` is square. */
inline void check_square(long long rows, long long cols, const char* arg) {
  if (rows != cols)
    throw invalid_argument(arg, "must be square (it is " + format_dims(rows, cols) + ")");
}

/** The user asked to stop (Ctrl-C); raised by check_interrupt(). */
class interrupted : public std::runtime_error {
 public:
  interrupted() : std::runtime_error("interrupted by the user") {}
};

/** The symbolic name of an OpenCL error code, e.g. "CL_OUT_OF_RESOURCES". */
inline const char* cl_error_name(int code) {
  switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR";
  }
}

inline std::string opencl_error::format(const std::string& operation, int code,
                                        const std::string& detail) {
  std::string msg = "OpenCL error " + std::string(cl_error_name(code)) + " (" +
                    std::to_string(code) + ") in " + operation;
  if (!detail.empty()) msg += ":\n" + detail;
  return msg;
}

}  // namespace clbayes

#endif
