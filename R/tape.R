# Taped R log densities (issue 46): an R `log_density` is recorded once by
# RTMB (R bindings to TMB's automatic differentiation) and the record, the
# tape, is then evaluated in compiled code for every chain's point of a
# batch, its value for slice_sample_mv() and value and gradient together
# for hmc_sample_mv(). The samplers keep calling one R function per batch;
# only that function changes. Bounds stay outside: the samplers transform
# the points and add the Jacobian (mcmc_target(), hmc_gradient()), so a
# tape sees the variables on their own scale.

# TRUE when densities can be taped: RTMB installed and the option
# clbayes.tape not FALSE (FALSE gives the plain R path, as without RTMB).
tape_available <- function() {
  !isFALSE(getOption("clbayes.tape")) && requireNamespace("RTMB", quietly = TRUE)
}

# How the user wrote `log_density`: "matrix" (a points matrix in, one value
# per row out, the samplers' own convention) or "vector" (one parameter
# vector in, one number out, as in Stan). Read from calls of each kind at
# the first initial point; a function that fits neither is left to the
# usual checks as "matrix".
density_form <- function(log_density, x0, ...) {
  fits <- function(val, n) is.numeric(val) && length(val) == n
  two <- rbind(x0, x0, deparse.level = 0)
  as_matrix <- tryCatch(log_density(two, ...), error = function(e) NULL)
  if (fits(as_matrix, 2L)) return("matrix")
  # A function of one vector gives one number, which moves with its
  # argument (a constant, e.g. function(x) 0, is a wrong matrix function).
  as_vector <- tryCatch(log_density(x0, ...), error = function(e) NULL)
  moved <- tryCatch(log_density(x0 + 0.1 * pmax(1, abs(x0)), ...), error = function(e) NULL)
  # (NA: a vector function reading past the end of a short `init`.)
  if (fits(as_vector, 1L) && fits(moved, 1L) &&
      (anyNA(as_vector) || !identical(as_vector, moved))) "vector"
  else "matrix"
}

# The plain R density of a points matrix for either form (a function of one
# vector is called once per row).
rows_density <- function(log_density, form, ...) {
  if (form == "matrix") return(function(points) log_density(points, ...))
  function(points) {
    vapply(seq_len(nrow(points)), function(i) {
      val <- log_density(points[i, ], ...)
      if (!is.numeric(val) || length(val) != 1L) {
        stop(sprintf(paste0("`log_density` (a function of one parameter vector) must ",
                            "return one number, not %s of length %d"),
                     class(val)[1L], length(val)), call. = FALSE)
      }
      as.double(val)
    }, numeric(1))
  }
}

# Tapes made in this R session: a marker (an empty environment) per taped
# density, by token. A taped density whose marker is not the one here (a
# copy made by serialising it: it travelled to a chain group's future, where
# its tapes' external pointers are empty) tapes again, as
# model_rebuild_data() rebuilds a model's device data.
tape_registry <- new.env(parent = emptyenv())

# RTMB's AD versions of base and stats functions (dnorm, rowSums, matrix,
# apply, crossprod, ..., and c() below): a function taped must find these in
# place of the plain ones, which reject AD values (or drop their class), so
# the user's function, and the user's own functions it calls, are given an
# environment that holds them in front of their own. Arithmetic, indexing
# and the Math group dispatch on the AD class and need nothing.
tape_overloads <- function() {
  ns <- asNamespace("RTMB")
  ex <- getNamespaceExports("RTMB")
  masks <- ex[!grepl(".", ex, fixed = TRUE) & vapply(ex, function(nm) {
    exists(nm, envir = baseenv()) || exists(nm, envir = asNamespace("stats"))
  }, logical(1))]
  out <- mget(masks, envir = ns)
  # c() dispatches on its first argument, so c(1, x) with x an AD value
  # would drop x's AD class: any AD argument makes it RTMB's c().
  ad_c <- get("c.advector", envir = ns)
  out$c <- function(...) {
    if (any(vapply(list(...), inherits, logical(1), "advector"))) ad_c(...) else base::c(...)
  }
  out$chol <- function(x, ...) {
    if (inherits(x, "advector") && is.matrix(x) && nrow(x) <= 64L) tape_chol(x) else chol(x, ...)
  }
  out
}

