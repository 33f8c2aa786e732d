# Install the R packages clbayes needs to build, check and demo, when missing:
# Debian's prebuilt r-cran-* packages first (fast, where apt-get is there and
# we are root), then CRAN for whatever is still missing.
pkgs <- commandArgs(trailingOnly = TRUE)
have <- function(p) requireNamespace(p, quietly = TRUE)
missing_pkgs <- function() pkgs[!vapply(pkgs, have, logical(1))]

miss <- missing_pkgs()
if (length(miss) && nzchar(Sys.which("apt-get")) && identical(Sys.info()[["user"]], "root")) {
  debs <- paste0("r-cran-", tolower(miss))
  message("installing from Debian: ", paste(debs, collapse = " "))
  Sys.setenv(DEBIAN_FRONTEND = "noninteractive")
  system2("apt-get", c("install", "-y", "-qq", "--no-install-recommends", debs))
  miss <- missing_pkgs()
}
if (length(miss)) {
  message("installing from CRAN: ", paste(miss, collapse = " "))
  install.packages(miss, repos = "https://cloud.r-project.org", Ncpus = 2L)
}
miss <- missing_pkgs()
if (length(miss)) stop("could not install: ", paste(miss, collapse = " "))
