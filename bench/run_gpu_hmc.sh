#!/bin/sh
# ChEES-HMC on the logistic posterior through the batched GLM likelihood on
# this machine's default OpenCL device (no R needed), at the issue's size
# (10^6 x 100) with growing numbers of chains, writing hmc.md into OUT_DIR.
#   sh bench/run_gpu_hmc.sh OUT_DIR
# Environment: N (rows, default 1000000), K (predictors, 100), CHAINS
# ("16 32 64 128"), ITER / WARMUP (1000 / 1000), MODE (--device; --cpu runs
# the CPU path, e.g. N=2000 K=10 CHAINS=16 MODE=--cpu for a quick check).
# GP_LOCATIONS (e.g. "500"; empty: skipped) adds the GP posterior of
# Example 2 at each size: bench_hmc --model gp and the univariate slice
# sampler (bench_gp_slice), both on the host CPU (the GP gradient has no
# device path), GP_CHAINS chains (16), GP_WARMUP + GP_ITER iterations
# (500 + 1000).
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-1000000}
K=${K:-100}
CHAINS=${CHAINS:-"16 32 64 128"}
ITER=${ITER:-1000}
WARMUP=${WARMUP:-1000}
MODE=${MODE:---device}
mkdir -p "$out"
GP_CHAINS=${GP_CHAINS:-16}
GP_ITER=${GP_ITER:-1000}
GP_WARMUP=${GP_WARMUP:-500}
make -C "$here" bench_hmc bench_gp_slice >"$out/build_hmc.log" 2>&1 || { cat "$out/build_hmc.log"; exit 1; }
{
  echo "# bench_hmc"
  echo
  date -u "+date: %Y-%m-%d %H:%M UTC"
  echo
} >"$out/hmc.md"
for c in $CHAINS; do
  echo "== bench_hmc $MODE --n $N --k $K --chains $c --iter $ITER --warmup $WARMUP"
  { echo; echo "command: \`bench_hmc $MODE --n $N --k $K --chains $c --iter $ITER --warmup $WARMUP\`"; echo; } >>"$out/hmc.md"
  "$here/bench_hmc" "$MODE" --n "$N" --k "$K" --chains "$c" --iter "$ITER" \
    --warmup "$WARMUP" 2>&1 | tee -a "$out/hmc.md"
done
for n in ${GP_LOCATIONS:-}; do
  hmc_args="--cpu --model gp --locations $n --chains $GP_CHAINS --iter $GP_ITER --warmup $GP_WARMUP"
  slice_args="--cpu --method univariate --Ku 2 --chains $GP_CHAINS --iter $GP_ITER --warmup $GP_WARMUP $n"
  for cmd in "bench_hmc $hmc_args" "bench_gp_slice $slice_args"; do
    echo "== $cmd"
    { echo; echo "command: \`$cmd\`"; echo; } >>"$out/hmc.md"
    # shellcheck disable=SC2086
    "$here"/$cmd 2>&1 | tee -a "$out/hmc.md"
  done
done
