# Install the R packages clbayes needs to build, check and demo, when missing.
pkgs <- commandArgs(trailingOnly = TRUE)
have <- function(p) requireNamespace(p, quietly = TRUE)
miss <- pkgs[!vapply(pkgs, have, logical(1))]
if (length(miss)) {
  message("installing R packages: ", paste(miss, collapse = " "))
  install.packages(miss, repos = "https://cloud.r-project.org", Ncpus = 2L)
}
miss <- pkgs[!vapply(pkgs, have, logical(1))]
if (length(miss)) stop("could not install: ", paste(miss, collapse = " "))
