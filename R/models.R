#' Bayesian linear regression
#'
#' The formula form, `lm_model(formula, data, ...)`, is the normal linear
#' model `y ~ normal(X b, sigma)` with `sigma` unknown and rstanarm's
#' priors: it is [glm_model()] with `family = gaussian()` (see there for the
#' formula, the names of the variables, the priors and the default `init`),
#' and its density is evaluated, with its gradient, for every point of a
#' batch in one pass over the data.
#'
#' The matrix form, `lm_model(y, X)`, is the model of Example 1 of Tibbits,
#' Haran and Liechty ("Parallel multivariate slice sampling"): `y = X b + e`
#' with `e ~ N(0, 1)` independent, the variance known, and flat priors on
#' `b`. Its posterior is normal with mean `solve(crossprod(X),
#' crossprod(X, y))` and covariance `solve(crossprod(X))`, which makes it a
#' test of samplers; it is evaluated in C++ as `-0.5 (b - bhat)' X'X (b -
#' bhat)` per point (with its gradient), without a pass over the data.
#'
#' @param formula A model formula, as for [stats::lm()]; or, for the matrix
#'   form, the numeric response vector `y` (finite).
#' @param data A data frame with the variables of `formula` (by default
#'   taken from the formula's environment); or, for the matrix form, the
#'   numeric design matrix `X` with one row per element of `y` and full
#'   column rank (include a column of ones for an intercept; its column
#'   names name the parameters).
#' @param prior,prior_intercept,prior_aux,prior_covariance Priors of the
#'   coefficients, the intercept, `sigma` and (with group-level terms such
#'   as `(1 | g)`) their covariances (formula form only): see [glm_model()],
#'   [priors] and [decov()].
#' @param na.action What to do with rows with missing values (formula form),
#'   as for [stats::model.frame()]; dropped rows are reported in a message.
#' @param offset An offset added to the linear predictor (formula form), as
#'   for [glm_model()]: evaluated in `data`, summed with any `offset()` terms
#'   of `formula`.
#' @param y,X The matrix form called by name: `lm_model(y = y, X = X)` is
#'   `lm_model(y, X)`.
#' @return The formula form: a `clbayes_glm_model` (see [glm_model()]). The
#'   matrix form: an object of class `c("clbayes_lm_model",
#'   "clbayes_model")`, a list with `y`, `X`, `names` (parameter names),
#'   `size` (observations), `mean` and `cov` (the exact posterior mean and
#'   covariance), and `init` (the posterior mean).
#' @seealso [glm_model()], [priors], [slice_sample_mv()]
#' @examples
#' set.seed(1)
#' d <- data.frame(x = rnorm(50))
#' d$y <- 1 + 2 * d$x + rnorm(50, sd = 0.5)
#' m <- lm_model(y ~ x, d)
#' m
#' fit <- slice_sample_mv(m, init = m$init, n_iter = 300, width = 1,
#'                        method = "univariate", chains = 2, seed = 1,
#'                        backend = "cpu")
#' coef(fit)
#' coef(lm(y ~ x, d))
#'
#' # the matrix form: known unit variance, flat priors
#' x <- rnorm(50, mean = 5, sd = sqrt(0.5))
#' X <- cbind(alpha = 1, beta = x)
#' y <- drop(X %*% c(1, 2)) + rnorm(50)
#' m <- lm_model(y, X)
#' m$mean
#' @export
lm_model <- function(formula, data, prior = normal(0, 2.5, autoscale = TRUE),
                     prior_intercept = normal(0, 2.5, autoscale = TRUE),
                     prior_aux = exponential(1, autoscale = TRUE),
                     prior_covariance = decov(), na.action = getOption("na.action"),
                     offset = NULL, y = NULL, X = NULL) {
  offset_expr <- substitute(offset)  # evaluated in `data`, as glm() does
  if (!is.null(y) || !is.null(X)) {
    both <- matrix_form_by_name(y, X, "X", missing(formula) && missing(data))
    formula <- both[[1L]]
    data <- both[[2L]]
  }
  if (!missing(formula)) check_formula_not_string(formula)
  if (inherits(formula, "formula")) {
    defaults <- c(prior = missing(prior), prior_intercept = missing(prior_intercept),
                  prior_aux = missing(prior_aux))
    model <- glm_model_formula(formula, if (missing(data)) NULL else data, stats::gaussian(),
                               prior, prior_intercept, prior_aux, na.action, offset_expr,
                               prior_covariance, defaults)
    model$call <- match.call()
    return(model)
  }
  if (!missing(prior) || !missing(prior_intercept) || !missing(prior_aux) ||
      !missing(prior_covariance)) {
    stop("`prior`, `prior_intercept`, `prior_aux` and `prior_covariance` are for the formula form ",
         "lm_model(formula, data); lm_model(y, X) has flat priors and sigma = 1",
         call. = FALSE)
  }
  if (!is.null(offset_expr)) {
    stop("`offset` is for the formula form lm_model(formula, data) (in lm_model(y, X) ",
         "subtract it from `y`)", call. = FALSE)
  }
  if (missing(data)) stop("`X` must be given: lm_model(y, X) or lm_model(formula, data)",
                          call. = FALSE)
  lm_model_matrix(formula, data)
}

lm_model_matrix <- function(y, X) {
  if (!is.numeric(y) || length(y) < 1L || any(!is.finite(y))) {
    stop("`y` must be a finite numeric vector", call. = FALSE)
  }
  y <- as.double(y)
  if (!is.numeric(X) || !is.matrix(X) || any(!is.finite(X))) {
    stop("`X` must be a finite numeric matrix", call. = FALSE)
  }
  if (nrow(X) != length(y)) {
    stop(sprintf("`X` must have one row per element of `y` (%d), not %d",
                 length(y), nrow(X)), call. = FALSE)
  }
  storage.mode(X) <- "double"
  xtx <- crossprod(X)
  if (qr(X)$rank < ncol(X)) {
    stop("`X` must have full column rank (the posterior under flat priors is ",
         "improper otherwise)", call. = FALSE)
  }
  nm <- colnames(X) %||% paste0("b[", seq_len(ncol(X)), "]")
  cov <- solve(xtx)
  dimnames(cov) <- list(nm, nm)
  mean <- stats::setNames(drop(cov %*% crossprod(X, y)), nm)
  structure(list(y = y, X = X, names = nm, size = length(y), n_obs = length(y),
                 mean = mean, cov = cov, init = mean,
                 lower = rep(-Inf, length(nm)), upper = rep(Inf, length(nm))),
            class = c("clbayes_lm_model", "clbayes_model"))
}

