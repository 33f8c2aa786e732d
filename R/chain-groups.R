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
  res <- run_group(group, chains, progress)
  res$device <- where
  res
}

# Run every group: one future each when the future package is installed
# and there is more than one group, else in this session one after the
# other (the draws are the same either way). `run_group(group, chains,
# progress)` returns the C++ result list of that group's run; `progress`
# is NULL (one group: the run shows its own bar) or, with several groups
# and progressr installed, a function of a number of iterations done that
# moves one progressr progress bar over all groups (future's convention:
# shown where the user enables progressr's handlers). A failing group
# stops the call with an error naming the group, after the other groups
# have been waited for.
run_chain_groups <- function(index, run_group, devices = list(), steps = 0) {
  n <- length(index)
  device_of <- function(g) if (length(devices)) devices[[(g - 1L) %% length(devices) + 1L]]
  if (n == 1L || !requireNamespace("future", quietly = TRUE)) {
    return(lapply(seq_len(n), function(g) {
      tryCatch(chain_group_run(run_group, g, index[[g]], device_of(g)),
               error = function(e) stop_group(g, e))
    }))
  }
  progress <- NULL
  if (steps > 0 && requireNamespace("progressr", quietly = TRUE)) {
    bar <- progressr::progressor(steps = steps)
    progress <- function(done) bar(amount = done)
  }
  futures <- lapply(seq_len(n), function(g) {
    chains <- index[[g]]
    device <- device_of(g)
    future::future(
      chain_group_run(run_group, g, chains, device, progress),
      globals = list(chain_group_run = chain_group_run, run_group = run_group,
                     g = g, chains = chains, device = device, progress = progress),
      # The draws come from the sampler's own streams, never from R's
      # generator, so future's check of R's random seed is left off.
      packages = "clbayes", seed = NULL, label = sprintf("clbayes chain group %d", g))
  })
  out <- vector("list", n)
  for (g in seq_len(n)) {
    out[[g]] <- tryCatch(future::value(futures[[g]]), error = function(e) {
      for (h in setdiff(seq_len(n), seq_len(g))) {
        try(future::value(futures[[h]]), silent = TRUE)
      }
      stop_group(g, e)
    })
  }
  out
}

stop_group <- function(g, e) {
  if (inherits(e, "interrupt")) stop(e)
  stop(sprintf("chain group %d failed: %s", g, conditionMessage(e)), call. = FALSE)
}

# One C++ result list from the groups' results (in group order): draws
# bound along the chains (warmup draws cut to the shortest warmup, as a
# group may have extended its own), counts and density time summed, the
# longest warmup and the largest warmup R-hat kept, and the adaptation of
# each group (widths, center, scale, step sizes: whatever else there is)
# kept in `groups` with where it ran.
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
  res$groups <- lapply(results, function(r) r[per_group])
  for (key in setdiff(per_group, "device")) res[[key]] <- first[[key]]
  res$chain_group <- rep(seq_along(index), lengths(index))
  res
}

# An R function defined at the top level finds its free variables in the
# global environment, which does not travel to a future's worker. With
# chain groups, such a function (and the top-level functions it calls) gets
# an environment of its own holding those variables, so it carries them.
carry_globals <- function(f) {
  top <- function(x) is.function(x) && identical(environment(x), globalenv())
  if (!top(f)) return(f)
  home <- new.env(parent = globalenv())
  todo <- list(f)
  while (length(todo)) {
    fn <- todo[[1L]]
    todo <- todo[-1L]
    for (nm in codetools::findGlobals(fn, merge = TRUE)) {
      if (exists(nm, envir = home, inherits = FALSE) ||
          !exists(nm, envir = globalenv(), inherits = FALSE)) next
      obj <- get(nm, envir = globalenv())
      if (top(obj)) {
        environment(obj) <- home
        todo <- c(todo, list(obj))
      }
      assign(nm, obj, envir = home)
    }
  }
  environment(f) <- home
  f
}
