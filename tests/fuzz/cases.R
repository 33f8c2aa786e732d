# The fuzz set: every exported function called with bad inputs, one
# argument at a time, on a backend ("cpu" or "opencl"). Sourced by
# tests/fuzz/run.R (the full set, each function's cases in a child R
# process) and by tests/testthat/test-fuzz.R (a fast subset in-process).
#
# A case is list(id, fn, owner, code, expect, ref): `code` is the R code of
# the call (a string, evaluated after the function's `setup`), `expect`
# "error" (it must stop with a message naming an argument in backticks) or
# "value" (it must return what `ref` computes, to 1e-10).

# Bad values, by name: R code for each.
fuzz_values <- c(
  chr = '"a"', chr2 = 'c("a", "b")', lst = "list(1, 2)", fun = "function(x) x",
  null = "NULL", na = "NA", na_real = "NA_real_", nan = "NaN", inf = "Inf",
  ninf = "-Inf", empty = "numeric(0)", neg = "-1", zero = "0", frac = "2.5",
  huge = "1e12", cplx = "1i", df_chr = 'data.frame(a = c("x", "y"))',
  true2 = "c(TRUE, FALSE)", one = "1", vec3 = "c(1, 2, 3)",
  m_na = "matrix(c(4, NA, NA, 4), 2)", m_nan = "matrix(c(4, NaN, NaN, 4), 2)",
  m_inf = "matrix(c(4, Inf, Inf, 4), 2)", m_chr = 'matrix("a", 2, 2)',
  m_rect = "matrix(1, 3, 2)", m_big = "matrix(1, 70000, 1)",
  arr3 = "array(1, c(2, 2, 2))", m_asym = "matrix(c(4, 1, 3, 4), 2)",
  m_notpd = "matrix(c(1, 2, 2, 1), 2)", m_3 = "diag(3)", m_zero_diag = "diag(c(1, 0))",
  enum = '"bogus"', enum_na = "NA_character_",
  gpu = "gpu_matrix(diag(2))", gpu_3 = "gpu_matrix(diag(3))",
  gpu_rect = "gpu_matrix(matrix(1, 3, 2))", gpu_zero_diag = "gpu_matrix(diag(c(1, 0)))"
)

# Bad values for each kind of argument.
fuzz_kinds <- list(
  flag = c("chr", "na", "lst", "true2", "one", "null", "empty", "fun"),
  choice = c("enum", "enum_na", "chr2", "one", "null", "lst", "fun"),
  backend = c("enum", "enum_na", "one", "null", "lst"),
  count = c("chr", "na", "nan", "inf", "neg", "frac", "huge", "empty", "lst", "null",
            "vec3", "cplx"),
  spd = c("chr", "lst", "fun", "null", "na", "empty", "cplx", "df_chr", "m_na", "m_nan",
          "m_inf", "m_chr", "m_rect", "arr3", "m_asym", "m_notpd", "vec3"),
  tri = c("chr", "lst", "fun", "null", "na", "empty", "cplx", "m_na", "m_nan", "m_inf",
          "m_chr", "m_rect", "arr3", "m_zero_diag", "vec3"),
  matrix = c("chr", "lst", "fun", "null", "cplx", "m_na", "m_nan", "m_inf", "m_chr",
             "arr3", "df_chr"),
  matrix2 = c("chr", "lst", "fun", "null", "cplx", "m_na", "m_nan", "m_inf", "m_chr",
              "arr3", "m_3", "vec3", "gpu_3"),
  gpu_bad = c("m_3", "gpu_3", "gpu_rect"),
  numbers = c("chr", "lst", "fun", "na", "nan", "inf", "cplx", "empty", "m_chr"),
  vector = c("chr", "lst", "fun", "null", "na", "nan", "inf", "empty", "cplx", "m_chr"),
  array3 = c("chr", "lst", "fun", "null", "na", "empty", "cplx", "m_na", "m_nan", "m_inf",
             "m_rect", "m_asym", "m_notpd", "gpu"),
  theta = c("chr", "lst", "null", "na", "nan", "m_rect", "m_chr", "cplx", "empty",
            "arr3"),
  platform = c("chr", "na", "neg", "huge", "frac", "lst", "vec3"),
  model = c("chr", "lst", "null", "one", "m_3", "gpu"),
  density = c("chr", "one", "null", "lst", "m_3")
)

