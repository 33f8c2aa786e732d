# The full fuzz run: every case of tests/fuzz/cases.R on "cpu" and on
# "opencl", each function's cases in a child R process (callr), which is
# replaced after a crash or a hang; the child's address space is capped
# (prlimit, 10 GiB) so that an allocation nobody checked fails instead of
# taking the machine's memory. Writes a markdown summary.
#
#   Rscript tests/fuzz/run.R [summary.md] [library]
#
# A fresh process per case would cost about 4 s here (OpenCL start-up and
# PoCL's kernel builds), an hour for the full set on two shared cores; one
# child per function keeps a crash isolated to the case that caused it.

args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1L) args[1L] else "bench/logs/2026-11-24-fuzz.md"
if (length(args) >= 2L) .libPaths(c(args[2L], .libPaths()))
cases_file <- normalizePath(file.path("tests", "fuzz", "cases.R"))
source(cases_file)
library(clbayes)
backends <- c("cpu", if (gpu_available()) "opencl")
timeout_s <- 120

new_child <- function() {
  rs <- callr::r_session$new(options = callr::r_session_options(
    libpath = .libPaths(), env = c(OMP_NUM_THREADS = "1")))
  if (nzchar(Sys.which("prlimit"))) {
    system2("prlimit", c("--pid", rs$get_pid(), sprintf("--as=%.0f", 10 * 2^30)))
  }
  rs$run(function(f) {
    suppressMessages(library(clbayes))
    source(f, local = globalenv())
    NULL
  }, list(cases_file))
  rs
}

run_case <- function(rs, case) {
  rs$call(function(case) fuzz_run_case(case), list(case))
  if (rs$poll_process(timeout_s * 1000) == "timeout") {
    return(list(outcome = "hang", message = sprintf("no answer in %d s", timeout_s),
                dead = TRUE))
  }
  r <- rs$read()
  if (!is.null(r$error) || !rs$is_alive()) {
    msg <- if (!is.null(r$error)) conditionMessage(r$error) else "the child died"
    return(list(outcome = "crash", message = msg, dead = TRUE))
  }
  c(r$result, dead = FALSE)
}

results <- list()
t0 <- Sys.time()
for (backend in backends) {
  cases <- fuzz_cases(backend)
  groups <- split(seq_along(cases), vapply(cases, `[[`, "", "fn"))
  for (g in groups) {
    rs <- new_child()
    for (i in g) {
      r <- run_case(rs, cases[[i]])
      results[[length(results) + 1L]] <- c(cases[[i]][c("id", "fn", "owner", "code",
                                                          "expect")],
                                            backend = backend,
                                            r[c("outcome", "message")])
      if (isTRUE(r$dead)) {
        try(rs$kill(), silent = TRUE)
        rs <- new_child()
      }
    }
    try(rs$close(), silent = TRUE)
    cat(sprintf("%s %s: %d cases\n", backend, cases[[g[1]]]$fn, length(g)))
  }
}
elapsed <- as.numeric(difftime(Sys.time(), t0, units = "mins"))

df <- do.call(rbind, lapply(results, function(r) as.data.frame(r, stringsAsFactors = FALSE)))
esc <- function(s) gsub("|", "\\|", gsub("\n", " ", substr(s, 1, 300)), fixed = TRUE)
lines <- c(
  sprintf("# Fuzz run, %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
  "",
  sprintf("`Rscript tests/fuzz/run.R` on %s; OpenCL device: %s. %d cases in %.1f min.",
          R.version.string, if (gpu_available()) gpu_info()$name else "none",
          nrow(df), elapsed),
  "",
  "Outcomes: ok; crash (the child R process died); hang (no answer in 120 s);",
  "silent (no error for an input that must fail); unclear (the message names no",
  "argument in backticks); wrong (a value other than base R's); failed (a valid",
  "call that errors).",
  "",
  "## Totals by backend and owner",
  "",
  "| backend | owner | cases | ok | crash | hang | silent | unclear | wrong | failed |",
  "|---|---|---|---|---|---|---|---|---|---|")
outcomes <- c("ok", "crash", "hang", "silent", "unclear", "wrong", "failed")
for (b in unique(df$backend)) {
  for (o in unique(df$owner)) {
    s <- df[df$backend == b & df$owner == o, ]
    if (nrow(s) == 0L) next
    counts <- vapply(outcomes, function(x) sum(s$outcome == x), 0)
    lines <- c(lines, sprintf("| %s | %s | %d | %s |", b, o, nrow(s),
                              paste(counts, collapse = " | ")))
  }
}
bad <- df[df$outcome != "ok", ]
lines <- c(lines, "", "## Cases that are not ok", "")
if (nrow(bad) == 0L) {
  lines <- c(lines, "None.")
} else {
  lines <- c(lines, "| id | owner | outcome | call | message |", "|---|---|---|---|---|",
             sprintf("| %s | %s | %s | `%s` | %s |", bad$id, bad$owner, bad$outcome,
                     esc(bad$code), esc(bad$message)))
}
writeLines(lines, out)
if (nzchar(Sys.getenv("FUZZ_RDS"))) saveRDS(df, Sys.getenv("FUZZ_RDS"))
cat(sprintf("%d cases, %d not ok; summary in %s\n", nrow(df), nrow(bad), out))
