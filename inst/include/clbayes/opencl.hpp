#ifndef CLBAYES_OPENCL_HPP
#define CLBAYES_OPENCL_HPP

// Everything of the OpenCL runtime in one include. Each header compiles to
// nothing when CLBAYES_OPENCL is not defined.

#include "config.hpp"
#include "error.hpp"
#include "interrupt.hpp"
#include "opencl/arithmetic.hpp"
#include "opencl/checks.hpp"
#include "opencl/context.hpp"
#include "opencl/initialize.hpp"
#include "opencl/kernel_cl.hpp"
#include "opencl/matrix_cl.hpp"
#include "opencl/sub_block.hpp"
#include "opencl/transfer.hpp"
#include "opencl/transpose.hpp"

#endif
