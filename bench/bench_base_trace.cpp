// Where a base of the device Cholesky (kernels/cholesky_base.hpp) spends
// its time, step by step. The kernel's source gets a time stamp (NVIDIA's
// %globaltimer, in ns, one clock for the whole device) at each event of
// each work group and step; the base then factors the leading columns of
// a panel-sized block alone on the device, and a table shows, for each
// step s, the chain from leaf s to leaf s + 1: the leaf group reading its
// diagonal tile, the elimination, its stores and word, the next group
// waking, solving its rows and adding them to its diagonal tile's update,
// and when the next group's and the last group's updates were done.
// Also checks the factored columns against a host Cholesky. On devices
// other than NVIDIA's the stamps are zero: only the times and the check.
//   bench_base_trace [--n N] [--base B] [--k K] [--leaf-t T] [--reps R]
// (defaults: a 1024 x 1024 block, a base of 128 columns at
// k = 0, 32 items per row, 200 launches). The stamps are spliced in at
// lines of the kernel's source; a changed line stops it with the line.

#include <clbayes/kernels/cholesky_base.hpp>
#include <clbayes/linalg/settings.hpp>

#include "cli.hpp"
#include "linalg_tune.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const int max_groups = 64, max_steps = 64, events = 10;
enum event {
  entry,          // the group starts
  solved_word,    // step s: group s has solved its rows (word 2c + 1)
  leaf_word,      // step s: leaf s is out (word 2c + 2)
  solved,         // step s: this group's rows solved and stored
  step_end,       // step s: its diagonal tile's update (dacc) added
  leaf_loaded,    // its leaf: the diagonal tile read
  leaf_enter,     // its leaf: the step loop reached it
  leaf_done,      // its leaf: the elimination done
  leaf_out,       // its leaf: L and L^{-1} stored, before the word
  updated         // step s: this group's rows updated
};

void splice(std::string& s, const std::string& line, const std::string& text, bool after) {
  const auto p = s.find(line);
  if (p == std::string::npos) throw std::runtime_error("the kernel has no line '" + line + "'");
  s.insert(after ? p + line.size() : p, text);
}

