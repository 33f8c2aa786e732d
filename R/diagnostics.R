# Convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter and Buerkner
# (2021), "Rank-normalization, folding, and localization: an improved R-hat
# for assessing convergence of MCMC": split chains, rank-normalised R-hat
# (the larger of the bulk and the folded tail versions), bulk ESS on
# rank-normalised split chains and tail ESS from the 5% and 95% quantile
# indicators, the autocorrelations summed with Geyer's initial monotone
# sequence. Each takes an iteration x chain matrix of one variable. Below
# them, the warnings both samplers give at the end of a run.

# Each chain cut into its two halves (the middle draw of an odd count is
# dropped).
.split_chains <- function(x) {
  n <- nrow(x)
  if (n < 2L) return(x)
  h <- n %/% 2L
  cbind(x[seq_len(h), , drop = FALSE], x[(n - h + 1L):n, , drop = FALSE])
}

# Normal scores of the pooled ranks (Blom's offset 3/8), same shape.
.z_scale <- function(x) {
  r <- rank(x, ties.method = "average")
  array(stats::qnorm((r - 3 / 8) / (length(x) + 1 / 4)), dim(x))
}

.not_diagnosable <- function(x) {
  any(!is.finite(x)) || diff(range(x)) <= .Machine$double.eps * max(1, abs(x))
}

# Potential scale reduction of chains given as columns.
.rhat_columns <- function(x) {
  n <- nrow(x)
  b_over_n <- stats::var(colMeans(x))
  w <- mean(apply(x, 2L, stats::var))
  sqrt(((n - 1) / n * w + b_over_n) / w)
}

.rhat <- function(x) {
  if (.not_diagnosable(x) || nrow(x) < 4L) return(NA_real_)
  bulk <- .rhat_columns(.z_scale(.split_chains(x)))
  tail <- .rhat_columns(.z_scale(.split_chains(abs(x - stats::median(x)))))
  max(bulk, tail)
}

# Autocovariances at lags 0..n-1 (divisor n), by FFT with zero padding.
.autocov <- function(v) {
  n <- length(v)
  m <- 2L * stats::nextn(n)
  z <- c(v - mean(v), numeric(m - n))
  Re(stats::fft(Mod(stats::fft(z))^2, inverse = TRUE))[seq_len(n)] / (m * n)
}

# ESS of chains given as columns (no splitting here).
.ess_columns <- function(x) {
  n <- nrow(x)
  m <- ncol(x)
  if (n < 4L) return(NA_real_)
  acov <- vapply(seq_len(m), function(j) .autocov(x[, j]), numeric(n))
  acov <- matrix(acov, n, m)
  mean_var <- mean(acov[1L, ]) * n / (n - 1)
  var_plus <- mean_var * (n - 1) / n
  if (m > 1L) var_plus <- var_plus + stats::var(colMeans(x))
  if (!(var_plus > 0)) return(NA_real_)
  rho <- numeric(n)
  rho_at <- function(lag) 1 - (mean_var - mean(acov[lag + 1L, ])) / var_plus
  # Sum pairs of autocorrelations while the pair sum stays positive.
  rho[1L] <- 1
  rho[2L] <- rho_at(1L)
  t <- 0L
  even <- 1
  odd <- rho[2L]
  while (t < n - 5L && is.finite(even + odd) && even + odd > 0) {
    t <- t + 2L
    even <- rho_at(t)
    odd <- rho_at(t + 1L)
    if (even + odd >= 0) {
      rho[t + 1L] <- even
      rho[t + 2L] <- odd
    }
  }
  max_t <- t
  if (even > 0) rho[max_t + 1L] <- even
  # Geyer's initial monotone sequence: pair sums may not increase.
  t <- 0L
  while (t <= max_t - 4L) {
    t <- t + 2L
    if (rho[t + 1L] + rho[t + 2L] > rho[t - 1L] + rho[t]) {
      rho[t + 1L] <- (rho[t - 1L] + rho[t]) / 2
      rho[t + 2L] <- rho[t + 1L]
    }
  }
  total <- n * m
  tau <- -1 + 2 * sum(rho[seq_len(max_t)]) + rho[max_t + 1L]
  total / max(tau, 1 / log10(total))
}

.ess_bulk <- function(x) {
  if (.not_diagnosable(x)) return(NA_real_)
  .ess_columns(.z_scale(.split_chains(x)))
}

.ess_tail <- function(x) {
  if (.not_diagnosable(x)) return(NA_real_)
  q <- stats::quantile(x, c(0.05, 0.95), names = FALSE)
  lo <- .ess_columns(.split_chains((x <= q[1L]) + 0))
  hi <- .ess_columns(.split_chains((x <= q[2L]) + 0))
  min(lo, hi)
}

