#ifndef CLBAYES_CONFIG_HPP
#define CLBAYES_CONFIG_HPP

// CLBAYES_OPENCL is defined by the build (configure writes it into
// src/Makevars; the benchmark driver passes -DCLBAYES_OPENCL) when OpenCL
// headers and a library were found. Without it every header of the core
// still compiles and only the CPU paths exist.
#ifdef CLBAYES_OPENCL
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#endif
#define CL_HPP_ENABLE_EXCEPTIONS
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <CL/opencl.hpp>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

#endif
