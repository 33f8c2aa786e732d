# Chains split into groups that run as futures under the user's
# future::plan() (issue "chains across processes, GPUs and machines"). Each
# group is a whole sampler run of its own chains: it adapts on its own, and
# chain c always draws from stream c of the seed (mcmc/chains.hpp), so the
# draws depend on the seed and the grouping, never on where a group ran.
# The package never sets a plan.

# The chains of each group: consecutive runs of chains, sizes differing by
# at most one.
chain_group_index <- function(chains, chain_groups) {
  if (chain_groups > chains) {
    stop(sprintf("`chain_groups` must be at most `chains` (%d), not %d",
                 chains, chain_groups), call. = FALSE)
  }
  size <- diff(floor(seq(0, chains, length.out = chain_groups + 1L)))
  split(seq_len(chains), rep(seq_len(chain_groups), size))
}

# `devices`: NULL, or OpenCL devices as gpu_select() takes them, one
# (platform, device) pair each: a two-column matrix or data frame (e.g.
# rows of gpu_devices()), or a list of length-2 vectors. Returns a list of
# integer pairs.
check_devices <- function(devices) {
  if (is.null(devices)) return(list())
  if (is.data.frame(devices) && all(c("platform", "device") %in% names(devices))) {
    devices <- cbind(devices$platform, devices$device)
  }
  if (is.matrix(devices) && ncol(devices) == 2L) {
    devices <- lapply(seq_len(nrow(devices)), function(i) devices[i, ])
  }
  ok <- is.list(devices) && length(devices) > 0L &&
    all(vapply(devices, function(d) {
      is.numeric(d) && length(d) == 2L && all(is.finite(d)) && all(d >= 0) &&
        all(d == round(d))
    }, logical(1)))
  if (!ok) {
    stop("`devices` must be NULL or (platform, device) pairs as gpu_select() ",
         "takes them: a two-column matrix, rows of gpu_devices(), or a list ",
         "of pairs", call. = FALSE)
  }
  lapply(devices, as.integer)
}

# In a worker (or in the main session for one group): select the group's
# device, then run the group. Returns the group's result with `device`, a
# line saying where it ran.
chain_group_run <- function(run_group, group, chains, device, progress = NULL) {
  where <- "default device selection"
  if (length(device)) {
    where <- tryCatch({
      gpu_select(device[1L], device[2L])
      sprintf("OpenCL device (%d, %d)", device[1L], device[2L])
    }, error = function(e) {
      sprintf("device (%d, %d) not available (%s); backend \"auto\" fell back to %s",
              device[1L], device[2L], conditionMessage(e),
              if (gpu_available()) "the selected device" else "the CPU")
    })
  }
  t0 <- proc.time()[["elapsed"]]
  res <- run_group(group, chains, progress)
  res$device <- where
  res$seconds <- proc.time()[["elapsed"]] - t0
  res
}

# Run every group: one future each when the future package is installed
# and there is more than one group, else in this session one after the
# other (the draws are the same either way). `run_group(group, chains,
# progress)` returns the C++ result list of that group's run; `progress`
# is NULL (one group: the run shows its own bar) or, in a future, a
# function of the number of iterations just done (group_ticker()). The
# futures are polled with future::resolved(), so the first group to fail
# stops the call at once (an error naming the group, when there are
# several) whichever group it is; an interrupt stops it too. Either way the
# groups still running are asked to stop (stop_groups()) before the call
# returns.
run_chain_groups <- function(index, run_group, devices = list(), steps = 0) {
  n <- length(index)
  device_of <- function(g) if (length(devices)) devices[[(g - 1L) %% length(devices) + 1L]]
  if (n == 1L || !requireNamespace("future", quietly = TRUE)) {
    return(lapply(seq_len(n), function(g) {
      tryCatch(chain_group_run(run_group, g, index[[g]], device_of(g)),
               error = function(e) stop_group(g, e, n))
    }))
  }
  bar <- NULL
  if (steps > 0 && requireNamespace("progressr", quietly = TRUE)) {
    bar <- progressr::progressor(steps = steps)
  }
  stop_file <- tempfile("clbayes-stop-")
  progress <- group_ticker(bar, stop_file)
  futures <- list()
  out <- vector("list", n)
  pending <- integer()
  finished <- FALSE
  on.exit(if (!finished) stop_groups(futures, stop_file), add = TRUE)
  # The values of the pending groups that have finished; the first error
  # stops the call (on.exit() then stops the others).
  collect <- function() {
    done <- pending[vapply(futures[pending], future::resolved, logical(1))]
    for (g in done) {
      out[[g]] <<- tryCatch(future::value(futures[[g]]),
                            error = function(e) stop_group(g, e, n))
    }
    pending <<- setdiff(pending, done)
    length(done) > 0L
  }
  for (g in seq_len(n)) {
    chains <- index[[g]]
    device <- device_of(g)
    futures[[g]] <- future::future(
      chain_group_run(run_group, g, chains, device, progress),
      globals = list(chain_group_run = chain_group_run, run_group = run_group,
                     g = g, chains = chains, device = device, progress = progress),
      # The draws come from the sampler's own streams, never from R's
      # generator, so future's check of R's random seed is left off.
      packages = "clbayes", seed = NULL, label = sprintf("clbayes chain group %d", g))
    pending <- c(pending, g)
    collect()
  }
  while (length(pending)) if (!collect()) Sys.sleep(0.02)
  finished <- TRUE
  out
}