#' @export
print.clbayes_model <- function(x, ...) {
  shown <- if (inherits(x, "clbayes_glmer_model"))
    c(x$fixed_names, intersect(c("sigma", "phi"), x$names),
      sprintf("%d group-level effects and their covariances", length(multilevel_b_names(x))))
    else x$reported_names %||% x$names
  cat(sprintf("<%s> %d observations, parameters: %s\n", class(x)[1L], x$n_obs,
              paste(shown, collapse = ", ")))
  if (inherits(x, "clbayes_glm_model")) {
    cat(sprintf("family: %s%s\n", x$family, if (!is.null(x$offset)) ", with an offset" else ""))
    show <- function(p) if (is.null(p)) "flat" else trimws(utils::capture.output(print(p)))
    cat(sprintf("prior_intercept: %s\nprior: %s\n", show(x$prior_intercept), show(x$prior)))
    extra <- glm_extra_name(x$family)
    if (nzchar(extra) && extra != "cuts") cat(sprintf("prior_aux: %s\n", show(x$prior_aux)))
  }
  if (inherits(x, "clbayes_glmer_model")) {
    cat(sprintf("group-level terms: %s\nprior_covariance: %s\n",
                paste0("(", vapply(x$group_terms, function(t) sprintf("%s [%d levels]", t$label,
                                                                     length(t$levels)), ""),
                       ")", collapse = " + "),
                x$prior_covariance[[1L]]$dist))
  }
  invisible(x)
}

