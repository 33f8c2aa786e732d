# hmc_sample_mv (ChEES-HMC, many chains, one batched R call per leapfrog
# step) against rstan's NUTS on a logistic regression posterior in the same
# run: simulated data with known truth (x standard normal, coefficients
# normal(0, 0.2), intercept 0.5), priors normal(0, 2.5) on the coefficients
# and normal(0, 10) on the intercept.
#
#   Rscript bench/bench_hmc.R [small|full] [hmc_warmup] [hmc_iter] [chains] [all|model]
#
# "model" leaves out the R density + gradient run (the slow one on 2 cores)
# and compares glm_model() with NUTS only.
#
# "small": 2000 x 10 (a quick check on 2 cores); "full": 10^4 x 100, the
# issue's case. NUTS: 4 chains, 1000 + 1000 iterations, run one after the
# other (cores = 1; the R density is one R process too), compile time
# excluded. ESS is clbayes's bulk ESS (rank-normalised split R-hat
# machinery, Vehtari et al. 2021) for both samplers; time is wall time of
# the whole run, warmup included. Gradients per effective sample count
# every gradient (warmup included), and after warmup only.

args <- commandArgs(trailingOnly = TRUE)
case <- if (length(args) >= 1) args[[1]] else "small"
hmc_warmup <- if (length(args) >= 2) as.integer(args[[2]]) else 1000L
hmc_iter <- if (length(args) >= 3) as.integer(args[[3]]) else 1000L
hmc_chains <- if (length(args) >= 4) as.integer(args[[4]]) else 16L
with_r_density <- !(length(args) >= 5 && args[[5]] == "model")
suppressPackageStartupMessages(library(clbayes))

dims <- switch(case, small = c(2000, 10), full = c(1e4, 100),
               stop("case must be small or full"))
n <- dims[[1]]
k <- dims[[2]]
set.seed(20261124)
X <- matrix(rnorm(n * k), n, k)
truth <- c(0.5, rnorm(k, 0, 0.2))
Xi <- cbind(1, X)
y <- rbinom(n, 1, plogis(drop(Xi %*% truth)))
prior_sd <- c(10, rep(2.5, k))
vars <- c("alpha", paste0("beta[", seq_len(k), "]"))

# The density and gradient vectorised over chains: one product Xi %*% t(B)
# for all chains. The sampler asks for both at the same points, so the
# gradient reuses the density's linear predictors.
cache <- new.env()
log_density <- function(B) {
  eta <- Xi %*% t(B)
  cache$B <- B
  cache$eta <- eta
  colSums(y * eta - log1p(exp(eta))) - 0.5 * colSums(t(B)^2 / prior_sd^2)
}
gradient <- function(B) {
  eta <- if (identical(B, cache$B)) cache$eta else Xi %*% t(B)
  t(crossprod(Xi, y - plogis(eta))) - sweep(B, 2L, prior_sd^2, "/")
}

ess_min <- function(draws) {  # draws: iteration x chain x variable
  min(vapply(seq_len(dim(draws)[3L]),
             function(j) clbayes:::.ess_bulk(matrix(draws[, , j], dim(draws)[1L])),
             numeric(1)))
}
rhat_max <- function(draws) {
  max(vapply(seq_len(dim(draws)[3L]),
             function(j) clbayes:::.rhat(matrix(draws[, , j], dim(draws)[1L])),
             numeric(1)))
}

cat(sprintf("# logistic regression %d x %d, %s\n", n, k, format(Sys.time(), tz = "UTC", usetz = TRUE)))
hmc <- NULL
if (with_r_density) {
  t0 <- proc.time()[["elapsed"]]
  fit <- hmc_sample_mv(log_density, init = setNames(rep(0, k + 1), vars), gradient = gradient,
                       n_iter = hmc_iter, warmup = hmc_warmup, chains = hmc_chains, seed = 1)
  hmc_time <- proc.time()[["elapsed"]] - t0
  hmc_draws <- as.array(fit)
  hmc <- list(ess = ess_min(hmc_draws), rhat = rhat_max(hmc_draws), time = hmc_time,
              grads = fit$n_gradients,
              grads_sampling = (fit$n_leapfrog - fit$n_leapfrog_warmup) * hmc_chains,
              mean = apply(hmc_draws, 3L, mean), sd = apply(hmc_draws, 3L, sd),
              warmup_time = fit$time[["warmup"]])
}

# The same posterior as a model object: the batched C++ likelihood and
# gradient of glm_model() (one pass over X per leapfrog step for all chains).
colnames(X) <- paste0("x", seq_len(k))
m <- glm_model(y ~ ., data = data.frame(y = y, X), family = binomial(),
               prior = normal(0, 2.5), prior_intercept = normal(0, 10))
t0 <- proc.time()[["elapsed"]]
fit_m <- hmc_sample_mv(m, n_iter = hmc_iter, warmup = hmc_warmup, chains = hmc_chains,
                       seed = 1, backend = "cpu")
