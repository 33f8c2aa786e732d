# Chain groups (R/chain-groups.R): splitting, device lists, and the merge of
# the groups' results, against results built by hand.

test_that("chains split into near-equal consecutive groups", {
  idx <- clbayes:::chain_group_index(10, 3)
  expect_equal(unname(lengths(idx)), c(3L, 3L, 4L))
  expect_equal(unlist(idx, use.names = FALSE), 1:10)
  expect_equal(unname(clbayes:::chain_group_index(4, 4)), as.list(1:4))
  expect_error(clbayes:::chain_group_index(2, 3), "`chain_groups` must be at most `chains`")
})

test_that("devices are (platform, device) pairs", {
  expect_equal(clbayes:::check_devices(NULL), list())
  expect_equal(clbayes:::check_devices(rbind(c(0, 0), c(0, 1))), list(c(0L, 0L), c(0L, 1L)))
  expect_equal(clbayes:::check_devices(list(c(1, 2))), list(c(1L, 2L)))
  df <- data.frame(platform = 0, device = 3, name = "x")
  expect_equal(clbayes:::check_devices(df), list(c(0L, 3L)))
  expect_error(clbayes:::check_devices(list(c(-1, 0))), "`devices` must be")
  expect_error(clbayes:::check_devices("gpu"), "`devices` must be")
})

test_that("group results merge along the chains, counts add up", {
  part <- function(g, chains) {
    d <- array(outer(outer(1:5, chains, "+"), c(0, 100), "+"), c(5, length(chains), 2))
    list(draws = d, warmup_draws = d[1:2, , , drop = FALSE], n_evals = 10 * g,
         n_calls = g, widths = c(g, g), device = paste("dev", g))
  }
  idx <- clbayes:::chain_group_index(5, 2)
  res <- clbayes:::merge_group_results(lapply(1:2, function(g) part(g, idx[[g]])), idx)
  expect_equal(dim(res$draws), c(5, 5, 2))
  expect_equal(res$draws[, 4, 1], 1:5 + 4)
  expect_equal(res$draws[, 5, 2], 1:5 + 105)
  expect_equal(dim(res$warmup_draws), c(2, 5, 2))
  expect_equal(res$n_evals, 30)
  expect_equal(res$n_calls, 3)
  expect_equal(res$chain_group, c(1L, 1L, 2L, 2L, 2L))
  expect_equal(res$groups[[2]]$widths, c(2, 2))
  expect_equal(res$groups[[2]]$device, "dev 2")
})

test_that("a failing group gives an error naming it", {
  idx <- clbayes:::chain_group_index(4, 2)
  run <- function(g, chains, progress) if (g == 2) stop("no memory") else list(n_evals = 1)
  expect_error(clbayes:::run_chain_groups(idx, run), "chain group 2 failed: no memory")
})

test_that("slice and HMC draws depend on the seed and the groups, not the plan", {
  skip_if_not_installed("future")
  ld <- function(x) -0.5 * rowSums(x^2)
  gr <- function(x) -x
  # Short runs: their convergence warnings are not what this test is about.
  run_slice <- function() suppressWarnings(slice_sample_mv(
    ld, init = c(a = 0, b = 0), n_iter = 40, warmup = 30, chains = 4, chain_groups = 2,
    seed = 5))
  run_hmc <- function() suppressWarnings(hmc_sample_mv(
    ld, init = c(0, 0), gradient = gr, n_iter = 30, warmup = 30, chains = 4,
    chain_groups = 2, seed = 5))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  s1 <- run_slice()
  h1 <- run_hmc()
  future::plan(future::multisession, workers = 2)
  s2 <- run_slice()
  h2 <- run_hmc()
  expect_identical(as.array(s1), as.array(s2))
  expect_identical(as.array(h1), as.array(h2))
  expect_equal(s1$chain_group, c(1L, 1L, 2L, 2L))
  expect_length(s1$groups, 2L)
  # Chains of a group draw what they would draw as the first chains of a run.
  one <- suppressWarnings(slice_sample_mv(ld, init = c(a = 0, b = 0), n_iter = 40,
                                          warmup = 30, chains = 2, seed = 5))
  expect_identical(as.array(one), as.array(s1)[, 1:2, , drop = FALSE])
  expect_false(identical(as.array(s1)[, 1:2, ], as.array(s1)[, 3:4, ]))
})

