#ifndef CLBAYES_CPU_PARALLEL_HPP
#define CLBAYES_CPU_PARALLEL_HPP

// When a CPU loop of the core goes parallel (OpenMP, where the build turns
// it on).

namespace clbayes {

/** Work (about multiply-adds) below which a loop over items or blocks runs
 *  on one thread: a sampler step of a few chains on a small problem costs
 *  microseconds, less than waking a team of threads, and far less than
 *  waiting for a second core on a loaded machine (16 GP densities of 30
 *  locations: 0.28 ms a call on one thread, 7 ms on two, dev machine
 *  under load; RESULTS.md, "GP gradient on the CPU"). */
constexpr double cpu_parallel_min_work = 4e6;

}  // namespace clbayes

#endif
