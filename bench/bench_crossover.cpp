// Where backend = "auto" should switch to the device: for gpu_chol(),
// gpu_chol_grad(), gpu_tri_inv(), gpu_tri_solve() and gpu_tcrossprod() on
// an R matrix, the CPU path (Eigen, with OpenMP as the package builds it)
// against the device path with its copies in and out (the staged copies of
// opencl/pinned_transfer.hpp, which src/glue.hpp makes; for gpu_chol() the
// streamed copies of linalg/cholesky_host.hpp), at growing n. The
// clbayes.threshold.* defaults (R/chol.R, R/linalg.R) are the "device from"
// column measured on the GPU machine.
//
//   ./bench_crossover [--reps R] [--routine NAME] [n ...]
//   (default n: 32 ... 2048; NAME: the routines whose name starts with it)
//
// Each device result is checked against the CPU result before it is timed.

#include "linalg_tune.hpp"

#include <clbayes/linalg/cholesky_host.hpp>
#include <clbayes/linalg/tri_inverse.hpp>
#include <clbayes/opencl/pinned_transfer.hpp>

namespace {

using host_fn = std::function<Eigen::MatrixXd(const Eigen::MatrixXd&, const Eigen::MatrixXd&)>;
using device_fn = std::function<matrix_cl(const matrix_cl&, const matrix_cl&)>;

struct routine {
  const char* name;
  // The inputs at order n (y empty for one-argument routines).
  std::function<std::pair<Eigen::MatrixXd, Eigen::MatrixXd>(int)> inputs;
  // The CPU path, as the glue runs it, and the device work on device
  // copies of the inputs; or, where the glue does not copy in, compute and
  // copy out (gpu_chol(): linalg/cholesky_host.hpp), the whole device path
  // from host to host.
  host_fn cpu;
  device_fn device;
  host_fn host_to_host = nullptr;
};

// The device result of f applied to device copies of the host inputs, read
// back as the R glue reads it.
Eigen::MatrixXd staged(const device_fn& f, const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
  const matrix_cl dx = cl_ops::to_matrix_cl_staged(x.data(), int(x.rows()), int(x.cols()));
  const matrix_cl dy = y.size() ? cl_ops::to_matrix_cl_staged(y.data(), int(y.rows()), int(y.cols()))
                                : matrix_cl();
  const matrix_cl r = f(dx, dy);
  Eigen::MatrixXd out(r.rows(), r.cols());
  cl_ops::from_matrix_cl_staged(r, out.data());
  return out;
}

Eigen::MatrixXd random_lower(int n, unsigned seed) {
  return random_matrix(n, n, seed).triangularView<Eigen::Lower>();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int reps = 7;
  std::string only;  // one routine by its name's first word (e.g. tri_solve)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--routine" && i + 1 < argc) only = argv[++i];
    else sizes.push_back(std::atoi(a.c_str()));
  }
  if (sizes.empty()) sizes = {32, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
  try {
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    std::printf("device: %s (%s); host threads for Eigen: %d; median of %d runs\n\n",
                ctx.info().name.c_str(), ctx.info().platform_name.c_str(), Eigen::nbThreads(),
                reps);
    auto factor = [](int n) { return la::cholesky(toeplitz(n)); };
    auto none = Eigen::MatrixXd();
    const std::vector<routine> routines = {
        {"chol", [&](int n) { return std::make_pair(toeplitz(n), none); },
         [](const Eigen::MatrixXd& a, const Eigen::MatrixXd&) {
           Eigen::MatrixXd w = a;  // the glue's clone
           Eigen::Map<Eigen::MatrixXd> m(w.data(), w.rows(), w.cols());
           la::check_symmetric(m, "x");
           la::cholesky_in_place(m);
           return w;
         },
         nullptr,
         [](const Eigen::MatrixXd& a, const Eigen::MatrixXd&) {
           Eigen::MatrixXd l(a.rows(), a.cols());
           la::cholesky_host(a.data(), int(a.rows()), int(a.cols()), false, l.data());
           return l;
         }},
        {"chol_grad", [&](int n) { return std::make_pair(factor(n), random_lower(n, unsigned(n))); },
         [](const Eigen::MatrixXd& l, const Eigen::MatrixXd& adj) { return la::cholesky_grad(l, adj); },
         [](const matrix_cl& l, const matrix_cl& adj) { return la::cholesky_grad(l, adj); }},
        {"tri_inv", [&](int n) { return std::make_pair(factor(n), none); },
         [](const Eigen::MatrixXd& l, const Eigen::MatrixXd&) { return la::tri_inverse(l); },
         [](const matrix_cl& l, const matrix_cl&) { return la::tri_inverse(l); }},
        {"tri_solve, 1 column", [&](int n) { return std::make_pair(factor(n), random_matrix(n, 1, 3)); },
         [](const Eigen::MatrixXd& l, const Eigen::MatrixXd& b) { return la::tri_solve(l, b); },
         [](const matrix_cl& l, const matrix_cl& b) { return la::tri_solve(l, b); }},
        {"tri_solve, n columns", [&](int n) { return std::make_pair(factor(n), random_matrix(n, n, 3)); },
         [](const Eigen::MatrixXd& l, const Eigen::MatrixXd& b) { return la::tri_solve(l, b); },
         [](const matrix_cl& l, const matrix_cl& b) { return la::tri_solve(l, b); }},
        {"tcrossprod", [&](int n) { return std::make_pair(random_matrix(n, n, 5), none); },
         [](const Eigen::MatrixXd& x, const Eigen::MatrixXd&) { return la::multiply_transpose(x); },
         [](const matrix_cl& x, const matrix_cl&) { return la::multiply_transpose(x); }},
    };
    std::printf("| routine | n | CPU (ms) | device with copies (ms) | CPU / device | max rel err |\n"
                "|---|---|---|---|---|---|\n");
    std::vector<std::string> summary;
    for (const routine& r : routines) {
      if (!only.empty() && std::string(r.name).rfind(only, 0) != 0) continue;
      int device_from = -1;  // the smallest n from which the device wins at every larger n
      for (int n : sizes) {
        clbayes::check_interrupt();
        const auto in = r.inputs(n);
        const Eigen::MatrixXd& x = in.first;
        const Eigen::MatrixXd& y = in.second;
        auto device = [&] { return r.host_to_host ? r.host_to_host(x, y) : staged(r.device, x, y); };
        const Eigen::MatrixXd ref = r.cpu(x, y), got = device();
        const double err = max_abs(got - ref) / std::max(1e-300, max_abs(ref));
        const double t_cpu = time_ms(reps, [&] { Eigen::MatrixXd o = r.cpu(x, y); });
        double t_dev = time_ms(reps, [&] { Eigen::MatrixXd o = device(); });
        if (!(err < 1e-10)) t_dev = NAN;
        std::printf("| %s | %d | %.3f | %.3f | %.2f | %.1e |\n", r.name, n, t_cpu, t_dev,
                    t_cpu / t_dev, err);
        std::fflush(stdout);
        if (t_dev < t_cpu) {
          if (device_from < 0) device_from = n;
        } else {
          device_from = -1;
        }
      }
      summary.push_back(std::string("| ") + r.name + " | " +
                        (device_from < 0 ? std::string("never (up to the largest n)")
                                         : std::to_string(device_from)) + " |");
    }
    std::printf("\n| routine | device faster from n = |\n|---|---|\n");
    for (const std::string& s : summary) std::printf("%s\n", s.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_crossover: %s\n", e.what());
    return 1;
  }
  return 0;
}
