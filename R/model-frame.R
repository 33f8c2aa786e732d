# glm_model()'s formula form: the model frame and design matrix as glm()
# builds them (factors, interactions, offsets, na.action), and the response
# checked against the family.

# `offset_expr`: the unevaluated `offset` argument (NULL for none).
glm_model_formula <- function(formula, data, family, prior, prior_intercept, prior_aux,
                              na.action, offset_expr = NULL, prior_covariance = decov(),
                              defaults = c(prior = FALSE, prior_intercept = FALSE,
                                           prior_aux = FALSE)) {
  fam <- resolve_family(family)
  if (fam$stan %in% c("categorical_logit", "ordered_logistic")) {
    stop(sprintf("`family` \"%s\" is available in the matrix form glm_model(y, x, family) only",
                 fam$stan), call. = FALSE)
  }
  if (is.null(fam$object)) {
    fam$object <- switch(fam$stan, normal_id = stats::gaussian(),
                         bernoulli_logit = stats::binomial(), poisson_log = stats::poisson(),
                         neg_binomial_2_log = neg_binomial_2())
  }
  if (!is.null(data) && !is.data.frame(data) && !is.list(data) && !is.environment(data)) {
    stop("`data` must be a data frame", call. = FALSE)
  }
  if (has_group_terms(formula)) {
    return(glm_model_multilevel(formula, data, fam, prior, prior_intercept, prior_aux,
                                prior_covariance, defaults, na.action, offset_expr))
  }
  mf <- formula_model_frame(formula, data, na.action, offset_expr)
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
  resp <- glm_response(stats::model.response(mf), fam$stan)
  model <- glm_model_centred(resp, x, fam, has_intercept, prior, prior_intercept, prior_aux,
                             defaults, offset)
  model$formula <- formula
  model$offset_call <- offset_expr
  model$terms <- mt
  model$xlevels <- stats::.getXlevels(mt, mf)
  model$contrasts <- attr(X, "contrasts")
  model$na_action <- dropped
  model
}

# The model frame of `formula` in `data` as glm() builds it: the `offset`
# argument evaluated in `data`, then in the formula's environment, and its
# rows dropped by na.action with the others (column "(offset)").
formula_model_frame <- function(formula, data, na.action, offset_expr) {
  frame_data <- data %||% environment(formula)
  mf_call <- quote(stats::model.frame(formula, data = frame_data, na.action = na.action,
                                      drop.unused.levels = TRUE))
  off <- eval_offset_arg(offset_expr, frame_data, formula, data)
  if (!is.null(off)) mf_call$offset <- off  # the value: model.frame evaluates extras in `data`
  tryCatch(eval(mf_call), error = function(e) {
    if (grepl("(offset)", conditionMessage(e), fixed = TRUE)) {
      stop("`offset` must have one value per row of the variables of `formula`",
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
# `trials` (binomial with two columns: successes + failures, else NULL).
glm_response <- function(y, stan) {
  bad <- function(what) stop(sprintf("`y` (the response of `formula`) must be %s", what),
                             call. = FALSE)
  if (stan == "bernoulli_logit") {
    if (is.matrix(y) && ncol(y) == 2L) {
      if (!is.numeric(y) || any(y < 0) || any(y != round(y))) {
        bad("cbind(successes, failures) with non-negative whole numbers")
      }
      return(list(y = as.double(y[, 1L]), trials = as.double(rowSums(y))))
    }
    if (is.matrix(y)) bad("a vector or a two-column matrix cbind(successes, failures)")
    if (is.factor(y)) return(list(y = as.double(y != levels(y)[1L]), trials = NULL))
    if (is.logical(y)) return(list(y = as.double(y), trials = NULL))
    if (!is.numeric(y) || any(!y %in% c(0, 1))) {
      bad("0/1, logical, a factor or cbind(successes, failures) for binomial()")
    }
    return(list(y = as.double(y), trials = NULL))
  }
  if (!is.null(dim(y)) || !is.numeric(y)) bad("a numeric vector")
  if (stan != "normal_id" && (any(y < 0) || any(y != round(y)))) {
    bad("non-negative whole numbers (counts)")
  }
  list(y = as.double(y), trials = NULL)
}
