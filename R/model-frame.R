# glm_model()'s formula form: the model frame and design matrix as glm()
# builds them (factors, interactions, na.action), and the response checked
# against the family.

glm_model_formula <- function(formula, data, family, prior, prior_intercept, prior_aux,
                              na.action) {
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
  mf <- stats::model.frame(formula, data = data %||% environment(formula),
                           na.action = na.action, drop.unused.levels = TRUE)
  dropped <- attr(mf, "na.action")
  if (length(dropped) > 0L) {
    message(sprintf("glm_model: %d row(s) with missing values dropped (na.action = %s)",
                    length(dropped), class(dropped)[1L]))
  }
  if (!is.null(stats::model.offset(mf))) {
    stop("`formula` has an offset: offsets are not supported yet", call. = FALSE)
  }
  mt <- attr(mf, "terms")
  if (attr(mt, "response") == 0L) stop("`formula` must have a response", call. = FALSE)
  X <- stats::model.matrix(mt, mf)
  if (nrow(X) == 0L) stop("`data` has no complete rows", call. = FALSE)
  qx <- qr(X)
  if (qx$rank < ncol(X)) {
    stop(sprintf("`formula` gives collinear columns in the design matrix (%s): drop them",
                 paste(colnames(X)[qx$pivot[-seq_len(qx$rank)]], collapse = ", ")),
         call. = FALSE)
  }
  has_intercept <- attr(mt, "intercept") == 1L
  x <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  dimnames(x) <- list(NULL, colnames(x))
  resp <- glm_response(stats::model.response(mf), fam$stan)
  model <- glm_model_build(resp, x, fam$stan, prior, prior_intercept, prior_aux,
                           n_categories = 1L, has_intercept = has_intercept,
                           names = c(if (has_intercept) "(Intercept)", colnames(x)))
  model$family_object <- fam$object
  model$formula <- formula
  model$terms <- mt
  model$xlevels <- stats::.getXlevels(mt, mf)
  model$contrasts <- attr(X, "contrasts")
  model$na_action <- dropped
  model
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
