// Package initialisation: install the core's interrupt hook.

#include "glue.hpp"

#include <Rcpp/Interrupt.h>

namespace {

// Rcpp::checkUserInterrupt() asks R under R_ToplevelExec (so R's longjmp
// stops there) and throws Rcpp::internal::InterruptedException on Ctrl-C.
// That exception unwinds the core like clbayes::interrupted, and the
// END_RCPP of the exported function that called the core turns it into
// Rf_onintr(): R sees an interrupt condition, as for Ctrl-C in R code
// (tryCatch(interrupt = ) catches it, Rscript stops as on Ctrl-C).
bool r_interrupt_pending() {
  Rcpp::checkUserInterrupt();
  return false;
}

}  // namespace

// [[Rcpp::init]]
void clbayes_init(DllInfo* dll) {
  (void)dll;
  clbayes::set_interrupt_hook(&r_interrupt_pending);
}
