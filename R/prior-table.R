# The priors of a GLM as the C++ core reads them: adjusted to the data as
# rstanarm adjusts them (adjust_priors()), recorded as rstanarm's
# prior.info (prior_info(), what prior_summary() shows), and laid out one
# parameter a row (prior_table(); models/priors.hpp), with the regularised
# horseshoe's hyperparameters (models/horseshoe.hpp) as rows of their own.

# rstanarm's adjustment of the priors `priors` (list(prior,
# prior_intercept, prior_aux) from as_model_prior()), as stan_glm.fit() and
# handle_glm_prior() of rstanarm 2.21 do it: a NULL scale takes the default
# (2.5, 2.5, 1); the probit link multiplies the coefficients' and the
# intercept's scales by dnorm(0) / dlogis(0); rstanarm's default intercept
# (`default_intercept`) is at mean(y) for a gaussian model with the identity
# link; then, for autoscaled priors, a gaussian model's scales are
# multiplied by sd(y), and each coefficient's scale is divided by sd(x_j)
# (1 for a constant column), at least 1e-12. `x`: the design without an
# intercept column; `n_beta`: the coefficients (k, or k x C categorical).
# Returns list(specified, adjusted), each as `priors`.
adjust_priors <- function(priors, x, y, gaussian, link, default_intercept,
                          n_beta = ncol(x)) {
  fill <- function(p, default_scale, with_link) {
    if (is.null(p) || p$dist %in% c("hs", "exponential")) return(p)
    p$scale <- p$scale %||% default_scale
    if (with_link && identical(link, "probit")) {
      p$scale <- p$scale * stats::dnorm(0) / stats::dlogis(0)
    }
    p
  }
  spec <- list(prior = fill(priors$prior, 2.5, TRUE),
               prior_intercept = fill(priors$prior_intercept, 2.5, TRUE),
               prior_aux = fill(priors$prior_aux, 1, FALSE))
  identity <- is.null(link) || identical(link, "identity")
  if (!is.null(spec$prior_intercept) && default_intercept) {
    spec$prior_intercept$location <- if (gaussian && identity) mean(y) else 0
  }
  adj <- spec
  s_y <- if (gaussian) stats::sd(y) else 1
  if (!is.finite(s_y) || s_y <= 0) s_y <- 1
  for (nm in names(adj)) {
    p <- adj[[nm]]
    if (is.null(p) || !isTRUE(p$autoscale)) next
    p$scale <- p$scale * s_y
    if (nm == "prior" && ncol(x) > 0L) {
      sx <- apply(x, 2L, function(v) if (length(unique(v)) == 1L) 1 else stats::sd(v))
      p$scale <- pmax(1e-12, p$scale / rep_len(sx, n_beta))
    }
    if (p$dist == "exponential") p$rate <- 1 / p$scale
    adj[[nm]] <- p
  }
  list(specified = spec, adjusted = adj)
}

# rstanarm's prior.info of a fit (summarize_glm_prior()): for prior,
# prior_intercept and prior_aux, the specified prior's dist, location,
# scale, df (rate for an exponential), and adjusted_scale where autoscale
# changed the scale; hs() adds its global and slab numbers. `pr`:
# adjust_priors()'s result; `aux_name`: "sigma", "phi" or NA.
prior_info <- function(pr, has_intercept, has_predictors, aux_name) {
  entry <- function(nm) {
    s <- pr$specified[[nm]]
    a <- pr$adjusted[[nm]]
    if (is.null(s)) return(list(dist = NA, location = NULL, scale = NULL, adjusted_scale = NULL,
                                df = NULL))
    dist <- if (s$dist %in% c("student_t", "cauchy")) {
      if (all(s$df == 1)) "cauchy" else "student_t"
    } else s$dist
    exp <- dist == "exponential"
    n <- if (nm == "prior") max(length(s$location), length(s$scale), length(a$scale)) else 1L
    out <- list(dist = dist, location = if (!exp) rep_len(s$location, n),
                scale = if (!exp) rep_len(s$scale, n),
                adjusted_scale = if (isTRUE(s$autoscale) && !isTRUE(all.equal(s$scale, a$scale)))
                  a$scale,
                df = if (dist %in% c("student_t", "hs")) s$df,
                rate = if (exp) s$rate)
    if (dist == "hs") out[c("global_df", "global_scale", "slab_df", "slab_scale")] <-
      s[c("global_df", "global_scale", "slab_df", "slab_scale")]
    out[!vapply(out, is.null, logical(1))]
  }
  list(prior = if (has_predictors) entry("prior"),
       prior_intercept = if (has_intercept) entry("prior_intercept"),
       prior_aux = if (!is.na(aux_name)) c(entry("prior_aux"), list(aux_name = aux_name)))
}

