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
  run <- function(g, chains) if (g == 2) stop("no memory") else list(n_evals = 1)
  expect_error(clbayes:::run_chain_groups(idx, run), "chain group 2 failed: no memory")
})