# What a group's run calls after each piece of iterations in a future:
# moves the progressr bar over all groups (`bar`, or NULL; future's
# convention: shown where the user enables progressr's handlers), and stops
# the group once `stop_file` exists (stop_groups()). Built here so that
# the function carries only these two objects to the worker.
group_ticker <- function(bar, stop_file) {
  function(done) {
    if (!is.null(bar)) bar(amount = done)
    if (file.exists(stop_file)) stop("stopped: the call was interrupted or another group failed",
                                     call. = FALSE)
  }
}

# Asks the groups still running to stop and waits (at most `wait` seconds)
# for them, so that no worker goes on computing a run that was given up
# and the plan's next future finds its workers free. The request is the
# file `stop_file`, which a group reads after every piece of its run
# (run_sampler_loop() keeps pieces to about 0.1 s): workers on this machine
# see it; workers on other machines or in batch jobs without this file
# system do not, and run to their end. A group still running after `wait`
# is left to see the file later (it is removed only once every group has
# stopped, else with the session's temporary directory). future (as of
# 1.31) has no way to cancel a future; this needs none.
stop_groups <- function(futures, stop_file, wait = 0.5) {
  file.create(stop_file)
  deadline <- Sys.time() + wait
  pending <- Filter(Negate(is.null), futures)
  repeat {
    done <- vapply(pending, function(f) tryCatch(future::resolved(f), error = function(e) TRUE),
                   logical(1))
    for (f in pending[done]) try(future::value(f), silent = TRUE)
    pending <- pending[!done]
    if (!length(pending) || Sys.time() >= deadline) break
    Sys.sleep(0.02)
  }
  if (!length(pending)) unlink(stop_file)
}

# The error of group `g` (of `n`): its message, after the group's number
# when there are several.
stop_group <- function(g, e, n = 2L) {
  if (inherits(e, "interrupt")) stop(e)
  if (n == 1L) stop(conditionMessage(e), call. = FALSE)
  stop(sprintf("chain group %d failed: %s", g, conditionMessage(e)), call. = FALSE)
}

# One C++ result list from the groups' results (in group order): draws
# bound along the chains (warmup draws cut to the shortest warmup, as a
# group may have extended its own), counts and density time summed, the
# longest warmup and the largest warmup R-hat kept, and each group's own
# scalars and adaptation (calls, warmup length, widths, step sizes: all but
# the draws) kept in `groups` with where it ran and its wall seconds there.
merge_group_results <- function(results, index) {
  if (length(results) == 1L) {
    res <- results[[1L]]
    res$chain_group <- rep(1L, length(index[[1L]]))
    return(res)
  }
  bind_chains <- function(key) {
    parts <- lapply(results, `[[`, key)
    d <- dim(parts[[1L]])
    d[1L] <- min(vapply(parts, function(p) dim(p)[1L], 1L))
    out <- array(0, c(d[1L], sum(vapply(parts, function(p) dim(p)[2L], 1L)), d[3L]))
    at <- 0L
    for (p in parts) {
      out[, at + seq_len(dim(p)[2L]), ] <- p[seq_len(d[1L]), , , drop = FALSE]
      at <- at + dim(p)[2L]
    }
    out
  }
  first <- results[[1L]]
  arrays <- c("draws", "warmup_draws")
  counts <- c(names(first)[startsWith(names(first), "n_")], "density_seconds")
  largest <- c("warmup_rhat", "warmup_total", "warmup_seconds")
  res <- list()
  for (key in arrays) res[[key]] <- bind_chains(key)
  # Scalars combine; per-chain vectors (HMC's divergences) are concatenated.
  gather <- function(key, how) {
    parts <- lapply(results, `[[`, key)
    if (all(lengths(parts) == 1L)) how(unlist(parts)) else unlist(parts)
  }
  for (key in intersect(counts, names(first))) res[[key]] <- gather(key, sum)
  for (key in intersect(largest, names(first))) res[[key]] <- gather(key, max)
  per_group <- setdiff(names(first), c(arrays, counts, largest))
  res$groups <- lapply(results, function(r) r[setdiff(names(r), arrays)])
  for (key in setdiff(per_group, c("device", "seconds"))) res[[key]] <- first[[key]]
  res$chain_group <- rep(seq_along(index), lengths(index))
  res
}