# The Cholesky factor of an AD matrix (upper, as chol() returns it) by
# the column algorithm in taped operations. RTMB's own chol() calls R's
# chol() and its derivative through R at every evaluation of the tape, once
# per point: on the latent GP of bench/bench_taped.R (11 x 11, 16 chains)
# a batch's value and gradient took 4.8 ms with it and 0.66 ms with this,
# whose operations (n^3 / 6 multiply-adds) all run compiled. A matrix that
# is not positive definite gives NaN (read as -Inf) instead of an error.
tape_chol <- function(x) {
  n <- nrow(x)
  L <- 0 * x
  for (j in seq_len(n)) {
    prev <- seq_len(j - 1L)
    L[j, j] <- sqrt(x[j, j] - sum(L[j, prev]^2))
    if (j < n) {
      rows <- (j + 1L):n
      L[rows, j] <- (x[rows, j] - L[rows, prev, drop = FALSE] %*% L[j, prev]) / L[j, j]
    }
  }
  t(L)
}

# `f` with RTMB's overloads in front of its environment, and the same done
# to the functions of the user's it calls (found by name from its
# environment; package functions and primitives are left as they are).
tape_rebind <- function(f, overloads, seen = character()) {
  env <- environment(f)
  if (is.primitive(f) || is.null(env) || isNamespace(env) || identical(env, baseenv())) {
    return(f)
  }
  home <- list2env(overloads, parent = env)
  for (nm in setdiff(codetools::findGlobals(f, merge = FALSE)$functions,
                     c(names(overloads), seen))) {
    fn <- get0(nm, envir = env, mode = "function")
    if (is.null(fn) || is.primitive(fn) || is.null(environment(fn)) ||
        isNamespace(environment(fn)) || identical(environment(fn), baseenv())) next
    assign(nm, tape_rebind(fn, overloads, c(seen, nm)), envir = home)
  }
  environment(f) <- home
  f
}

# What stopped a function from taping, in words: the construct (from
# RTMB's message and the call it came from) and what the user can do.
tape_problem <- function(e) {
  msg <- conditionMessage(e)
  call <- conditionCall(e)
  where <- if (is.call(call) && is.name(call[[1L]])) {
    sprintf(" in `%s`", paste(deparse(call, width.cutoff = 60L, nlines = 1L), collapse = ""))
  } else ""
  what <- if (grepl("Comparison is generally unsafe", msg, fixed = TRUE)) {
    paste0("a comparison of a parameter's value (`if`, `ifelse()`, `<`, `max()`, ",
           "`pmax()`, ...), which a tape cannot follow: write the density without ",
           "branching on parameters (bounds go in `lower` / `upper`)")
  } else if (grepl("type 'complex'", msg, fixed = TRUE)) {
    "`vapply()` over parameter values: use `sapply()` or a `for` loop"
  } else if (grepl("Non-numeric argument|must be numeric|lost class attribute|non-numeric",
                   msg)) {
    paste0("a function RTMB has no automatic-differentiation version of, or one ",
           "called with its namespace (e.g. `stats::dnorm()`: call `dnorm()`); ",
           "RTMB's help lists the functions it differentiates")
  } else {
    "an operation RTMB could not tape"
  }
  sprintf("%s%s (RTMB: %s)", what, where, msg)
}

