// What bounds the streamed host Cholesky (linalg/cholesky_host.hpp): the
// bus, the host copies through the pinned staging, or the two directions
// sharing host memory. For an n x n matrix of doubles, times (median of
// --reps, ms) and rates (GB/s):
//   DMA up / down / both  the bus alone: chunks written from (read into) a
//                         pinned buffer, no host copy; "both" runs the two
//                         directions at once on the transfer and download
//                         queues, as the streamed Cholesky does
//   host copy             a copy_team's copy of the matrix from pageable memory
//                         into the pinned staging, chunk by chunk, no bus
//   stream up / down      pinned_stream: host copy and DMA overlapped, from
//                         (into) a written pageable array
//   stream both           the two at once from two host threads
//   streamed Cholesky     cholesky_host into a written array; the same
//                         into page-locked memory (L straight from the
//                         device), and from and into it (A too, as torch's
//                         pinned copy + factor + copy starts); the time to
//                         page-lock that many bytes; the device factor
//                         alone, for reference, and in the streamed
//                         path's order (left-looking) without transfers
// --timeline: the device's kernels during one streamed factorisation from
// and into page-locked memory (when each block column arrived and was
// updated, and how much of the time the device computed).
// Run: ./bench_transfer [--reps R] [--pinned-chunk-kb K] [--pinned-threads T]
//        [--host-block B] [--timeline] [n ...]
// (default n: 8192 16384).

#include "cli.hpp"

#include <clbayes/linalg/cholesky_host.hpp>
#include <clbayes/opencl.hpp>
#include <clbayes/opencl/pinned_transfer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace cl_ops = clbayes::opencl;
namespace la = clbayes::linalg;

