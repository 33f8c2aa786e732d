# bench_results_table(): the reader of inst/bench/RESULTS.md that the
# vignettes use, against a small markdown file written here, whose values
# are the reference.

results_md <- c(
  "# Benchmark results",
  "",
  "Intro text with a | pipe that is not a table.",
  "",
  "## Reductions: `bench_x` (H200, 2026-11-22 00:41 UTC)",
  "",
  "# driver output heading (no date here)",
  "",
  "## n = 1024 (2^10)",
  "",
  "| method | ms | rel. error |",
  "|---|---:|---|",
  "| kahan | 0.312 | 3.1e-17 |",
  "| naive (CPU) | | nan |",
  "",
  "```",
  "## not a heading inside a fence",
  "| fake | table |",
  "|---|---|",
  "| 1 | 2 |",
  "```",
  "",
  "| n | speed |",
  "|---|---|",
  "| 10 | 5.1 (14) |",
  "| 20 | - |",
  "",
  "## Dense (dev, R 4.2, 2026-11-23)",
  "",
  "| n | chol ms |",
  "|---|---|",
  "| 500 | 12 |",
  "",
  "### sub section",
  "",
  "| n | gemm ms |",
  "|---|---|",
  "| 500 | 7 |",
  "",
  "## Undated",
  "",
  "| a |",
  "|---|",
  "| x |"
)

with_results_file <- function(code) {
  f <- tempfile(fileext = ".md")
  writeLines(results_md, f)
  on.exit(unlink(f))
  code(f)
}

test_that("a table under a sub-heading is read with numbers and missing values", {
  with_results_file(function(f) {
    t <- clbayes:::bench_results_table("n = 1024", 1, file = f)
    expect_s3_class(t, "data.frame")
    expect_identical(names(t), c("method", "ms", "rel. error"))
    expect_identical(t$method, c("kahan", "naive (CPU)"))
    expect_identical(t$ms, c(0.312, NA))
    expect_identical(t[["rel. error"]], c(3.1e-17, NA))
    raw <- clbayes:::bench_results_table("n = 1024", 1, file = f, convert = FALSE)
    expect_identical(raw$ms, c("0.312", ""))
    expect_identical(raw[["rel. error"]], c("3.1e-17", "nan"))
    # machine and date come from the nearest dated heading above it
    expect_identical(attr(t, "machine"), "H200")
    expect_identical(attr(t, "date"), "2026-11-22 00:41 UTC")
    expect_identical(attr(t, "heading"), "n = 1024 (2^10)")
  })
})

test_that("tables inside code fences are skipped and mixed columns stay text", {
  with_results_file(function(f) {
    t <- clbayes:::bench_results_table("n = 1024", 2, file = f)
    expect_identical(t$n, c(10, 20))
    expect_identical(t$speed, c("5.1 (14)", "-"))
    expect_error(clbayes:::bench_results_table("n = 1024", 3, file = f),
                 "`table_index`.*has 2 table")
    expect_error(clbayes:::bench_results_table("not a heading", 1, file = f),
                 "`section`")
  })
})

test_that("a section ends at the next heading of its level, not at deeper ones", {
  with_results_file(function(f) {
    t <- clbayes:::bench_results_table("Dense", 2, file = f)
    expect_identical(names(t), c("n", "gemm ms"))
    expect_identical(t[["gemm ms"]], 7)
    expect_identical(attr(t, "machine"), "dev")
    expect_identical(attr(t, "date"), "2026-11-23")
    # selection by column name
    t2 <- clbayes:::bench_results_table("Dense", "gemm ms", file = f)
    expect_identical(t2, t)
    expect_error(clbayes:::bench_results_table("Dense", "nope", file = f),
                 "column \"nope\"")
    # a level-1 heading ends a level-2 section
    expect_error(clbayes:::bench_results_table("Reductions", 1, file = f),
                 "has 0 table")
    # the section "Dense" does not run into "Undated"
    expect_error(clbayes:::bench_results_table("Dense", 3, file = f), "has 2 table")
    u <- clbayes:::bench_results_table("Undated", file = f)
    expect_identical(u$a, "x")
    expect_identical(attr(u, "date"), "2026-11-23")  # nearest dated heading above
  })
})

test_that("of several headings with the same start, the last (latest) is read", {
  md <- c("## Sums (H200, 2026-11-21 10:00 UTC)", "", "| n | GB/s |", "|---|---|",
          "| 8 | 1.5 |", "", "## Sums again (H200, 2026-11-22 03:49 UTC)", "",
          "| n | GB/s |", "|---|---|", "| 8 | 4.0 |")
  t <- clbayes:::bench_results_table("Sums", lines = md)
  expect_equal(t[["GB/s"]], 4.0)
  expect_equal(attr(t, "date"), "2026-11-22 03:49 UTC")
})

test_that("the arguments are checked", {
  expect_error(clbayes:::bench_results_table(1), "`section`")
  expect_error(clbayes:::bench_results_table("a", 0), "`table_index`")
  expect_error(clbayes:::bench_results_table("a", 1.5), "`table_index`")
  expect_error(clbayes:::bench_results_table("a", file = tempfile()), "`file`")
})

test_that("the installed RESULTS.md has the tables the vignettes read", {
  f <- clbayes:::bench_results_file()
  skip_if(!nzchar(f), "RESULTS.md not installed")
  t <- clbayes:::bench_results_table("Table 2 layout", 1, file = f)
  expect_true(all(c("data", "n", "kahan", "div2") %in% names(t)))
  expect_true(is.numeric(t$n) && is.numeric(t$kahan))
  expect_false(is.na(attr(t, "date")))
  g <- clbayes:::bench_results_table("GLM log-likelihoods: ", 1, file = f)
  expect_true(all(c("family", "n", "CPU / device") %in% names(g)))
})
