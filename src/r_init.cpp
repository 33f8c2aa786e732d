// Package initialisation: install the core's interrupt hook.

#include "glue.hpp"

#include <R_ext/Utils.h>

namespace {

void check_interrupt_unsafe(void*) { R_CheckUserInterrupt(); }

// R_CheckUserInterrupt longjmps on Ctrl-C; run it under R_ToplevelExec so
// the jump stops there and the core can unwind with a C++ exception.
bool r_interrupt_pending() {
  return R_ToplevelExec(check_interrupt_unsafe, nullptr) == FALSE;
}

}  // namespace

// [[Rcpp::init]]
void clbayes_init(DllInfo* dll) {
  (void)dll;
  clbayes::set_interrupt_hook(&r_interrupt_pending);
}
