# glm_model()'s formula form: the model frame and design matrix as glm()
# builds them (factors, interactions, offsets, na.action), and the response
# checked against the family.

# `offset_expr`: the unevaluated `offset` argument (NULL for none).
glm_model_formula <- function(formula, data, family, prior, prior_intercept, prior_aux,
                              na.action, offset_expr = NULL, prior_covariance = decov(),
                              defaults = c(prior = FALSE, prior_intercept = FALSE,
                                           prior_aux = FALSE),
                              extras = list(weights = NULL, subset = NULL)) {
  fam <- resolve_family(family)
  if (fam$stan %in% c("categorical_logit", "ordered_logistic")) {
    stop(sprintf("`family` \"%s\" is available in the matrix form glm_model(y, x, family) only",
                 fam$stan), call. = FALSE)
  }
  if (!is.null(data) && !is.data.frame(data) && !is.list(data) && !is.environment(data)) {
    stop("`data` must be a data frame", call. = FALSE)
  }
  if (has_group_terms(formula)) {
    for (nm in names(extras)[!vapply(extras, is.null, TRUE)]) {
      stop(sprintf("`%s` is not supported yet with group-level terms such as (1 | g)", nm),
           call. = FALSE)
    }
    return(glm_model_multilevel(formula, data, fam, prior, prior_intercept, prior_aux,
                                prior_covariance, defaults, na.action, offset_expr))
  }
  mf <- formula_model_frame(formula, data, na.action, offset_expr, extras)
  dropped <- attr(mf, "na.action")
  if (length(dropped) > 0L) {
    message(sprintf("glm_model: %d row(s) with missing values dropped (na.action = %s)",
                    length(dropped), class(dropped)[1L]))
  }
  offset <- frame_offset(mf, NULL, NULL, nrow(mf), "`data`")
  mt <- attr(mf, "terms")
  if (attr(mt, "response") == 0L) stop("`formula` must have a response", call. = FALSE)
  X <- stats::model.matrix(mt, mf)
  fixed <- fixed_design(X)
  check_has_parameters(X, fam$stan)
  has_intercept <- fixed$has_intercept
  x <- fixed$x
  resp <- glm_response(stats::model.response(mf), fam$stan,
                       check_weights(stats::model.weights(mf), nrow(mf), "`data`"))
  model <- glm_model_centred(resp, x, fam, has_intercept, prior, prior_intercept, prior_aux,
                             defaults, offset)
  model$formula <- formula
  model$offset_call <- offset_expr
  model$weights_call <- extras$weights
  model$terms <- mt
  model$xlevels <- stats::.getXlevels(mt, mf)
  model$contrasts <- attr(X, "contrasts")
  model$na_action <- dropped
  model
}

# The model frame of `formula` in `data` as glm() builds it: the `offset`,
# `weights` and `subset` arguments (unevaluated: `extras` holds the last
# two) evaluated in `data`, then in the formula's environment, and rows
# dropped by `subset` and na.action together (columns "(offset)",
# "(weights)").
formula_model_frame <- function(formula, data, na.action, offset_expr,
                                extras = list(weights = NULL, subset = NULL)) {
  frame_data <- data %||% environment(formula)
  mf_call <- quote(stats::model.frame(formula, data = frame_data, na.action = na.action,
                                      drop.unused.levels = TRUE))
  off <- eval_offset_arg(offset_expr, frame_data, formula, data)
  if (!is.null(off)) mf_call$offset <- off  # the value: model.frame evaluates extras in `data`
  for (nm in c("weights", "subset")) {
    if (is.null(extras[[nm]])) next
    value <- tryCatch(eval(extras[[nm]], frame_data, environment(formula)),
                      error = function(e) {
                        stop(sprintf("`%s` could not be evaluated in `data`: %s", nm,
                                     conditionMessage(e)), call. = FALSE)
                      })
    if (nm == "weights" && !is.null(value) && !is.numeric(value)) {
      stop("`weights` must be a numeric vector", call. = FALSE)
    }
    if (nm == "subset" && !is.null(value) && !is.logical(value) && !is.numeric(value)) {
      stop("`subset` must be a logical or numeric vector of rows", call. = FALSE)
    }
    mf_call[[nm]] <- value
  }
  tryCatch(eval(mf_call), error = function(e) {
    if (grepl("(offset)", conditionMessage(e), fixed = TRUE)) {
      stop("`offset` must have one value per row of the variables of `formula`",
           call. = FALSE)
    }
    if (grepl("(weights)", conditionMessage(e), fixed = TRUE)) {
      stop("`weights` must have one value per row of the variables of `formula`",
           call. = FALSE)
    }
    stop(e)
  })
}