# The rows of the prior table for `n` parameters under prior `p` (a
# clbayes_prior with its scale filled in, or NULL: flat).
prior_rows <- function(p, n, arg) {
  if (n == 0L) return(NULL)
  if (is.null(p)) return(prior_rows_of("flat", n, arg))
  if (p$dist == "exponential") return(prior_rows_of("exponential", n, arg, scale = p$scale))
  for (field in c("location", "scale", "df")) {
    v <- p[[field]]
    if (!length(v) %in% c(1L, n)) {
      stop(sprintf("`%s` must have %s of length %s (one per %s), not %d", arg, field,
                   if (n == 1L) "1" else paste("1 or", n),
                   if (arg == "prior") "coefficient" else "parameter", length(v)),
           call. = FALSE)
    }
  }
  dist <- switch(p$dist, cauchy = "student_t", p$dist)
  prior_rows_of(dist, n, arg, df = if (dist == "student_t") p$df else 1,
                location = p$location, scale = p$scale)
}

# The regularised horseshoe's rows (models/horseshoe.hpp) for `k`
# coefficients under hs() `p`, with its parameters' names: z_beta (k, one
# row each), then the block global[1], global[2], local[1, ], local[2, ],
# caux[1] (rstanarm's priors_glm.stan: half normals and inverse gammas).
horseshoe_rows <- function(p, k) {
  if (!length(p$df) %in% c(1L, k)) {
    stop(sprintf("`prior` must have df of length %s (one per coefficient), not %d",
                 if (k == 1L) "1" else paste("1 or", k), length(p$df)), call. = FALSE)
  }
  half <- function(v) 0.5 * v
  list(z = prior_rows_of("normal", k, "prior"),
       block = bind_prior_rows(list(
         prior_rows_of("normal", 1L, "prior"),
         prior_rows_of("inv_gamma", 1L, "prior", shape = half(p$global_df),
                       scale = half(p$global_df)),
         prior_rows_of("normal", k, "prior"),
         prior_rows_of("inv_gamma", k, "prior", shape = half(p$df), scale = half(p$df)),
         prior_rows_of("inv_gamma", 1L, "prior", shape = half(p$slab_df),
                       scale = half(p$slab_df)))),
       z_names = sprintf("z_beta[%d]", seq_len(k)),
       block_names = c("global[1]", "global[2]", sprintf("local[1,%d]", seq_len(k)),
                       sprintf("local[2,%d]", seq_len(k)), "caux[1]"))
}

# The table the C++ core reads (one row per parameter, in the order of a
# point): `n_alpha` intercepts under prior_intercept, `n_beta` coefficients
# under prior (under hs() their z), then `n_aux` positive parameters under
# prior_aux, `n_cuts` cut points under prior_intercept, and hs()'s block.
# `priors`: list(prior, prior_intercept, prior_aux), adjusted.
prior_table <- function(priors, n_alpha, n_beta, n_aux, n_cuts = 0L) {
  hs <- if (identical(priors$prior$dist, "hs") && n_beta > 0L)
    horseshoe_rows(priors$prior, n_beta)
  bind_prior_rows(list(prior_rows(priors$prior_intercept, n_alpha, "prior_intercept"),
                       hs$z %||% prior_rows(priors$prior, n_beta, "prior"),
                       prior_rows(priors$prior_aux, n_aux, "prior_aux"),
                       prior_rows(priors$prior_intercept, n_cuts, "prior_intercept"),
                       hs$block))
}

# Rows of the prior table: dist, df, location, scale, arg (the R argument
# errors name), shape and shape2.
prior_rows_of <- function(dist, n, arg, df = 1, location = 0, scale = 1, shape = 1,
                          shape2 = 1) {
  list(dist = rep(dist, n), df = rep_len(df, n), location = rep_len(location, n),
       scale = rep_len(scale, n), arg = rep(arg, n), shape = rep_len(shape, n),
       shape2 = rep_len(shape2, n))
}

bind_prior_rows <- function(parts) {
  parts <- parts[!vapply(parts, is.null, logical(1))]
  fields <- c("dist", "df", "location", "scale", "arg", "shape", "shape2")
  out <- lapply(fields, function(f) {
    v <- unlist(lapply(parts, function(p) p[[f]] %||% rep(1, length(p$dist))), use.names = FALSE)
    v %||% (if (f %in% c("dist", "arg")) character() else numeric())
  })
  stats::setNames(out, fields)
}
