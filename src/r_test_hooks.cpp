// Test-only entry points (tests/testthat): pieces of the core that the
// exported functions use but do not show, so that tests can compare them
// with independent references.

#include "glue.hpp"

#include <clbayes/mcmc/rng.hpp>

#include <cstdint>

// The first `n` uniforms of stream `stream` of `seed`, reached by jumping
// ahead (the samplers' way) or, with `reference`, by `stream` single jumps
// of the reference polynomial (Blackman and Vigna's xoshiro256** jump()).
// [[Rcpp::export(.cpp_test_rng_stream)]]
Rcpp::NumericVector cpp_test_rng_stream(double seed, int stream, int n, bool reference) {
  if (stream < 0 || n < 0) Rcpp::stop("`stream` and `n` must not be negative");
  const auto s = static_cast<std::uint64_t>(seed);
  clbayes::mcmc::rng g(s, reference ? 0u : static_cast<std::uint32_t>(stream));
  if (reference)
    for (int k = 0; k < stream; ++k) g.jump();
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = g.uniform();
  return out;
}