#' Bayesian generalised linear models
#'
#' A GLM posterior for the samplers, written as rstanarm's `stan_glm()`
#' writes it: a formula, an R family object and priors on the
#' coefficients, the intercept and the auxiliary parameter. The likelihood
#' is Stan's `*_glm_lpmf` ([gpu_glm_lp()]); the priors are evaluated in the
#' same C++ call. Every point of a sampler's batch (every chain's proposal)
#' is evaluated in one pass over the data, with its gradient when a
#' gradient sampler asks for it, on the OpenCL device when the sampler's
#' backend is `"opencl"` (the data are uploaded once, when the model is
#' made) and in C++ on the CPU otherwise.
#'
#' @section Families: the families and links of R's [glm()], from the
#'   core's one table of families:
#'   * `gaussian()` (links `"identity"`, `"log"`, `"inverse"`; the variable
#'     `sigma`);
#'   * `binomial()` (`"logit"`, `"probit"`, `"cloglog"`, `"cauchit"`,
#'     `"log"`);
#'   * `poisson()` (`"log"`, `"identity"`, `"sqrt"`);
#'   * a negative binomial with precision `phi` (variance `mu + mu^2 /
#'     phi`): [neg_binomial_2()] (`"log"`, `"identity"`, `"sqrt"`) or
#'     `MASS::negative.binomial(theta)` (`theta` is ignored: `phi` is a
#'     parameter of the model);
#'   * `Gamma()` (`"inverse"`, `"identity"`, `"log"`; the variable `shape`,
#'     rate `shape / mu`, as rstanarm);
#'   * `inverse.gaussian()` (`"1/mu^2"`, `"inverse"`, `"identity"`, `"log"`;
#'     the variable `lambda`, as rstanarm).
#'
#'   Family names work too (`"gaussian"`, `"binomial"`, `"Gamma"`, ...), as
#'   do the core's names (`"normal_id"`, `"bernoulli_logit"`,
#'   `"poisson_log"`, `"neg_binomial_2_log"`, `"gamma"`,
#'   `"inverse_gaussian"`; and, in the matrix form only,
#'   `"categorical_logit"` and `"ordered_logistic"`). The canonical links of
#'   the first four run Stan's own `*_glm` row math; every other link goes
#'   through the mean `mu = g^{-1}(eta)`, on the CPU and the device alike.
#'   A mean outside the family's support (`mu <= 0` for counts and
#'   positive data, as an identity link allows) has log density `-Inf`,
#'   which the samplers reject. Other families and links are an error.
#'
#'   A `binomial()` response may be 0/1, logical, a factor (the first level
#'   is failure, as in [stats::glm()]), a two-column matrix
#'   `cbind(successes, failures)`, or proportions with their numbers of
#'   trials as `weights` (as [stats::glm()] reads them). The core has only a
#'   Bernoulli likelihood, so trials are expanded into one Bernoulli row
#'   per trial (the posterior is the same; the cost grows with the number of
#'   trials). [log_lik()] and [posterior_predict()] still give one column
#'   per row of `data`.
#'
#' @section Formula: Factors, interactions and transformations are expanded
#'   by [stats::model.matrix()], so the variables are named as
#'   `coef(glm(formula, family, data))` names them (`"(Intercept)"`, `"x1"`,
#'   `"groupB"`, `"x1:x2"`, ...), followed by `"sigma"` (gaussian) or
#'   `"phi"` (negative binomial). A formula without an intercept (`y ~ x -
#'   1`) has none. Rows with missing values are handled by `na.action`, with
#'   a message saying how many were dropped. Collinear columns are an error.
#'
#' @section Offsets: As in [stats::glm()], `offset()` terms of the formula
#'   and the `offset` argument (evaluated in `data`, then in the formula's
#'   environment) are summed into one known term of the linear predictor,
#'   `eta = alpha + x beta + offset` (e.g. `offset(log(exposure))` for
#'   counts over exposures). Rows where the offset is missing are dropped by
#'   `na.action` with the others. The offset stays with the data (on the
#'   device too) and is added in the likelihood's pass over the data.
#'   [predict()][predict.clbayes_fit], [posterior_predict()] and
#'   [log_lik()] include it; with `newdata` they evaluate the `offset()`
#'   terms and the `offset` expression in `newdata`, as [stats::predict.glm()]
#'   does, or take their own `offset` argument. In the matrix form `offset`
#'   is a numeric vector, one value per row of `x` (not for
#'   `"categorical_logit"`, where it would cancel).
#'
#' @section Priors: The defaults are rstanarm's, so that the same call
#'   gives the same posterior in both packages: `normal(0, 2.5, autoscale =
#'   TRUE)` on each coefficient, the same on the intercept of the centred
#'   predictors (at location `mean(y)` for a gaussian model with the
#'   identity link, 0 otherwise, as rstanarm's default), and
#'   `exponential(1, autoscale = TRUE)` on `sigma` or `phi`. Autoscaling
#'   (see [priors]) divides each coefficient's scale by the standard
#'   deviation of its predictor and, for a gaussian model, multiplies the
#'   scales by `sd(y)`: for a gaussian model the defaults are `normal(0, 2.5
#'   sd(y) / sd(x_j))`, `normal(mean(y), 2.5 sd(y))` and `exponential(1 /
#'   sd(y))`. Priors you give are used with their own `autoscale` (`FALSE`
#'   unless you set it). rstanarm's prior objects (`rstanarm::normal()`,
#'   ...) are accepted as they are.
#'
#'   `prior` applies to each coefficient (one number, or one location/scale
#'   per coefficient): [normal()], [student_t()], [cauchy()], [laplace()] or
#'   [hs()]; `prior_intercept` to the intercept; `prior_aux` to `sigma` or
#'   `phi` (a `normal()`, `student_t()` or `cauchy()` there is the half
#'   distribution). `NULL` is a flat prior.
#'
#'   The parameterisation is rstanarm's: with an intercept the predictors
#'   are centred, so the sampler draws the intercept of the centred
#'   predictors, `alpha_centred` in the model's `names`, and
#'   `prior_intercept` is its prior; under [hs()] it draws `z_beta[j]` and
#'   the horseshoe's `global`, `local` and `caux` in place of the
#'   coefficients. The fit reports the variables rstanarm reports:
#'   `(Intercept)` (of the predictors as given), the coefficients, and
#'   `sigma` or `phi`. The model keeps the priors as given (`prior`,
#'   `prior_intercept`, `prior_aux`), as adjusted to the data
#'   (`prior_adjusted`), and rstanarm's summary of them (`prior_info`, the
#'   layout of a stanreg's `prior.info`).
#'
#' @section Multilevel models: Group-level terms of lme4's syntax make a
#'   multilevel model, as rstanarm's `stan_glmer()`: `(1 | g)` (varying
#'   intercepts), `(x | g)` (varying intercepts and slopes, correlated), `(x
#'   || g)` (uncorrelated), crossed `(1 | a) + (1 | b)` and nested `(1 |
#'   a/b)`, for the gaussian, binomial, poisson and negative binomial
#'   families. lme4 (a suggested package) parses them, with its rules:
#'   unused factor levels are dropped, and a grouping factor must have at
#'   least two levels and no missing values.
#'
#'   The parameterisation is rstanarm's: the predictors are centred and the
#'   priors are those of the model without group-level terms (see Priors),
#'   each term's effects are non-centred, `b = T z` at each level with `z ~
#'   N(0, I)` and `Sigma = T T'`, and `prior_covariance` ([decov()], the
#'   default, or [lkj()]) gives the prior of each `Sigma`. So one call gives
#'   one posterior in both packages.
#'
#'   The fit reports rstanarm's variables: the fixed effects,
#'   `b[(Intercept) herd:1]` for each term's coefficient and level,
#'   `sigma` or `phi`, and `Sigma[herd:(Intercept),(Intercept)]` for the
#'   lower triangle of each term's covariance (the samplers draw `z`, `tau`
#'   and the covariance's other parameters, named in the model's `names`).
#'   [fixef()], [ranef()], [VarCorr()] and `coef()` (per group) summarise
#'   it as lme4 does, and [predict()][predict.clbayes_fit],
#'   [posterior_predict()] and [log_lik()] take `re.form`, with new levels
#'   drawn from their term's population distribution.
#'
#'   The likelihood keeps Z as each term's levels and columns (never a dense
#'   matrix) and adds `Z b` to every point's linear predictor in the same
#'   pass over the data as `X beta`, on the CPU or the device; the gradient
#'   in `b` is a sum per level. [hmc_sample_mv()] is the sampler to use for
#'   these models (their dimension grows with the number of groups);
#'   [slice_sample_mv()] works too.
#'
#' @section Matrix form: `glm_model(y, x, family)` (positional) keeps the
#'   interface of the likelihood: `x` without an intercept column, the
#'   variables named `alpha`, `beta[<column>]`, then `sigma`, `phi` or the
#'   `cuts`. It is not centred. Its priors default to normal(0, 10) on
#'   `alpha` and `beta` (`prior` and `prior_intercept`, which also covers
#'   the cuts) and exponential(1) on `sigma` or `phi`, none autoscaled
#'   (priors given with `autoscale = TRUE` are autoscaled, against `x` and,
#'   for `"normal_id"`, `y`); `prior` may also be a list with
#'   `mean` and `sd` (the normal prior of every coefficient and cut) and
#'   `rate` (the exponential prior of `sigma` or `phi`).
#'
#' @param formula A model formula, as for [stats::glm()]; or, for the matrix
#'   form, the response `y` (real for `"normal_id"`, 0/1 for
#'   `"bernoulli_logit"`, counts for `"poisson_log"` and
#'   `"neg_binomial_2_log"`, categories `1..C` for `"categorical_logit"` and
#'   `"ordered_logistic"`; a factor is taken by its codes).
#' @param data A data frame with the variables of `formula` (by default
#'   taken from the formula's environment); or, for the matrix form, the
#'   numeric design matrix `x` without an intercept column.
#' @param family An R family object ([gaussian()], [binomial()],
#'   [poisson()], [neg_binomial_2()], [Gamma()], [inverse.gaussian()], with
#'   their links), a family function or name, or a core family name. See
#'   Families.
#' @param prior Prior of the coefficients: [normal()], [student_t()],
#'   [cauchy()], [laplace()], [hs()] or `NULL` (flat); see Priors.
#' @param prior_intercept Prior of the intercept of the centred predictors
#'   (and of the cuts of `"ordered_logistic"`): [normal()], [student_t()],
#'   [cauchy()] or `NULL`.
#' @param prior_aux Prior of `sigma`, `phi`, `shape` or `lambda`:
#'   [exponential()], or the half [normal()], [student_t()] or [cauchy()],
#'   or `NULL` (flat).
#' @param prior_covariance For a formula with group-level terms (see
#'   Multilevel models): [decov()] (the default) or [lkj()].
#' @param na.action What to do with rows with missing values (formula form),
#'   as for [stats::model.frame()].
#' @param offset `NULL`, or an offset added to the linear predictor (see
#'   Offsets): in the formula form an expression evaluated in `data`, as for
#'   [stats::glm()]; in the matrix form a finite numeric vector with one
#'   value per row of `x`.
#' @param weights `NULL`, or prior weights as [stats::glm()]'s: each row's
#'   log density is multiplied by its weight (non-negative, finite). In the
#'   formula form an expression evaluated in `data`; in the matrix form one
#'   value per row of `x`. [log_lik()] returns the weighted log densities,
#'   as rstanarm's. A likelihood with weights is evaluated on the CPU path.
#'   Not yet supported with group-level terms.
#' @param subset `NULL`, or the rows of `data` to use (formula form), as
#'   for [stats::glm()]: an expression evaluated in `data`. Not yet
#'   supported with group-level terms.
#' @param n_categories For `"categorical_logit"` and `"ordered_logistic"`
#'   (matrix form): the number of categories (default `max(y)`).
#' @param y,x The matrix form called by name: `glm_model(y = y, x = x,
#'   family = ...)` is `glm_model(y, x, family)`.
#' @details With `backend = "auto"` the sampler uses the device when one is
#'   selected, is not a CPU device, and `nrow(x) * ncol(x)` is at least
#'   `getOption("clbayes.threshold.glm_model", 1e5)`.
#' @return An object of class `c("clbayes_glm_model", "clbayes_model")`: a
#'   list with `names` (the sampled parameters), `reported_names` (the
#'   variables the fit reports, where they differ: see Priors), `lower` and
#'   `upper` (the support the sampler works on: `sigma` and `phi` positive,
#'   sampled on the log scale), `init` (a named starting point: the
#'   [stats::glm.fit()] estimates, with `sigma` its residual standard
#'   deviation and `phi` a moment estimate, or zeros where that fit fails;
#'   under [hs()] the coefficients at zero), the priors, and what
#'   [predict()][predict.clbayes_fit], [posterior_predict()] and
#'   [log_lik()] need (`x`, `y`, `offset`, `terms`, ...).
#' @seealso [priors], [gpu_glm_lp()], [slice_sample_mv()],
#'   [coef.clbayes_fit()], [posterior_predict()], [log_lik()]
#' @examples
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'   # a multilevel model, as lme4 and rstanarm write it
#'   data(cbpp, package = "lme4")
#'   m <- glm_model(cbind(incidence, size - incidence) ~ period + (1 | herd), cbpp,
#'                  family = binomial())
#'   fit <- hmc_sample_mv(m, n_iter = 200, warmup = 200, chains = 4, seed = 1,
#'                        backend = "cpu")
#'   fixef(fit)
#'   VarCorr(fit)
#' }
#'
#' set.seed(2)
#' d <- data.frame(x1 = rnorm(100), x2 = rnorm(100))
#' d$y <- rbinom(100, 1, plogis(0.5 + d$x1 - d$x2))
#' m <- glm_model(y ~ x1 + x2, d, family = binomial())
#' m
#' fit <- slice_sample_mv(m, init = m$init, n_iter = 300, width = 1,
#'                        method = "univariate", chains = 2, seed = 1,
#'                        backend = "cpu")
#' coef(fit)
#' coef(glm(y ~ x1 + x2, binomial(), d))
#'
#' # counts over exposures: an offset, as in glm()
#' d$days <- runif(100, 1, 10)
#' d$n <- rpois(100, d$days * exp(0.2 + 0.3 * d$x1))
#' m3 <- glm_model(n ~ x1 + offset(log(days)), d, family = poisson())
#' m3$init
#' coef(glm(n ~ x1 + offset(log(days)), poisson(), d))
#'
#' # the matrix form, with Stan's family name
#' x <- cbind(x1 = d$x1, x2 = d$x2)
#' m2 <- glm_model(d$y, x, "bernoulli_logit")
#' m2$names
#' @export
glm_model <- function(formula, data, family = stats::gaussian(),
                      prior = normal(0, 2.5, autoscale = TRUE),
                      prior_intercept = normal(0, 2.5, autoscale = TRUE),
                      prior_aux = exponential(1, autoscale = TRUE),
                      prior_covariance = decov(), na.action = getOption("na.action"),
                      offset = NULL, n_categories = NULL, y = NULL, x = NULL,
                      weights = NULL, subset = NULL) {
  # the formula form evaluates these in `data`, as glm()
  offset_expr <- substitute(offset)
  extras <- list(weights = substitute(weights), subset = substitute(subset))
  if (!is.null(y) || !is.null(x)) {
    both <- matrix_form_by_name(y, x, "x", missing(formula) && missing(data))
    formula <- both[[1L]]
    data <- both[[2L]]
  }
  if (!missing(formula)) check_formula_not_string(formula)
  if (inherits(formula, "formula")) {
    if (!is.null(n_categories)) {
      stop("`n_categories` is for the matrix form glm_model(y, x, family)", call. = FALSE)
    }
    defaults <- c(prior = missing(prior), prior_intercept = missing(prior_intercept),
                  prior_aux = missing(prior_aux))
    model <- glm_model_formula(formula, if (missing(data)) NULL else data, family,
                               prior, prior_intercept, prior_aux, na.action, offset_expr,
                               prior_covariance, defaults, extras)
    model$call <- match.call()
    return(model)
  }
  if (!missing(prior_covariance)) {
    stop("`prior_covariance` is for formulas with group-level terms such as (1 | g)",
         call. = FALSE)
  }
  if (missing(data)) {
    stop("`x` must be given: glm_model(y, x, family) or glm_model(formula, data, family)",
         call. = FALSE)
  }
  if (is.list(prior) && is.null(prior$dist)) {
    legacy <- legacy_prior(prior)
    prior <- legacy$prior
    prior_intercept <- legacy$prior
    prior_aux <- legacy$prior_aux
  } else {
    if (missing(prior)) prior <- normal(0, 10)
    if (missing(prior_intercept)) prior_intercept <- normal(0, 10)
    if (missing(prior_aux)) prior_aux <- exponential(1)
  }
  if (!is.null(subset)) {
    stop("`subset` is for the formula form; subset `y` and `x` themselves", call. = FALSE)
  }
  glm_model_matrix(formula, data, family, prior, prior_intercept, prior_aux, n_categories,
                   offset, weights)
}

