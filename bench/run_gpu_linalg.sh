#!/bin/bash
# Issue 19's figures in one device call: build, verify, then time the
# Cholesky (on device and host to host) and DGEMM at n = 4096, 8192 and 16384
# beside PyTorch's anchors, with the trailing_reserve sweep and a phase
# profile. Optional A/B: B=<tree> (a copy of inst/ of another revision,
# e.g. `git archive REV inst | tar -x -C .ab/REV`) is built and timed in
# the same call, interleaved with this tree. SIZES (default "4096 8192 16384")
# gives other orders, e.g. for a trial run on PoCL; RESERVES (default
# "8 24 32") the trailing_reserve sweep, "" for none.
#   OUT=dir [B=.ab/REV] [DEPS=.bench-deps] [SIZES=...] [RESERVES=...] bash bench/run_gpu_linalg.sh
# Needs Eigen and CL/opencl.hpp under DEPS (see bench/README.md).
set -u
out=${OUT:-.}; deps=$(cd "${DEPS:-.bench-deps}" && pwd); b=${B:-}; n=${SIZES:-4096 8192 16384}
log=$out/linalg-issue19.md
if [ -e /usr/lib/libnvidia-opencl.so.1 ] && [ -z "${OCL_ICD_VENDORS:-}" ]; then
  mkdir -p /tmp/icd && echo /usr/lib/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/icd
fi
mkdir -p "$out"
# "headers" fingerprints the core as copied (the lent machine's .git can lag
# behind the working tree it receives): compare with the same command here.
headers=$(find inst/include -type f | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-12)
{ nvidia-smi -L 2>/dev/null; date -u '+date: %Y-%m-%d %H:%M UTC'; git log -1 --format='tree: %h %s' 2>/dev/null
  echo "headers: $headers"; } | tee "$log"
make -B -C bench DEPS="$deps" bench_linalg verify_gemm >"$out/build.log" 2>&1 &
[ -n "$b" ] && make -B -C "$b/bench" DEPS="$deps" bench_linalg >"$out/build_b.log" 2>&1 &
wait
T() {  # label, command...
  echo "### $1: ${*:2}" | tee -a "$log"
  timeout 150 "${@:2}" 2>&1 | grep -v '^$' | tee -a "$log"
}
A="--reps 5 --cpu-max 0 --device-only $n"
T verify bench/verify_gemm
T this bench/bench_linalg $A
[ -n "$b" ] && T B "$b/bench/bench_linalg" $A
for r in ${RESERVES-8 24 32}; do T "this, trailing_reserve $r" bench/bench_linalg $A --trailing-reserve $r; done
T this bench/bench_linalg $A
[ -n "$b" ] && T B "$b/bench/bench_linalg" $A
T "this, profile" bench/bench_linalg --reps 3 --cpu-max 0 --device-only --profile $n
T "this, host to host" bench/bench_linalg --reps 3 --cpu-max 0 $n
T anchors python3 bench/anchors_torch.py $n
date -u '+end: %H:%M:%S' | tee -a "$log"
