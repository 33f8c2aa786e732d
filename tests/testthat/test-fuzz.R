# A fast subset of the fuzz set (tests/fuzz/cases.R; the full set runs each
# function's cases in a child process: tests/fuzz/run.R). In-process here,
# which is safe for these cases: the functions of this subset check sizes
# before they allocate, and a crash would show as a failed check run.
# About 50 cases, spread over the functions and kinds of bad input.

cases_file <- test_path("..", "fuzz", "cases.R")
if (file.exists(cases_file)) source(cases_file, local = TRUE)

fuzz_subset <- function(backend, n) {
  cases <- fuzz_cases(backend)
  own <- Filter(function(k) k$owner == "hardening" && !isTRUE(k$slow), cases)
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

test_that("the samplers' bad gradients and huge runs behave (issue 50's families)", {
  skip_if_not(file.exists(cases_file), "tests/fuzz/cases.R not found")
  # the multisession cases (closures, failing groups) run in tests/fuzz/run.R
  # and, as tests, in test-chain-groups.R
  for (case in Filter(function(k) !isTRUE(k$slow), fuzz_sampler_cases())) {
    r <- fuzz_run_case(case)
    expect(identical(r$outcome, "ok"),
           sprintf("%s -> %s (%s)", case$code, r$outcome, r$message))
  }
})