# The tape of the n-point batch density of `g` (the rebound user function,
# data bound) for k variables, at the points x0 (an n x k matrix):
# "value" (n values) or "gradient" (n values, then the n x k gradient by
# column). The gradient is the reverse pass of the tape of the batch's SUM:
# the rows are separate points, so d sum / d x[i, ] is point i's gradient,
# and one reverse pass gives every point's (issue 46's first route; against
# a per-point tape called once per row as an RTMB atomic function, it was
# as fast or faster on eight schools and a 89-parameter varying-intercept
# model, bench/RESULTS-taped.md).
tape_batch <- function(g, form, x0, what) {
  n <- nrow(x0)
  k <- ncol(x0)
  batch <- function(x) {
    dim(x) <- c(n, k)
    if (form == "matrix") return(g(x))
    out <- x[, 1L]
    for (i in seq_len(n)) out[i] <- g(x[i, ])
    out
  }
  value <- RTMB::MakeTape(batch, c(x0))
  if (length(value(c(x0))) != n) {
    stop(sprintf(paste0("`log_density` must return one value per point (%d), not %d ",
                        "(under taping)"), n, length(value(c(x0)))), call. = FALSE)
  }
  if (what == "value") {
    value$simplify()
    return(value)
  }
  total <- RTMB::MakeTape(function(x) sum(value(x)), c(x0))
  grad <- total$jacfun()
  both <- RTMB::MakeTape(function(x) c(value(x), grad(x)), c(x0))
  both$simplify()
  both
}

# A taped density: `value(points)` (what the slice sampler's C++ calls)
# and, with `gradient = TRUE`, `value(points)` computing the gradient too
# and keeping it for `gradient(points)` at the same points, so that HMC's
# value and gradient of a leapfrog step cost one compiled pass. Tapes are
# made per batch size as sizes come: the first size exactly (the chains of
# a group), any other rounded up to a power of two (the batch padded with
# copies of its first point), as the slice sampler asks for batches of
# every size from 1 to 4 x chains (eight schools, 64 chains). Errors while taping reach the caller (tape_target()).
taped_density <- function(log_density, form, x0, gradient, ...) {
  # The user's function with its data (`...`) bound; `g` is set to its
  # rebound copy when tapes are made.
  g <- NULL
  bound <- function(x) g(x, ...)
  what <- if (gradient) "gradient" else "value"
  k <- length(x0)
  state <- new.env(parent = emptyenv())
  fresh <- function() {
    state$token <- paste(Sys.getpid(), format(Sys.time(), "%OS6"), length(tape_registry))
    state$marker <- new.env(parent = emptyenv())
    assign(state$token, state$marker, envir = tape_registry)
    g <<- tape_rebind(log_density, tape_overloads())
    state$tapes <- list()
    state$exact <- NULL
  }
  # A batch of n points goes to the smallest tape of at least n points
  # (for values, of at most 4n: padding costs what the points cost).
  slack <- if (gradient) Inf else 4
  tape_for <- function(n) {
    if (is.null(state$token) ||
        !identical(get0(state$token, envir = tape_registry), state$marker)) fresh()
    if (is.null(state$exact)) state$exact <- n
    sizes <- as.integer(names(state$tapes))
    sizes <- sizes[sizes >= n & sizes <= slack * n]
    size <- if (length(sizes)) min(sizes) else if (n == state$exact) n else 2^ceiling(log2(n))
    key <- as.character(size)
    if (is.null(state$tapes[[key]])) {
      state$tapes[[key]] <- tape_batch(bound, form, matrix(x0, size, k, byrow = TRUE), what)
    }
    list(tape = state$tapes[[key]], size = size)
  }
  eval_tape <- function(points) {
    n <- nrow(points)
    t <- tape_for(n)
    x <- if (t$size == n) points else points[c(seq_len(n), rep(1L, t$size - n)), , drop = FALSE]
    out <- tryCatch(t$tape(c(x)), error = function(e) NULL)
    if (is.null(out)) out <- tape_by_point(t$tape, x, k, gradient, state)
    list(out = out, n = n, size = t$size)
  }
  if (!gradient) {
    return(list(value = function(points) {
      r <- eval_tape(points)
      r$out[seq_len(r$n)]
    }))
  }
  last <- new.env(parent = emptyenv())
  value <- function(points) {
    r <- eval_tape(points)
    g <- matrix(r$out[-seq_len(r$size)], r$size, k)
    last$points <- points
    last$grad <- g[seq_len(r$n), , drop = FALSE]
    r$out[seq_len(r$n)]
  }
  grad <- function(points, ...) {
    if (!identical(points, last$points)) value(points)
    last$grad
  }
  list(value = value, gradient = grad)
}