model_time <- proc.time()[["elapsed"]] - t0
md <- as.array(fit_m)
model_row <- list(ess = ess_min(md), rhat = rhat_max(md), time = model_time,
                  grads = fit_m$n_gradients,
                  grads_sampling = (fit_m$n_leapfrog - fit_m$n_leapfrog_warmup) * hmc_chains)

nuts <- NULL
if (requireNamespace("rstan", quietly = TRUE)) {
  code <- "
  data { int<lower=0> n; int<lower=0> k; matrix[n, k] X; int<lower=0, upper=1> y[n]; }
  parameters { real alpha; vector[k] beta; }
  model {
    alpha ~ normal(0, 10);
    beta ~ normal(0, 2.5);
    y ~ bernoulli_logit_glm(X, alpha, beta);
  }"
  # Debian's r-cran-rstan without the BH package: the system Boost headers.
  boost <- if (file.exists(rstan::rstan_options("boost_lib"))) NULL else "/usr/include"
  model <- suppressMessages(rstan::stan_model(model_code = code, boost_lib = boost))
  t0 <- proc.time()[["elapsed"]]
  sf <- rstan::sampling(model, data = list(n = n, k = k, X = X, y = y), chains = 4,
                        iter = 2000, warmup = 1000, cores = 1, refresh = 0, seed = 1)
  nuts_time <- proc.time()[["elapsed"]] - t0
  nd <- rstan::extract(sf, pars = c("alpha", "beta"), permuted = FALSE)
  sp <- rstan::get_sampler_params(sf, inc_warmup = TRUE)
  leap <- vapply(sp, function(s) sum(s[, "n_leapfrog__"]), numeric(1))
  leap_sampling <- vapply(sp, function(s) sum(s[1001:2000, "n_leapfrog__"]), numeric(1))
  div <- sum(vapply(sp, function(s) sum(s[1001:2000, "divergent__"]), numeric(1)))
  nuts <- list(ess = ess_min(nd), rhat = rhat_max(nd), time = nuts_time,
               grads = sum(leap), grads_sampling = sum(leap_sampling),
               mean = apply(nd, 3L, mean), sd = apply(nd, 3L, sd), div = div)
}

row <- function(name, r, chains, draws) {
  sprintf("| %s | %d | %d | %.0f | %.4f | %.1f | %.1f | %.1f | %.1f |", name, chains, draws,
          r$ess, r$rhat, r$time, r$ess / r$time, r$grads / r$ess,
          r$grads_sampling / r$ess)
}
cat("\n| sampler | chains | draws kept | min ESS | max R-hat | wall s | min ES/s | grads/ES | grads/ES after warmup |\n")
cat("|---|---|---|---|---|---|---|---|---|\n")
if (!is.null(hmc)) {
  cat(row("hmc_sample_mv (R density + gradient)", hmc, hmc_chains, hmc_iter * hmc_chains), "\n")
}
cat(row("hmc_sample_mv (glm_model, C++ batch)", model_row, hmc_chains,
        hmc_iter * hmc_chains), "\n")
if (!is.null(nuts)) {
  cat(row("rstan NUTS", nuts, 4L, 4000L), "\n")
  ratio <- function(r) if (is.null(r)) NA else (r$ess / r$time) / (nuts$ess / nuts$time)
  cat(sprintf("\nmin ES/s ratio to NUTS: R density %.2f, glm_model %.2f\n",
              ratio(hmc), ratio(model_row)))
}
shown <- if (is.null(hmc)) fit_m else fit
shown_row <- if (is.null(hmc)) model_row else hmc
shown_row$mean <- apply(as.array(shown), 3L, mean)
shown_row$sd <- apply(as.array(shown), 3L, sd)
cat(sprintf(paste0("\nhmc: step size %.3f, trajectory length %.2f, accept %.3f, %d divergent ",
                   "after warmup (+%d in warmup), %.0f leapfrog steps (%.0f in warmup), ",
                   "%.1f ms per step, warmup %.1f s\n"),
            shown$step_size, shown$trajectory_length, shown$accept_rate,
            sum(shown$n_divergent), shown$n_divergent_warmup, shown$n_leapfrog,
            shown$n_leapfrog_warmup, 1e3 * shown_row$time / shown$n_leapfrog,
            shown$time[["warmup"]]))
if (!is.null(nuts)) {
  cat(sprintf("NUTS: %d divergent after warmup\n", nuts$div))
  hmc <- shown_row
  z <- (hmc$mean - nuts$mean) / sqrt(hmc$sd^2 / hmc$ess + nuts$sd^2 / nuts$ess)
  cat(sprintf("hmc against NUTS: max |z| of the means %.2f (min-ESS MCSE), sd ratios %.3f-%.3f\n",
              max(abs(z)), min(hmc$sd / nuts$sd), max(hmc$sd / nuts$sd)))
  cat(sprintf("min ES/s ratio hmc / NUTS: %.2f\n", (hmc$ess / hmc$time) / (nuts$ess / nuts$time)))
}
