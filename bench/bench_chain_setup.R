# Set-up time of the samplers against the number of chains (issue 50, item 1):
# the issue's call, a 2-d standard normal with 10 warmup and 10 kept
# iterations, timed whole (wall and CPU seconds) and in the C++ constructor
# alone (the chains' random streams are made there).
# Usage: Rscript bench/bench_chain_setup.R [chains ...]
library(clbayes)
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.numeric(args) else c(1e3, 1e4, 1e5)
ld <- function(x) -0.5 * rowSums(x^2)
gr <- function(x) -x
timed <- function(expr) {
  t <- system.time(expr, gcFirst = TRUE)
  c(wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}
rows <- lapply(sizes, function(n) {
  init <- matrix(0, n, 2)
  ctor <- timed(clbayes:::.cpp_hmc_new(init, rep(-Inf, 2), rep(Inf, 2), "diagonal",
                                        10L, 10L, 0.75, 1000L, 0.1, 1, 0L))
  hmc <- timed(hmc_sample_mv(ld, c(0, 0), gradient = gr, n_iter = 10, warmup = 10,
                             chains = n, seed = 1))
  slice <- timed(suppressWarnings(slice_sample_mv(ld, c(0, 0), n_iter = 10, warmup = 10,
                                                  chains = n, seed = 1)))
  data.frame(chains = n, ctor_wall = ctor[["wall"]], ctor_cpu = ctor[["cpu"]],
             hmc_wall = hmc[["wall"]], hmc_cpu = hmc[["cpu"]],
             slice_wall = slice[["wall"]], slice_cpu = slice[["cpu"]])
})
cat(sprintf("%s, %s, R %s\n", Sys.info()[["nodename"]], format(Sys.time(), "%Y-%m-%d %H:%M"),
            getRversion()))
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