# One entry per function: its setup code, a valid call (argument -> code),
# which kind of bad values each argument gets, and who owns the function
# (for the report: "hardening" or the branch that owns it).
fuzz_functions <- function() {
  spd <- "matrix(c(4, 1, 1, 3), 2)"
  low <- "matrix(c(2, 1, 0, 3), 2)"
  glm_setup <- "set.seed(1); gx <- matrix(rnorm(20), 10, 2); gy <- rbinom(10, 1, 0.5)"
  gp_setup <- "set.seed(1); gc <- matrix(runif(20), 10, 2); gyy <- rnorm(10)"
  list(
    list(fn = "gpu_chol", owner = "hardening", setup = "",
         args = list(x = spd, upper = "FALSE", backend = "BACKEND"),
         kinds = list(x = "spd", upper = "flag", backend = "backend")),
    list(fn = "gpu_chol", owner = "hardening", setup = "", tag = "gpu",
         args = list(x = sprintf("gpu_matrix(%s)", spd), upper = "FALSE",
                     backend = "BACKEND"),
         kinds = list(upper = "flag", backend = "backend")),
    list(fn = "gpu_chol_grad", owner = "hardening", setup = "",
         args = list(L = low, L_adj = "matrix(1, 2, 2)", backend = "BACKEND"),
         kinds = list(L = "tri", L_adj = "matrix2", backend = "backend")),
    list(fn = "gpu_tri_inv", owner = "hardening", setup = "",
         args = list(L = low, lower = "TRUE", backend = "BACKEND"),
         kinds = list(L = "tri", lower = "flag", backend = "backend")),
    list(fn = "gpu_tri_inv", owner = "hardening", setup = "", tag = "gpu",
         args = list(L = sprintf("gpu_matrix(%s)", low), lower = "TRUE", backend = "BACKEND"),
         kinds = list(L = c("gpu_rect", "gpu_zero_diag"), lower = "flag")),
    list(fn = "gpu_tri_solve", owner = "hardening", setup = "",
         args = list(L = low, b = "c(1, 2)", lower = "TRUE", backend = "BACKEND"),
         kinds = list(L = "tri", b = "matrix2", lower = "flag", backend = "backend")),
    list(fn = "gpu_tri_solve", owner = "hardening", setup = "", tag = "gpu",
         args = list(L = sprintf("gpu_matrix(%s)", low), b = "c(1, 2)", lower = "TRUE",
                     backend = "BACKEND"),
         kinds = list(L = "gpu_bad", b = "matrix2")),
    list(fn = "gpu_tcrossprod", owner = "hardening", setup = "",
         args = list(x = "matrix(1:6, 2)", backend = "BACKEND"),
         kinds = list(x = c("matrix", "m_big"), backend = "backend")),
    list(fn = "gpu_sum", owner = "hardening", setup = "",
         args = list(x = "c(1, 2, 3)", method = '"kahan"', precision = '"double"',
                     na.rm = "FALSE", backend = "BACKEND"),
         kinds = list(x = c("chr", "lst", "fun", "null", "cplx", "m_chr", "df_chr"),
                      method = "choice", precision = "choice", na.rm = "flag",
                      backend = "backend")),
    list(fn = "gpu_mean", owner = "hardening", setup = "",
         args = list(x = "gpu_matrix(diag(2))", method = '"div2"', na.rm = "TRUE",
                     backend = "BACKEND"),
         kinds = list(method = "choice", na.rm = "flag", backend = "backend")),
    list(fn = "gpu_chol_batched", owner = "hardening", setup = "",
         args = list(a = sprintf("array(%s, c(2, 2, 3))", spd), upper = "FALSE",
                     backend = "BACKEND"),
         kinds = list(a = "array3", upper = "flag", backend = "backend")),
    list(fn = "gpu_solve_batched", owner = "hardening", setup = "",
         args = list(a = sprintf("array(%s, c(2, 2, 3))", spd), b = "matrix(1, 2, 3)",
                     backend = "BACKEND"),
         kinds = list(a = "array3", b = c("chr", "lst", "null", "na", "nan", "inf",
                                           "m_3", "vec3", "m_chr", "gpu"),
                      backend = "backend")),
    list(fn = "gp_loglik_batched", owner = "hardening", setup = gp_setup,
         args = list(y = "gyy", X = "NULL", coords = "gc", beta = "NULL",
                     theta = "c(1, 0.1, 0.5)", cov = '"exponential"', backend = "BACKEND"),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3", "m_chr", "empty"),
                      coords = c("chr", "lst", "null", "na", "vec3", "m_3"),
                      beta = c("chr", "vec3", "na"), theta = "theta", cov = "choice",
                      backend = "backend")),
    list(fn = "gpu_gp_data", owner = "hardening", setup = gp_setup,
         args = list(y = "gyy", X = "NULL", coords = "gc"),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3", "m_chr", "empty", "fun"),
                      X = c("chr", "lst", "m_3", "m_na", "m_chr"),
                      coords = c("chr", "lst", "null", "na", "m_nan", "vec3", "m_3"))),
    list(fn = "gpu_matrix", owner = "hardening", setup = "",
         args = list(x = "diag(2)", view = '"entire"'),
         kinds = list(x = c("matrix", "gpu", "fun"), view = "choice"), device = TRUE),
    list(fn = "gpu_select", owner = "hardening", setup = "",
         args = list(platform = "0", device = "0"),
         kinds = list(platform = "platform", device = "platform"), device = TRUE),
    list(fn = "gpu_glm_lp", owner = "glm-batch", setup = glm_setup,
         args = list(y = "gy", x = "gx", alpha = "0.5", beta = "c(1, -1)",
                     family = '"bernoulli_logit"', gradient = "FALSE", propto = "FALSE",
                     backend = "BACKEND"),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3", "neg", "frac", "m_chr"),
                      x = c("matrix", "m_3", "vec3", "gpu"),
                      alpha = c("chr", "na", "nan", "inf", "vec3", "lst", "null"),
                      beta = c("chr", "na", "nan", "inf", "vec3", "lst", "null", "m_3"),
                      family = "choice", gradient = "flag", propto = "flag",
                      backend = "backend")),
    list(fn = "gpu_glm_data", owner = "glm-batch", setup = glm_setup,
         args = list(x = "gx", y = "gy"),
         kinds = list(x = c("matrix", "m_3", "vec3"),
                      y = c("chr", "lst", "null", "na", "vec3", "m_chr")), device = TRUE),
    list(fn = "glm_model", owner = "models", setup = glm_setup,
         args = list(y = "gy", x = "gx", family = '"bernoulli_logit"'),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3", "neg", "frac"),
                      x = c("matrix", "m_3", "vec3"), family = "choice",
                      prior = c("chr", "one", "lst"))),  # NULL is a flat prior
    list(fn = "lm_model", owner = "models", setup = glm_setup,
         args = list(y = "rnorm(10)", X = "cbind(1, gx)"),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3", "inf"),
                      X = c("matrix", "m_3", "vec3", "gpu"))),
    list(fn = "gp_model", owner = "models", setup = gp_setup,
         args = list(y = "gyy", X = "NULL", coords = "gc", cov = '"exponential"'),
         kinds = list(y = c("chr", "lst", "null", "na", "vec3"),
                      coords = c("chr", "lst", "null", "na", "vec3", "m_3"),
                      cov = "choice", priors = c("chr", "one", "lst", "null"))),
    list(fn = "model_log_density", owner = "models",
         setup = paste(glm_setup, "; gm <- lm_model(rnorm(10), cbind(1, gx))"),
         args = list(model = "gm", points = "rbind(c(0, 0, 0))", backend = "\"cpu\""),
         kinds = list(model = "model",
                      points = c("chr", "lst", "null", "na", "nan", "m_rect", "m_na",
                                 "m_chr", "arr3"),
                      backend = "backend")),
    list(fn = "slice_sample_mv", owner = "slice-defaults", setup = "ld <- function(x) -0.5 * rowSums(x^2)",
         args = list(log_density = "ld", init = "c(0, 0)", n_iter = "10", width = "1",
                     chains = "2", seed = "1", backend = "BACKEND"),
         # (a list with one value per chain is rstan's init; n_iter = NULL
         # is the default size; chains = 1 runs)
         kinds = list(log_density = "density", init = c("chr", "null", "na", "inf",
                                                        "empty", "m_chr"),
                      n_iter = setdiff(fuzz_kinds$count, "null"), width = c("chr", "na", "neg", "zero", "inf", "lst"),
                      chains = c("chr", "na", "neg", "frac", "lst", "inf"),
                      method = "choice", seed = c("chr", "neg", "frac", "lst", "inf"),
                      backend = "backend")),
    list(fn = "hmc_sample_mv", owner = "hmc",
         setup = "ld <- function(x) -0.5 * rowSums(x^2); gr <- function(x) -x",
         args = list(log_density = "ld", init = "c(0, 0)", gradient = "gr", n_iter = "10",
                     warmup = "10", chains = "2", seed = "1", backend = "BACKEND"),
         kinds = list(log_density = "density", init = c("chr", "na", "inf", "empty"),
                      gradient = c("chr", "one", "lst", "fun"),
                      n_iter = setdiff(fuzz_kinds$count, "null"),
                      chains = c("chr", "na", "neg", "frac", "lst", "inf"),
                      metric = "choice", adapt_delta = c("chr", "neg", "zero", "one", "na"),
                      chain_groups = c("chr", "zero", "frac", "huge"),
                      devices = c("chr", "neg", "lst"), seed = c("chr", "neg", "frac"),
                      backend = "backend")),
    list(fn = "normal", owner = "models", setup = "", args = list(location = "0", scale = "1"),
         kinds = list(location = c("chr", "na", "inf", "lst"),
                      scale = c("chr", "neg", "zero", "na", "inf", "lst"))),
    list(fn = "student_t", owner = "models", setup = "",
         args = list(df = "3", location = "0", scale = "1"),
         kinds = list(df = c("chr", "neg", "zero", "na", "lst"), scale = c("neg", "zero"))),
    list(fn = "exponential", owner = "models", setup = "", args = list(rate = "1"),
         kinds = list(rate = c("chr", "neg", "zero", "na", "inf", "lst")))
  )
}

