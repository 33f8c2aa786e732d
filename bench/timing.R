# Timing helper shared by the bench_*.R scripts (sourced, not run by
# run_all.R).

# Median milliseconds per call over `reps` measurements after a warm-up;
# each measurement repeats f until it lasts 50 ms, since system.time()
# counts in milliseconds.
median_ms <- function(f, reps = 5L) {
  f()
  inner <- 1
  repeat {
    t <- system.time(for (i in seq_len(inner)) f())[["elapsed"]]
    if (t >= 0.05 || inner >= 1024) break
    inner <- inner * 4
  }
  t <- vapply(seq_len(reps), function(i) {
    system.time(for (j in seq_len(inner)) f())[["elapsed"]] / inner
  }, numeric(1))
  1000 * stats::median(t)
}
