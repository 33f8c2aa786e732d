# gpu_glm_lp (value + gradient) on the CPU path, and on the device when there
# is one, against a vectorised base-R computation of the same value and
# gradient. Prints a markdown table of median times.
#   Rscript inst/bench/bench_glm.R [n k reps]
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
