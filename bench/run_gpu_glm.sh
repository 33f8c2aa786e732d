#!/bin/sh
# Build bench_glm and run the batched GLM sweep of issue 15 on this
# machine's default OpenCL device (no R needed): bernoulli_logit value +
# gradient for P = 1, 2, 4, 8, 16, 32, 64, 256, 1024 points per call, every path of
# the batched path (see bench_glm.cpp, points_main), then today's
# single-point table at 10^6 x 100 for comparison. One markdown file per
# run in OUT_DIR.
#   sh bench/run_gpu_glm.sh OUT_DIR [N] [K] [REPS]
# Defaults: N = 1000000, K = 100, REPS = 9. A quick check on a CPU OpenCL
# device (PoCL): sh bench/run_gpu_glm.sh /tmp/glm 20000 20 1
out=${1:-.}
n=${2:-1000000}
k=${3:-100}
reps=${4:-9}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
make -C "$here" bench_glm >"$out/build-glm.log" 2>&1 || { cat "$out/build-glm.log"; exit 1; }

run() {  # name, then the command line
  name=$1; shift
  echo "== $name: $*"
  { echo "# $name"; echo; echo "command: \`$*\`"; date -u "+date: %Y-%m-%d %H:%M UTC"; echo; } >"$out/$name.md"
  "$@" 2>&1 | tee -a "$out/$name.md"
}

run glm-points "$here/bench_glm" --points 1,2,4,8,16,32,64,256,1024 --n "$n" --k "$k" \
  --variants all --reps "$reps"
run glm-single "$here/bench_glm" --family bernoulli_logit --reps "$reps" "${n}x${k}"