# Expressions with the operators of gpu_matrix (all on the device).
fuzz_operator_cases <- function() {
  a <- "gpu_matrix(matrix(c(2, 1, 1, 3), 2))"
  A <- "matrix(c(2, 1, 1, 3), 2)"
  errors <- c(
    sprintf("%s + 1", a), sprintf("1 - %s", a), sprintf("%s + %s", a, A),
    sprintf("%s * %s", a, a), sprintf("%s / %s", a, a), sprintf("%s ^ 2", a),
    sprintf("%s %%%% 2", a), sprintf("%s %%/%% 2", a), sprintf("%s / 0", a),
    sprintf("%s * 0 / 0", a), sprintf("%s * NA", a), sprintf("%s * Inf", a),
    sprintf("%s * c(1, 2)", a), sprintf('%s * "a"', a), sprintf('"a" * %s', a),
    sprintf("%s + gpu_matrix(diag(3))", a), sprintf("%s %%*%% gpu_matrix(diag(3))", a),
    sprintf('%s %%*%% matrix("a", 2, 2)', a), sprintf("%s %%*%% c(1, 2, 3)", a),
    sprintf("%s %%*%% list(1, 2)", a), sprintf("list(1, 2) %%*%% %s", a),
    sprintf("%s %%*%% c(NA, 1)", a), sprintf("%s %%*%% diag(3)", a),
    sprintf("diag(3) %%*%% %s", a), sprintf("1e308 * %s", a),
    sprintf("%s * 1e308 + %s * 1e308", a, a),
    sprintf("gpu_matrix(%s * 1e200) %%*%% gpu_matrix(%s * 1e200)", A, A),
    sprintf("t(matrix(1, 2, 70000)) %%*%% %s %%*%% matrix(1, 2, 70000)", a),
    sprintf("gpu_tcrossprod(gpu_matrix(%s * 1e200))", A),
    sprintf("gpu_tri_inv(gpu_matrix(diag(c(1e-320, 1))))"),
    sprintf("-%s / 0", a), sprintf("!%s", a), sprintf("%s == 1", a),
    sprintf("1 < %s", a), sprintf("%s & TRUE", a), sprintf("exp(%s)", a),
    sprintf("sqrt(%s)", a), sprintf("sum(%s)", a), sprintf("max(%s)", a),
    sprintf("gpu_matrix(%s)", a), sprintf("t(%s) + gpu_matrix(matrix(1, 3, 2))", a),
    sprintf("gpu_tri_solve(%s, c(1, 2, 3))", a),
    sprintf("gpu_chol_grad(%s, gpu_matrix(diag(3)))", a),
    sprintf("gpu_chol(gpu_matrix(matrix(1, 2, 3)))"),
    sprintf("gpu_chol(gpu_matrix(matrix(c(1, 2, 2, 1), 2)))"),
    sprintf("gpu_chol(gpu_matrix(matrix(c(4, 1, 3, 4), 2)))")
  )
  values <- list(
    c(sprintf("as.matrix(%s %%*%% %s)", a, A), sprintf("%s %%*%% %s", A, A)),
    c(sprintf("as.matrix(%s %%*%% %s)", A, a), sprintf("%s %%*%% %s", A, A)),
    c(sprintf("as.matrix(%s %%*%% c(1, 2))", a), sprintf("%s %%*%% c(1, 2)", A)),
    c(sprintf("as.matrix(c(1, 2) %%*%% %s)", a), sprintf("c(1, 2) %%*%% %s", A)),
    c(sprintf("as.matrix(-%s / 4)", a), sprintf("-%s / 4", A)),
    c(sprintf("as.matrix(t(%s) - 2 * %s)", a, a), sprintf("t(%s) - 2 * %s", A, A)),
    c(sprintf("gpu_sum(%s * 3, na.rm = TRUE)", a), sprintf("sum(%s * 3)", A))
  )
  c(lapply(errors, function(e) list(fn = "gpu_matrix operators", owner = "hardening",
                                     setup = "", code = e, expect = "error")),
    lapply(values, function(v) list(fn = "gpu_matrix operators", owner = "hardening",
                                     setup = "", code = v[1], expect = "value",
                                     ref = v[2])))
}

