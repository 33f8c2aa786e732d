library(testthat)
library(clbayes)

test_check("clbayes")
