# Per-density cost of glm_model() on the CPU: a batch of P points in one
# call (one pass over x for all of them, value and gradient together)
# against P calls of one point each (one pass a point, as a model that
# evaluates point by point costs), and the formula form against the matrix
# form on the same data (the same evaluator: the costs should agree).
#   Rscript bench/bench_models.R [n] [k]
library(clbayes)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.integer(args[1]) else 20000L
k <- if (length(args) >= 2L) as.integer(args[2]) else 20L
set.seed(15)
x <- matrix(rnorm(n * k), n, k, dimnames = list(NULL, paste0("x", seq_len(k))))
y <- rbinom(n, 1, plogis(drop(x %*% rnorm(k, sd = 0.2))))
d <- data.frame(y = y, x)
m_formula <- glm_model(y ~ ., d, family = binomial())
m_matrix <- glm_model(y, x, "bernoulli_logit")

time_it <- function(f, reps) {
  f()
  t <- system.time(for (r in seq_len(reps)) f())[["elapsed"]]
  t / reps
}
rows <- list()
for (P in c(1L, 8L, 64L, 256L)) {
  pts <- matrix(rnorm(P * (k + 1), sd = 0.1), P, k + 1)
  reps <- max(3L, 256L %/% P)
  batch <- time_it(function() model_log_density(m_formula, pts, backend = "cpu"), reps)
  single <- time_it(function() for (i in seq_len(P))
    model_log_density(m_formula, pts[i, , drop = FALSE], backend = "cpu"), max(1L, reps %/% 4L))
  grad <- time_it(function() clbayes:::.cpp_model_gradient(m_formula, pts), reps)
  mat <- time_it(function() model_log_density(m_matrix, pts, backend = "cpu"), reps)
  rows[[length(rows) + 1L]] <- data.frame(
    P = P, batch_ms = 1e3 * batch, separate_ms = 1e3 * single,
    speedup = single / batch, batch_grad_ms = 1e3 * grad,
    us_per_density_formula = 1e6 * batch / P, us_per_density_matrix = 1e6 * mat / P)
}
cat(sprintf("glm_model bernoulli_logit, n = %d, k = %d, backend = \"cpu\", %s\n", n, k,
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")))
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
