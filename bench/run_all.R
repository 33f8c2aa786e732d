# make bench: run every bench/bench_*.R on this machine, rewrite the dev
# section of bench/logs/history.md (between the lines <!-- dev:begin ... -->
# and <!-- dev:end -->) with their dated tables, and draw one speedup plot
# per script into bench/plots/.
#   Rscript bench/run_all.R [--dry-run]
# --dry-run prints the section instead of writing the log and the plots.
# Then it writes ../inst/extdata/bench-summary.csv, the figures the vignettes
# show, from the log (write_bench_summary() below); --summary writes only that.
# The sizes below keep the whole run to a few minutes on a 2-core machine;
# on a GPU machine use the C++ drivers (bench/README.md) for large sizes.
args <- commandArgs(trailingOnly = FALSE)
script <- sub("^--file=", "", grep("^--file=", args, value = TRUE))
bench_dir <- if (length(script)) dirname(normalizePath(script[1L])) else "bench"
dry_run <- "--dry-run" %in% commandArgs(trailingOnly = TRUE)
results <- file.path(bench_dir, "logs", "history.md")
summary_csv <- file.path(bench_dir, "..", "inst", "extdata", "bench-summary.csv")
source(file.path(bench_dir, "log_tables.R"))

# The tables of the log that the vignettes show: name (the vignettes' key),
# the heading the section starts with, the table (index or a column name)
# and the columns kept (NULL: all).
summary_tables <- list(
  list(name = "sums_table2", section = "Table 2 layout", table = 1),
  list(name = "sums_speed", section = "n = 134217728", table = 1),
  list(name = "sums_table3_div2", section = "Table 3 layout, div2", table = 1),
  list(name = "gp_loglik", section = "GP log-likelihood, second round", table = 1),
  list(name = "gp_slice_h200", section = "Slice sampler on Example 2 on the H200", table = 1),
  list(name = "gp_slice_cpu",
       section = "Slice sampler on Example 2 (Gaussian process), CPU path, both samplers",
       table = 1),
  list(name = "references", section = "Summary against the references", table = 1),
  list(name = "linalg", section = "Dense linear algebra", table = "chol device (ms)",
       columns = c("n", "chol device (ms)", "chol GFLOP/s", "chol + transfers, full L (ms)",
                   "grad device (ms)", "GEMM GFLOP/s", "CPU chol (ms)", "chol err vs CPU",
                   "chol residual")),
  list(name = "glm", section = "GLM log-likelihoods: ", table = 1,
       columns = c("family", "n", "k", "max rel err", "device lp+grad ms", "GB/s",
                   "+ upload ms", "CPU lp+grad ms", "CPU / device"))
)