# A matrix-form prior list (mean, sd, rate) as prior objects.
legacy_prior <- function(prior) {
  unknown <- setdiff(names(prior) %||% "<unnamed>", c("mean", "sd", "rate"))
  if (length(unknown) > 0L) {
    stop(sprintf(paste0("`prior` has unknown entries (%s): give a prior made by normal(), ",
                        "student_t(), cauchy(), or a list with mean, sd and rate"),
                 paste(unknown, collapse = ", ")), call. = FALSE)
  }
  pr <- utils::modifyList(list(mean = 0, sd = 10, rate = 1), prior)
  for (nm in c("mean", "sd", "rate")) {
    v <- pr[[nm]]
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || (nm != "mean" && v <= 0)) {
      stop(sprintf("`prior$%s` must be a single %s number", nm,
                   if (nm == "mean") "finite" else "positive"), call. = FALSE)
    }
  }
  list(prior = normal(pr$mean, pr$sd), prior_aux = exponential(pr$rate))
}

glm_model_matrix <- function(y, x, family, prior, prior_intercept, prior_aux,
                             n_categories, offset, weights = NULL) {
  fam <- resolve_family(family)
  x <- check_design(x)
  categorical <- fam$stan %in% c("categorical_logit", "ordered_logistic")
  y <- check_glm_y(y, nrow(x))
  offset <- check_glm_offset(offset, nrow(x))
  weights <- check_weights(weights, nrow(x))
  if (!is.null(weights) && categorical) {
    stop(sprintf("`weights` are not supported by %s", fam$stan), call. = FALSE)
  }
  if (!is.null(offset) && fam$stan == "categorical_logit") {
    stop("`offset` is not supported by categorical_logit (an offset shared by every ",
         "category cancels in the softmax)", call. = FALSE)
  }
  if (categorical) {
    if (is.null(n_categories)) n_categories <- max(y)
    if (!is.numeric(n_categories) || length(n_categories) != 1L ||
        n_categories < 2 || n_categories != round(n_categories)) {
      stop("`n_categories` must be a whole number of at least 2", call. = FALSE)
    }
  } else {
    n_categories <- 1L
  }
  xn <- colnames(x) %||% paste0("x", seq_len(ncol(x)))
  nm <- switch(fam$stan,
    categorical_logit = c(
      paste0("alpha[", seq_len(n_categories), "]"),
      paste0("beta[", rep(xn, n_categories), ",", rep(seq_len(n_categories), each = ncol(x)), "]")
    ),
    ordered_logistic = paste0("beta[", xn, "]"),
    c("alpha", paste0("beta[", xn, "]"))
  )
  model <- glm_model_build(list(y = y, trials = NULL), x, fam$stan, prior, prior_intercept,
                           prior_aux, n_categories = n_categories, has_intercept = TRUE,
                           names = nm, offset = offset, link = fam$link, weights = weights)
  model$family_object <- fam$object
  model
}

