#ifndef CLBAYES_MCMC_RNG_HPP
#define CLBAYES_MCMC_RNG_HPP

// The sampler's own random numbers, so that a run is reproducible from one
// seed on any machine, with or without R: xoshiro256** (Blackman and Vigna,
// 2018), seeded through splitmix64, one stream per chain. Stream c starts c
// jumps of 2^128 draws after stream 0, so streams never overlap.
//
// The generator's step is linear over GF(2) on its 256-bit state, and so is
// a jump: a 256 x 256 bit matrix J. Stream c is reached in O(log c) by the
// matrices J^(2^k) of the binary digits of c (made once, by squaring), and
// consecutive streams by one jump each (mcmc/chains.hpp), so setting up n
// chains takes time linear in n. The streams are exactly those of c jumps.

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace clbayes {
namespace mcmc {

class rng {
 public:
  /** Stream `stream` (0, 1, ...) of the generator seeded with `seed`. */
  rng(std::uint64_t seed, std::uint32_t stream) {
    std::uint64_t z = seed;
    for (std::uint64_t& word : s_) word = splitmix64(z);
    jump_ahead(stream);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /** Advance by 2^128 draws, from stream c to stream c + 1 (the reference
   *  jump polynomial). */
  void jump() {
    static const std::uint64_t poly[4] = {
        0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL, 0xa9582618e03fc9aaULL,
        0x39abdc4529b1661cULL};
    std::uint64_t t[4] = {0, 0, 0, 0};
    for (std::uint64_t p : poly)
      for (int b = 0; b < 64; ++b) {
        if (p & (std::uint64_t{1} << b))
          for (int w = 0; w < 4; ++w) t[w] ^= s_[w];
        next();
      }
    for (int w = 0; w < 4; ++w) s_[w] = t[w];
  }

  /** Advance by `jumps` jumps of 2^128 draws, in O(log jumps) matrix
   *  products. */
  void jump_ahead(std::uint32_t jumps) {
    for (int k = 0; jumps != 0; ++k, jumps >>= 1)
      if (jumps & 1u) {
        const state next = apply(jump_powers()[static_cast<std::size_t>(k)], s_);
        for (int w = 0; w < 4; ++w) s_[w] = next[w];
      }
  }

  /** Uniform on the open interval (0, 1): 53 random bits, centred. */
  double uniform() {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }

  /** Standard exponential; log(height) = log f(x) - exponential(). */
  double exponential() { return -std::log(uniform()); }

  /** Standard normal (Box-Muller; one of the pair is used, so a draw
   *  always takes two uniforms and streams stay easy to reason about). */
  double normal() {
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    return r * std::cos(6.283185307179586477 * uniform());
  }

 private:
  std::uint64_t s_[4];

  using state = std::array<std::uint64_t, 4>;
  using jump_matrix = std::array<state, 256>;  // column j: the image of bit j

  explicit rng(const state& s) {
    for (int w = 0; w < 4; ++w) s_[w] = s[w];
  }

  static state apply(const jump_matrix& m, const std::uint64_t* s) {
    state out = {0, 0, 0, 0};
    for (int j = 0; j < 256; ++j)
      if (s[j / 64] & (std::uint64_t{1} << (j % 64)))
        for (int w = 0; w < 4; ++w) out[w] ^= m[j][w];
    return out;
  }

  // J^(2^k) for k = 0, ..., 31: J from the jump of each unit state, then
  // J^(2^k) = J^(2^(k-1)) J^(2^(k-1)), one column at a time.
  static std::vector<jump_matrix> make_jump_powers() {
    std::vector<jump_matrix> p(32);
    for (int j = 0; j < 256; ++j) {
      state unit = {0, 0, 0, 0};
      unit[j / 64] = std::uint64_t{1} << (j % 64);
      rng g(unit);
      g.jump();
      for (int w = 0; w < 4; ++w) p[0][j][w] = g.s_[w];
    }
    for (std::size_t k = 1; k < p.size(); ++k)
      for (int j = 0; j < 256; ++j) p[k][j] = apply(p[k - 1], p[k - 1][j].data());
    return p;
  }

  static const std::vector<jump_matrix>& jump_powers() {
    static const std::vector<jump_matrix> table = make_jump_powers();
    return table;
  }

  static std::uint64_t rotl(std::uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
  }

  static std::uint64_t splitmix64(std::uint64_t& z) {
    std::uint64_t r = (z += 0x9e3779b97f4a7c15ULL);
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ULL;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebULL;
    return r ^ (r >> 31);
  }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
