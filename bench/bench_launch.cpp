// The floor of a launch on the device's in-order queue: what a chain of
// dependent small launches (the Cholesky panel's leaf, solve and update
// kernels) costs whatever the kernels compute. Times N launches of a
// kernel that does (almost) nothing, one work group of G items, back to
// back on one in-order queue: the wall time per launch, and on a
// profiling queue the kernel time (START to END) and the gap between one
// launch's END and the next one's START, medians. Then the same with
// three buffer arguments, and for a chain whose launches each read the
// 64 KB the one before wrote, on one and on 16 work groups; and whether
// the device offers command buffers (cl_khr_command_buffer). Last, the
// cost of ordering two in-order queues by a marker on one and a barrier
// on the other (the Cholesky's look-ahead does this twice per panel), a
// flush, or an event in a launch's wait list: chains of launches that
// alternate between the queues, against the same chains on one queue; and
// how long the host spends in the barrier call while the marker's queue
// is busy.
//   bench_launch [N]        (default 2000)

#include <clbayes/opencl/context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char* source = R"(
__kernel void touch(__global double* x, int n) {
  // one store by one item; the rest exit at once
  if (get_global_id(0) == 0 && n < 0) x[0] = n;
}
__kernel void touch_local(__global double* x, int n) {
  __local double s[1024];
  s[get_local_id(0)] = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0 && n < 0) x[0] = s[get_local_size(0) - 1];
}
// three buffers, as the leaf and the GEMM take
__kernel void touch3(__global double* x, __global double* y, __global double* z, int n) {
  if (get_global_id(0) == 0 && n < 0) x[0] = y[0] + z[0];
}
// about n microseconds of one work item's dependent FMAs (n < 0 never)
__kernel void busy(__global double* x, int n) {
  double v = x[1];
  for (int i = 0; i < n * 400; ++i) v = fma(v, 0.999999, 1e-9);
  if (get_global_id(0) == 0 && n < 0) x[0] = v;
}
// dst = src + 1 over n doubles: a launch reads what the one before wrote
// (the launches alternate the two buffers), as the panel's chain does
__kernel void chain(__global double* dst, __global const double* src, int n) {
  for (int e = get_global_id(0); e < n; e += get_global_size(0)) dst[e] = src[e] + 1.0;
}
)";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int n = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
    // The device clbayes selects (CLBAYES_PLATFORM / CLBAYES_DEVICE), with
    // queues of its own here.
    clbayes::opencl::context& cc = clbayes::opencl::context::instance();
    cl::Device dev = cc.device();
    cl::Context ctx = cc.cl_context();
    cl::Program prog(ctx, source);
    prog.build({dev});
    cl::Buffer x(ctx, CL_MEM_READ_WRITE, sizeof(double));
    const std::size_t max_wg = dev.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
    const std::string ext = dev.getInfo<CL_DEVICE_EXTENSIONS>();
    std::printf("device: %s (%s, driver %s)\nlaunches per row: %d\n", dev.getInfo<CL_DEVICE_NAME>().c_str(),
                dev.getInfo<CL_DEVICE_VERSION>().c_str(), dev.getInfo<CL_DRIVER_VERSION>().c_str(), n);
    // Command buffers record a sequence of launches once and replay it as
    // one submission: OpenCL's counterpart of CUDA graphs.
    for (const char* e : {"cl_khr_command_buffer", "cl_khr_command_buffer_mutable_dispatch"})
      std::printf("%s: %s\n", e, ext.find(e) != std::string::npos ? "yes" : "no");
    std::printf("\n");
    std::printf("| kernel | work groups x items | wall per launch (us) | kernel time, median (us) | "
                "END to next START, median (us) |\n|---|---|---|---|---|\n");
    const int chain_n = 8192;  // doubles: a 32-column panel of 256 rows
    cl::Buffer y(ctx, CL_MEM_READ_WRITE, chain_n * sizeof(double)),
        z(ctx, CL_MEM_READ_WRITE, chain_n * sizeof(double));
    cl::CommandQueue init(ctx, dev);
    init.enqueueFillBuffer(y, 0.0, 0, chain_n * sizeof(double));
    init.enqueueFillBuffer(z, 0.0, 0, chain_n * sizeof(double));
    init.finish();
    // Launch i runs k[i % 2]: the same kernel twice, or the chain's two
    // directions.
    auto row = [&](const char* label, cl::Kernel k0, cl::Kernel k1, std::size_t groups,
                   std::size_t g) {
      const cl::NDRange global(groups * g), local(g);
      const cl::Kernel k[2] = {k0, k1};
      cl::CommandQueue q(ctx, dev);
      for (int i = 0; i < 50; ++i) q.enqueueNDRangeKernel(k[i % 2], cl::NullRange, global, local);
      q.finish();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) q.enqueueNDRangeKernel(k[i % 2], cl::NullRange, global, local);
      q.finish();
      const double wall =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
      cl::CommandQueue pq(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
      std::vector<cl::Event> ev(n);
      for (int i = 0; i < n; ++i)
        pq.enqueueNDRangeKernel(k[i % 2], cl::NullRange, global, local, nullptr, &ev[i]);
      pq.finish();
      std::vector<double> run, gap;
      for (int i = 0; i < n; ++i) {
        const double s = ev[i].getProfilingInfo<CL_PROFILING_COMMAND_START>();
        const double e = ev[i].getProfilingInfo<CL_PROFILING_COMMAND_END>();
        run.push_back((e - s) / 1e3);
        if (i > 0) gap.push_back((s - ev[i - 1].getProfilingInfo<CL_PROFILING_COMMAND_END>()) / 1e3);
      }
      std::printf("| %s | %zu x %zu | %.2f | %.2f | %.2f |\n", label, groups, g, wall,
                  median(run), median(gap));
    };
    for (const char* name : {"touch", "touch_local"})
      for (std::size_t g : {std::size_t(32), std::size_t(256), std::size_t(1024)}) {
        if (g > max_wg) continue;
        cl::Kernel k(prog, name);
        k.setArg(0, x);
        k.setArg(1, 1);
        row(name, k, k, 1, g);
      }
    const std::size_t g = std::min<std::size_t>(256, max_wg);
    cl::Kernel k3(prog, "touch3");
    k3.setArg(0, x);
    k3.setArg(1, y);
    k3.setArg(2, z);
    k3.setArg(3, 1);
    row("touch3 (three buffers)", k3, k3, 1, g);
    cl::Kernel yz(prog, "chain"), zy(prog, "chain");
    yz.setArg(0, y);
    yz.setArg(1, z);
    yz.setArg(2, chain_n);
    zy.setArg(0, z);
    zy.setArg(1, y);
    zy.setArg(2, chain_n);
    for (std::size_t groups : {std::size_t(1), std::size_t(16)})
      row("chain (reads the last launch's 64 KB)", yz, zy, groups, g);
    // Two queues, each launch waiting for the one before on the other queue.
    cl::Kernel t1(prog, "touch");
    t1.setArg(0, x);
    t1.setArg(1, 1);
    cl::CommandQueue qa(ctx, dev), qb(ctx, dev);
    // How launch i + 1 is ordered after launch i: by a marker alone (one
    // queue only), a marker and a barrier, the same and a flush, or the
    // event of launch i in its wait list.
    enum class order { marker, barrier, barrier_flush, wait_list };
    auto hop_chain = [&](bool two, order how, int m) {
      cl::CommandQueue* q[2] = {&qa, two ? &qb : &qa};
      cl::Event last;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < m; ++i) {
        cl::CommandQueue& from = *q[i % 2];
        cl::CommandQueue& to = *q[(i + 1) % 2];
        std::vector<cl::Event> after;
        if (how == order::wait_list && i > 0) after.push_back(last);
        from.enqueueNDRangeKernel(t1, cl::NullRange, cl::NDRange(32), cl::NDRange(32),
                                  after.empty() ? nullptr : &after, &last);
        if (how == order::wait_list) continue;
        cl::Event e;
        from.enqueueMarkerWithWaitList(nullptr, &e);
        std::vector<cl::Event> w{e};
        if (how != order::marker) to.enqueueBarrierWithWaitList(&w);
        if (how == order::barrier_flush) from.flush();
      }
      const double enq =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      qa.finish();
      qb.finish();
      const double all =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      return std::make_pair(enq / m, all / m);
    };
    hop_chain(true, order::barrier_flush, 50);
    const int m = std::max(10, n / 4);
    std::printf("\n| chain of %d launches, each ordered after the one before by | queues | host "
                "enqueue per launch (us) | wall per launch (us) |\n|---|---|---|---|\n", m);
    const struct {
      order how;
      const char* name;
    } orders[] = {{order::marker, "a marker"},
                  {order::barrier, "a marker and a barrier"},
                  {order::barrier_flush, "a marker, a barrier and a flush"},
                  {order::wait_list, "its event in the wait list"}};
    for (const auto& o : orders)
      for (bool two : {false, true}) {
        if (two && o.how == order::marker) continue;  // a marker alone orders nothing across
        const auto r = hop_chain(two, o.how, m);
        std::printf("| %s | %s | %.2f | %.2f |\n", o.name, two ? "two, alternating" : "one",
                    r.first, r.second);
      }
    // The barrier call on queue b while queue a runs about 20 ms of work.
    cl::Kernel busy(prog, "busy");
    busy.setArg(0, y);
    busy.setArg(1, 20000);
    qa.enqueueNDRangeKernel(busy, cl::NullRange, cl::NDRange(1), cl::NDRange(1));
    cl::Event e;
    qa.enqueueMarkerWithWaitList(nullptr, &e);
    qa.flush();
    std::vector<cl::Event> w{e};
    const auto t0 = std::chrono::steady_clock::now();
    qb.enqueueBarrierWithWaitList(&w);
    qb.enqueueNDRangeKernel(t1, cl::NullRange, cl::NDRange(32), cl::NDRange(32));
    const double call =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    qb.finish();
    const double all =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("\nbarrier + launch on queue b behind 20 ms on queue a: %.3f ms in the calls, %.3f ms "
                "to finish\n", call, all);
  } catch (const cl::Error& e) {
    std::fprintf(stderr, "bench_launch: %s (%d)\n", e.what(), e.err());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_launch: %s\n", e.what());
    return 1;
  }
  return 0;
}
