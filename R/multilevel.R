# Multilevel glm_model() / lm_model(): lme4's formula syntax for
# group-level terms, parsed by lme4 itself (glFormula), with rstanarm's
# stan_glmer parameterisation (glm_model_centred()). The C++ core
# (models/group_effects.hpp) builds b = T z and adds Z b to the linear
# predictor in the likelihood's pass over the data; this file builds the
# model object and turns the sampled parameters into the variables rstanarm
# reports (b[...], Sigma[...]).

# Does `formula` have a group-level term, a call of `|` or `||`?
has_group_terms <- function(formula) {
  has_bar <- function(e) {
    is.call(e) && (identical(e[[1L]], as.name("|")) || identical(e[[1L]], as.name("||")) ||
                     any(vapply(as.list(e)[-1L], has_bar, logical(1))))
  }
  inherits(formula, "formula") && has_bar(formula[[length(formula)]])
}

# The model object of glm_model()'s formula form with group-level terms.
# `defaults`: which of prior, prior_intercept and prior_aux the user left
# at their defaults (glm_model_centred()).
glm_model_multilevel <- function(formula, data, fam, prior, prior_intercept, prior_aux,
                                 prior_covariance, defaults, na.action, offset_expr) {
  if (!requireNamespace("lme4", quietly = TRUE)) {
    stop("`formula` has group-level terms such as (1 | g): they need the lme4 package ",
         "(install.packages(\"lme4\"))", call. = FALSE)
  }
  if (!isTRUE(family_row(fam$stan)$scalar)) {
    stop(sprintf(paste0("`family` %s has no multilevel form: group-level terms are for ",
                        "families with one linear predictor"), fam$stan),
         call. = FALSE)
  }
  frame_data <- data %||% environment(formula)
  bars <- group_bars(formula)
  check_group_bars(bars, frame_data)
  off <- eval_offset_arg(offset_expr, frame_data, formula, data)
  parsed <- parse_group_terms(formula, frame_data, na.action, off)
  fr <- parsed$fr
  dropped <- attr(fr, "na.action")
  if (length(dropped) > 0L) {
    message(sprintf("glm_model: %d row(s) with missing values dropped (na.action = %s)",
                    length(dropped), class(dropped)[1L]))
  }
  fixed <- fixed_design(parsed$X)
  x <- fixed$x
  resp <- glm_response(stats::model.response(fr), fam$stan)
  offset <- frame_offset(fr, NULL, NULL, nrow(fr), "`data`")
  terms <- group_terms_of(parsed$reTrms, bars, fr)
  cov <- check_prior_covariance(prior_covariance, length(terms))
  block <- group_block(terms, cov, fam$stan, resp)
  model <- glm_model_centred(resp, x, fam, fixed$has_intercept, prior, prior_intercept,
                             prior_aux, defaults, offset, groups = block)
  class(model) <- c("clbayes_glmer_model", class(model))
  model$group_terms <- terms
  model$prior_covariance <- cov
  model$formula <- formula
  model$offset_call <- offset_expr
  model$terms <- stats::terms(lme4::nobars(formula))
  attr(model$terms, "dataClasses") <- attr(attr(fr, "terms"), "dataClasses")
  model$xlevels <- stats::.getXlevels(model$terms, fr)
  model$contrasts <- attr(parsed$X, "contrasts")
  model$na_action <- dropped
  model$reported_names <- multilevel_reported_names(model)
  model
}

# The bars of `formula` (with || split into uncorrelated terms), each as
# list(lhs, group, label), label as lme4 names the term.
group_bars <- function(formula) {
  bars <- tryCatch(lme4::findbars(lme4::expandDoubleVerts(formula)), error = function(e) {
    stop(sprintf("`formula`: lme4 cannot parse its group-level terms: %s",
                 conditionMessage(e)), call. = FALSE)
  })
  lapply(bars, function(b) {
    if (!is.call(b) || length(b) != 3L) {
      stop(sprintf("`formula`: lme4 cannot parse the group-level term (%s)",
                   paste(deparse(b), collapse = " ")), call. = FALSE)
    }
    list(lhs = b[[2L]], group = b[[3L]], label = paste(deparse(b), collapse = " "))
  })
}

