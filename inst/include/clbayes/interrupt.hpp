#ifndef CLBAYES_INTERRUPT_HPP
#define CLBAYES_INTERRUPT_HPP

// Long loops in the core call check_interrupt(). The core knows nothing of
// R: the R glue installs a hook that asks R whether the user pressed Ctrl-C;
// a standalone program leaves the hook empty and loops run to the end.
// A hook either returns true (check_interrupt() then throws
// clbayes::interrupted) or throws an exception of its own, which unwinds
// the core in the same way: the R glue's hook (src/r_init.cpp) throws
// Rcpp's interrupt exception, so that R sees an interrupt condition rather
// than an error. Core code must therefore not catch (...) around a
// check_interrupt() call.

#include "error.hpp"

namespace clbayes {

using interrupt_hook = bool (*)();

inline interrupt_hook& interrupt_hook_slot() {
  static interrupt_hook hook = nullptr;
  return hook;
}

/** Install the function that reports a pending user interrupt. */
inline void set_interrupt_hook(interrupt_hook hook) {
  interrupt_hook_slot() = hook;
}

/** Throws clbayes::interrupted if the user asked to stop. */
inline void check_interrupt() {
  interrupt_hook hook = interrupt_hook_slot();
  if (hook != nullptr && hook()) throw interrupted();
}

}  // namespace clbayes

#endif
