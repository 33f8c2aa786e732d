# The families of glm_model(): R's family objects (and their names, and
# Stan's names) mapped to the likelihoods of the core (Stan's *_glm_lpmf).

stan_families <- c("normal_id", "bernoulli_logit", "poisson_log", "neg_binomial_2_log",
                   "categorical_logit", "ordered_logistic")

#' Negative binomial family (mean and precision)
#'
#' The family object of the negative binomial with mean `mu` and precision
#' `phi` (variance `mu + mu^2 / phi`), Stan's `neg_binomial_2`, for
#' [glm_model()]. `phi` is a parameter of the model, with prior `prior_aux`.
#'
#' @param link The link: only `"log"`.
#' @return An object of class `family`.
#' @examples
#' neg_binomial_2()
#' @export
neg_binomial_2 <- function(link = "log") {
  if (!identical(link, "log")) {
    stop("`link` must be \"log\" for neg_binomial_2()", call. = FALSE)
  }
  structure(c(list(family = "neg_binomial_2", link = "log"), stats::make.link("log")),
            class = "family")
}

family_error <- function(what) {
  stop(sprintf(paste0("`family` must be gaussian(), binomial(), poisson(), ",
                      "neg_binomial_2() (or MASS::negative.binomial()), their names, ",
                      "or one of %s; not %s"),
               paste0("\"", stan_families, "\"", collapse = ", "), what), call. = FALSE)
}

# `family` as list(stan = Stan's family name, object = the R family object,
# or NULL for a Stan name).
resolve_family <- function(family) {
  if (is.function(family)) {
    family <- tryCatch(family(), error = function(e) family_error("a function that fails"))
  }
  if (is.character(family)) {
    if (length(family) != 1L || is.na(family)) family_error("a character vector")
    if (family %in% stan_families) return(list(stan = family, object = NULL))
    family <- switch(family, gaussian = stats::gaussian(), binomial = stats::binomial(),
                     poisson = stats::poisson(), neg_binomial_2 = neg_binomial_2(),
                     family_error(sprintf("\"%s\"", family)))
  }
  if (!inherits(family, "family")) family_error(sprintf("an object of class %s", class(family)[1L]))
  name <- family$family
  stan <- if (identical(name, "gaussian")) "normal_id"
    else if (identical(name, "binomial")) "bernoulli_logit"
    else if (identical(name, "poisson")) "poisson_log"
    else if (identical(name, "neg_binomial_2") || startsWith(name, "Negative Binomial"))
      "neg_binomial_2_log"
    else family_error(sprintf("%s()", name))
  link <- switch(stan, normal_id = "identity", bernoulli_logit = "logit", "log")
  if (!identical(family$link, link)) {
    stop(sprintf("`family` %s() must have the %s link, not \"%s\" (the only one supported)",
                 name, link, paste(family$link, collapse = " ")), call. = FALSE)
  }
  list(stan = stan, object = family)
}
