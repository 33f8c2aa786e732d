#ifndef CLBAYES_GLM_GROUP_TERMS_CL_HPP
#define CLBAYES_GLM_GROUP_TERMS_CL_HPP

// A multilevel model's group terms (group_terms.hpp) on the device, for
// glm_batch_rows's gather of Z b and glm_group_gradient's per-level sums
// (kernels/glm_batch.hpp). Indices travel as doubles (exact below 2^53), as
// every device matrix holds doubles:
//   index  n x T: row i's first entry of b for term t (offset + p level);
//   z      n x (sum of p): the terms' columns;
//   order  n x T: for each term, the rows sorted by level (a stable sort);
//   start  the first position in `order` of each level of each term, with
//          one closing entry per term (sum of (levels + 1) values);
//   meta   5 per term: p, first column in z, offset in b, levels, first
//          entry in `start`.
// Uploaded once per model and kept with the data (glm_workspace).

#include "group_terms.hpp"

#ifdef CLBAYES_OPENCL

#include "../opencl/matrix_cl.hpp"
#include "../opencl/transfer.hpp"

#include <vector>

namespace clbayes {
namespace glm {

struct group_terms_cl {
  opencl::matrix_cl index, z, order, start, meta;
  int n_terms = 0;
  int n_levels = 0;  // over all terms
  int q = 0;
  const int* first_level = nullptr;  // the host terms' first array: which model this is
};

/** Whether `d` is the device copy of `g`: the same arrays (the model's,
 *  borrowed for its life) and shape. */
inline bool same_terms(const group_terms_cl& d, const group_terms& g) {
  return d.n_terms == static_cast<int>(g.terms.size()) && d.q == g.size &&
         d.first_level == (g.terms.empty() ? nullptr : g.terms[0].level);
}

inline group_terms_cl to_group_terms_cl(const group_terms& g, int n) {
  const int T = static_cast<int>(g.terms.size());
  int cols = 0, n_levels = 0;
  for (const group_term& t : g.terms) {
    cols += t.n_coef;
    n_levels += t.n_levels;
  }
  std::vector<double> index(static_cast<std::size_t>(n) * T), z(static_cast<std::size_t>(n) * cols),
      order(static_cast<std::size_t>(n) * T), start, meta;
  int col = 0;
  for (int t = 0; t < T; ++t) {
    const group_term& term = g.terms[t];
    meta.insert(meta.end(), {static_cast<double>(term.n_coef), static_cast<double>(col),
                             static_cast<double>(term.offset),
                             static_cast<double>(term.n_levels),
                             static_cast<double>(start.size())});
    std::vector<int> count(term.n_levels + 1, 0);
    for (int i = 0; i < n; ++i) {
      index[static_cast<std::size_t>(t) * n + i] =
          term.offset + static_cast<double>(term.n_coef) * term.level[i];
      ++count[term.level[i] + 1];
    }
    for (int l = 0; l < term.n_levels; ++l) count[l + 1] += count[l];
    for (int l = 0; l <= term.n_levels; ++l) start.push_back(count[l]);
    std::vector<int> next(count.begin(), count.end() - 1);
    for (int i = 0; i < n; ++i)
      order[static_cast<std::size_t>(t) * n + next[term.level[i]]++] = i;
    for (int c = 0; c < term.n_coef; ++c, ++col)
      for (int i = 0; i < n; ++i)
        z[static_cast<std::size_t>(col) * n + i] = term.z[static_cast<std::size_t>(c) * n + i];
  }
  group_terms_cl d;
  d.index = opencl::to_matrix_cl(index.data(), n, T);
  d.z = opencl::to_matrix_cl(z.data(), n, cols);
  d.order = opencl::to_matrix_cl(order.data(), n, T);
  d.start = opencl::to_matrix_cl(start.data(), static_cast<int>(start.size()), 1);
  d.meta = opencl::to_matrix_cl(meta.data(), static_cast<int>(meta.size()), 1);
  d.n_terms = T;
  d.n_levels = n_levels;
  d.q = g.size;
  d.first_level = T > 0 ? g.terms[0].level : nullptr;
  return d;
}

}  // namespace glm
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
