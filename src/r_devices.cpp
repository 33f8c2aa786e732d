// Glue for device listing and selection (R/devices.R).

#include "glue.hpp"

// [[Rcpp::export(.cpp_devices)]]
Rcpp::List cpp_devices() {
#ifdef CLBAYES_OPENCL
  using clbayes::opencl::context;
  using clbayes::opencl::device_info;
  std::vector<device_info> devs = context::instance().devices();
  const bool any = context::instance().selected();
  const device_info* sel = any ? &context::instance().info() : nullptr;
  const R_xlen_t n = static_cast<R_xlen_t>(devs.size());
  Rcpp::IntegerVector platform(n), device(n), units(n);
  Rcpp::CharacterVector platform_name(n), name(n), type(n), version(n);
  Rcpp::LogicalVector fp64(n), selected(n);
  Rcpp::NumericVector mem(n), local_mem(n), wg(n);
  for (R_xlen_t i = 0; i < n; ++i) {
    const device_info& d = devs[i];
    platform[i] = d.platform;
    device[i] = d.device;
    platform_name[i] = d.platform_name;
    name[i] = d.name;
    type[i] = d.type;
    version[i] = d.version;
    fp64[i] = d.fp64;
    mem[i] = static_cast<double>(d.global_mem);
    local_mem[i] = static_cast<double>(d.local_mem);
    units[i] = d.compute_units;
    wg[i] = static_cast<double>(d.max_work_group_size);
    selected[i] = sel != nullptr && sel->platform == d.platform && sel->device == d.device;
  }
  return Rcpp::List::create(
      Rcpp::Named("platform") = platform, Rcpp::Named("device") = device,
      Rcpp::Named("name") = name, Rcpp::Named("type") = type,
      Rcpp::Named("fp64") = fp64, Rcpp::Named("global_mem") = mem,
      Rcpp::Named("compute_units") = units, Rcpp::Named("selected") = selected,
      Rcpp::Named("platform_name") = platform_name,
      Rcpp::Named("version") = version, Rcpp::Named("local_mem") = local_mem,
      Rcpp::Named("max_work_group_size") = wg);
#else
  return Rcpp::List();
#endif
}

// [[Rcpp::export(.cpp_opencl_built)]]
bool cpp_opencl_built() {
#ifdef CLBAYES_OPENCL
  return true;
#else
  return false;
#endif
}

// [[Rcpp::export(.cpp_select)]]
void cpp_select(int platform, int device) {
#ifdef CLBAYES_OPENCL
  clbayes::opencl::context::instance().select(platform, device);
#else
  (void)platform;
  (void)device;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_deselect)]]
void cpp_deselect() {
#ifdef CLBAYES_OPENCL
  clbayes::opencl::context::instance().deselect();
#endif
}

// [[Rcpp::export(.cpp_init_device)]]
bool cpp_init_device() {
#ifdef CLBAYES_OPENCL
  return clbayes::opencl::context::instance().selected();
#else
  return false;
#endif
}

// [[Rcpp::export(.cpp_available)]]
bool cpp_available() {
#ifdef CLBAYES_OPENCL
  try {
    return clbayes::opencl::context::instance().selected();
  } catch (const std::exception&) {
    return false;
  }
#else
  return false;
#endif
}

// [[Rcpp::export(.cpp_empty_cache)]]
double cpp_empty_cache() {
#ifdef CLBAYES_OPENCL
  clbayes::opencl::context& ctx = clbayes::opencl::context::instance();
  if (!ctx.selected()) return 0;
  return static_cast<double>(ctx.pool().clear());
#else
  return 0;
#endif
}