# The model object from the response `resp` (glm_response()), the design
# `x` (no intercept column), the offset (NULL or one value per row of x)
# and the names of the intercept(s) and coefficients the fit reports,
# `names`; sigma, phi or the cuts are added to them. The priors are
# adjusted as rstanarm adjusts them (adjust_priors(); `link`: the family's
# link, `default_intercept`: prior_intercept is rstanarm's default). The
# sampled parameters differ from the reported ones where `centred` (the
# intercept is that of the centred x: alpha_centred) and under hs() (the
# coefficients' z_beta, and the horseshoe's block after sigma or phi):
# the model's `reported_names` then name what the fit reports
# (model_reported_draws()).
glm_model_build <- function(resp, x, stan, prior, prior_intercept, prior_aux, n_categories,
                            has_intercept, names, offset = NULL, groups = NULL,
                            link = family_row(stan)$link, weights = NULL,
                            default_intercept = FALSE, centred = FALSE) {
  specified <- list(prior = as_model_prior(prior, "prior"),
                    prior_intercept = as_model_prior(prior_intercept, "prior_intercept"),
                    prior_aux = as_model_prior(prior_aux, "prior_aux"))
  extra <- glm_extra_name(stan)
  n_cuts <- if (extra == "cuts") n_categories - 1L else 0L
  n_alpha <- switch(stan, categorical_logit = n_categories, ordered_logistic = 0L,
                    if (has_intercept) 1L else 0L)
  n_beta <- ncol(x) * (if (stan == "categorical_logit") n_categories else 1L)
  n_aux <- as.integer(nzchar(extra) && extra != "cuts")
  horseshoe <- identical(specified$prior$dist, "hs") && n_beta > 0L
  if (horseshoe && stan %in% c("categorical_logit", "ordered_logistic")) {
    stop(sprintf("`prior` hs() is not available for \"%s\"", stan), call. = FALSE)
  }
  pr <- adjust_priors(specified, x, resp$y, stan == "normal_id", link, default_intercept,
                      n_beta)
  priors <- prior_table(pr$adjusted, n_alpha, n_beta, n_aux, n_cuts)
  aux_names <- c(if (n_aux == 1L) extra, if (n_cuts > 0L) paste0("cuts[", seq_len(n_cuts), "]"))
  sampled <- names
  if (centred) sampled[1L] <- "alpha_centred"
  hs <- if (horseshoe) horseshoe_rows(pr$adjusted$prior, n_beta)
  if (horseshoe) sampled[n_alpha + seq_len(n_beta)] <- hs$z_names
  nm <- c(sampled, aux_names, hs$block_names)
  n_fixed <- length(nm)
  # the auxiliary parameter and the horseshoe's block are positive
  lower <- ifelse((seq_along(nm) == length(names) + 1L & n_aux == 1L) | nm %in% hs$block_names,
                  0, -Inf)
  upper <- rep(Inf, length(nm))
  if (!is.null(groups)) {  # a multilevel model's block (R/multilevel.R: group_block())
    priors <- bind_prior_rows(list(priors, groups$priors))
    nm <- c(nm, groups$names)
    lower <- c(lower, groups$lower)
    upper <- c(upper, groups$upper)
  }
  # the core's rows: a two-column binomial response is one Bernoulli row
  # per trial
  data <- glm_model_data(x, resp$y, resp$trials, offset, groups$terms, weights)  # checks y
  xc <- data$x
  yc <- data$y
  oc <- data$offset
  core_groups <- data$groups
  data <- data$data
  model <- structure(list(family = stan, link = link, data = data, priors = priors,
                          prior = pr$specified$prior,
                          prior_intercept = pr$specified$prior_intercept,
                          prior_aux = pr$specified$prior_aux,
                          prior_adjusted = pr$adjusted,
                          prior_info = prior_info(pr, n_alpha > 0L, n_beta > 0L,
                                                  if (n_aux == 1L) extra else NA_character_),
                          horseshoe = if (horseshoe) list(
                            k = n_beta, global_scale = pr$adjusted$prior$global_scale,
                            slab_scale = pr$adjusted$prior$slab_scale),
                          has_intercept = has_intercept,
                          n_categories = as.integer(n_categories), names = nm,
                          reported_names = if (!identical(sampled, names))
                            c(names, if (n_aux == 1L) extra),
                          size = nrow(xc) * ncol(xc), n_obs = nrow(x), device_path = TRUE,
                          threshold_option = "clbayes.threshold.glm_model",
                          threshold = 1e5, use_device = FALSE,
                          lower = lower, upper = upper,
                          x = x, y = resp$y, trials = resp$trials, offset = offset,
                          weights = weights),
                     class = c("clbayes_glm_model", "clbayes_model"))
  model$init <- glm_model_init(model, xc, yc, oc, data$weights)
  if (horseshoe) {  # beta = 0, the horseshoe's scales at 1
    model$init[n_alpha + seq_len(n_beta)] <- 0
    model$init[hs$block_names] <- 1
  }
  if (!is.null(groups)) {
    model$groups <- list(terms = core_groups, covariance = groups$covariance)
    model$init[-seq_len(n_fixed)] <- groups$init
  }
  # One evaluation at a point inside the support checks y against the
  # family (an error names `y`) before any sampling starts.
  check_model_start(model$init, .cpp_model_log_density(model, matrix(model$init, nrow = 1L)),
                    resp$y)
  model
}

