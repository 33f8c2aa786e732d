#!/bin/sh
# One device call for the sampling benchmarks (no R needed): the batched GLM
# sweep (run_gpu_glm.sh), ChEES-HMC on the 10^6 x 100 logistic posterior
# (run_gpu_hmc.sh), the slice sampler on it (bench_glm_posterior), and, where the machine has two GPUs, the same HMC run
# as two processes at once, one per GPU (CLBAYES_DEVICE picks the device,
# as a worker of a chain group would), against one process alone.
#   sh bench/run_gpu_sampling.sh OUT_DIR
# GPU_PLATFORM (default 1) is the OpenCL platform of the GPUs: on the lent
# machines PoCL's CPU platform is listed first.
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
sh "$here/run_gpu_glm.sh" "$out" || exit 1
sh "$here/run_gpu_hmc.sh" "$out" || exit 1

# The slice sampler on the same posterior: slice_sample_mv's default
# chains (16 at 101 variables) and 128, short runs (SLICE_ITER / SLICE_WARMUP).
make -C "$here" bench_glm_posterior >"$out/build_slice.log" 2>&1 || { cat "$out/build_slice.log"; exit 1; }
{
  echo "# bench_glm_posterior"
  echo
  date -u "+date: %Y-%m-%d %H:%M UTC"
  for c in ${SLICE_CHAINS:-"0 128"}; do
    args="--device --n ${N:-1000000} --k ${K:-100} --chains $c --iter ${SLICE_ITER:-40} --warmup ${SLICE_WARMUP:-40}"
    echo
    echo "command: \`bench_glm_posterior $args\`"
    echo
    "$here/bench_glm_posterior" $args 2>&1
  done
} 2>&1 | tee "$out/slice-glm.md"

n_gpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$n_gpu" -ge 2 ] || { echo "one GPU: no two-process run"; exit 0; }
c=${TWO_GPU_CHAINS:-64}
p=${GPU_PLATFORM:-1}
args="--device --n ${N:-1000000} --k ${K:-100} --chains $c --iter ${ITER:-1000} --warmup ${WARMUP:-1000}"
{
  echo "# Two processes, one per GPU (bench_hmc $args)"
  echo
  date -u "+date: %Y-%m-%d %H:%M UTC"
  echo
  echo "## one process alone, GPU 0"
  CLBAYES_PLATFORM=$p CLBAYES_DEVICE=0 "$here/bench_hmc" $args 2>&1
  echo
  echo "## two processes at once, GPU 0 and GPU 1"
  start=$(date +%s)
  CLBAYES_PLATFORM=$p CLBAYES_DEVICE=0 "$here/bench_hmc" $args --seed 1 >"$out/two-0.txt" 2>&1 &
  CLBAYES_PLATFORM=$p CLBAYES_DEVICE=1 "$here/bench_hmc" $args --seed 2 >"$out/two-1.txt" 2>&1 &
  wait
  end=$(date +%s)
  cat "$out/two-0.txt" "$out/two-1.txt"
  echo
  echo "wall time of both: $((end - start)) s"
} 2>&1 | tee "$out/two-gpu.md"