# Each term's variables are in `data`, and its grouping factor has no NA
# and at least two levels: errors name the term.
check_group_bars <- function(bars, data) {
  cols <- if (is.environment(data)) NULL else names(data)
  for (b in bars) {
    term <- sprintf("the group-level term (%s)", b$label)
    vars <- unique(c(all.vars(b$lhs), all.vars(b$group)))
    found <- vapply(vars, function(v) {
      v %in% cols || (is.null(cols) && exists(v, envir = data))
    }, logical(1))
    if (!all(found)) {
      stop(sprintf("`formula`: %s uses %s, not a column of `data`", term,
                   paste0("`", vars[!found], "`", collapse = ", ")), call. = FALSE)
    }
    g <- tryCatch(eval(b$group, data), error = function(e) {
      stop(sprintf("`formula`: the grouping factor of %s could not be evaluated: %s", term,
                   conditionMessage(e)), call. = FALSE)
    })
    if (anyNA(g)) {
      stop(sprintf(paste0("`formula`: the grouping factor of %s has missing values in %d ",
                          "row(s): drop those rows or give them a level"), term, sum(is.na(g))),
           call. = FALSE)
    }
    if (length(unique(g)) < 2L) {
      stop(sprintf(paste0("`formula`: the grouping factor of %s has %d level: a group-level ",
                          "term needs at least two"), term, length(unique(g))), call. = FALSE)
    }
  }
  invisible()
}

# The `offset` argument evaluated in `data` (NULL for none), as
# formula_model_frame() evaluates it for glm_model().
eval_offset_arg <- function(offset_expr, frame_data, formula, data) {
  if (is.null(offset_expr)) return(NULL)
  off <- tryCatch(eval(offset_expr, frame_data, environment(formula)), error = function(e) {
    stop(sprintf("`offset` could not be evaluated in `data`: %s", conditionMessage(e)),
         call. = FALSE)
  })
  if (is.null(off)) return(NULL)
  if (!is.numeric(off) || (!is.null(dim(off)) && min(dim(off)) > 1L)) {
    stop("`offset` must be a numeric vector", call. = FALSE)
  }
  if (is.data.frame(data) && length(off) != nrow(data)) {
    stop(sprintf("`offset` must have one value per row of `data` (%d), not %d",
                 nrow(data), length(off)), call. = FALSE)
  }
  as.vector(off)
}

# lme4::glFormula() on the formula: the model frame (NA rows dropped by
# na.action, unused levels dropped), the fixed design X and the terms Z.
parse_group_terms <- function(formula, data, na.action, off) {
  ctrl <- lme4::glmerControl(check.nlev.gtreq.5 = "ignore", check.nlev.gtr.1 = "stop",
                             check.nobs.vs.rankZ = "ignore", check.nobs.vs.nlev = "ignore",
                             check.nobs.vs.nRE = "ignore", check.response.not.const = "ignore")
  args <- list(formula = formula, data = data, family = stats::binomial(),
               na.action = na.action, control = ctrl)
  if (!is.null(off)) args$offset <- off
  tryCatch(do.call(lme4::glFormula, args), error = function(e) {
    msg <- conditionMessage(e)
    if (grepl("(offset)", msg, fixed = TRUE)) {
      stop("`offset` must have one value per row of the variables of `formula`", call. = FALSE)
    }
    stop(sprintf("`formula`: lme4 could not build the model: %s", msg), call. = FALSE)
  })
}

# The fixed-effect design X without its intercept column, and whether it had
# one (glm_model()'s formula form, with or without group-level terms): no
# rows, a non-finite value or collinear columns are an error.
fixed_design <- function(X) {
  if (nrow(X) == 0L) stop("`data` has no complete rows", call. = FALSE)
  check_design_finite(X)
  qx <- qr(X)
  if (qx$rank < ncol(X)) {
    stop(sprintf("`formula` gives collinear columns in the design matrix (%s): drop them",
                 paste(colnames(X)[qx$pivot[-seq_len(qx$rank)]], collapse = ", ")),
         call. = FALSE)
  }
  x <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  dimnames(x) <- list(NULL, colnames(x))
  list(x = x, has_intercept = "(Intercept)" %in% colnames(X))
}