# The warnings of a finished run, in one place for both samplers, with
# rstan's wording and thresholds (rstan's throw_sampler_warnings()):
# divergent transitions after warmup; transitions cut by the trajectory cap
# (HMC's `max_leapfrog`, the counterpart of NUTS's max_treedepth); split
# R-hat above 1.05; bulk or tail ESS below 100 per chain. The ESS bound is
# capped at 400, rstan's figure for its default 4 chains, because the
# many-chain defaults keep about 4000 draws whatever the number of chains
# (64 chains of 63 draws could never reach 100 per chain). The R-hat and
# ESS warnings are off with options(clbayes.check_convergence = FALSE).
sampler_warnings <- function(fit) {
  n_div <- sum(fit$n_divergent %||% 0)
  if (n_div > 0) {
    warning("There were ", n_div, " divergent transitions after warmup. See\n",
            "https://mc-stan.org/misc/warnings.html#divergent-transitions-after-warmup\n",
            "to find out why this is a problem and how to eliminate them ",
            "(per chain: ", paste(fit$n_divergent, collapse = " "), "; a higher ",
            "`adapt_delta` or a reparameterisation may help).", call. = FALSE)
  }
  if (identical(fit$sampler, "hmc")) {
    n_cap <- hmc_capped_transitions(fit)
    if (n_cap > 0) {
      warning("There were ", n_cap, " transitions after warmup that hit the trajectory ",
              "cap of ", fit$max_leapfrog, " leapfrog steps (`max_leapfrog`, the ",
              "counterpart of max_treedepth). Increase `max_leapfrog` above ",
              fit$max_leapfrog, ". See\n",
              "https://mc-stan.org/misc/warnings.html#maximum-treedepth-exceeded",
              call. = FALSE)
    }
  }
  if (!isTRUE(getOption("clbayes.check_convergence", TRUE))) return(invisible())
  d <- fit$draws
  chains <- dim(d)[2L]
  per <- lapply(seq_len(dim(d)[3L]), function(j) matrix(d[, , j], dim(d)[1L], chains))
  rhat <- vapply(per, .rhat, numeric(1))
  if (any(rhat > 1.05, na.rm = TRUE)) {
    warning("The largest R-hat is ", round(max(rhat, na.rm = TRUE), digits = 2),
            " (", dimnames(d)[[3L]][which.max(rhat)], "), indicating chains have not mixed.\n",
            "Running the chains for more iterations may help. See\n",
            "https://mc-stan.org/misc/warnings.html#r-hat", call. = FALSE)
  }
  ess_min <- min(100 * chains, 400)
  if (any(vapply(per, .ess_bulk, numeric(1)) < ess_min, na.rm = TRUE)) {
    warning("Bulk Effective Samples Size (ESS) is too low, ",
            "indicating posterior means and medians may be unreliable.\n",
            "Running the chains for more iterations may help. See\n",
            "https://mc-stan.org/misc/warnings.html#bulk-ess", call. = FALSE)
  }
  if (any(vapply(per, .ess_tail, numeric(1)) < ess_min, na.rm = TRUE)) {
    warning("Tail Effective Samples Size (ESS) is too low, indicating ",
            "posterior variances and tail quantiles may be unreliable.\n",
            "Running the chains for more iterations may help. See\n",
            "https://mc-stan.org/misc/warnings.html#tail-ess", call. = FALSE)
  }
  invisible()
}

# Transitions after warmup (iterations x chains, thinned ones included)
# whose trajectory the cap `max_leapfrog` cut. (The engine also keeps the
# ChEES length at most step size x max_leapfrog while it adapts, so after
# warmup this is rare; whether that clamp held the length back in warmup
# is not recorded.)
hmc_capped_transitions <- function(fit) {
  its <- seq_len(fit$n_iter %||% dim(fit$draws)[1L])
  sum(hmc_iteration_params(fit, its)$capped)
}

# What a slice run says about itself besides sampler_warnings(): chains that disagree at the end of
# warmup, updates stuck at the shrinkage limit (a funnel's neck or a
# density with no mass near the chain); R-hat and ESS of the kept draws
# are sampler_warnings()'s.
slice_warnings <- function(res, warmup, warmup_extend, vars) {
  if (isTRUE(res$warmup_rhat > 1.1)) {
    warning(sprintf(paste0("the chains disagree at the end of warmup (split R-hat ",
                           "%.3g in its second half%s): the draws may not be from ",
                           "the target; increase `warmup`%s"),
                    res$warmup_rhat,
                    if (warmup_extend > 0) sprintf(", after %d iterations", warmup)
                    else "",
                    if (warmup_extend == 0) " or set `warmup_extend`" else
                      " or `warmup_extend`, or reparameterise"),
            call. = FALSE)
  }
  if (res$n_stuck > 0) {
    warning(sprintf(paste0("%.0f updates found no point of their slice after %d ",
                           "shrinkage rounds and kept their point: the density ",
                           "changes scale sharply where the chains went (e.g. a ",
                           "funnel's neck); the draws may be biased there: ",
                           "reparameterise (e.g. non-centred)"),
                    res$n_stuck, 200L), call. = FALSE)
  }
}