# A formula model's fixed effects, parameterised as rstanarm's stan_glm()
# and stan_glmer() parameterise them: with an intercept the predictors are
# centred, so the sampled intercept (alpha_centred) is that of the centred
# predictors and prior_intercept is its prior; the fit reports the
# intercept of the predictors as given, (Intercept) (fixed_effect_draws()).
# The priors are rstanarm's adjusted ones (glm_model_build()); `defaults`:
# which of prior, prior_intercept and prior_aux the user left at their
# defaults (rstanarm's default intercept is at mean(y), gaussian).
glm_model_centred <- function(resp, x, fam, has_intercept, prior, prior_intercept, prior_aux,
                              defaults, offset, groups = NULL) {
  x_center <- if (has_intercept) colMeans(x) else rep(0, ncol(x))
  xc <- if (ncol(x) > 0L) sweep(x, 2L, x_center) else x
  fixed_names <- c(if (has_intercept) "(Intercept)", colnames(x))
  model <- glm_model_build(resp, xc, fam$stan, prior, prior_intercept, prior_aux,
                           n_categories = 1L, has_intercept = has_intercept,
                           names = fixed_names, offset = offset, groups = groups,
                           link = fam$link, weights = resp$weights,
                           default_intercept = isTRUE(defaults[["prior_intercept"]]),
                           centred = has_intercept && ncol(x) > 0L)
  model$x <- x
  model$x_center <- x_center
  model$fixed_names <- fixed_names
  model$family_object <- fam$object
  model
}

# The intercept (of the predictors as given) and the coefficients at the
# sampled draws `D` (draws x sampled parameters): under hs() beta is made
# from z_beta and the horseshoe's block by the core; a centred intercept is
# moved back.
fixed_effect_draws <- function(model, D) {
  k <- ncol(model$x)
  n_alpha <- as.integer(model$has_intercept)
  beta <- if (is.null(model$horseshoe)) {
    D[, n_alpha + seq_len(k), drop = FALSE]
  } else {
    model$use_device <- FALSE
    .cpp_model_coefficients(model_rebuild_data(model), D)
  }
  if (n_alpha == 0L) return(beta)
  alpha <- D[, 1L]
  if (!is.null(model$x_center) && k > 0L) alpha <- alpha - drop(beta %*% model$x_center)
  cbind(alpha, beta)
}

# The variables a model reports (model$reported_names) at the sampled
# draws `D`.
model_reported_draws <- function(model, D) {
  if (inherits(model, "clbayes_glmer_model")) return(multilevel_reported_draws(model, D))
  aux <- D[, match(intersect(glm_extra_name(model$family), model$names), model$names),
           drop = FALSE]
  out <- cbind(fixed_effect_draws(model, D), aux)
  colnames(out) <- model$reported_names
  out
}

# The likelihood's data of a GLM: a two-column binomial response becomes
# one Bernoulli row per trial (x, the offset, the weights and a multilevel
# model's group terms repeated); `data` is its gpu_glm_data.
glm_model_data <- function(x, y, trials, offset = NULL, groups = NULL, weights = NULL) {
  if (!is.null(trials)) {
    rows <- c(rep(seq_along(y), y), rep(seq_along(y), trials - y))
    x <- x[rows, , drop = FALSE]
    y <- rep(c(1, 0), c(sum(y), sum(trials - y)))
    if (!is.null(offset)) offset <- offset[rows]
    if (!is.null(weights)) weights <- weights[rows]
    groups <- lapply(groups, function(t) {
      t$level <- t$level[rows]
      t$z <- t$z[rows, , drop = FALSE]
      t
    })
  }
  list(x = x, y = y, offset = offset, groups = groups, weights = weights,
       data = gpu_glm_data(x, y, offset, weights = weights))
}

# A model whose data handle does not survive serialisation (an external
# pointer, as in a future's worker) gets it again from the host data it
# keeps: glm_model from x, y, trials and offset, gp_model from y, X and
# coords.
model_rebuild_data <- function(model) {
  if (!inherits(model, "clbayes_model") || is.null(model$data$ptr) ||
      !identical(model$data$ptr, methods::new("externalptr"))) {
    return(model)
  }
  if (inherits(model, "clbayes_glm_model")) {
    x <- if (is.null(model$x_center)) model$x else sweep(model$x, 2L, model$x_center)
    model$data <- glm_model_data(x, model$y, model$trials, model$offset, NULL,
                                 model$weights)$data
  } else if (inherits(model, "clbayes_gp_model")) {
    model$data <- gpu_gp_data(model$y, model$X, model$coords)
  } else {
    stop(sprintf("`log_density`: a %s holds device data that cannot be rebuilt here",
                 class(model)[1L]), call. = FALSE)
  }
  model
}

# The matrix form called by name (glm_model(y = , x = ), lm_model(y = ,
# X = )): the response and the design, in place of formula and data.
matrix_form_by_name <- function(y, x, x_arg, positional_missing) {
  if (!positional_missing) {
    stop(sprintf("give either `formula` and `data`, or `y` and `%s`, not both", x_arg),
         call. = FALSE)
  }
  if (is.null(y)) stop(sprintf("`y` must be given with `%s`", x_arg), call. = FALSE)
  if (is.null(x)) stop(sprintf("`%s` must be given with `y`", x_arg), call. = FALSE)
  list(y, x)
}