# The terms of lme4's reTrms, in its order, each as list(group (the
# grouping factor's name), cnms (the term's columns), levels, level (the
# level of each row, 1-based), z (the term's columns, rows x p), lhs and
# group_expr (to rebuild them for new data) and xlev (the levels of the
# factors among the columns)).
group_terms_of <- function(re, bars, fr) {
  labels <- vapply(bars, `[[`, "", "label")
  assign <- attr(re$flist, "assign")
  lapply(seq_along(re$cnms), function(t) {
    f <- re$flist[[assign[t]]]
    p <- length(re$cnms[[t]])
    zt <- methods::as(re$Ztlist[[t]], "TsparseMatrix")
    z <- matrix(0, length(f), p)
    z[cbind(zt@j + 1L, zt@i %% p + 1L)] <- zt@x
    at <- match(names(re$Ztlist)[t], labels)  # lme4 names each term by its bar
    b <- bars[[if (is.na(at)) t else at]]
    lhs_terms <- stats::terms(eval(call("~", b$lhs)))
    list(group = names(re$cnms)[t], cnms = re$cnms[[t]], levels = levels(f),
         level = as.integer(f), z = z, lhs = lhs_terms, group_expr = b$group, label = b$label,
         xlev = stats::.getXlevels(lhs_terms, fr))
  })
}

# The group-level block of the sampled parameters: names, bounds, starting
# values, the prior table's rows, and the core's description of each term
# (`terms` as group_terms_of(), `cov` as check_prior_covariance()).
group_block <- function(terms, cov, stan, resp) {
  gaussian <- stan == "normal_id"
  s_y <- if (gaussian) stats::sd(resp$y) else 1
  if (!is.finite(s_y) || s_y <= 0) s_y <- 1
  q <- sum(group_term_sizes(terms))
  rows <- list(prior_rows_of("normal", q, "z_b", location = 0, scale = 1))
  names <- paste0("z_b[", seq_len(q), "]")
  lower <- rep(-Inf, q)
  upper <- rep(Inf, q)
  init <- rep(0, q)
  covariance <- vector("list", length(terms))
  for (t in seq_along(terms)) {
    p <- length(terms[[t]]$cnms)
    ct <- cov[[t]]
    tag <- function(what, n) if (n == 1L) sprintf("%s[%d]", what, t) else
      sprintf("%s[%d,%d]", what, t, seq_len(n))
    if (ct$dist == "decov") {
      rows <- c(rows, list(prior_rows_of("gamma", 1L, "prior_covariance", shape = ct$shape)))
      names <- c(names, tag("tau", 1L))
      lower <- c(lower, 0)
      upper <- c(upper, Inf)
      init <- c(init, 0.5)
      if (p > 1L) {
        rows <- c(rows, list(prior_rows_of("gamma", p, "prior_covariance",
                                           shape = ct$concentration)))
        names <- c(names, tag("zeta", p))
        lower <- c(lower, rep(0, p))
        upper <- c(upper, rep(Inf, p))
        init <- c(init, rep(1, p))
      }
      covariance[[t]] <- list(prior = "decov", scale = ct$scale, dispersion = gaussian)
    } else {
      sd_scale <- ct$scale * (if (isTRUE(ct$autoscale)) s_y else 1)
      rows <- c(rows, list(prior_rows_of("student_t", p, "prior_covariance", df = ct$df,
                                         location = 0, scale = sd_scale)))
      names <- c(names, tag("sd", p))
      lower <- c(lower, rep(0, p))
      upper <- c(upper, rep(Inf, p))
      init <- c(init, rep(0.5 * s_y, p))
      covariance[[t]] <- list(prior = "lkj", scale = 1, dispersion = FALSE)
    }
    if (p > 1L) {
      shapes <- onion_beta_shapes(ct$regularization, p)
      rows <- c(rows, list(prior_rows_of("beta", p - 1L, "prior_covariance",
                                         shape = shapes$shape1, shape2 = shapes$shape2)))
      names <- c(names, tag("rho", p - 1L))
      lower <- c(lower, rep(0, p - 1L))
      upper <- c(upper, rep(1, p - 1L))
      init <- c(init, rep(0.5, p - 1L))
      n_zt <- p * (p - 1L) / 2 - 1L  # row r of the onion takes r values, r = 2 .. p - 1
      if (n_zt > 0) {
        rows <- c(rows, list(prior_rows_of("normal", n_zt, "prior_covariance", location = 0,
                                           scale = 1)))
        names <- c(names, tag("z_T", n_zt))
        lower <- c(lower, rep(-Inf, n_zt))
        upper <- c(upper, rep(Inf, n_zt))
        init <- c(init, rep(0.5, n_zt))  # away from z_T = 0, where its direction is undefined
      }
    }
  }
  core <- lapply(terms, function(t) {
    list(level = t$level - 1L, z = t$z, n_levels = length(t$levels), name = "formula")
  })
  list(priors = bind_prior_rows(rows), names = names, lower = lower, upper = upper,
       init = init, terms = core, covariance = covariance)
}

