#ifndef CLBAYES_HOST_MEMORY_HPP
#define CLBAYES_HOST_MEMORY_HPP

// Size checks that run before a large host allocation: on Linux a request
// beyond the machine's memory may succeed (overcommit) and get the process
// killed later, when the pages are touched, instead of failing cleanly.

#include "error.hpp"

#include <limits>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace clbayes {

/** Physical memory of the machine in bytes (infinite where unknown). */
inline double host_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
#endif
  return std::numeric_limits<double>::infinity();
}

/** Throws out_of_memory when `bytes` exceed the machine's memory; `what`
 *  names the matrix and starts the message. */
inline void check_host_allocation(double bytes, const std::string& what) {
  const double have = host_memory_bytes();
  if (bytes > have)
    throw out_of_memory(what + " needs " + format_bytes(bytes) +
                        " of memory, more than this machine has (" + format_bytes(have) + ")");
}

}  // namespace clbayes

#endif
