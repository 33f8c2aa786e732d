# How fast a run of chain groups stops (issue 50, item 4), under
# future::plan(multisession, workers = 2): the seconds from a group's
# failure to the error in the caller, with the failure in group 1 or in
# group 2 (slice and HMC), and from Ctrl-C (SIGINT to a child R session) to
# the sampler's return there. The density sleeps 10 ms per call.
# Usage: Rscript bench/bench_chain_group_stop.R
library(clbayes)
future::plan(future::multisession, workers = 2)
invisible(lapply(lapply(1:2, function(i) future::future(requireNamespace("clbayes"),
                                                          seed = NULL)), future::value))
now <- function() as.numeric(Sys.time())
failing <- function(group, after_calls, failed_at) {
  n <- 0
  list(ld = function(x) {
    Sys.sleep(0.01)
    if ((mean(x[, 1]) > 5) == (group == 2)) {
      n <<- n + 1
      if (n == after_calls) {
        writeLines(format(now(), digits = 15), failed_at)
        stop("out of luck")
      }
    }
    -0.5 * rowSums((x - mean(x[, 1]))^2)
  }, gr = function(x) -(x - mean(x[, 1])))
}
init <- rbind(c(0, 0), c(0, 0), c(10, 10), c(10, 10))
rows <- list()
for (sampler in c("slice", "hmc")) for (group in 1:2) {
  failed_at <- tempfile()
  f <- failing(group, 100, failed_at)
  t0 <- now()
  err <- tryCatch(if (sampler == "slice") {
    slice_sample_mv(f$ld, init = init, n_iter = 1e4, chains = 4, chain_groups = 2, seed = 1)
  } else {
    hmc_sample_mv(f$ld, init = init, gradient = f$gr, n_iter = 1e4, chains = 4,
                  chain_groups = 2, seed = 1)
  }, error = function(e) e)
  t_err <- now()
  rows[[length(rows) + 1L]] <- data.frame(
    case = sprintf("%s, group %d fails", sampler, group),
    failed_after = as.numeric(readLines(failed_at)) - t0,
    error_after_failure = t_err - as.numeric(readLines(failed_at)),
    message = substr(conditionMessage(err), 1, 32))
}
# Ctrl-C: a child session samples with two groups; SIGINT after 3 s.
for (sampler in c("slice", "hmc")) {
  p <- callr::r_bg(function(sampler) {
    library(clbayes)
    future::plan(future::multisession, workers = 2)
    ld <- function(x) { Sys.sleep(0.01); -0.5 * rowSums(x^2) }
    tryCatch(if (sampler == "slice") {
      slice_sample_mv(ld, c(0, 0), n_iter = 1e4, chains = 4, chain_groups = 2, seed = 1)
    } else {
      hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, n_iter = 1e4, chains = 4,
                    chain_groups = 2, seed = 1)
    }, interrupt = function(e) as.numeric(Sys.time()))
  }, args = list(sampler = sampler))
  Sys.sleep(8)
  t_int <- now()
  p$interrupt()
  p$wait(60000)
  rows[[length(rows) + 1L]] <- data.frame(case = sprintf("%s, Ctrl-C", sampler),
                                          failed_after = NA,
                                          error_after_failure = p$get_result() - t_int,
                                          message = "interrupt")
}
cat(sprintf("%s, %s, R %s, future %s\n", Sys.info()[["nodename"]],
            format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), packageVersion("future")))
options(width = 120)
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
