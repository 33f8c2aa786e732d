#ifndef CLBAYES_BENCH_CLI_HPP
#define CLBAYES_BENCH_CLI_HPP

// Command lines of the benchmark drivers: the value after option argv[i].

#include <cstdio>
#include <cstdlib>

/** argv[i + 1], advancing i past it; exits with status 2 and a message
 *  naming the option when the command line ends first. */
inline const char* option_value(int& i, int argc, char** argv) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s needs a value\n", argv[i]);
    std::exit(2);
  }
  return argv[++i];
}

#endif
