# The families of glm_model(): the core's one table of families
# (glm::family_table in inst/include/clbayes/glm/family.hpp, exported as a
# data frame), R's family objects mapped onto it, and what the fit methods
# need of each family in R: the draws of y (posterior_predict) and its log
# density (log_lik), written once here.

# One row per family: name (the core's; Stan's *_glm name for the first
# four), r_name (R's family name), extra ("sigma", "phi", "shape", "lambda",
# "cuts" or ""), scalar (one linear predictor), link (the canonical one),
# links (comma-separated, R's make.link names).
glm_family_table <- local({
  table <- NULL
  function() {
    if (is.null(table)) table <<- .cpp_glm_family_table()
    table
  }
})

glm_families <- function() glm_family_table()$name

family_row <- function(stan) {
  t <- glm_family_table()
  as.list(t[t$name == stan, , drop = FALSE])
}

glm_extra_name <- function(stan) family_row(stan)$extra

#' Negative binomial family (mean and precision)
#'
#' The family object of the negative binomial with mean `mu` and precision
#' `phi` (variance `mu + mu^2 / phi`), Stan's `neg_binomial_2`, for
#' [glm_model()]. `phi` is a parameter of the model, with prior `prior_aux`.
#'
#' @param link The link: `"log"` (the default), `"identity"` or `"sqrt"`,
#'   as rstanarm's `neg_binomial_2()`.
#' @return An object of class `family`.
#' @examples
#' neg_binomial_2()
#' neg_binomial_2("sqrt")
#' @export
neg_binomial_2 <- function(link = "log") {
  links <- c("log", "identity", "sqrt")
  if (!is.character(link) || length(link) != 1L || !link %in% links) {
    stop(sprintf("`link` of neg_binomial_2() must be one of %s, not %s",
                 paste0("\"", links, "\"", collapse = ", "), deparse(link)[1L]), call. = FALSE)
  }
  structure(c(list(family = "neg_binomial_2", link = link), stats::make.link(link)),
            class = "family")
}

family_error <- function(what) {
  t <- glm_family_table()
  stop(sprintf(paste0("`family` must be gaussian(), binomial(), poisson(), Gamma(), ",
                      "inverse.gaussian(), neg_binomial_2() (or MASS::negative.binomial()), ",
                      "their names, or one of %s; not %s"),
               paste0("\"", t$name, "\"", collapse = ", "), what), call. = FALSE)
}

# R's family object of the core's family `stan` at `link`.
family_object_of <- function(stan, link) {
  switch(family_row(stan)$r_name,
         gaussian = stats::gaussian(link), binomial = stats::binomial(link),
         poisson = stats::poisson(link), neg_binomial_2 = neg_binomial_2(link),
         Gamma = stats::Gamma(link), inverse.gaussian = stats::inverse.gaussian(link),
         NULL)
}

# `family` as list(stan = the core's family name, link = its link's name,
# object = the R family object, NULL for the categorical families).
resolve_family <- function(family) {
  t <- glm_family_table()
  if (is.function(family)) {
    family <- tryCatch(family(), error = function(e) family_error("a function that fails"))
  }
  if (is.character(family)) {
    if (length(family) != 1L || is.na(family)) family_error("a character vector")
    if (family %in% t$name) {
      row <- family_row(family)
      return(list(stan = family, link = row$link, object = family_object_of(family, row$link)))
    }
    if (!family %in% t$r_name || family %in% c("categorical", "ordinal")) {
      family_error(sprintf("\"%s\"", family))
    }
    family <- if (family == "neg_binomial_2") neg_binomial_2() else get(family, asNamespace("stats"))()
  }
  if (!inherits(family, "family")) family_error(sprintf("an object of class %s", class(family)[1L]))
  name <- family$family
  r_name <- if (startsWith(name, "Negative Binomial")) "neg_binomial_2" else name
  if (!r_name %in% t$r_name || r_name %in% c("categorical", "ordinal")) {
    family_error(sprintf("%s()", name))
  }
  row <- as.list(t[t$r_name == r_name, , drop = FALSE])
  links <- strsplit(row$links, ",", fixed = TRUE)[[1L]]
  link <- family$link
  if (!is.character(link) || length(link) != 1L || !link %in% links) {
    stop(sprintf("`family` %s() has the link \"%s\", which clbayes does not support for it; %s() takes %s",
                 name, paste(link, collapse = " "), r_name,
                 paste0("\"", links, "\"", collapse = ", ")), call. = FALSE)
  }
  list(stan = row$name, link = link, object = family)
}

# ---- draws and densities of y given the linear predictors ----

# S x n draws (or densities) from the S x n linear predictors `eta` of model
# `m`; `d` the draws (S rows) with the family's extra parameter; `trials`
# one per row (binomial with two columns) or NULL.
family_mean <- function(m, eta) {
  fam <- m$family_object %||% family_object_of(m$family, m$link %||% family_row(m$family)$link)
  array(fam$linkinv(eta), dim(eta))
}

# The draws of the family's extra parameter (sigma, phi, shape, lambda;
# NULL for a family without one).
family_extra_draws <- function(m, d) {
  nm <- glm_extra_name(m$family)
  if (nm %in% colnames(d)) d[, nm]
}

family_draws <- function(m, eta, d, trials = NULL) {
  mu <- family_mean(m, eta)
  S <- nrow(eta)
  N <- length(mu)
  extra <- family_extra_draws(m, d)
  out <- switch(family_row(m$family)$r_name,
    gaussian = stats::rnorm(N, mu, extra),
    binomial = stats::rbinom(N, rep(trials %||% 1, each = S), mu),
    poisson = stats::rpois(N, mu),
    neg_binomial_2 = stats::rnbinom(N, size = extra, mu = mu),
    Gamma = stats::rgamma(N, shape = extra, rate = extra / mu),
    inverse.gaussian = rinvgauss(N, mu, extra))
  matrix(out, S, ncol(eta))
}

family_log_density <- function(m, y, eta, d, trials = NULL) {
  mu <- family_mean(m, eta)
  S <- nrow(eta)
  n <- ncol(eta)
  y <- matrix(y, S, n, byrow = TRUE)
  extra <- family_extra_draws(m, d)
  out <- switch(family_row(m$family)$r_name,
    gaussian = stats::dnorm(y, mu, extra, log = TRUE),
    binomial = stats::dbinom(y, matrix(trials %||% 1, S, n, byrow = TRUE), mu, log = TRUE),
    poisson = stats::dpois(y, mu, log = TRUE),
    neg_binomial_2 = stats::dnbinom(y, size = extra, mu = mu, log = TRUE),
    Gamma = stats::dgamma(y, shape = extra, rate = extra / mu, log = TRUE),
    inverse.gaussian = dinvgauss_log(y, mu, extra))
  matrix(out, S, n)
}

# The inverse Gaussian with mean mu and shape lambda: log density, and
# draws by Michael, Schucany and Haas (1976): a chi-square(1) root and one
# uniform choice between its two roots.
dinvgauss_log <- function(y, mu, lambda) {
  0.5 * log(lambda / (2 * pi * y^3)) - lambda * (y - mu)^2 / (2 * mu^2 * y)
}

rinvgauss <- function(n, mu, lambda) {
  mu <- rep_len(mu, n)
  lambda <- rep_len(lambda, n)
  v <- stats::rnorm(n)^2
  x <- mu + mu^2 * v / (2 * lambda) -
    mu / (2 * lambda) * sqrt(4 * mu * lambda * v + mu^2 * v^2)
  ifelse(stats::runif(n) <= mu / (mu + x), x, mu^2 / x)
}
