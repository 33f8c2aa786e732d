#!/bin/sh
# Build, verify and time the benchmark drivers on this machine's default
# OpenCL device, writing one markdown file per driver into OUT_DIR.
#   sh bench/run_gpu.sh OUT_DIR [driver ...]     (default: all drivers)
# Each driver checks its results against the CPU path before timing.
out=${1:-.}
shift 2>/dev/null
drivers=${*:-"smoke verify_gemm bench_reduce bench_linalg bench_crossover bench_glm bench_batched bench_slice"}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
make -C "$here" -j 8 $drivers >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }

run() {  # name, then the command line
  name=$1; shift
  echo "== $name: $*"
  { echo "# $name"; echo; echo "command: \`$*\`"; date -u "+date: %Y-%m-%d %H:%M UTC"; echo; } >"$out/$name.md"
  "$@" 2>&1 | tee -a "$out/$name.md"
}

for d in $drivers; do
  case $d in
    smoke) run smoke "$here/smoke" ;;
    verify_gemm) run verify_gemm "$here/verify_gemm" ;;
    bench_crossover) run crossover "$here/bench_crossover" ;;
    bench_reduce) run reduce "$here/bench_reduce" ;;
    bench_linalg) run linalg "$here/bench_linalg" --tune --cpu-max 4096 ;;
    bench_glm) run glm "$here/bench_glm" ;;
    bench_batched) run batched "$here/bench_batched" ;;
    bench_slice) run slice "$here/bench_slice" ;;
  esac
done