# The samplers' families of issue 50, each case a call of its own:
# gradients (bad at the start, or non-finite mid-run: a warning naming
# `gradient`), runs too large for memory, closures under multisession, and
# failing chain groups. `names`: what the message must contain (an
# argument in backticks, or the failing group). `slow`: the case starts a
# multisession plan, and stays out of the in-process subset
# (tests/testthat/test-fuzz.R).
fuzz_sampler_cases <- function() {
  ld <- "ld <- function(x) -0.5 * rowSums(x^2)"
  hmc <- function(gr, extra = "") {
    sprintf(paste0("hmc_sample_mv(ld, c(a = 0.5, b = 0.25), gradient = %s, n_iter = 10, ",
                   "warmup = 10, chains = 2, seed = 1%s)"), gr, extra)
  }
  bad_gradients <- c(
    nan = "function(x) x * NaN", na = "function(x) cbind(-x[, 1], NA)",
    inf = "function(x) -x / 0", logical = "function(x) x > 0",
    chr = "function(x) matrix(\"a\", nrow(x), ncol(x))",
    df = "function(x) as.data.frame(-x)", vector = "function(x) -x[, 1]",
    transposed = "function(x) t(-x)", null = "function(x) NULL",
    list = "function(x) list(-x)", cplx = "function(x) -x + 0i",
    errors = "function(x) stop(\"no gradient here\")",
    wrong = "function(x) 2 * x")
  grad <- lapply(names(bad_gradients), function(k) {
    list(fn = "hmc_sample_mv gradient", setup = ld, code = hmc(bad_gradients[[k]]),
         expect = "error", names = if (k == "errors") "no gradient here" else "`gradient`")
  })
  # NaN beyond a = 0.6, a standard normal's 73% quantile, which 4 chains
  # cross in 100 iterations
  midrun <- list(fn = "hmc_sample_mv gradient", setup = ld, expect = "warning",
                 names = "`gradient` was NaN or infinite",
                 code = paste0("hmc_sample_mv(ld, c(a = 0.5, b = 0.25), gradient = ",
                               "function(x) { g <- -x; g[x[, 1] > 0.6, ] <- NaN; g }, ",
                               "n_iter = 50, warmup = 50, chains = 4, seed = 1)"))
  huge <- list(
    c("slice_sample_mv(ld, c(0, 0), chains = 1e9)", "`chains`"),
    c("slice_sample_mv(ld, c(0, 0), chains = 1e6, n_iter = 1e4)", "`chains`"),
    c("slice_sample_mv(ld, c(0, 0), n_proposals = 1e9)", "`n_proposals`"),
    c("hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, chains = 1e9)", "`chains`"),
    c("hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, chains = 1e8)", "`chains`"),
    c("hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, chains = 2^31)", "`chains`"),
    c("hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, n_iter = 1e12)", "`n_iter`"),
    c("slice_sample_mv(ld, c(0, 0), warmup = 1e10)", "`warmup`"))
  huge <- lapply(huge, function(h) list(fn = "samplers huge runs", setup = ld, code = h[1],
                                         expect = "error", names = h[2]))
  many <- list(fn = "samplers huge runs", setup = ld,
               code = paste0("dim(hmc_sample_mv(ld, c(0, 0), gradient = function(x) -x, ",
                             "n_iter = 1, warmup = 0, chains = 1e5, seed = 1)$draws)"),
               expect = "value", ref = "c(1L, 100000L, 2L)")
  multisession <- function(code) {
    paste0("local({ old <- future::plan(future::multisession, workers = 2); ",
           "on.exit(future::plan(old)); ", code, " })")
  }
  closure <- list(
    fn = "chain groups", slow = TRUE, setup = "", expect = "value", ref = "c(10L, 2L, 2L)",
    code = multisession(paste0(
      "assign(\"fz_mu\", 3, globalenv()); on.exit(rm(\"fz_mu\", envir = globalenv()), ",
      "add = TRUE); f <- eval(quote(local(function(x) -0.5 * rowSums((x - fz_mu)^2))), ",
      "globalenv()); dim(suppressWarnings(slice_sample_mv(f, c(3, 3), n_iter = 10, ",
      "warmup = 10, chains = 2, chain_groups = 2, seed = 1))$draws)")))
  failing <- lapply(c("slice", "hmc"), function(s) {
    # Group 2's chains (at 10: a narrow density keeps both groups where they
    # start) fail on their 20th call, in the worker.
    run <- if (s == "slice") "slice_sample_mv(f" else
      "hmc_sample_mv(f, gradient = function(x) -100 * (x - 10 * (x[, 1] > 5))"
    list(fn = "chain groups", slow = TRUE, setup = "", expect = "error",
         names = "chain group 2 failed: group 2 broke",
         code = multisession(paste0(
           "n <- 0; f <- function(x) { if (any(x[, 1] > 5)) { n <<- n + 1; ",
           "if (n >= 20) stop(\"group 2 broke\") }; ",
           "-50 * rowSums((x - 10 * (x[, 1] > 5))^2) }; ", run,
           ", init = rbind(0, 0, 10, 10)[, c(1, 1)], n_iter = 1e4, chains = 4, ",
           "chain_groups = 2, seed = 1)")))
  })
  lapply(c(grad, list(midrun), huge, list(many), list(closure), failing), function(k) {
    k$owner <- "hardening"
    k
  })
}