# A starting point inside the support: the glm.fit() estimates (on at most
# 10^5 evenly spaced rows, with the model's link and weights) with sigma
# their residual sd, phi a moment estimate and a gamma's or inverse
# Gaussian's shape the inverse of glm()'s dispersion; zeros (the extra
# parameter 1, cuts spread around zero) where the fit fails and for the
# categorical families. x, y, offset and weights: the core's rows.
glm_model_init <- function(model, x, y, offset = NULL, weights = NULL) {
  nm <- model$names
  theta <- stats::setNames(numeric(length(nm)), nm)
  extra <- glm_extra_name(model$family)
  aux <- nzchar(extra) && extra != "cuts"
  if (aux) theta[extra] <- 1
  is_cut <- startsWith(nm, "cuts[")
  theta[is_cut] <- seq_len(sum(is_cut)) - (sum(is_cut) + 1) / 2
  if (model$family %in% c("categorical_logit", "ordered_logistic")) return(theta)
  rows <- if (nrow(x) > 1e5) unique(round(seq(1, nrow(x), length.out = 1e5))) else seq_len(nrow(x))
  X <- if (model$has_intercept) cbind(1, x[rows, , drop = FALSE]) else x[rows, , drop = FALSE]
  r_name <- family_row(model$family)$r_name
  fam <- if (r_name == "neg_binomial_2") stats::poisson(model$link)
         else family_object_of(model$family, model$link)
  w <- if (is.null(weights)) rep(1, length(rows)) else weights[rows]
  fit <- tryCatch(suppressWarnings(stats::glm.fit(X, y[rows], weights = w, family = fam,
                                                  offset = offset[rows])),
                  error = function(e) NULL)
  n_coef <- ncol(X)
  # (coefficients beyond 50 on a logit or log scale signal separation)
  if (is.null(fit) || !isTRUE(fit$converged) || any(!is.finite(fit$coefficients)) ||
      (model$link %in% c("logit", "log", "probit", "cloglog", "cauchit") &&
       any(abs(fit$coefficients) > 50)) ||
      !all(is.finite(fit$fitted.values))) {
    if (model$family == "normal_id") theta["sigma"] <- max(stats::sd(y), 1e-3)
    # the intercept at the link of y's mean: inside the support of links such
    # as identity or inverse, where zero is not
    start <- fam$linkfun(mean(if (r_name == "binomial") pmin(pmax(y, 0.01), 0.99) else y))
    if (model$has_intercept && is.finite(start)) theta[1L] <- start
    return(theta)
  }
  theta[seq_len(n_coef)] <- fit$coefficients
  mu <- fit$fitted.values
  r2 <- sum(w * (y[rows] - mu)^2)
  dof <- max(sum(w > 0) - n_coef, 1)
  if (r_name == "gaussian") {
    theta["sigma"] <- max(sqrt(r2 / dof), 1e-3)
  } else if (r_name == "neg_binomial_2") {
    excess <- (r2 - sum(w * mu)) / sum(w * mu^2)  # var = mu + mu^2 / phi
    theta["phi"] <- if (is.finite(excess) && excess > 1e-3) min(1 / excess, 1e3) else 1e3
  } else if (aux) {  # Gamma, inverse.gaussian: shape = 1 / dispersion
    dispersion <- sum(fit$weights * fit$residuals^2) / dof  # glm()'s Pearson estimate
    theta[extra] <- if (is.finite(dispersion) && dispersion > 0) min(max(1 / dispersion, 1e-3), 1e6)
                    else 1
  }
  theta
}

#' Log density of a clbayes model at given points
#'
#' @param model A model object, e.g. from [lm_model()] or [glm_model()].
#' @param points A numeric matrix with one point (parameter vector) per row,
#'   or a vector for a single point.
#' @param backend Where to evaluate: see [backends]. Only models with a
#'   device path use the device.
#' @return The log posterior density, up to an additive constant, at each
#'   row of `points` (`-Inf` outside the support).
#' @examples
#' X <- cbind(1, c(-1, 0, 1, 2))
#' m <- lm_model(c(0.1, 1.2, 1.9, 3.2), X)
#' model_log_density(m, rbind(m$mean, m$mean + 0.1))
#' @export
model_log_density <- function(model, points, backend = getOption("clbayes.backend", "auto")) {
  if (!inherits(model, "clbayes_model")) {
    stop("`model` must be a clbayes model (e.g. lm_model(), glm_model())", call. = FALSE)
  }
  check_points_rows(points, length(model$names))
  if (!is.numeric(points) || length(points) == 0L) {
    stop("`points` must be a numeric matrix (one point per row) or a numeric vector",
         call. = FALSE)
  }
  if (anyNA(points)) {
    stop("`points` must not contain NA or NaN (a log density there is undefined)",
         call. = FALSE)
  }
  if (is.null(dim(points))) points <- matrix(points, nrow = 1L)
  points <- check_numeric_matrix_na_ok(points, "points")
  if (ncol(points) != length(model$names)) {
    stop(sprintf("`points` must have %d columns, one per parameter of the model",
                 length(model$names)), call. = FALSE)
  }
  model$use_device <- model_uses_device(model, backend)
  .cpp_model_log_density(model, points)
}

# Does the model run on the device under `backend`?
model_uses_device <- function(model, backend) {
  if (!isTRUE(model$device_path)) {
    if (identical(resolve_backend(backend, 0, Inf), "opencl")) {
      stop("`backend` is \"opencl\" but this model has no device path; ",
           "use backend = \"cpu\"", call. = FALSE)
    }
    return(FALSE)
  }
  threshold <- getOption(model$threshold_option, model$threshold)
  resolve_backend(backend, model$size, threshold) == "opencl"
}

check_numeric_matrix_na_ok <- function(x, arg) {
  if (!is.numeric(x) || length(dim(x)) != 2L) {
    stop(sprintf("`%s` must be a numeric matrix", arg), call. = FALSE)
  }
  storage.mode(x) <- "double"
  x
}