test_that("merged groups sample the target, and a model travels to workers", {
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  set.seed(3)
  d <- data.frame(x = rnorm(300))
  d$y <- rpois(300, exp(0.3 + 0.5 * d$x))
  m <- glm_model(y ~ x, data = d, family = poisson())
  fit <- slice_sample_mv(m, n_iter = 300, warmup = 200, chains = 8, chain_groups = 2,
                         seed = 2, backend = if (gpu_available()) "opencl" else "cpu")
  ref <- glm(y ~ x, data = d, family = poisson())
  s <- summary(fit)
  se <- sqrt(diag(vcov(ref)))
  expect_lt(max(abs(s$mean - coef(ref)) / se), 0.5)
  expect_true(all(abs(s$sd / se - 1) < 0.2))
  expect_true(all(s$rhat < 1.05))
})

test_that("a failing worker gives an error naming its group", {
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  ld <- function(x) {
    if (nrow(x) > 0 && Sys.getpid() != main_pid) stop("worker lost its data")
    -0.5 * rowSums(x^2)
  }
  main_pid <- Sys.getpid()
  expect_error(slice_sample_mv(ld, init = c(0, 0), n_iter = 20, warmup = 10, chains = 2,
                               chain_groups = 2, seed = 1),
               "chain group [12] failed: worker lost its data")
})

test_that("the first failing group's error arrives within a second; the others stop", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  # workers started and the package loaded before anything is timed
  warm <- lapply(1:2, function(i) future::future(requireNamespace("clbayes"), seed = NULL))
  invisible(lapply(warm, future::value))
  failed_at <- tempfile()
  calls <- tempfile()
  # Group 1 (chains at 0) logs each call's time; group 2 (chains at 10)
  # fails on its 20th call, after writing the time it failed.
  n <- 0
  ld <- function(x) {
    Sys.sleep(0.01)
    if (mean(x[, 1]) > 5) {
      n <<- n + 1
      if (n == 20) {
        writeLines(format(as.numeric(Sys.time()), digits = 15), failed_at)
        stop("out of luck")
      }
    } else {
      cat(format(as.numeric(Sys.time()), digits = 15), "\n", file = calls, append = TRUE)
    }
    -0.5 * rowSums((x - mean(x[, 1]))^2)
  }
  init <- rbind(c(0, 0), c(0, 0), c(10, 10), c(10, 10))
  err <- tryCatch(slice_sample_mv(ld, init = init, n_iter = 1e4, warmup = 100, chains = 4,
                                  chain_groups = 2, seed = 1, backend = "cpu"),
                  error = function(e) e)
  t_error <- as.numeric(Sys.time())
  expect_match(conditionMessage(err), "^chain group 2 failed: out of luck")
  t_failed <- as.numeric(readLines(failed_at))
  expect_lt(t_error - t_failed, 1)
  # group 1 was told to stop: it makes no call a second after the error
  Sys.sleep(1.5)
  last_call <- max(as.numeric(readLines(calls)))
  expect_lt(last_call - t_error, 1)
})

