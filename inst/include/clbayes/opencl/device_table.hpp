#ifndef CLBAYES_OPENCL_DEVICE_TABLE_HPP
#define CLBAYES_OPENCL_DEVICE_TABLE_HPP

// Per-device tuned settings, as CLBlast keeps them: a small table per
// algorithm family whose rows say which devices they were measured on
// (vendor, device name, NVIDIA compute capability) and hold a settings
// struct; the first row that matches the selected device wins, and the
// last row matches every device (the fallback). The algorithms take the
// settings by value, so a benchmark can pass a modified copy.

#include "device_info.hpp"

#include <cstddef>
#include <string>

namespace clbayes {
namespace opencl {

template <typename Settings>
struct device_entry {
  const char* vendor;          // a substring of CL_DEVICE_VENDOR ("": any)
  const char* name;            // a substring of CL_DEVICE_NAME ("": any)
  int min_compute_capability;  // NVIDIA, 10 major + minor (0: any device)
  Settings settings;
};

template <typename Settings>
bool matches(const device_entry<Settings>& e, const device_info& d) {
  return d.vendor.find(e.vendor) != std::string::npos &&
         d.name.find(e.name) != std::string::npos &&
         (e.min_compute_capability == 0 ||
          d.nv_compute_capability >= e.min_compute_capability);
}

/** The settings of the first row of `table` that matches `d`. */
template <typename Settings, std::size_t N>
Settings lookup(const device_entry<Settings> (&table)[N], const device_info& d) {
  for (const device_entry<Settings>& e : table)
    if (matches(e, d)) return e.settings;
  return table[N - 1].settings;
}

}  // namespace opencl
}  // namespace clbayes

#endif
