# A fast subset of the fuzz set (tests/fuzz/cases.R; the full set runs each
# function's cases in a child process: tests/fuzz/run.R). In-process here,
# which is safe for these cases: the functions of this subset check sizes
# before they allocate, and a crash would show as a failed check run.
# About 50 cases, spread over the functions and kinds of bad input.

cases_file <- test_path("..", "fuzz", "cases.R")
if (file.exists(cases_file)) source(cases_file, local = TRUE)

fuzz_subset <- function(backend, n) {
  cases <- fuzz_cases(backend)
  own <- Filter(function(k) k$owner == "hardening", cases)
  own[unique(round(seq(1, length(own), length.out = n)))]
}

test_that("bad inputs stop with a message naming the argument (CPU)", {
  skip_if_not(file.exists(cases_file), "tests/fuzz/cases.R not found")
  for (case in fuzz_subset("cpu", 30)) {
    r <- fuzz_run_case(case)
    expect(identical(r$outcome, "ok"),
           sprintf("%s: %s -> %s (%s)", case$id, case$code, r$outcome, r$message))
  }
})

test_that("bad inputs stop with a message naming the argument (device)", {
  skip_if_no_device()
  skip_if_not(file.exists(cases_file), "tests/fuzz/cases.R not found")
  for (case in fuzz_subset("opencl", 20)) {
    r <- fuzz_run_case(case)
    expect(identical(r$outcome, "ok"),
           sprintf("%s: %s -> %s (%s)", case$id, case$code, r$outcome, r$message))
  }
})
