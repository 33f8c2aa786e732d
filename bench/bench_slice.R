# Example 1 of parallel-slice.txt through the R interface: ESS and ES/sec of
# the samplers on this machine (the model is evaluated in C++ on the CPU).
#   Rscript bench/bench_slice.R [n_iter]
library(clbayes)
args <- commandArgs(trailingOnly = TRUE)
n_iter <- if (length(args)) as.integer(args[1]) else 10000L
set.seed(2009)
x <- rnorm(100, mean = 5, sd = sqrt(0.5))
X <- cbind(alpha = 1, beta = x)
y <- drop(X %*% c(1, 2)) + rnorm(100)
m <- lm_model(y, X)
runs <- list(
  "hyperrect, dense metric" = list(method = "hyperrect", stepout = "warmup", metric = "dense"),
  "hyperrect, diagonal (widths only)" = list(method = "hyperrect", stepout = "warmup", metric = "diagonal"),
  "hyperrect, stepout always (approx.)" = list(method = "hyperrect", stepout = "always", metric = "dense"),
  "univariate, dense metric" = list(method = "univariate", stepout = "warmup", metric = "dense"),
  "univariate, diagonal (widths only)" = list(method = "univariate", stepout = "warmup", metric = "diagonal")
)
rows <- lapply(names(runs), function(nm) {
  r <- runs[[nm]]
  fit <- suppressWarnings(slice_sample_mv(m, init = m$mean, n_iter = n_iter,
    width = c(0.1, 0.02), method = r$method, stepout = r$stepout, metric = r$metric, seed = 1,
    chains = 4, warmup = n_iter %/% 2, init_radius = 0, warmup_extend = 0,
    n_proposals = if (r$method == "univariate") 1 else 32, backend = "cpu"))
  s <- summary(fit)
  data.frame(sampler = nm, ess_alpha = round(s$ess_bulk[1]),
             ess_beta = round(s$ess_bulk[2]),
             es_per_sec = round(min(s$es_per_sec)),
             sd_alpha_ratio = round(s$sd[1] / sqrt(m$cov[1, 1]), 3),
             seconds = round(fit$time[["total"]], 3))
})
out <- do.call(rbind, rows)
cat(sprintf("Example 1, posterior correlation %.4f, 4 chains x %d draws\n\n",
            cov2cor(m$cov)[1, 2], n_iter))
cat("|", paste(names(out), collapse = " | "), "|\n")
cat("|", paste(rep("---", ncol(out)), collapse = " | "), "|\n")
for (i in seq_len(nrow(out))) cat("|", paste(out[i, ], collapse = " | "), "|\n")
