# The tests run short chains on purpose and compare the draws with
# references at their own tolerances; rstan's convergence warnings
# (sampler_warnings(), R/diagnostics.R) are tested in test-diagnostics.R,
# which turns them on again.
options(clbayes.check_convergence = FALSE)
