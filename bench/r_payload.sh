#!/usr/bin/env bash
# R for the GPU machine, which has no R of its own (issue 49): packs this
# machine's Debian R (at its own paths: /usr/lib/R, /usr/share/R, /etc/R),
# the shared libraries R needs beyond glibc's, the R packages clbayes and
# its R benchmarks load, and the package's source tarball, into
# .bench-deps/r-payload.tar.xz (git-ignored; under the device's 64 MiB
# transfer limit). bench/run_gpu_r.sh unpacks and installs it there.
#   bash bench/r_payload.sh            # from the repository root
set -euo pipefail
out=.bench-deps/r-payload.tar.xz
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# the R packages: clbayes's Imports and LinkingTo, lme4 (multilevel models)
# and what they import, found by R itself
# (LinkingTo only for the package itself: nloptr links to testthat's
# headers, which a binary package does not need at run time)
pkgs=$(Rscript -e '
  want <- c("Rcpp", "RcppEigen", "nlme", "rstantools", "lme4")
  db <- installed.packages()
  deps <- tools::package_dependencies(want, db = db, which = c("Depends", "Imports"),
                                      recursive = TRUE)
  all <- unique(c(want, unlist(deps)))
  base <- rownames(db)[db[, "Priority"] %in% "base"]
  cat(setdiff(all, base))')
mkdir -p "$stage/usr/lib/R/site-library" "$stage/opt/rdeps/lib"
# (without help pages, manuals, translations and the recommended packages
# nothing here loads)
( cd / && tar -cf - --exclude=usr/lib/R/site-library --exclude='usr/lib/R/library/*/doc' \
    --exclude='usr/lib/R/library/*/html' --exclude='usr/lib/R/library/*/help' \
    --exclude=usr/lib/R/library/translations --exclude=usr/lib/R/library/survival \
    --exclude=usr/lib/R/library/mgcv --exclude=usr/lib/R/library/tcltk \
    --exclude=usr/share/R/doc usr/lib/R usr/share/R etc/R ) |
  tar -xf - -C "$stage"
for p in $pkgs; do
  for lib in /usr/lib/R/site-library /usr/local/lib/R/site-library /usr/lib/R/library; do
    if [ -d "$lib/$p" ]; then
      mkdir -p "$stage$lib" && cp -a "$lib/$p" "$stage$lib/"
      rm -rf "$stage$lib/$p/doc" "$stage$lib/$p/html" "$stage$lib/$p/help"
      break
    fi
  done
done
# every library libR.so and the packages' .so files link beyond glibc and
# libstdc++, copied under their sonames (the GPU machine lacks ICU 72 and
# libtirpc; the rest is copied in case)
find "$stage" -name '*.so' -print0 | xargs -0 ldd 2>/dev/null | awk '/=> \//{print $1, $3}' |
  sort -u | while read -r soname path; do
    case "$soname" in
      libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|libstdc++*|libgcc_s*|ld-linux*) ;;
      libR.so) ;;
      *) cp -L "$path" "$stage/opt/rdeps/lib/$soname" ;;
    esac
  done
R CMD build --no-build-vignettes --no-manual . >/dev/null
mv clbayes_*.tar.gz "$stage/opt/rdeps/"
mkdir -p .bench-deps
tar -C "$stage" -cf - usr etc opt | xz -T0 -6 > "$out"
echo "$out: $(du -h "$out" | cut -f1) ($(echo $pkgs | wc -w) R packages)"