std::string traced_source() {
  std::string s = clbayes::opencl::kernels::cholesky_base_source;
  const std::string signature = "__global int* flag, __global int* sync)";
  splice(s, signature, "", true);  // fails early if the signature changed
  s.replace(s.find(signature), signature.size(),
            "__global int* flag, __global int* sync, __global ulong* trace)");
  s = "#if NV_PTX\n#define STAMP(x) asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(x))\n"
      "#else\n#define STAMP(x) x = 0\n#endif\n"
      "#define TR(s_, e_) if (get_local_id(0) == 0 && get_local_id(1) == 0) { ulong tt_; "
      "STAMP(tt_); trace[((g) * " + std::to_string(max_steps) + " + (s_)) * " +
      std::to_string(events) + " + (e_)] = tt_; }\n" + s;
  // TR(step, event) at each place, in the variables of the kernel
  auto tr = [](const char* step, event e) {
    return std::string("TR(") + step + ", " + std::to_string(static_cast<int>(e)) + ");";
  };
  splice(s, "for (int s = 0; s < DACC; ++s) dacc[s] = 0.0;", " " + tr("0", entry), true);
  splice(s, "    if (g == st) {", "    if (g == st) " + tr("st", leaf_enter) + "\n", false);
  splice(s, "if (kk > 0 && !group_wait(sync, 2 * c + 1, &state)) return;", " " + tr("st", solved_word),
         true);
  splice(s, "T[i][cc] += acc[s];", " " + tr("st", updated), true);
  splice(s, "T[i][t] -= Ra[i][t] + Rb[i][t];", " " + tr("st", updated), true);  // MMA
  splice(s, "if (!group_wait(sync, 2 * c + 2, &state)) return;", " " + tr("st", leaf_word), true);
  splice(s, "    // the next step's update reads these rows", "    " + tr("st", solved) + "\n", false);
  const std::string step_tail = "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n  if (g >= steps_all) return;";
  splice(s, step_tail, "    barrier(CLK_LOCAL_MEM_FENCE);\n    " + tr("st", step_end) + "\n", false);
  s.erase(s.find(step_tail), std::strlen("    barrier(CLK_LOCAL_MEM_FENCE);\n"));
  splice(s, "  const int c = r0;\n  const int b = min(IB, k + bw - c);", "  " + tr("g", leaf_loaded) + "\n",
         false);
  splice(s, "  if (bad < b) {", "  " + tr("g", leaf_done) + "\n", false);
  splice(s, "  if (i == 0 && t == 0) publish(sync, 2 * c + 2);\n}", "  " + tr("g", leaf_out) + "\n", false);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1024, base = 128, k = 0, leaf_t = 32, reps = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    int* target = a == "--n" ? &n : a == "--base" ? &base : a == "--k" ? &k
                : a == "--leaf-t" ? &leaf_t : a == "--reps" ? &reps : nullptr;
    if (!target) {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
    *target = std::atoi(option_value(i, argc, argv));
  }
  const int ib = 32, groups = (n - k) / ib;
  if (n % ib || k % ib || base % ib || base < ib || k < 0 || k + base > n || groups > max_groups ||
      base / ib > max_steps || leaf_t < 1 || reps < 1) {
    std::fprintf(stderr, "need n, k and base multiples of 32, base >= 32, k + base <= n, "
                 "(n - k) / 32 <= %d\n", max_groups);
    return 2;
  }
  try {
    auto& cc = clbayes::opencl::context::instance();
    cl::Device dev = cc.device();
    cl::Context ctx = cc.cl_context();
    const bool nv = cc.info().nv_compute_capability > 0;
    const bool mma = clbayes::linalg::tuned_settings(cc.info()).gemm.tensor_cores && leaf_t == 32;
    // A = B B^T / n + I (B standard normal), its factor L; the block as
    // the base finds it: the columns left of k factored, the rest updated
    // by them (the Schur complement).
    const Eigen::MatrixXd B = random_matrix(n, n, 1);
    const Eigen::MatrixXd A = B * B.transpose() / n + Eigen::MatrixXd::Identity(n, n);
    const Eigen::MatrixXd L = A.llt().matrixL();
    Eigen::MatrixXd start = A;
    start.leftCols(k) = L.leftCols(k);
    start.bottomRightCorner(n - k, n - k) -=
        L.bottomLeftCorner(n - k, k) * L.bottomLeftCorner(n - k, k).transpose();
    cl::Program prog(ctx, traced_source());
    const std::string opts = "-D CHOLESKY_BLOCK=" + std::to_string(ib) + " -D LEAF_T=" +
                             std::to_string(leaf_t) + " -D NV_PTX=" + (nv ? "1" : "0") +
                             " -D MMA=" + (mma ? "1" : "0");
    try {
      prog.build({dev}, opts.c_str());
    } catch (const cl::Error&) {
      std::fprintf(stderr, "build failed:\n%s\n", prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
      return 1;
    }
    const std::size_t bytes = sizeof(double) * n * n, stamps = max_groups * max_steps * events;
    cl::CommandQueue q(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
    cl::Buffer d_a(ctx, CL_MEM_READ_WRITE, bytes), inv(ctx, CL_MEM_READ_WRITE, sizeof(double) * ib * base),
        flag(ctx, CL_MEM_READ_WRITE, sizeof(int)), sync(ctx, CL_MEM_READ_WRITE, sizeof(int)),
        trace(ctx, CL_MEM_READ_WRITE, sizeof(cl_ulong) * stamps);
    cl::Kernel kernel(prog, "cholesky_base");
    int arg = 0;
    kernel.setArg(arg++, d_a);
    kernel.setArg(arg++, n);
    kernel.setArg(arg++, k);
    kernel.setArg(arg++, base);
    kernel.setArg(arg++, n);
    kernel.setArg(arg++, inv);
    kernel.setArg(arg++, ib);
    kernel.setArg(arg++, flag);
    kernel.setArg(arg++, sync);
    kernel.setArg(arg++, trace);
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      q.enqueueWriteBuffer(d_a, CL_FALSE, 0, bytes, start.data());
      q.enqueueFillBuffer(flag, 0, 0, sizeof(int));
      q.enqueueFillBuffer(sync, 0, 0, sizeof(int));
      q.enqueueFillBuffer(trace, cl_ulong(0), 0, sizeof(cl_ulong) * stamps);
      cl::Event e;
      q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(groups * ib, leaf_t),
                             cl::NDRange(ib, leaf_t), nullptr, &e);
      q.finish();
      times.push_back((e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                       e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) / 1e3);
    }
    std::vector<cl_ulong> t(stamps);
    Eigen::MatrixXd out(n, n);
    q.enqueueReadBuffer(trace, CL_TRUE, 0, sizeof(cl_ulong) * stamps, t.data());
    q.enqueueReadBuffer(d_a, CL_TRUE, 0, bytes, out.data());
    double err = 0.0;  // the base's columns, on and below the diagonal
    for (int j = k; j < k + base; ++j)
      err = std::max(err, max_abs((out.col(j) - L.col(j)).tail(n - j)));
    std::printf("device: %s\nbase of %d columns at k = %d of a %d x %d block, %d groups of %d x %d "
                "items: kernel %.1f us (median of %d launches), largest error against the host %.1e\n",
                dev.getInfo<CL_DEVICE_NAME>().c_str(), base, k, n, n, groups, ib, leaf_t,
                median(times), reps, err);
    if (!nv) return err < 1e-12 ? 0 : 1;
    // Times of the last launch, in us; the chain of step s runs from
    // leaf s entering to leaf s + 1 entering.
    auto at = [&](int g, int s, event e) {
      return static_cast<double>(t[(static_cast<std::size_t>(g) * max_steps + s) * events + e]) / 1e3;
    };
    double t0 = at(0, 0, entry), last_entry = t0;
    for (int g = 0; g < groups; ++g) {
      t0 = std::min(t0, at(g, 0, entry));
      last_entry = std::max(last_entry, at(g, 0, entry));
    }
    std::printf("groups entered within %.2f us; times in us (the stamps tick every 0.26 us or so)\n\n",
                last_entry - t0);
    std::printf("| step | leaf enters | reads its tile | eliminates | stores, word | group s + 1 wakes | "
                "solves | adds to dacc | to its leaf | s + 1 updated, after the tile read | "
                "last group updated, after it |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    const int steps = base / ib;
    for (int s = 0; s < steps; ++s) {
      const double enter = at(s, s, leaf_enter), loaded = at(s, s, leaf_loaded);
      const double done = at(s, s, leaf_done), out_at = at(s, s, leaf_out);
      std::printf("| %d | %.2f | %.2f | %.2f | %.2f |", s, enter - t0, loaded - enter, done - loaded,
                  out_at - done);
      const int g = s + 1;
      if (g < groups) {
        char to_leaf[16] = "";
        if (g < steps)
          std::snprintf(to_leaf, sizeof to_leaf, "%.2f", at(g, g, leaf_enter) - at(g, s, step_end));
        std::printf(" %.2f | %.2f | %.2f | %s | %.2f | %.2f |\n", at(g, s, leaf_word) - out_at,
                    at(g, s, solved) - at(g, s, leaf_word), at(g, s, step_end) - at(g, s, solved),
                    to_leaf, at(g, s, updated) - loaded, at(groups - 1, s, updated) - loaded);
      } else {
        std::printf(" | | | | | |\n");
      }
    }
    return err < 1e-12 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
