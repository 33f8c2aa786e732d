# clbayes: the two commands are `make demo` and `make check`.
R ?= R
RSCRIPT ?= Rscript
PKG := clbayes
VERSION := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL := $(PKG)_$(VERSION).tar.gz
APT_PACKAGES := pocl-opencl-icd ocl-icd-opencl-dev opencl-clhpp-headers clinfo pandoc
# rstanarm (Debian's r-cran-rstanarm, precompiled): the references of the priors' tests.
# TMB and RTMB (R/tape.R: R densities taped for their gradients) come from CRAN,
# built as C++17: tools/install-r-deps.R says why.
R_PACKAGES := Rcpp RcppEigen roxygen2 knitr rmarkdown coda posterior testthat cli processx callr future progressr nlme lme4 TMB RTMB rstantools loo bayesplot rstanarm digest
# The package's C++ files compile in parallel, one per core (R CMD INSTALL
# passes MAKEFLAGS to its make): a cold install took 4 min 58 s on one core
# of the 2-core dev machine and 2 min 36 s on both.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
RCMD := MAKEFLAGS=-j$(JOBS) $(R) CMD

.PHONY: setup setup-system setup-r docs build install demo check test bench bench-driver clean

## setup: system packages (apt-get, when missing) and R packages (when missing)
setup: setup-system setup-r

setup-system:
	@SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  [ -z "$$missing" ] || echo "apt-get not found; please install:$$missing"; \
	else \
	  if [ -z "$$(ls /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial -e auxfiles)" ]; then \
	    $$SUDO apt-get update -qq; fi; \
	  if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing || \
	    { $$SUDO apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; }; \
	  fi; \
	fi

setup-r:
	$(RSCRIPT) tools/install-r-deps.R $(R_PACKAGES)

## docs: regenerate RcppExports and roxygen2 docs/NAMESPACE
docs:
	$(RSCRIPT) -e 'Rcpp::compileAttributes(".")' -e 'roxygen2::roxygenise(".", roclets = c("rd", "namespace"), load_code = roxygen2::load_source)'

build: setup docs
	$(RCMD) build .

install: build
	$(RCMD) INSTALL $(TARBALL)

## demo: the main job, on the default device (GPU, PoCL or the CPU path).
## The package is installed without its vignettes and the demo runs at
## once; then the vignettes are built (knitted against that installed
## package, about 4 min on the 2-core dev machine) and installed beside
## it, so that vignette("getting-started", package = "clbayes") works,
## with no second compile.
demo: setup docs
	$(RCMD) build --no-build-vignettes .
	$(RCMD) INSTALL $(TARBALL)
	$(RSCRIPT) demo/clbayes.R
	$(RSCRIPT) tools/install-vignettes.R

## check: docs up to date, R CMD build, R CMD check --no-manual; fails on ERROR or WARNING
check: build
	@git diff --quiet -- NAMESPACE man src/RcppExports.cpp R/RcppExports.R 2>/dev/null || \
	  { echo "generated docs/exports were stale and have been regenerated; commit them"; \
	    git --no-pager diff --stat -- NAMESPACE man src/RcppExports.cpp R/RcppExports.R; }
	_R_CHECK_FORCE_SUGGESTS_=false $(RCMD) check --no-manual $(TARBALL)
	@log=$(PKG).Rcheck/00check.log; \
	if grep -qE '^Status:.*(ERROR|WARNING)' $$log; then echo "R CMD check: ERROR or WARNING"; exit 1; fi; \
	if grep -q 'Found the following significant warnings' $$log; then echo "compiler warnings"; exit 1; fi; \
	grep '^Status' $$log

## test: run the test suite against the installed package (quick)
test: install
	$(RSCRIPT) -e 'testthat::test_dir("tests/testthat", package = "$(PKG)", load_package = "installed")'

## bench: benchmark scripts on this machine (writes to bench/RESULTS.md)
bench: install
	$(RSCRIPT) bench/run_all.R

## bench-driver: the standalone C++ benchmark driver (no R needed)
bench-driver:
	$(MAKE) -C bench

clean:
	rm -rf $(PKG).Rcheck $(PKG)_*.tar.gz src/*.o src/*.so src/Makevars config.log