# A function finds some of its free variables in the global environment,
# which never travels to a future's worker: a function defined at the top
# level, or a closure made there (e.g. by local()) that reads a variable of
# the global environment. With chain groups, such a function gets a copy
# of its enclosing environments (those between it and the global one),
# re-rooted on a new environment that holds those variables and the
# top-level functions they name (treated the same way), so that it carries
# them, as future's globals detection does for the expression of a future.
# A function that finds nothing in the global environment, and a package's
# function, are returned as they are; so is one whose enclosures cannot be
# read (a promise there that fails when forced): future then sends it as
# it is.
carry_globals <- function(f) {
  tryCatch(carry_globals_of(f), error = function(e) f)
}

carry_globals_of <- function(f) {
  if (!is.function(f) || is.primitive(f)) return(f)
  chain <- enclosures(environment(f))
  if (is.null(chain)) return(f)
  in_chain <- function(nm) {
    any(vapply(chain, function(e) exists(nm, envir = e, inherits = FALSE), logical(1)))
  }
  of_chain <- function(fn) {
    is.function(fn) && !is.primitive(fn) &&
      any(vapply(chain, identical, logical(1), environment(fn)))
  }
  home <- new.env(parent = globalenv())
  # Functions whose free variables are looked up: f and the closures of its
  # enclosures (through them first), then carried top-level functions.
  local_fns <- Filter(of_chain, do.call(c, lapply(chain, as.list, all.names = TRUE)))
  todo <- lapply(c(list(f), local_fns), function(fn) list(fn = fn, local = TRUE))
  while (length(todo)) {
    item <- todo[[1L]]
    todo <- todo[-1L]
    for (nm in codetools::findGlobals(item$fn, merge = TRUE)) {
      if (exists(nm, envir = home, inherits = FALSE) || (item$local && in_chain(nm)) ||
          !exists(nm, envir = globalenv(), inherits = FALSE)) next
      obj <- get(nm, envir = globalenv())
      if (is.function(obj) && identical(environment(obj), globalenv())) {
        environment(obj) <- home
        todo <- c(todo, list(list(fn = obj, local = FALSE)))
      } else if (is.function(obj)) {
        obj <- carry_globals_of(obj)
      }
      assign(nm, obj, envir = home)
    }
  }
  if (!length(chain)) {
    environment(f) <- home
    return(f)
  }
  if (!length(ls(home, all.names = TRUE))) return(f)
  copies <- vector("list", length(chain))
  parent <- home
  for (i in rev(seq_along(chain))) {
    copies[[i]] <- list2env(as.list(chain[[i]], all.names = TRUE), parent = parent)
    parent <- copies[[i]]
  }
  # Closures made in the enclosures now live in (and look through) the copies.
  for (copy in copies) {
    for (nm in ls(copy, all.names = TRUE)) {
      obj <- get(nm, envir = copy, inherits = FALSE)
      if (!of_chain(obj)) next
      environment(obj) <- copies[[which(vapply(chain, identical, logical(1),
                                               environment(obj)))[1L]]]
      assign(nm, obj, envir = copy)
    }
  }
  environment(f) <- copies[[1L]]
  f
}

# The environments from `env` up to the global environment (not included),
# or NULL when `env` does not lie under it by way of environments that
# travel with a function (a package's namespace, the base environment).
enclosures <- function(env) {
  chain <- list()
  while (!identical(env, globalenv())) {
    if (identical(env, emptyenv()) || isNamespace(env) || identical(env, baseenv()) ||
        identical(env, .BaseNamespaceEnv)) {
      return(NULL)
    }
    chain <- c(chain, env)
    env <- parent.env(env)
  }
  chain
}
