// Proof that the clbayes core builds and runs without R:
//   g++ -std=c++17 -O2 -DCLBAYES_OPENCL -I inst/include bench/smoke.cpp -lOpenCL
// Lists the devices, round-trips a full and a packed triangular matrix,
// runs a support kernel, and prints OK (exit status 0) or what failed.

#include <clbayes/linalg/arithmetic.hpp>
#include <clbayes/opencl.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace clbayes::opencl;

int main() {
  try {
    for (const device_info& d : context::instance().devices())
      std::printf("platform %d device %d: %s (%s, fp64 %s)\n", d.platform,
                  d.device, d.name.c_str(), d.type.c_str(), d.fp64 ? "yes" : "no");
    if (!context::instance().selected()) {
      std::printf("no OpenCL device with double precision\n");
      return 1;
    }
    std::printf("selected: %s\n", context::instance().info().name.c_str());
    const int n = 37;
    std::vector<double> a(n * n), back(n * n);
    for (int k = 0; k < n * n; ++k) a[k] = std::sin(k + 1.0);

    matrix_cl m = to_matrix_cl(a.data(), n, n);
    from_matrix_cl(m, back.data());
    double err = 0;
    for (int k = 0; k < n * n; ++k) err = std::fmax(err, std::fabs(a[k] - back[k]));

    matrix_cl l = to_matrix_cl(a.data(), n, n, clbayes::matrix_view::lower);
    from_matrix_cl(l, back.data());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        err = std::fmax(err, std::fabs((i >= j ? a[j * n + i] : 0.0) - back[j * n + i]));

    matrix_cl s = add(m, scalar_multiply(m, 2.0));  // 3 a
    from_matrix_cl(s, back.data());
    for (int k = 0; k < n * n; ++k) err = std::fmax(err, std::fabs(3 * a[k] - back[k]));

    std::printf("max abs error %.3g\n", err);
    if (err > 1e-12) {
      std::printf("FAILED\n");
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