# Every case for `backend` ("cpu" or "opencl"); device-only functions and
# gpu_matrix values are in the "opencl" set only.
fuzz_cases <- function(backend) {
  cases <- list()
  for (f in fuzz_functions()) {
    if (isTRUE(f$device) && backend == "cpu") next
    base <- vapply(f$args, function(v) sub("BACKEND", sprintf('"%s"', backend), v,
                                           fixed = TRUE), "")
    if (backend == "cpu" && any(grepl("gpu_matrix", base))) next
    call_code <- function(args) {
      sprintf("%s(%s)", f$fn, paste(names(args), "=", args, collapse = ", "))
    }
    # the valid call itself must work
    cases[[length(cases) + 1L]] <- list(fn = f$fn, owner = f$owner, setup = f$setup,
                                        code = call_code(base), expect = "ok")
    for (arg in names(f$kinds)) {
      for (v in unlist(lapply(f$kinds[[arg]], function(k) {
        if (k %in% names(fuzz_kinds)) fuzz_kinds[[k]] else k
      }))) {
        if (backend == "cpu" && startsWith(v, "gpu")) next
        args <- base
        args[[arg]] <- fuzz_values[[v]]
        cases[[length(cases) + 1L]] <- list(fn = f$fn, owner = f$owner, setup = f$setup,
                                            code = call_code(args), expect = "error",
                                            arg = arg, value = v)
      }
    }
  }
  if (backend == "opencl") cases <- c(cases, fuzz_operator_cases())
  if (backend == "cpu") cases <- c(cases, fuzz_sampler_cases())
  for (i in seq_along(cases)) cases[[i]]$id <- sprintf("%s-%03d", backend, i)
  cases
}

