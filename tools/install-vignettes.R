# Knit the vignettes against the installed clbayes and install them beside
# it, as R CMD INSTALL of a tarball built with its vignettes would (doc/ and
# Meta/vignette.rds), so that `make demo` gets vignette() and
# browseVignettes() working without building and compiling the package a
# second time. Run from the repository root: Rscript tools/install-vignettes.R
pkg_dir <- find.package("clbayes")
work <- file.path(tempfile("clbayes-vignettes-"), "clbayes")
dir.create(work, recursive = TRUE)
invisible(file.copy(c("DESCRIPTION", "vignettes"), work, recursive = TRUE))
message("building the vignettes (knitted against ", pkg_dir, ")")
tools::buildVignettes(dir = work, tangle = TRUE, quiet = TRUE)

doc <- file.path(pkg_dir, "doc")
dir.create(doc, showWarnings = FALSE)
v <- tools::pkgVignettes(dir = work, output = TRUE, source = TRUE)
invisible(file.copy(c(v$docs, v$outputs, unlist(v$sources)), doc, overwrite = TRUE))
# the index R CMD INSTALL writes (tools' own builder of it)
installed <- tools::pkgVignettes(dir = pkg_dir, subdirs = "doc", output = TRUE, source = TRUE)
index <- tools:::.build_vignette_index(installed)
index$R <- vapply(index$File, function(f) {
  r <- sub("\\.[RrSs](nw|tex|md)$", ".R", f)
  if (file.exists(file.path(doc, r))) r else ""
}, "")
saveRDS(index, file.path(pkg_dir, "Meta", "vignette.rds"))
tools:::.writeVignetteHtmlIndex("clbayes", file.path(doc, "index.html"), index)
message(sprintf("installed %d vignettes into %s: browseVignettes(\"clbayes\")", nrow(index), doc))