#' Gaussian-process regression model
#'
#' The linear Gaussian-process model of Examples 2 and 3 of Tibbits, Haran
#' and Liechty ("Parallel multivariate slice sampling"): `y ~ N(X beta,
#' Sigma)` with `Sigma[i, j] = kappa exp(-d_ij / phi)` for `i != j` and
#' `kappa + psi` on the diagonal (or the squared-exponential kernel
#' `kappa exp(-d_ij^2 / (2 phi^2))`), `d_ij` the Euclidean distance between
#' locations. The samplers draw `(kappa, psi, phi)`. For [slice_sample_mv()]
#' each batch of points is one launch of the fused likelihood of
#' [gp_loglik_batched()] (build, factor, solve and reduce per point), on the
#' device when the sampler's backend is `"opencl"`.
#'
#' [hmc_sample_mv()] takes the model too: it asks for the densities with
#' their gradient in `(kappa, psi, phi)`. With `W = Sigma^-1` and
#' `a = W (y - X beta)`, the log-likelihood's derivative in `theta_j` is
#' `(a' S_j a - tr(W S_j)) / 2` with `S_j = dSigma / dtheta_j`, to which the
#' priors' terms are added. It is computed on the CPU, in parallel over the
#' points of a batch (OpenMP), from one Cholesky factor per point and `W`
#' formed from it: about three densities' work. There is no device path for
#' it, so HMC evaluates this model on the CPU whatever its `backend`.
#' On the posterior of Example 2 (dev CPU, one thread, both samplers in one
#' run) HMC reached 1.1, 2.2 and 2.6 times the slice sampler's minimum ES/s
#' at 500, 200 and 60 locations (`bench/RESULTS.md`, "GP gradient on the CPU").
#'
#' @param y Numeric response, one value per location.
#' @param X Covariates, a numeric matrix with one row per location
#'   (include a column of ones for an intercept), or `NULL` for none.
#' @param coords Location coordinates, a numeric matrix with one row per
#'   location.
#' @param priors A list: `kappa` and `psi` as `c(shape, scale)` of their
#'   inverse-gamma priors, `phi` as `c(lower, upper)` of its uniform prior.
#'   Defaults are the paper's Example 2: inverse-gamma(2, 1) and
#'   uniform(0.01, 5).
#' @param cov `"exponential"` or `"squared_exponential"`.
#' @param beta The regression coefficients, fixed during sampling. By
#'   default their generalised least-squares estimate at a starting value of
#'   the covariance parameters: `kappa = psi = var(r) / 2` with `r` the
#'   least-squares residuals, and `phi` a third of the median distance
#'   between locations, moved inside the prior's range. (The paper samples
#'   `beta` too; fixing it at its GLS estimate keeps the sampled target
#'   three-dimensional. The estimate is stored in the model as `beta`.)
#' @details With `backend = "auto"` the sampler uses the device when one is
#'   selected, is not a CPU device, and the number of locations is at least
#'   `getOption("clbayes.threshold.gp_model", 100)`.
#' @return An object of class `c("clbayes_gp_model", "clbayes_model")`,
#'   with `lower` and `upper`: the support the samplers sample on
#'   (`kappa` and `psi` on the log scale, `phi` on the logit scale of its
#'   prior's range), and `init`: the starting covariance parameters
#'   described under `beta`.
#' @seealso [gp_loglik_batched()], [slice_sample_mv()], [hmc_sample_mv()]
#' @examples
#' set.seed(3)
#' n <- 40
#' coords <- matrix(runif(2 * n), n, 2)
#' S <- exp(-as.matrix(dist(coords)) / 0.2) + diag(n)
#' y <- drop(1 + t(chol(S)) %*% rnorm(n))
#' m <- gp_model(y, cbind(1, coords[, 1]), coords)
#' m
#' fit <- slice_sample_mv(m, init = c(1, 1, 0.2), n_iter = 100, width = 0.5,
#'                        chains = 2, seed = 1, backend = "cpu")
#' summary(fit)
#' fit <- hmc_sample_mv(m, n_iter = 200, warmup = 200, chains = 4, seed = 1,
#'                      backend = "cpu")
#' summary(fit)
#' @export
gp_model <- function(y, X = NULL, coords,
                     priors = list(kappa = c(2, 1), psi = c(2, 1), phi = c(0.01, 5)),
                     cov = c("exponential", "squared_exponential"), beta = NULL) {
  cov <- check_choice(cov, c("exponential", "squared_exponential"), "cov")
  if (!is.numeric(y) || !is.null(dim(y)) || length(y) < 2L || any(!is.finite(y))) {
    stop("`y` must be a finite numeric vector with at least two values", call. = FALSE)
  }
  n <- length(y)
  if (is.null(X)) X <- matrix(0, n, 0L)
  if (is.null(dim(X))) X <- matrix(X, ncol = 1L)
  if (!is.numeric(X) || nrow(X) != n || any(!is.finite(X))) {
    stop(sprintf("`X` must be a finite numeric matrix with %d rows", n), call. = FALSE)
  }
  if (missing(coords) || !is.numeric(coords)) {
    stop("`coords` must be a numeric matrix of locations", call. = FALSE)
  }
  if (is.null(dim(coords))) coords <- matrix(coords, ncol = 1L)
  if (nrow(coords) != n || any(!is.finite(coords))) {
    stop(sprintf("`coords` must be a finite numeric matrix with %d rows", n), call. = FALSE)
  }
  if (!is.list(priors) || (length(priors) > 0L &&
      (is.null(names(priors)) || !all(names(priors) %in% c("kappa", "psi", "phi"))))) {
    stop("`priors` must be a list with entries named kappa, psi and phi", call. = FALSE)
  }
  pr <- utils::modifyList(list(kappa = c(2, 1), psi = c(2, 1), phi = c(0.01, 5)), priors)
  for (nm in c("kappa", "psi")) {
    v <- pr[[nm]]
    if (!is.numeric(v) || length(v) != 2L || any(!is.finite(v)) || any(v <= 0)) {
      stop(sprintf("`priors$%s` must be c(shape, scale), both positive", nm), call. = FALSE)
    }
  }
  v <- pr$phi
  if (!is.numeric(v) || length(v) != 2L || any(!is.finite(v)) || v[1] < 0 || v[2] <= v[1]) {
    stop("`priors$phi` must be c(lower, upper) with 0 <= lower < upper", call. = FALSE)
  }
  storage.mode(X) <- "double"
  storage.mode(coords) <- "double"
  start <- gp_start(y, X, coords, pr$phi)
  if (is.null(beta)) {
    beta <- gp_gls_beta(y, X, coords, start, cov)
  } else if (!is.numeric(beta) || length(beta) != ncol(X) || any(!is.finite(beta))) {
    stop(sprintf("`beta` must be %d finite numbers, one per column of `X`", ncol(X)),
         call. = FALSE)
  }
  data <- gpu_gp_data(y, X, coords)
  structure(list(data = data, beta = stats::setNames(as.double(beta), colnames(X)),
                 priors = pr, cov = cov,
                 names = c("kappa", "psi", "phi"), size = n, n_obs = n, device_path = TRUE,
                 threshold_option = "clbayes.threshold.gp_model", threshold = 100,
                 use_device = FALSE, lower = c(0, 0, pr$phi[1]),
                 upper = c(Inf, Inf, pr$phi[2]), init = start,
                 y = y, X = X, coords = coords),
            class = c("clbayes_gp_model", "clbayes_model"))
}

# The starting covariance parameters (see gp_model()'s `beta`): kappa = psi
# = var(r) / 2 with r the least-squares residuals, phi a third of the
# median distance moved inside the prior's range.
gp_start <- function(y, X, coords, phi_range) {
  r <- if (ncol(X) == 0L) y else stats::lm.fit(X, y)$residuals
  s2 <- max(stats::var(r), 1e-8) / 2
  d <- as.matrix(stats::dist(coords))
  med <- stats::median(d[upper.tri(d)])
  phi <- min(max(med / 3, phi_range[1] + 0.01 * diff(phi_range)),
             phi_range[2] - 0.01 * diff(phi_range))
  c(kappa = s2, psi = s2, phi = phi)
}

# GLS estimate of beta at the starting covariance `start` (gp_start()).
gp_gls_beta <- function(y, X, coords, start, cov) {
  if (ncol(X) == 0L) return(numeric())
  d <- as.matrix(stats::dist(coords))
  s2 <- start[["kappa"]]
  phi <- start[["phi"]]
  S <- s2 * (if (cov == "exponential") exp(-d / phi) else exp(-d^2 / (2 * phi^2)))
  diag(S) <- 2 * s2
  R <- chol(S)
  Xw <- backsolve(R, X, transpose = TRUE)
  yw <- backsolve(R, y, transpose = TRUE)
  stats::setNames(drop(qr.coef(qr(Xw), yw)), colnames(X))
}