# Run one case in this R process: list(outcome, message), outcome one of
# "ok", "silent" (no error, or no warning, where one was due), "unclear" (no
# argument named in backticks, or not `case$names` where the case has
# them), "wrong" (a value that differs from the reference), "failed" (a
# valid call that errors).
fuzz_run_case <- function(case) {
  env <- new.env(parent = globalenv())
  if (nzchar(case$setup)) eval(parse(text = case$setup), env)
  warned <- character()
  res <- tryCatch(list(value = withCallingHandlers(eval(parse(text = case$code), env),
                                                   warning = function(w) {
                                                     warned <<- c(warned, conditionMessage(w))
                                                     invokeRestart("muffleWarning")
                                                   }),
                       error = NULL),
                  error = function(e) list(value = NULL, error = conditionMessage(e)))
  msg <- if (is.null(res$error)) paste(warned, collapse = "; ") else res$error
  named <- if (is.null(case$names)) grepl("`[^`]+`", msg) else grepl(case$names, msg, fixed = TRUE)
  outcome <- switch(case$expect,
    error = if (is.null(res$error)) "silent" else if (!named) "unclear" else "ok",
    warning = if (!is.null(res$error)) "failed" else if (!length(warned)) "silent"
              else if (!named) "unclear" else "ok",
    ok = if (is.null(res$error)) "ok" else "failed",
    value = if (!is.null(res$error)) "failed"
            else if (!isTRUE(all.equal(res$value, eval(parse(text = case$ref), env),
                                       tolerance = 1e-10))) "wrong" else "ok")
  list(outcome = outcome, message = msg)
}
