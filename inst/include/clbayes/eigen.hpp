#ifndef CLBAYES_EIGEN_HPP
#define CLBAYES_EIGEN_HPP

// Eigen for the CPU paths. Its vectorised packet types trip GCC's
// -Wignored-attributes inside Eigen's own headers; silence that there only.

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
#include <Eigen/Dense>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif
