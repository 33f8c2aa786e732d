#ifndef CLBAYES_OPENCL_HPP
#define CLBAYES_OPENCL_HPP

// Everything of the OpenCL runtime in one include. Each header compiles to
// nothing when CLBAYES_OPENCL is not defined.

#include "config.hpp"
#include "error.hpp"
#include "interrupt.hpp"
#include "opencl/context.hpp"
#include "opencl/kernel_cl.hpp"
#include "opencl/matrix_cl.hpp"
#include "opencl/transfer.hpp"

#endif