# A batch on which the tape fails (e.g. a Cholesky factor of a matrix
# that is not positive definite at a point far out in an early warmup
# trajectory, where Stan rejects the point): the tape does not say at which
# point, so each point is tried alone (a batch of its copies); the points
# that fail get the value NaN (read as -Inf and counted by the sampler, as
# a NaN from an R density) and a zero gradient, the others their values.
# The first failure is reported once, as a warning naming the point.
tape_by_point <- function(tape, x, k, gradient, state) {
  size <- nrow(x)
  fails <- vapply(seq_len(size), function(i) {
    inherits(tryCatch(tape(c(x[rep(i, size), , drop = FALSE])), error = function(e) e),
             "error")
  }, logical(1))
  ok <- which(!fails)
  out <- if (length(ok)) {
    tape(c(x[c(ok, rep(ok[1L], size - length(ok))), , drop = FALSE]))
  } else {
    rep(NaN, size * (1L + gradient * k))
  }
  vals <- rep(NaN, size)
  vals[ok] <- out[seq_along(ok)]
  if (!isTRUE(state$warned)) {
    state$warned <- TRUE
    i <- which(fails)[1L]
    msg <- tryCatch(tape(c(x[rep(i, size), , drop = FALSE])),
                    error = function(e) conditionMessage(e))
    shown <- format(signif(x[i, ], 4))
    warning(sprintf(paste0("`log_density`: its tape failed at some points, read as NaN ",
                           "(outside the support); the first: (%s%s): %s"),
                    paste(utils::head(shown, 10L), collapse = ", "),
                    if (length(shown) > 10L) ", ..." else "", msg), call. = FALSE)
  }
  if (!gradient) return(vals)
  grad <- matrix(0, size, k)
  grad[ok, ] <- matrix(out[-seq_len(size)], size, k)[seq_along(ok), , drop = FALSE]
  c(vals, grad)
}

# The hook of both samplers: `tg` (mcmc_target()) with the R function
# replaced by its tape when `log_density` is a function without `gradient`
# and RTMB is there. `sampler`: "hmc" (value and gradient: `tg$gradient`
# is set; a function that does not tape is an error asking for `gradient`)
# or "slice" (values; a function that does not tape gets one message and
# then runs as it is). Before any sampling the tape is compared with the R
# function at the initial points and a point moved off the first: values
# to rounding and, for HMC, the gradient with central finite differences
# of the R function (check_gradient_fd()), so that a tape never gives
# silently wrong values or gradients.
tape_target <- function(tg, log_density, gradient, init, sampler, ...) {
  if (!is.function(log_density) || !is.null(gradient) || !tape_available()) return(tg)
  if (sampler == "slice" && slice_keeps_r(log_density, init, ...)) return(tg)
  x0 <- init[1L, ]
  form <- density_form(log_density, x0, ...)
  plain <- rows_density(log_density, form, ...)
  plain_target <- function(points) check_density_value(plain(points), points)
  if (form == "vector") tg$target <- plain_target
  shift <- x0 + 0.1 * (-1)^seq_along(x0) * pmax(1, abs(x0))
  inside <- shift > tg$lower & shift < tg$upper
  shift[!inside] <- x0[!inside]
  pts <- unique(rbind(init, shift, deparse.level = 0))
  # An error of the R function itself is the user's, as without a tape;
  # one that suggests `init` of the wrong length says so.
  k <- length(x0)
  want <- tryCatch(plain_target(pts), error = function(e) {
    if (!grepl("subscript out of bounds", conditionMessage(e), fixed = TRUE)) stop(e)
    stop(sprintf(paste0("`log_density` failed at `init` (%s): `init` has %d values; ",
                        "does the function use more parameters?"),
                 conditionMessage(e), k), call. = FALSE)
  })
  if (is.na(want[1L])) {
    stop(sprintf(paste0("`init` must have a finite log density, and `log_density` is ",
                        "%s there: `init` has %d values; is that the number of ",
                        "parameters the function uses?"), want[1L], k), call. = FALSE)
  }
  td <- tryCatch({
    td <- taped_density(log_density, form, x0, sampler == "hmc", ...)
    td$value(init)
    got <- td$value(pts)
    ok <- (is.na(want) & is.na(got)) | (!is.na(got) & want == got) |
      abs(got - want) <= 1e-8 * (1 + abs(want))
    ok[is.na(ok) | !is.finite(want)] <- TRUE
    if (!all(ok)) {
      i <- which(!ok)[1L]
      stop(structure(class = c("clbayes_tape_mismatch", "error", "condition"), list(
        message = sprintf(paste0(
          "its tape gives %.6g at initial point %d where the R function gives %.6g: ",
          "the function turns a parameter into a plain number somewhere (e.g. ",
          "`as.numeric()`, a parameter used as an index, a value computed outside ",
          "the function of its argument), which the tape keeps fixed at the value it ",
          "was recorded with"), got[i], i, want[i]), call = NULL)))
    }
    if (sampler == "hmc") {
      tryCatch(check_gradient_fd(plain_target, td$gradient, pts, tg$lower, tg$upper),
               error = function(e) {
                 stop(structure(class = c("clbayes_tape_mismatch", "error", "condition"),
                                list(message = paste0(
                                  "its taped gradient disagrees with central finite ",
                                  "differences of the R function (",
                                  sub("^.*at the initial points: ", "",
                                      conditionMessage(e)), ")"), call = NULL)))
               })
    }
    td
  }, error = function(e) e)
  if (!inherits(td, "error")) {
    if (sampler == "slice" && !tape_faster(td$value, tg$target, init)) return(tg)
    tg$target <- td$value
    tg$gradient <- td$gradient
    tg$taped <- TRUE
    return(tg)
  }
  why <- if (inherits(td, "clbayes_tape_mismatch")) conditionMessage(td) else tape_problem(td)
  if (sampler == "hmc") {
    stop(sprintf(paste0("`log_density` could not be taped for automatic ",
                        "differentiation: %s. Give `gradient` (an R function of the ",
                        "points matrix returning d log f / d x), or write the density so ",
                        "that it tapes (see ?hmc_sample_mv, \"Taped densities\")"), why),
         call. = FALSE)
  }
  message(sprintf(paste0("`log_density` could not be taped for automatic ",
                         "differentiation, so it runs as R code: %s"), why))
  tg
}

