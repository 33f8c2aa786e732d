# Tables of the benchmark logs (logs/history.md): markdown pipe tables under
# a heading, read into data frames. Sourced by run_all.R, which reads the
# benchmark scripts' output with md_tables() and writes the figures the
# vignettes show into inst/extdata/bench-summary.csv with
# bench_results_table(). Not part of the package.

# One markdown table under a heading of a markdown file, as a data frame.
#
# section: the start of the heading's text (after the #s), matched exactly
#   and case-sensitively; the last heading that starts with it is used
#   (the log appends runs in time order, so that is the latest record).
#   The section runs to the next heading of the same or a higher level
#   (as many or fewer #s); lines inside ``` fences are not headings.
# table_index: which table of the section, 1 for the first; or a column
#   name: the first table of the section that has a column of that name.
# file: the markdown file, or lines: its text, one line per element.
# convert: if TRUE, columns whose cells all read as numbers (empty, "nan",
#   "NA" and "-" read as NA) become numeric; if FALSE every cell is kept as
#   written (for display). Column names are kept as written. Attributes:
# "heading" (the matched heading's text), "machine" and "date" (from the
# nearest heading, at or before the matched one, that ends in a
# parenthesis naming the machine first and holding a date YYYY-MM-DD, such
# as "(H200, 2026-11-22 00:41 UTC)"; NA when there is none).
bench_results_table <- function(section, table_index = 1L,
                                file = "logs/history.md", lines = NULL,
                                convert = TRUE) {
  if (!is.character(section) || length(section) != 1L || is.na(section) ||
      !nzchar(section)) {
    stop("`section` must be a single non-empty string", call. = FALSE)
  }
  if (!((is.numeric(table_index) && length(table_index) == 1L &&
         !is.na(table_index) && table_index >= 1 &&
         table_index == round(table_index)) ||
        (is.character(table_index) && length(table_index) == 1L &&
         !is.na(table_index)))) {
    stop("`table_index` must be a whole number of at least 1 or a column name",
         call. = FALSE)
  }
  if (is.null(lines)) {
    if (!is.character(file) || length(file) != 1L || is.na(file) ||
        !nzchar(file) || !file.exists(file)) {
      stop("`file` must name an existing markdown file", call. = FALSE)
    }
    lines <- readLines(file, warn = FALSE, encoding = "UTF-8")
  }
  heads <- md_headings(lines)
  hit <- which(startsWith(heads$text, section))
  if (!length(hit)) {
    stop(sprintf("`section`: no heading starts with \"%s\"", section), call. = FALSE)
  }
  h <- hit[length(hit)]
  after <- which(seq_len(nrow(heads)) > h & heads$level <= heads$level[h])
  last <- if (length(after)) heads$line[after[1L]] - 1L else length(lines)
  first <- heads$line[h] + 1L
  body <- if (first <= last) lines[first:last] else character()
  tables <- md_tables(body, convert = isTRUE(convert))
  pick <- if (is.character(table_index)) {
    which(vapply(tables, function(t) table_index %in% names(t), logical(1)))[1L]
  } else {
    as.integer(table_index)
  }
  if (is.na(pick) || pick > length(tables)) {
    stop(sprintf("`table_index`: the section \"%s\" has %d table(s) and none is %s",
                 heads$text[h], length(tables),
                 if (is.character(table_index)) sprintf("with a column \"%s\"", table_index)
                 else sprintf("number %d", as.integer(table_index))),
         call. = FALSE)
  }
  out <- tables[[pick]]
  label <- md_machine_date(heads$text[seq_len(h)])
  attr(out, "heading") <- heads$text[h]
  attr(out, "machine") <- label[["machine"]]
  attr(out, "date") <- label[["date"]]
  out
}

# Headings outside ``` fences: data frame of line, level, text.
md_headings <- function(lines) {
  fence <- cumsum(grepl("^\\s*```", lines)) %% 2L == 1L
  fence[grepl("^\\s*```", lines)] <- TRUE
  is_head <- !fence & grepl("^#{1,6}\\s+\\S", lines)
  idx <- which(is_head)
  data.frame(line = idx,
             level = nchar(sub("^(#+).*$", "\\1", lines[idx])),
             text = trimws(sub("^#+\\s+", "", lines[idx])),
             stringsAsFactors = FALSE)
}

# Every pipe table in `lines` (a header row, a |---| row, then rows), outside
# ``` fences, as a list of data frames.
md_tables <- function(lines, convert = TRUE) {
  fence <- cumsum(grepl("^\\s*```", lines)) %% 2L == 1L
  is_row <- !fence & grepl("^\\s*\\|", lines)
  runs <- rle(is_row)
  ends <- cumsum(runs$lengths)
  starts <- ends - runs$lengths + 1L
  out <- list()
  for (r in which(runs$values & runs$lengths >= 2L)) {
    block <- lines[starts[r]:ends[r]]
    if (!grepl("^\\s*\\|?\\s*:?-{3,}", block[2L])) next
    cells <- lapply(block[-2L], md_cells)
    header <- cells[[1L]]
    rows <- lapply(cells[-1L], function(x) {
      length(x) <- length(header)
      x[is.na(x)] <- ""
      x
    })
    m <- matrix(unlist(rows), ncol = length(header), byrow = TRUE)
    df <- as.data.frame(m, stringsAsFactors = FALSE)
    names(df) <- header
    if (convert) df[] <- lapply(df, md_as_number)
    out[[length(out) + 1L]] <- df
  }
  out
}

md_cells <- function(row) {
  row <- trimws(row)
  row <- sub("^\\|", "", sub("\\|$", "", row))
  trimws(strsplit(row, "|", fixed = TRUE)[[1L]])
}

md_as_number <- function(x) {
  missing <- x %in% c("", "nan", "NaN", "NA", "-")
  num <- suppressWarnings(as.numeric(x))
  if (all(missing | !is.na(num))) {
    num[missing] <- NA_real_
    num
  } else {
    x
  }
}

# Machine and date from the last heading of `texts` that ends in
# "(machine, ..., YYYY-MM-DD ...)".
md_machine_date <- function(texts) {
  for (t in rev(texts)) {
    m <- regmatches(t, regexpr("\\(([^()]*)\\)\\s*$", t))
    if (!length(m)) next
    parts <- trimws(strsplit(gsub("^\\(|\\)\\s*$", "", m), ",")[[1L]])
    d <- grep("[0-9]{4}-[0-9]{2}-[0-9]{2}", parts, value = TRUE)
    if (length(d) && length(parts) >= 2L) {
      return(c(machine = parts[1L], date = d[1L]))
    }
  }
  c(machine = NA_character_, date = NA_character_)
}