# The onion method's beta shapes for a p x p LKJ(regularization)
# correlation (rstanarm's decov_lp): the first correlation's, then one per
# further row.
onion_beta_shapes <- function(regularization, p) {
  nu <- regularization + 0.5 * (p - 2)
  shape1 <- nu
  shape2 <- nu
  for (j in seq_len(p - 2L) + 1L) {
    nu <- nu - 0.5
    shape1 <- c(shape1, 0.5 * j)
    shape2 <- c(shape2, nu)
  }
  list(shape1 = shape1, shape2 = shape2)
}

# The names of the variables a fit reports, as rstanarm prints them: the
# fixed effects, b[<coef> <group>:<level>], sigma or phi, and
# Sigma[<group>:<coef>,<coef>] (lower triangles).
multilevel_reported_names <- function(model) {
  b <- unlist(lapply(model$group_terms, function(t) {
    sprintf("b[%s %s:%s]", rep(t$cnms, length(t$levels)), t$group,
            rep(t$levels, each = length(t$cnms)))
  }))
  sigma <- unlist(lapply(model$group_terms, function(t) sigma_entries(t)$names))
  aux <- intersect(c("sigma", "phi"), model$names)
  c(model$fixed_names, b, aux, sigma)
}

# The reported variables at the sampled draws `D` (draws x sampled
# parameters): the fixed effects (fixed_effect_draws()), b and Sigma from
# the core's construction.
multilevel_reported_draws <- function(model, D) {
  fixed <- fixed_effect_draws(model, D)
  model$use_device <- FALSE
  gq <- .cpp_model_group_quantities(model, D)
  n_b <- sum(group_term_sizes(model$group_terms))
  aux <- D[, match(intersect(c("sigma", "phi"), model$names), model$names), drop = FALSE]
  out <- cbind(fixed, gq[, seq_len(n_b), drop = FALSE], aux,
               gq[, n_b + seq_len(ncol(gq) - n_b), drop = FALSE])
  colnames(out) <- model$reported_names
  out
}

# Which terms `re.form` keeps: NULL all, NA (or ~0) none, or a formula
# whose group-level terms are among the model's.
kept_group_terms <- function(m, re.form) {
  n <- length(m$group_terms)
  if (is.null(re.form)) return(rep(TRUE, n))
  if (identical(re.form, NA) || (inherits(re.form, "formula") && !has_group_terms(re.form))) {
    return(rep(FALSE, n))
  }
  if (!inherits(re.form, "formula")) {
    stop("`re.form` must be NULL (every group-level term), NA (none) or a formula of ",
         "group-level terms", call. = FALSE)
  }
  labels <- vapply(group_bars(re.form), `[[`, "", "label")
  known <- vapply(m$group_terms, `[[`, "", "label")
  unknown <- setdiff(labels, known)
  if (length(unknown) > 0L) {
    stop(sprintf("`re.form`: %s not a group-level term of the model (its terms: %s)",
                 paste0("(", unknown, ")", collapse = ", "),
                 paste0("(", known, ")", collapse = ", ")), call. = FALSE)
  }
  known %in% labels
}