test_that("top-level densities and closures carry the global variables they read", {
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  g <- globalenv()
  assign("cg_scale", 2, envir = g)
  # Defined as at the top level of a script: their environment is the global one.
  assign("cg_square", eval(quote(function(x) x^2), g), envir = g)
  assign("cg_density", eval(quote(function(x) -0.5 * rowSums(cg_square(x / cg_scale))), g),
         envir = g)
  on.exit(rm(list = c("cg_scale", "cg_square", "cg_density"), envir = g), add = TRUE)
  fit <- suppressWarnings(slice_sample_mv(get("cg_density", envir = g), init = c(0, 0),
                                          n_iter = 200, warmup = 100, chains = 4,
                                          chain_groups = 2, seed = 3))
  expect_equal(dim(as.array(fit)), c(200L, 4L, 2L))
  expect_lt(abs(sd(as.array(fit)) - 2), 0.3)  # the scale travelled with the density
  # As in a script: `cl_mu <- 3; f <- local(function(x) ...)` at the top level.
  eval(quote({
    cl_mu <- 3
    cl_f <- local(function(x) -0.5 * rowSums((x - cl_mu)^2))
  }), g)
  on.exit(rm(list = c("cl_mu", "cl_f"), envir = g), add = TRUE)
  home <- environment(get("cl_f", envir = g))
  fit <- suppressWarnings(slice_sample_mv(get("cl_f", envir = g), c(3, 3), n_iter = 200,
                                          warmup = 50, chains = 4, chain_groups = 2,
                                          seed = 1))
  expect_lt(abs(mean(as.array(fit)) - 3), 0.3)  # the mean travelled with the closure
  # carrying copies the closure's enclosure; the user's function is untouched
  expect_identical(environment(get("cl_f", envir = g)), home)
  f2 <- clbayes:::carry_globals(get("cl_f", envir = g))
  expect_false(identical(environment(f2), home))
  expect_equal(get("cl_mu", envir = parent.env(environment(f2))), 3)
  expect_false(exists("cl_mu", envir = environment(get("cl_f", envir = g)), inherits = FALSE))
  # a closure that finds its variables in its own enclosure is left as it is
  own <- local({
    m <- 1
    function(x) x - m
  })
  expect_identical(clbayes:::carry_globals(own), own)
})

test_that("Ctrl-C stops a run of groups and the workers computing it", {
  skip_on_os("windows")
  skip_on_cran()
  skip_if_not_installed("callr")
  skip_if_not_installed("future")
  calls <- tempfile()
  # The child samples with a slow density (every call writes its process
  # id) under two workers and is interrupted. It then reports whether the
  # workers still call the density and whether the plan serves a future.
  p <- callr::r_bg(function(calls) {
    library(clbayes)
    future::plan(future::multisession, workers = 2)
    options(clbayes.tape = FALSE)  # the workers call the R density itself
    ld <- function(x) {
      # one write per call, so that two workers' lines never interleave
      cat(paste0(Sys.getpid(), "\n"), file = calls, append = TRUE)
      Sys.sleep(0.02)
      -0.5 * rowSums(x^2)
    }
    res <- tryCatch(slice_sample_mv(ld, init = c(0, 0), n_iter = 1e4, chains = 4,
                                    chain_groups = 2, seed = 1, backend = "cpu"),
                    interrupt = function(e) "interrupted")
    t_back <- Sys.time()
    n_back <- length(readLines(calls))
    Sys.sleep(2)
    pids <- unique(as.integer(readLines(calls)))
    list(res = res, workers = length(setdiff(pids, Sys.getpid())),
         calls_since = length(readLines(calls)) - n_back,
         after = future::value(future::future(42)),
         wait = as.numeric(difftime(Sys.time(), t_back, units = "secs")))
  }, args = list(calls = calls), env = c(callr::rcmd_safe_env(), OMP_NUM_THREADS = "1"))
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  deadline <- Sys.time() + 120
  # both workers sampling
  seen <- function() if (file.exists(calls)) length(unique(readLines(calls))) else 0L
  while (seen() < 2L && p$is_alive() && Sys.time() < deadline) Sys.sleep(0.2)
  p$interrupt()
  p$wait(60000)
  expect_false(p$is_alive())
  out <- p$get_result()
  expect_identical(out$res, "interrupted")
  expect_equal(out$workers, 2L)
  expect_equal(out$calls_since, 0L)  # no worker samples on after the call returned
  expect_equal(out$after, 42)        # and the plan serves the next future at once
  expect_lt(out$wait, 10)
})

test_that("a chain's stream, reached by jumping ahead, is the reference's c jumps", {
  # Reference: Blackman and Vigna's jump() applied c times (the samplers
  # reach stream c through the binary digits of c).
  stream <- clbayes:::.cpp_test_rng_stream
  for (c in c(0, 1, 2, 3, 6, 64, 131, 1000)) {
    expect_identical(stream(11, c, 4L, FALSE), stream(11, c, 4L, TRUE))
  }
  expect_false(identical(stream(11, 1, 4L, FALSE), stream(11, 2, 4L, FALSE)))
  u <- stream(11, 2^31 - 1, 1e4L, FALSE)
  expect_true(all(u > 0 & u < 1))
  expect_gt(ks.test(u, "punif")$p.value, 1e-4)
})
