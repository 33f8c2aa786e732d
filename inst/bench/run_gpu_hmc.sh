#!/bin/sh
# ChEES-HMC on the logistic posterior through the batched GLM likelihood on
# this machine's default OpenCL device (no R needed), at the issue's size
# (10^6 x 100) with growing numbers of chains, writing hmc.md into OUT_DIR.
#   sh inst/bench/run_gpu_hmc.sh OUT_DIR
# Environment: N (rows, default 1000000), K (predictors, 100), CHAINS
# ("16 32 64 128"), ITER / WARMUP (1000 / 1000), MODE (--device; --cpu runs
# the CPU path, e.g. N=2000 K=10 CHAINS=16 MODE=--cpu for a quick check).
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-1000000}
K=${K:-100}
CHAINS=${CHAINS:-"16 32 64 128"}
ITER=${ITER:-1000}
WARMUP=${WARMUP:-1000}
MODE=${MODE:---device}
mkdir -p "$out"
make -C "$here" bench_hmc >"$out/build_hmc.log" 2>&1 || { cat "$out/build_hmc.log"; exit 1; }
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
