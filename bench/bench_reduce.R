# gpu_sum() from R against base R's sum() (long double accumulation):
#   Rscript bench/bench_reduce.R [max_n]
# Prints one markdown table: median time of 5 runs (after a warm-up) and the
# relative error against sum(), for every method, precision and backend,
# with the vector in host memory (device times include the transfer) and,
# on a device, with the data already on it (gpu_matrix).
suppressPackageStartupMessages(library(clbayes))
args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args)) as.numeric(args[1]) else 1e7
sizes <- 10^(5:7)
sizes <- sizes[sizes <= max_n]

# Median seconds per call; each measurement repeats f until it lasts 20 ms,
# since system.time() counts in milliseconds.
med_time <- function(f, reps = 5) {
  f()
  inner <- 1
  repeat {
    t <- system.time(for (i in seq_len(inner)) f())[["elapsed"]]
    if (t >= 0.02 || inner >= 1024) break
    inner <- inner * 4
  }
  median(vapply(seq_len(reps), function(i) {
    system.time(for (j in seq_len(inner)) f())[["elapsed"]] / inner
  }, 0))
}

backends <- if (gpu_available()) c("cpu", "opencl") else "cpu"
cat(sprintf("device: %s\n\n", if (gpu_available()) gpu_info()$name else "none"))
cat("| n | function | method | precision | backend | ms | rel. error vs sum() |\n")
cat("|---|---|---|---|---|---|---|\n")
row <- function(n, fn, m, p, b, t, v, ref) {
  cat(sprintf("| %d | %s | %s | %s | %s | %.3f | %.1e |\n", n, fn, m, p, b, 1e3 * t,
              abs(v - ref) / abs(ref)))
}
for (n in sizes) {
  set.seed(1)
  x <- runif(n)
  ref <- sum(x)
  row(n, "base::sum", "long double", "double", "cpu", med_time(function() sum(x)), ref, ref)
  for (m in c("kahan", "div2", "pairwise", "naive")) for (p in c("double", "single")) {
    for (b in backends) {
      if (m == "naive" && b == "opencl") next
      v <- gpu_sum(x, m, p, backend = b)
      row(n, "gpu_sum", m, p, b, med_time(function() gpu_sum(x, m, p, backend = b)), v, ref)
    }
    if (gpu_available() && m != "naive") {
      g <- gpu_matrix(x)
      v <- gpu_sum(g, m, p)
      row(n, "gpu_sum", m, p, "gpu_matrix", med_time(function() gpu_sum(g, m, p)), v, ref)
    }
  }
}