# Writes the tables of `spec` from the log `log` into `csv`, one line per
# cell, as recorded: table, title (the heading without its parenthesis),
# row, column, value, machine, date and source (the log; the title names
# its section).
write_bench_summary <- function(log = results, csv = summary_csv, spec = summary_tables) {
  long <- do.call(rbind, lapply(spec, function(s) {
    t <- bench_results_table(s$section, s$table, file = log, convert = FALSE)
    heading <- attr(t, "heading")
    machine <- attr(t, "machine")
    date <- attr(t, "date")
    if (!is.null(s$columns)) t <- t[, s$columns, drop = FALSE]
    data.frame(table = s$name, title = sub(" *\\(.*$", "", heading),
               row = rep(seq_len(nrow(t)), times = ncol(t)),
               column = rep(names(t), each = nrow(t)), value = unlist(t, use.names = FALSE),
               machine = machine, date = date,
               source = sprintf("bench/logs/%s", basename(log)),
               stringsAsFactors = FALSE)
  }))
  long <- long[order(match(long$table, vapply(spec, `[[`, "", "name")), long$row), ]
  dir.create(dirname(csv), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(long, csv, row.names = FALSE)
  invisible(long)
}
if ("--summary" %in% commandArgs(trailingOnly = TRUE)) {
  write_bench_summary()
  message("wrote ", normalizePath(summary_csv))
  quit(save = "no")
}
suppressPackageStartupMessages(library(clbayes))
plot_dir <- file.path(bench_dir, "plots")
rscript <- file.path(R.home("bin"), "Rscript")
`%||%` <- function(a, b) if (is.null(a)) b else a
open_png <- function(file) {
  if (isTRUE(capabilities("cairo"))) {
    grDevices::png(file, width = 700, height = 450, type = "cairo")
  } else {
    grDevices::png(file, width = 700, height = 450)
  }
}

# The runs of each known script (one character vector of arguments per run)
# and a title; any other bench_*.R runs once without arguments.
runs <- list(
  bench_reduce = list(title = "gpu_sum against base::sum",
                      args = list("1e7")),
  bench_linalg = list(title = "gpu_chol and gpu_tcrossprod against base R",
                      args = list(c("250", "500", "1000", "1500"))),
  bench_glm = list(title = "gpu_glm_lp (value + gradient) against vectorised base R",
                   args = list(c("1e4", "50", "5"), c("3e4", "50", "5"),
                               c("1e5", "50", "5"))),
  bench_slice = list(title = "slice_sample_mv on Example 1 of parallel-slice.txt",
                     args = list("20000"))
)

scripts <- sort(Sys.glob(file.path(bench_dir, "bench_*.R")))
names(scripts) <- sub("\\.R$", "", basename(scripts))

cpu_model <- function() {
  l <- tryCatch(readLines("/proc/cpuinfo", warn = FALSE), error = function(e) character())
  m <- sub("^model name\\s*:\\s*", "", grep("^model name", l, value = TRUE))
  n <- length(grep("^processor", l))
  if (length(m)) sprintf("%s (%d logical cores)", m[1L], n) else "unknown"
}
device <- if (gpu_available()) {
  i <- gpu_info()
  sprintf("%s (%s, type %s)", i$name, i$platform_name %||% i$platform, i$type)
} else {
  "none (CPU path only)"
}
stamp <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")

out <- c(sprintf("## dev: `make bench` (dev, %s)", stamp), "",
         sprintf("- R: %s, BLAS: %s", R.version.string,
                 basename(extSoftVersion()[["BLAS"]])),
         sprintf("- CPU: %s", cpu_model()),
         sprintf("- OpenCL device: %s", device),
         "- command: `make bench` (`Rscript bench/run_all.R`); times are medians after a warm-up",
         "")
tables <- list()
t0 <- Sys.time()
for (nm in names(scripts)) {
  spec <- runs[[nm]] %||% list(title = nm, args = list(character()))
  out <- c(out, sprintf("### %s (`%s.R`)", spec$title, nm), "")
  tables[[nm]] <- list()
  for (a in spec$args) {
    cmd <- paste(c(sprintf("Rscript bench/%s.R", nm), a), collapse = " ")
    message("running ", cmd)
    t1 <- Sys.time()
    res <- suppressWarnings(system2(rscript, c(shQuote(scripts[[nm]]), a),
                                    stdout = TRUE, stderr = FALSE))
    secs <- as.numeric(difftime(Sys.time(), t1, units = "secs"))
    status <- attr(res, "status")
    out <- c(out, sprintf("`%s` (%.0f s):", cmd, secs), "", res, "")
    if (!is.null(status) && status != 0) {
      out <- c(out, sprintf("**failed with status %s**", status), "")
    } else {
      tabs <- md_tables(res)
      if (length(tabs)) tables[[nm]][[length(tables[[nm]]) + 1L]] <- list(args = a, table = tabs[[1L]])
    }
  }
}
total <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
out <- c(out, sprintf("Whole run: %.0f s.", total), "")

# Speedups (reference time / clbayes time) against size, one plot per script.
speedups <- function(nm, tabs) {
  switch(nm,
    bench_reduce = {
      t <- tabs[[1L]]$table
      base <- t[t$`function` == "base::sum", c("n", "ms")]
      t <- t[t$`function` == "gpu_sum" & t$precision == "double" & t$method != "naive", ]
      t$ref <- base$ms[match(t$n, base$n)]
      lapply(split(t, paste(t$method, t$backend)), function(d)
        data.frame(size = d$n, speedup = d$ref / d$ms))
    },
    bench_linalg = {
      t <- tabs[[1L]]$table
      l <- list("gpu_chol, cpu" = data.frame(size = t$n, speedup = t$`base::chol` / t$`gpu_chol cpu`),
                "gpu_tcrossprod, cpu" = data.frame(size = t$n, speedup = t$tcrossprod / t$`gpu_tcrossprod cpu`))
      if (!all(is.na(t$`gpu_chol opencl`))) {
        l[["gpu_chol, opencl"]] <- data.frame(size = t$n, speedup = t$`base::chol` / t$`gpu_chol opencl`)
      }
      l
    },
    bench_glm = {
      rows <- do.call(rbind, lapply(tabs, function(r) {
        d <- r$table
        d$size <- as.numeric(r$args[1L]) * as.numeric(r$args[2L])
        d
      }))
      l <- lapply(split(rows, rows$family), function(d)
        data.frame(size = d$size, speedup = d$`base R / CPU`))
      names(l) <- paste(names(l), "cpu")
      dev <- grep("device", names(rows), value = TRUE)
      if (length(dev)) {
        l2 <- lapply(split(rows, rows$family), function(d)
          data.frame(size = d$size, speedup = d$`base R ms` / d[[dev[1L]]]))
        names(l2) <- paste(names(l2), "opencl")
        l <- c(l, l2)
      }
      l
    },
    NULL)
}

draw <- function(file, series, xlab, ylab, title) {
  open_png(file)
  on.exit(grDevices::dev.off())
  series <- Filter(function(s) nrow(s) > 0 && any(is.finite(s$speedup)), series)
  xs <- unlist(lapply(series, `[[`, "size"))
  ys <- unlist(lapply(series, `[[`, "speedup"))
  ys <- ys[is.finite(ys) & ys > 0]
  cols <- grDevices::hcl.colors(max(2L, length(series)), "Dark 3")
  ltys <- ifelse(grepl("opencl|gpu_matrix", names(series)), 2L, 1L)
  graphics::par(mar = c(4.5, 4.5, 3, 13))
  graphics::plot(range(xs), range(c(ys, 1)), log = "xy", type = "n", xlab = xlab,
                 ylab = ylab, main = title)
  graphics::abline(h = 1, col = "grey60", lty = 3)
  for (i in seq_along(series)) {
    s <- series[[i]]
    graphics::lines(s$size, s$speedup, type = "b", pch = 19, col = cols[i], lty = ltys[i])
  }
  usr <- graphics::par("usr")
  graphics::legend(10^usr[2], 10^usr[4], names(series), col = cols[seq_along(series)],
                   lty = ltys, pch = 19, bty = "n", cex = 0.8, xpd = NA)
}
xlabs <- c(bench_reduce = "n (values summed)", bench_linalg = "n (rows of the n x n matrix)",
           bench_glm = "n x k (elements of the design matrix)")

plots <- character()
for (nm in names(tables)) {
  if (!length(tables[[nm]])) next
  file <- file.path(plot_dir, paste0("dev_", sub("^bench_", "", nm), ".png"))
  series <- speedups(nm, tables[[nm]])
  if (nm == "bench_slice") {
    t <- tables[[nm]][[1L]]$table
    if (!dry_run) {
      dir.create(plot_dir, showWarnings = FALSE)
      open_png(file)
      graphics::par(mar = c(4, 16, 3, 1))
      graphics::barplot(t$es_per_sec, names.arg = t$sampler, horiz = TRUE, las = 1,
                        xlab = "ES/sec (smallest over the parameters)",
                        main = "slice_sample_mv, Example 1 (dev)")
      grDevices::dev.off()
    }
  } else if (length(series)) {
    if (!dry_run) {
      dir.create(plot_dir, showWarnings = FALSE)
      draw(file, series, xlabs[[nm]], "speedup over base R (times)",
           sprintf("%s (dev, %s)", sub("^bench_", "", nm), stamp))
    }
  } else {
    next
  }
  plots <- c(plots, sprintf("![%s](plots/%s)", nm, basename(file)))
}
if (length(plots)) out <- c(out, "Plots (speedup = base R time / clbayes time):", "", plots, "")

if (dry_run) {
  writeLines(out)
} else {
  md <- readLines(results, warn = FALSE)
  b <- grep("^<!-- dev:begin", md)
  e <- grep("^<!-- dev:end", md)
  if (length(b) != 1L || length(e) != 1L || e < b) {
    stop("logs/history.md must hold one <!-- dev:begin ... --> line and one <!-- dev:end --> line after it")
  }
  writeLines(c(md[seq_len(b)], out, md[e:length(md)]), results)
  write_bench_summary()
  message(sprintf("wrote the dev section of %s, %d plot(s) and %s in %.0f s", results,
                  length(plots), summary_csv, total))
}
