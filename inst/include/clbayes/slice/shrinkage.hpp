#ifndef CLBAYES_SLICE_SHRINKAGE_HPP
#define CLBAYES_SLICE_SHRINKAGE_HPP

// Limits shared by the slice updates (univariate.hpp, hyperrect.hpp).

namespace clbayes {
namespace slice {

/** Shrinkage rounds after which an update gives up and keeps its point;
 *  each rejected batch shrinks the box towards the current point, so this
 *  is reached only for targets with no mass near the current point. */
constexpr int max_shrink_rounds = 200;

}  // namespace slice
}  // namespace clbayes

#endif
