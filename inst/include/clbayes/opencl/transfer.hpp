#ifndef CLBAYES_OPENCL_TRANSFER_HPP
#define CLBAYES_OPENCL_TRANSFER_HPP

// Moving matrices between host memory (column-major doubles, as R and Eigen
// store them) and the device. Triangular views travel packed: only the
// n (n + 1) / 2 values of the triangle cross the bus, and the pack / unpack
// kernels reshape them on the device (stan-opencl.txt, section 2.2).

#include "../kernels/pack.hpp"
#include "matrix_cl.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** Number of values in a packed n x n triangle. */
inline long long packed_size(int n) {
  return static_cast<long long>(n) * (n + 1) / 2;
}

/** Pack the triangle `view` of the n x n column-major host matrix a: one
 *  contiguous copy per column. */
inline std::vector<double> pack_host(const double* a, int n, matrix_view view) {
  std::vector<double> packed(static_cast<std::size_t>(packed_size(n)));
  double* out = packed.data();
  for (int j = 0; j < n; ++j) {
    const int lo = view == matrix_view::lower ? j : 0;
    const int hi = view == matrix_view::lower ? n : j + 1;
    const double* col = a + static_cast<std::size_t>(j) * n;
    out = std::copy(col + lo, col + hi, out);
  }
  return packed;
}

/** Unpack into the n x n host matrix a, zeros outside the triangle: one
 *  contiguous copy and one fill per column. */
inline void unpack_host(const std::vector<double>& packed, int n,
                        matrix_view view, double* a) {
  const double* in = packed.data();
  for (int j = 0; j < n; ++j) {
    double* col = a + static_cast<std::size_t>(j) * n;
    const int lo = view == matrix_view::lower ? j : 0;
    const int hi = view == matrix_view::lower ? n : j + 1;
    std::fill(col, col + lo, 0.0);
    std::copy(in, in + (hi - lo), col + lo);
    std::fill(col + hi, col + n, 0.0);
    in += hi - lo;
  }
}

namespace internal {

inline cl::Buffer device_buffer(std::size_t count, const char* what) {
  try {
    return cl::Buffer(context::instance().cl_context(), CL_MEM_READ_WRITE,
                      sizeof(double) * count);
  } catch (const cl::Error& e) {
    throw cl_failure(std::string("allocating ") + what + " (" +
                         format_bytes(sizeof(double) * static_cast<double>(count)) + ")",
                     e.err());
  }
}

}  // namespace internal

/** Copy the rows x cols host matrix a to a new device matrix with `view`;
 *  a triangular view is transferred packed and the other triangle is zero. */
inline matrix_cl to_matrix_cl(const double* a, int rows, int cols,
                              matrix_view view = matrix_view::entire) {
  matrix_cl m(rows, cols, view);
  if (m.size() == 0) return m;
  cl::CommandQueue& q = context::instance().queue();
  try {
    if (view == matrix_view::entire) {
      q.enqueueWriteBuffer(m.buffer(), CL_TRUE, 0, sizeof(double) * m.size(), a);
      return m;
    }
    std::vector<double> packed = pack_host(a, rows, view);
    matrix_cl staging(static_cast<int>(packed.size()), 1);
    q.enqueueWriteBuffer(staging.buffer(), CL_TRUE, 0,
                         sizeof(double) * packed.size(), packed.data());
    kernels::unpack(cl::NDRange(rows, rows), m, staging, rows,
                    view == matrix_view::lower ? 1 : 0);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a matrix to the device",
                       e.err());
  }
  return m;
}

/** Asks Linux to back the whole 2 MB pages of [p, p + bytes) with
 *  transparent huge pages; a hint, without effect elsewhere or where they
 *  are off. Each result R hands over is fresh memory, mapped page by page
 *  as it is first written: in 4 KB pages the faults can cost more than the
 *  copy itself (a first write of 512 MB took 0.87-0.91 s on the 2-core
 *  development VM, 33-56 ms once mapped; RESULTS.md, "Dense linear algebra defaults"). */
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const std::uintptr_t huge = std::uintptr_t(2) << 20;
  const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // errors: no hint
#else
  (void)p;
  (void)bytes;
#endif
}

/** Copy every element of the device matrix m (the zeros outside a
 *  triangular view included: matrix_cl keeps them in the buffer) into the
 *  host array a (rows * cols doubles), waiting for every pending write to
 *  m first. */
inline void from_matrix_cl_whole(const matrix_cl& m, double* a) {
  if (m.size() == 0) return;
  m.check_device("x");
  advise_huge_pages(a, sizeof(double) * static_cast<std::size_t>(m.size()));
  try {
    std::vector<cl::Event> waits = m.write_events();
    cl::Event ev;
    context::instance().queue().enqueueReadBuffer(m.buffer(), CL_FALSE, 0,
                                                  sizeof(double) * m.size(), a,
                                                  waits.empty() ? nullptr : &waits, &ev);
    ev.wait();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a matrix from the device",
                       e.err());
  }
}

/** Copy the device matrix m into the host array a (rows * cols doubles),
 *  waiting for every pending write to m first; a triangular view crosses
 *  the bus packed. */
inline void from_matrix_cl(const matrix_cl& m, double* a) {
  if (m.size() == 0) return;
  if (m.view() == matrix_view::entire) return from_matrix_cl_whole(m, a);
  m.check_device("x");
  cl::CommandQueue& q = context::instance().queue();
  try {
    const int n = m.rows();
    matrix_cl staging(static_cast<int>(packed_size(n)), 1);
    kernels::pack(cl::NDRange(n, n), staging, m, n,
                  m.view() == matrix_view::lower ? 1 : 0);
    std::vector<double> packed(static_cast<std::size_t>(packed_size(n)));
    std::vector<cl::Event> waits = staging.write_events();
    cl::Event ev;
    q.enqueueReadBuffer(staging.buffer(), CL_FALSE, 0,
                        sizeof(double) * packed.size(), packed.data(),
                        waits.empty() ? nullptr : &waits, &ev);
    ev.wait();
    unpack_host(packed, n, m.view(), a);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a matrix from the device",
                       e.err());
  }
}

/** A device-side copy of m (same dimensions and view). */
inline matrix_cl copy(const matrix_cl& m) {
  m.check_device("x");
  matrix_cl out(m.rows(), m.cols(), m.view());
  if (m.size() == 0) return out;
  try {
    std::vector<cl::Event> waits = m.write_events();
    cl::Event ev;
    context::instance().queue().enqueueCopyBuffer(
        m.buffer(), out.buffer(), 0, 0, sizeof(double) * m.size(),
        waits.empty() ? nullptr : &waits, &ev);
    m.add_read_event(ev);
    out.add_write_event(ev);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a device matrix", e.err());
  }
  return out;
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