# For the slice sampler, which needs values only: TRUE when `log_density`
# is a function of a points matrix that takes less than 1 ms on the
# initial points (the second of two calls: the first may include R's
# byte compilation). There a tape cannot save much per call, and the R
# function is left as it is, called as without RTMB (two calls more,
# these), with no taping or timing.
slice_keeps_r <- function(log_density, init, ...) {
  first <- tryCatch(log_density(init, ...), error = function(e) NULL)
  if (!is.numeric(first) || length(first) != nrow(init)) return(FALSE)
  t0 <- Sys.time()
  val <- tryCatch(log_density(init, ...), error = function(e) NULL)
  took <- as.double(Sys.time()) - as.double(t0)
  is.numeric(val) && length(val) == nrow(init) && took < 1e-3
}

# Whether the tape's values cost at most 2/3 of the R function's, timed
# on the initial points (each for at least 20 ms). Values only: a
# vectorised R density (R's arithmetic runs over whole vectors) can beat
# a tape, which replays one scalar operation at a time: eight schools
# with 64 chains took 2.5 times as long taped; a density with a loop
# over points or a Cholesky factor per point gains many times
# (bench/RESULTS-taped.md).
tape_faster <- function(taped, plain, points) {
  per_call <- function(f) {
    f(points)
    n <- 0L
    t0 <- proc.time()[["elapsed"]]
    repeat {
      f(points)
      n <- n + 1L
      el <- proc.time()[["elapsed"]] - t0
      if (el >= 0.02 || n >= 1000L) break
    }
    max(el, 1e-6) / n
  }
  per_call(taped) <= per_call(plain) * 2 / 3
}

# Why an R function needs a `gradient` for HMC here: the end of
# hmc_gradient()'s error.
tape_missing_reason <- function() {
  if (!requireNamespace("RTMB", quietly = TRUE)) {
    "or install the RTMB package, with which `log_density` is taped and needs no `gradient`"
  } else {
    "or leave the option clbayes.tape unset, so that `log_density` is taped"
  }
}