# The group-level rows of a prediction for the terms `re.form` keeps: for
# each, the term's index, the level of each row among the fitted levels
# (NA for a new level, with `label` its name) and the term's columns.
multilevel_rows <- function(m, newdata, re.form) {
  keep <- which(kept_group_terms(m, re.form))
  lapply(keep, function(t) {
    term <- m$group_terms[[t]]
    if (is.null(newdata)) return(list(t = t, level = term$level, z = term$z))
    mf <- tryCatch(stats::model.frame(term$lhs, newdata, xlev = term$xlev,
                                      na.action = stats::na.pass),
                   error = function(e) {
                     stop(sprintf("`newdata`: the columns of the group-level term (%s): %s",
                                  term$label, conditionMessage(e)), call. = FALSE)
                   })
    z <- stats::model.matrix(term$lhs, mf)[, term$cnms, drop = FALSE]
    g <- tryCatch(eval(term$group_expr, newdata, environment(m$formula)), error = function(e) {
      stop(sprintf("`newdata`: the grouping factor of (%s) could not be evaluated: %s",
                   term$label, conditionMessage(e)), call. = FALSE)
    })
    if (anyNA(z) || anyNA(g)) {
      stop(sprintf("`newdata` must have no missing values in the group-level term (%s)",
                   term$label), call. = FALSE)
    }
    g <- as.character(g)
    list(t = t, level = match(g, term$levels), z = unname(z), label = g)
  })
}

# The draws x rows matrix of Z b for the group-level rows `re`
# (multilevel_rows()); a new level takes, per draw, effects drawn from the
# term's N(0, Sigma), one draw per new level shared by its rows.
group_linear_predictor <- function(m, draws, re, n) {
  S <- nrow(draws)
  out <- matrix(0, S, n)
  n_fixed <- length(m$fixed_names)
  first <- n_fixed + c(0, cumsum(group_term_sizes(m$group_terms)))
  for (r in re) {
    term <- m$group_terms[[r$t]]
    p <- length(term$cnms)
    known <- !is.na(r$level)
    for (c in seq_len(p)[any(known)]) {
      cols <- first[r$t] + (r$level[known] - 1L) * p + c
      out[, known] <- out[, known] + draws[, cols, drop = FALSE] * rep(r$z[known, c], each = S)
    }
    if (!all(known)) out[, !known] <- out[, !known] + new_level_effects(m, draws, term, r)
  }
  out
}

# Z b at the rows of new levels of `term`: per draw, effects from N(0,
# Sigma) for each new level (as rstanarm draws them).
new_level_effects <- function(m, draws, term, r) {
  p <- length(term$cnms)
  entries <- sigma_entries(term)
  idx <- entries$index
  sig <- draws[, entries$names, drop = FALSE]
  labels <- unique(r$label[is.na(r$level)])
  rows <- which(is.na(r$level))
  S <- nrow(draws)
  out <- matrix(0, S, length(rows))
  for (s in seq_len(S)) {
    V <- matrix(0, p, p)
    V[idx] <- sig[s, ]
    V[idx[, 2:1, drop = FALSE]] <- sig[s, ]
    L <- t(chol(V, pivot = FALSE))
    b <- L %*% matrix(stats::rnorm(p * length(labels)), p)  # p x new levels
    out[s, ] <- colSums(t(r$z[rows, , drop = FALSE]) * b[, match(r$label[rows], labels),
                                                      drop = FALSE])
  }
  out
}

# Entries of b per term: levels times coefficients.
group_term_sizes <- function(terms) {
  vapply(terms, function(t) length(t$levels) * length(t$cnms), 0)
}

# A term's Sigma entries as the fit reports them: the lower triangle,
# column-major (`index`, row and column) and rstanarm's names.
sigma_entries <- function(term) {
  p <- length(term$cnms)
  index <- which(lower.tri(diag(p), diag = TRUE), arr.ind = TRUE)
  list(index = index, names = sprintf("Sigma[%s:%s,%s]", term$group, term$cnms[index[, 1L]],
                                      term$cnms[index[, 2L]]))
}