namespace {

double time_ms(int reps, const std::function<void()>& f) {
  f();  // warm up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Every chunk of `bytes` between buf and the pinned pair on queue q, no host copy.
void dma(cl::CommandQueue& q, const cl::Buffer& buf, cl_ops::internal::pinned_pair& pins,
         std::size_t chunk, std::size_t bytes, bool up) {
  int s = 0;
  for (std::size_t done = 0; done < bytes; done += chunk, s ^= 1) {
    const std::size_t part = std::min(chunk, bytes - done);
    if (up)
      q.enqueueWriteBuffer(buf, CL_FALSE, done, part, pins.ptr(s));
    else
      q.enqueueReadBuffer(buf, CL_FALSE, done, part, pins.ptr(s));
  }
  q.finish();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int reps = 5;
  bool timeline = false;
  cl_ops::pinned_tuning pin;
  int host_block = 0;  // 0: the device's settings
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps") reps = std::max(1, std::atoi(option_value(i, argc, argv)));
    else if (a == "--pinned-chunk-kb")
      pin.chunk_bytes = std::size_t(std::max(1, std::atoi(option_value(i, argc, argv)))) << 10;
    else if (a == "--pinned-threads") pin.threads = std::atoi(option_value(i, argc, argv));
    else if (a == "--host-block") host_block = std::max(1, std::atoi(option_value(i, argc, argv)));
    else if (a == "--timeline") timeline = true;
    else sizes.push_back(std::atoi(a.c_str()));
  }
  if (sizes.empty()) sizes = {8192, 16384};
  try {
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    std::printf("device: %s (%s); chunk %zu KB, threads %d (0: up to 8), host threads %u, "
                "host block %d\n\n",
                ctx.info().name.c_str(), ctx.info().platform_name.c_str(), pin.chunk_bytes >> 10,
                pin.threads, std::thread::hardware_concurrency(),
                host_block > 0 ? host_block : la::tuned_settings().cholesky.host_block);
    std::printf("| n | MB | DMA up | DMA down | DMA both | host copy | stream up | stream down | "
                "stream both | streamed Cholesky | the same, L page-locked | A and L page-locked | "
                "page-locking the matrix's bytes | device Cholesky | its left-looking order |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int n : sizes) {
      const std::size_t count = static_cast<std::size_t>(n) * n, bytes = sizeof(double) * count;
      std::vector<double> a(count), out(count, 0.0);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          a[static_cast<std::size_t>(j) * n + i] = i == j ? double(n) * n : double(n - std::abs(i - j));
      cl_ops::matrix_cl up_dev(n, n), down_dev(n, n);
      cl_ops::internal::pinned_pair up_pins(pin.chunk_bytes), down_pins(pin.chunk_bytes);
      cl::CommandQueue& tq = ctx.transfer_queue();
      cl::CommandQueue& dq = ctx.download_queue();
      const double dma_up = time_ms(reps, [&] { dma(tq, up_dev.buffer(), up_pins, pin.chunk_bytes, bytes, true); });
      const double dma_down = time_ms(reps, [&] { dma(dq, down_dev.buffer(), down_pins, pin.chunk_bytes, bytes, false); });
      const double dma_both = time_ms(reps, [&] {
        std::thread t([&] { dma(dq, down_dev.buffer(), down_pins, pin.chunk_bytes, bytes, false); });
        dma(tq, up_dev.buffer(), up_pins, pin.chunk_bytes, bytes, true);
        t.join();
      });
      cl_ops::internal::copy_team team(pin.threads);
      const double host_copy = time_ms(reps, [&] {
        const char* src = reinterpret_cast<const char*>(a.data());
        int s = 0;
        for (std::size_t done = 0; done < bytes; done += pin.chunk_bytes, s ^= 1)
          team.copy(up_pins.ptr(s), src + done, std::min(pin.chunk_bytes, bytes - done));
      });
      auto stream_up = [&] {
        cl_ops::internal::pinned_stream st(tq, pin);
        st.write(up_dev.buffer(), 0, reinterpret_cast<const char*>(a.data()), bytes);
        tq.finish();
      };
      auto stream_down = [&] {
        cl_ops::internal::pinned_stream st(dq, pin, cl_ops::internal::staging_use::download);
        st.read(down_dev.buffer(), 0, reinterpret_cast<char*>(out.data()), bytes);
      };
      stream_up();  // both streams copy every byte
      stream_down();
      std::vector<double> back(count);
      cl_ops::internal::pinned_stream check(dq, pin, cl_ops::internal::staging_use::download);
      check.read(up_dev.buffer(), 0, reinterpret_cast<char*>(back.data()), bytes);
      if (back != a) throw std::runtime_error("the stream up lost bytes");
      std::vector<double> direct(count);
      dq.enqueueReadBuffer(down_dev.buffer(), CL_TRUE, 0, bytes, direct.data());
      if (direct != out) throw std::runtime_error("the stream down lost bytes");
      const double t_up = time_ms(reps, stream_up);
      const double t_down = time_ms(reps, stream_down);
      const double t_both = time_ms(reps, [&] {
        std::thread t(stream_down);
        stream_up();
        t.join();
      });
      la::linalg_settings s = la::tuned_settings();
      if (host_block > 0) s.cholesky.host_block = host_block;
      const double t_chol = time_ms(reps, [&] {
        la::cholesky_host(a.data(), n, n, false, out.data(), s, pin);
      });
      // The same with L into page-locked memory, and with A there too (as
      // torch's pinned copy-factor-copy starts), straight over the bus.
      cl_ops::page_locked_buffer locked_in(bytes), locked_out(bytes);
      std::memcpy(locked_in.data(), a.data(), bytes);
      double* lout = reinterpret_cast<double*>(locked_out.data());
      cl_ops::pinned_tuning pin_out = pin, pin_both = pin;
      pin_out.destination_page_locked = pin_both.destination_page_locked = true;
      pin_both.source_page_locked = true;
      la::cholesky_host(a.data(), n, n, false, out.data(), s, pin);
      la::cholesky_host(a.data(), n, n, false, lout, s, pin_out);
      if (!std::equal(lout, lout + count, out.data())) throw std::runtime_error("L differs (page-locked out)");
      std::fill(lout, lout + count, 0.0);
      la::cholesky_host(reinterpret_cast<const double*>(locked_in.data()), n, n, false, lout, s, pin_both);
      if (!std::equal(lout, lout + count, out.data())) throw std::runtime_error("L differs (page-locked in and out)");
      const double t_chol_out = time_ms(reps, [&] { la::cholesky_host(a.data(), n, n, false, lout, s, pin_out); });
      const double t_chol_both = time_ms(reps, [&] {
        la::cholesky_host(reinterpret_cast<const double*>(locked_in.data()), n, n, false, lout, s, pin_both);
      });
      // The streamed path's schedule (left-looking) alone, on the device.
      const la::internal::schedule_shape sh = la::internal::shape_for(s, n, s.cholesky.host_block);
      const cl::Buffer flag = la::internal::new_flags();
      cl_ops::matrix_cl w(n, n);
      const double t_left = time_ms(reps, [&] {  // with a device copy of A (0.2 ms at 8192)
        ctx.queue().enqueueCopyBuffer(up_dev.buffer(), w.buffer(), 0, 0, bytes);
        la::internal::cholesky_left_looking(w, sh, flag, s, nullptr, nullptr);
        ctx.finish_all();
      });
      if (cl_ops::read_flags(flag, 3, ctx.queue())[0] != 0) throw std::runtime_error("left-looking: not PD");
      if (timeline) {  // device timeline of one streamed factorisation, A and L page-locked
        ctx.set_profiling(true);
        std::vector<cl_ops::launch_record> rec;
        cl_ops::profile_sink() = &rec;
        // Device clock against the host's: a marker that has just completed.
        cl::Event mark;
        ctx.queue().enqueueMarkerWithWaitList(nullptr, &mark);
        mark.wait();
        const auto h_mark = std::chrono::steady_clock::now();
        const double d_mark = mark.getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-6;
        la::cholesky_host(reinterpret_cast<const double*>(locked_in.data()), n, n, false, lout, s, pin_both);
        const double h_return =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h_mark).count();
        cl_ops::profile_sink() = nullptr;
        std::vector<std::pair<double, double>> busy;
        std::vector<std::string> marks;
        double t0 = 1e300;
        for (const auto& r : rec) t0 = std::min(t0, r.event.getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-6);
        for (const auto& r : rec) {
          const double b0 = r.event.getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-6 - t0;
          const double b1 = r.event.getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-6 - t0;
          busy.push_back({b0, b1});
          const std::string ph = r.phase;
          if (ph == "arrival" || ph == "left-looking update")
            marks.push_back(ph + " " + std::to_string(b0).substr(0, 6) + "-" + std::to_string(b1).substr(0, 6));
        }
        std::sort(busy.begin(), busy.end());
        double covered = 0, from = 0, to = 0;  // the union of the kernels' intervals
        for (const auto& b : busy) {
          if (b.first > to) {
            covered += to - from;
            from = b.first;
          }
          to = std::max(to, b.second);
        }
        covered += to - from;
        std::printf("timeline n = %d: %zu kernels, device busy %.2f of %.2f ms from the first kernel; "
                    "from the call: first kernel at %.2f ms, last kernel ends at %.2f, the call returns at %.2f\n",
                    n, rec.size(), covered, to, t0 - d_mark, t0 - d_mark + to, h_return);
        for (const auto& m : marks) std::printf("  %s\n", m.c_str());
        ctx.set_profiling(false);  // new queues: tq and dq are gone
      }
      const double t_lock = time_ms(std::min(reps, 3), [&] { cl_ops::page_locked_buffer b(bytes); });
      const double t_dev = time_ms(reps, [&] {
        cl_ops::matrix_cl l = la::cholesky(up_dev, s);
        ctx.finish_all();
      });
      auto rate = [&](double ms) { return bytes / ms / 1e6; };
      std::printf("| %d | %.0f | %.2f (%.1f) | %.2f (%.1f) | %.2f (%.1f) | %.2f (%.1f) | %.2f (%.1f) "
                  "| %.2f (%.1f) | %.2f (%.1f) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                  n, bytes / 1e6, dma_up, rate(dma_up), dma_down, rate(dma_down), dma_both,
                  rate(dma_both), host_copy, rate(host_copy), t_up, rate(t_up), t_down,
                  rate(t_down), t_both, rate(t_both), t_chol, t_chol_out, t_chol_both, t_lock, t_dev, t_left);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_transfer: %s\n", e.what());
    return 1;
  }
  return 0;
}
