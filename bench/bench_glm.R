# gpu_glm_lp (value + gradient) on the CPU path, and on the device when there
# is one, against a vectorised base-R computation of the same value and
# gradient. Prints a markdown table of median times.
#   Rscript bench/bench_glm.R [n k reps]
suppressPackageStartupMessages(library(clbayes))
args <- as.numeric(commandArgs(trailingOnly = TRUE))
n <- if (length(args) >= 1) args[1] else 1e5
k <- if (length(args) >= 2) args[2] else 50
reps <- if (length(args) >= 3) args[3] else 7

set.seed(1)
x <- matrix(rnorm(n * k), n, k)
beta <- rnorm(k) * 0.5 / sqrt(k)
alpha <- 0.3
eta0 <- drop(alpha + x %*% beta)
data <- list(
  normal_id = rnorm(n, eta0, 1.3),
  bernoulli_logit = rbinom(n, 1, plogis(eta0)),
  poisson_log = rpois(n, exp(eta0)),
  neg_binomial_2_log = rnbinom(n, mu = exp(eta0), size = 2.5)
)

# Value and gradient (alpha, beta, and sigma / phi) in vectorised base R.
base_r <- function(family, y) {
  eta <- drop(alpha + x %*% beta)
  switch(family,
    normal_id = {
      z <- (y - eta) / 1.3
      d <- z / 1.3
      list(sum(dnorm(y, eta, 1.3, log = TRUE)), sum(d), crossprod(x, d),
           sum((z^2 - 1) / 1.3))
    },
    bernoulli_logit = {
      d <- y - plogis(eta)
      list(sum(dbinom(y, 1, plogis(eta), log = TRUE)), sum(d), crossprod(x, d))
    },
    poisson_log = {
      d <- y - exp(eta)
      list(sum(dpois(y, exp(eta), log = TRUE)), sum(d), crossprod(x, d))
    },
    neg_binomial_2_log = {
      mu <- exp(eta); phi <- 2.5
      d <- y - (y + phi) * mu / (mu + phi)
      list(sum(dnbinom(y, mu = mu, size = phi, log = TRUE)), sum(d), crossprod(x, d),
           sum(1 - (y + phi) / (mu + phi) + log(phi) - log(mu + phi) +
                 digamma(y + phi) - digamma(phi)))
    })
}

ours <- function(family, y, backend, xx = x) {
  extra <- switch(family, normal_id = list(sigma = 1.3), neg_binomial_2_log = list(phi = 2.5),
                  list())
  args <- c(list(x = xx, alpha = alpha, beta = beta, family = family, gradient = TRUE,
                 backend = backend), extra)
  if (!inherits(xx, "gpu_glm_data")) args$y <- y
  do.call(gpu_glm_lp, args)
}

# median_ms() from timing.R, found beside this script
local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])
  source(file.path(dirname(file), "timing.R"), local = globalenv())
})

cat(sprintf("n = %d, k = %d, median of %d runs; device: %s\n\n", n, k, reps,
            if (gpu_available()) gpu_info()$name else "none"))
cat("| family | max rel err vs base R | base R ms | clbayes CPU ms | base R / CPU |",
    if (gpu_available()) "device (resident) ms |" else "", "\n")
cat("|---|---:|---:|---:|---:|", if (gpu_available()) "---:|" else "", "\n")
for (family in names(data)) {
  y <- data[[family]]
  ref <- base_r(family, y)
  got <- ours(family, y, "cpu")
  g <- attr(got, "gradient")
  err <- max(abs(got - ref[[1]]) / abs(ref[[1]]),
             max(abs(unlist(g) - unlist(ref[-1]))) / max(1, abs(unlist(ref[-1]))))
  t_r <- median_ms(function() base_r(family, y), reps)
  t_c <- median_ms(function() ours(family, y, "cpu"), reps)
  dev <- ""
  if (gpu_available()) {
    h <- gpu_glm_data(x, y)
    dev <- sprintf(" %.3f |", median_ms(function() ours(family, y, "opencl", h), reps))
  }
  cat(sprintf("| %s | %.1e | %.3f | %.3f | %.2f |%s\n", family, err, t_r, t_c, t_r / t_c, dev))
}

# P points per call (a k x P beta, the sampler's batch) against P separate
# calls, on the CPU path (and the device when there is one), value +
# gradient, for each family: issue 15's dev target is P = 64 at 2e4 x 20.
#   points: Rscript bench/bench_glm.R [n k reps [pn pk P]]
pn <- if (length(args) >= 4) args[4] else 2e4
pk <- if (length(args) >= 5) args[5] else 20
P <- if (length(args) >= 6) args[6] else 64
set.seed(2)
px <- matrix(rnorm(pn * pk), pn, pk)
pb <- matrix(rnorm(pk * P) * 0.5 / sqrt(pk), pk, P)
pa <- rnorm(P, 0.3, 0.05)
peta <- drop(0.3 + px %*% pb[, 1])
pdata <- list(
  normal_id = rnorm(pn, peta, 1.3),
  bernoulli_logit = rbinom(pn, 1, plogis(peta)),
  poisson_log = rpois(pn, exp(peta)),
  neg_binomial_2_log = rnbinom(pn, mu = exp(peta), size = 2.5)
)
pextra <- function(family, v) {
  switch(family, normal_id = list(sigma = v), neg_binomial_2_log = list(phi = v), list())
}
batch_call <- function(family, xx, y, backend) {
  args <- c(list(x = xx, alpha = pa, beta = pb, family = family, gradient = TRUE,
                 backend = backend), pextra(family, rep(1.3, P)))
  if (!inherits(xx, "gpu_glm_data")) args$y <- y
  do.call(gpu_glm_lp, args)
}
loop_call <- function(family, xx, y, backend) {
  for (j in seq_len(P)) {
    args <- c(list(x = xx, alpha = pa[j], beta = pb[, j], family = family, gradient = TRUE,
                   backend = backend), pextra(family, 1.3))
    if (!inherits(xx, "gpu_glm_data")) args$y <- y
    do.call(gpu_glm_lp, args)
  }
}
cat(sprintf("\nP = %d points per call, n = %d, k = %d, value + gradient, fastest of %d interleaved runs; %d cores\n\n",
            P, pn, pk, reps, parallel::detectCores()))
cat("| family | backend | batch ms | ", P, " calls ms | calls / batch | max rel diff |\n", sep = "")
cat("|---|---|---:|---:|---:|---:|\n")
for (family in names(pdata)) {
  y <- pdata[[family]]
  for (backend in c("cpu", if (gpu_available()) "opencl")) {
    xx <- if (backend == "cpu") px else gpu_glm_data(px, y)
    b <- batch_call(family, xx, y, backend)
    one <- vapply(seq_len(P), function(j) {
      args <- c(list(x = px, y = y, alpha = pa[j], beta = pb[, j], family = family,
                     backend = "cpu"), pextra(family, 1.3))
      do.call(gpu_glm_lp, args)
    }, numeric(1))
    diff <- max(abs(as.numeric(b) - one) / abs(one))
    # interleaved, fastest of reps: on a shared machine the minimum is the
    # least disturbed estimate of each
    t <- replicate(reps, c(
      system.time(batch_call(family, xx, y, backend))[["elapsed"]],
      system.time(loop_call(family, xx, y, backend))[["elapsed"]]))
    t_b <- 1000 * min(t[1, ])
    t_l <- 1000 * min(t[2, ])
    cat(sprintf("| %s | %s | %.3f | %.3f | %.2f | %.1e |\n", family, backend, t_b, t_l,
                t_l / t_b, diff))
  }
}
