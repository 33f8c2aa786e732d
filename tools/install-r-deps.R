# Install the R packages clbayes needs to build, check and demo, when missing:
# Debian's prebuilt r-cran-* packages first (fast, where apt-get is there and
# we are root), then CRAN for whatever is still missing. TMB and RTMB (the
# taped densities of R/tape.R) always come from CRAN, built as C++17 (see
# install_rtmb()).
pkgs <- commandArgs(trailingOnly = TRUE)
# RTMB needs TMB >= 1.9.7; Debian bookworm's r-cran-tmb is 1.9.2.
min_version <- c(TMB = "1.9.7")
have <- function(p) {
  if (!requireNamespace(p, quietly = TRUE)) return(FALSE)
  is.na(min_version[p]) || utils::packageVersion(p) >= min_version[[p]]
}
missing_pkgs <- function() pkgs[!vapply(pkgs, have, logical(1))]
from_cran_only <- c("TMB", "RTMB")
# Optional and slow to build from source (rstanarm compiles its Stan models
# for about an hour): from Debian's prebuilt package only; without it the
# tests that compare with it skip.
from_debian_only <- c("rstanarm")

# RTMB 2.0 does not compile as C++14, R 4.2's default ("call of overloaded
# 'ADrep(...)' is ambiguous" in RTMB_tape.cpp); R >= 4.3 defaults to C++17.
# The user's Makevars (ccache lines and all) is kept, with the C++ standard
# raised to gnu++17 for the compilers R 4.2 would run as C++14.
install_rtmb <- function(which) {
  mk <- tempfile("Makevars-rtmb-")
  user <- Sys.getenv("R_MAKEVARS_USER", file.path(Sys.getenv("HOME"), ".R", "Makevars"))
  lines <- if (file.exists(user)) readLines(user) else character()
  cxx <- system2(file.path(R.home("bin"), "R"), c("CMD", "config", "CXX"), stdout = TRUE)
  cxx <- trimws(sub("-std=[^ ]*", "", cxx))
  if (!any(grepl("^CXX *=", lines))) {
    launcher <- if (nzchar(Sys.which("ccache"))) "ccache " else ""
    lines <- c(lines, paste0("CXX = ", launcher, cxx, " -std=gnu++17"),
               paste0("CXX14 = ", launcher, cxx), paste0("CXX17 = ", launcher, cxx))
  }
  writeLines(c(lines, "CXX14STD = -std=gnu++17"), mk)
  old <- Sys.getenv("R_MAKEVARS_USER", NA)
  Sys.setenv(R_MAKEVARS_USER = mk)
  on.exit(if (is.na(old)) Sys.unsetenv("R_MAKEVARS_USER") else
    Sys.setenv(R_MAKEVARS_USER = old), add = TRUE)
  message("installing from CRAN (as C++17): ", paste(which, collapse = " "))
  install.packages(which, repos = "https://cloud.r-project.org", Ncpus = 2L)
}

miss <- setdiff(missing_pkgs(), from_cran_only)
if (length(miss) && nzchar(Sys.which("apt-get")) && identical(Sys.info()[["user"]], "root")) {
  debs <- paste0("r-cran-", tolower(miss))
  message("installing from Debian: ", paste(debs, collapse = " "))
  Sys.setenv(DEBIAN_FRONTEND = "noninteractive")
  system2("apt-get", c("install", "-y", "-qq", "--no-install-recommends", debs))
}
miss <- setdiff(missing_pkgs(), c(from_cran_only, from_debian_only))
if (length(miss)) {
  message("installing from CRAN: ", paste(miss, collapse = " "))
  install.packages(miss, repos = "https://cloud.r-project.org", Ncpus = 2L)
}
ad <- intersect(missing_pkgs(), from_cran_only)
if (length(ad)) {
  # TMB first when it is missing or too old: RTMB links to its headers.
  install_rtmb(if ("RTMB" %in% ad && !have("TMB")) union("TMB", ad) else ad)
}
skipped <- intersect(missing_pkgs(), from_debian_only)
if (length(skipped)) {
  message("not installed (Debian's r-cran-* package only; the tests that need it skip): ",
          paste(skipped, collapse = " "))
}
miss <- setdiff(missing_pkgs(), from_debian_only)
if (length(miss)) stop("could not install: ", paste(miss, collapse = " "))