# The offset of the rows of model frame `mf` (n rows, of `what`): the sum of
# its offset() terms and "(offset)" column, plus `extra` (the `offset`
# expression evaluated for these rows, or NULL), or NULL when there is none.
# Errors name `offset`.
frame_offset <- function(mf, extra, expr_label, n, what) {
  off <- tryCatch(stats::model.offset(mf), error = function(e) {
    stop(sprintf("`offset` (the offset() terms of `formula`) must be numeric: %s",
                 conditionMessage(e)), call. = FALSE)
  })
  if (!is.null(extra)) {
    if (!is.numeric(extra) || length(extra) != n) {
      stop(sprintf(paste0("`offset`: the model's offset (%s) gives %d values for the %d rows ",
                          "of %s; give `offset` for them"),
                   expr_label, length(extra), n, what), call. = FALSE)
    }
    off <- (off %||% 0) + as.vector(extra)
  }
  if (is.null(off)) return(NULL)
  if (!is.numeric(off) || length(off) != n) {
    stop(sprintf("`offset` must be numeric with one value per row of %s", what), call. = FALSE)
  }
  if (any(!is.finite(off))) {
    stop(sprintf("`offset` must be finite (no NA, NaN or Inf) in every row of %s used", what),
         call. = FALSE)
  }
  as.double(off)
}

# The response of a formula model: `y` (one value per row, for the core),
# `trials` (binomial with two columns, or proportions with their numbers
# of trials as `weights`, as glm() reads them; else NULL) and the `weights`
# left to multiply the rows' log densities.
glm_response <- function(y, stan, weights = NULL) {
  bad <- function(what) stop(sprintf("`y` (the response of `formula`) must be %s", what),
                             call. = FALSE)
  out <- function(y, trials = NULL, w = weights) list(y = as.double(y), trials = trials, weights = w)
  if (stan == "bernoulli_logit") {
    if (is.matrix(y) && ncol(y) == 2L) {
      if (!is.numeric(y) || any(y < 0) || any(y != round(y))) {
        bad("cbind(successes, failures) with non-negative whole numbers")
      }
      return(out(y[, 1L], as.double(rowSums(y))))
    }
    if (is.matrix(y)) bad("a vector or a two-column matrix cbind(successes, failures)")
    if (is.factor(y)) return(out(y != levels(y)[1L]))
    if (is.logical(y)) return(out(y))
    if (is.numeric(y) && !is.null(weights) && all(y >= 0 & y <= 1)) {
      successes <- y * weights
      if (any(abs(successes - round(successes)) > 1e-8 * pmax(1, weights))) {
        stop(paste0("`weights` with a proportion response are numbers of trials: ",
                    "y * weights must be whole numbers of successes"), call. = FALSE)
      }
      if (any(y != round(y))) return(out(round(successes), weights, NULL))
    }
    if (!is.numeric(y) || any(!y %in% c(0, 1))) {
      bad(paste0("0/1, logical, a factor, cbind(successes, failures), or proportions ",
                 "with their numbers of trials as `weights`, for binomial()"))
    }
    return(out(y))
  }
  if (!is.null(dim(y)) || !is.numeric(y)) bad("a numeric vector")
  r_name <- family_row(stan)$r_name
  if (r_name %in% c("Gamma", "inverse.gaussian") && any(y <= 0)) {
    bad(sprintf("positive for %s()", r_name))
  }
  if (r_name %in% c("poisson", "neg_binomial_2") && (any(y < 0) || any(y != round(y)))) {
    bad("non-negative whole numbers (counts)")
  }
  out(y)
}
