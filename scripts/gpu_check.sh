#!/usr/bin/env bash
# The one-call device check: on a machine with an NVIDIA GPU, PyTorch 2.x
# for python3, no internet and no apt, it builds the model library,
# `deberta-cli run` and the model benchmark against python3's LibTorch
# (-DDEBERTA_WITH_SERVICE=OFF -DDEBERTA_WITH_TOKENIZERS=OFF; abseil,
# benchmark and nlohmann-json from .gpu-check/third_party when that folder
# is there, see scripts/gpu_check_prepare.sh), then measures:
#   1. every golden case (tests/golden) through `deberta-cli run` on the
#      device in float32 (the golden README's 1e-4 rule on every tensor),
#      bfloat16 and float16 (the CPU's measured logits bounds, argmax rule;
#      scripts/gpu_check/compare_golden.py);
#   2. the model benchmark (bench/model_bench.cc) at 1, 8, 32 and 128 x 128
#      tokens for the deberta-base and deberta-v3-base sizes in fp16 and bf16;
#   3. the eager PyTorch peer (eager_bench.py from .gpu-check/peers or
#      ../shared/peers) on the same shapes and dtypes, in the same run.
# Without a GPU (CI) it runs the same steps on the CPU, smaller: bfloat16
# and float32 golden cases, the benchmarks at 1 x 128 in bf16, the peer on
# its tiny configs; float16 is skipped there (no CPU kernels).
#
#   scripts/gpu_check.sh [OUT_DIR]      (default $OUT, else build/gpu-check)
#   GPU_CHECK_BENCH=0: the build and the golden cases only (a short recheck)
#
# Writes into OUT_DIR: gpu_check.json (environment, build, every golden
# record, the verdict), model_bench.json (Google Benchmark's JSON),
# eager.jsonl (the peer's records), gpu_check.log (everything printed).
# gpu_check.json and model_bench.json carry bench/provenance.py's fields
# (commit, date, CPU, threads, LibTorch and oneDNN versions); where the
# checkout's .git did not travel, set DEBERTA_COMMIT and DEBERTA_DIRTY.
# Exit status 0 only if the build and every golden check passed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-build/gpu-check}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
exec > >(tee "$out/gpu_check.log") 2>&1
build=${GPU_CHECK_BUILD_DIR:-build-gpu-check}
records=$out/records.jsonl
: >"$records"
started=$SECONDS
failed=0

note() { echo "gpu_check: $*"; }
# record KIND JSON-FIELDS: one line of the summary.
record() { echo "{\"kind\": \"$1\", $2}" >>"$records"; }

# ---- Environment: which python3 has torch, and does it see a GPU ----
python=${GPU_CHECK_PYTHON:-}
if [[ -z $python ]]; then
  for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import torch' 2>/dev/null; then python=$candidate; break; fi
  done
fi
device=cpu
torch_prefix=""
if [[ -n $python ]]; then
  if [[ $("$python" -c 'import torch; print(torch.cuda.is_available())') == True ]]; then device=cuda:0; fi
  prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  # Debian's python3-torch has no CMake package (libtorch-dev has it).
  [[ -f $prefix/Torch/TorchConfig.cmake ]] && torch_prefix=$prefix
  "$python" - <<'PY' >>"$records"
import json, platform, torch
info = {"kind": "environment", "torch": torch.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "cuda_available": torch.cuda.is_available()}
if torch.cuda.is_available():
    info["gpu"] = torch.cuda.get_device_name(0)
print(json.dumps(info))
PY
else
  record environment '"torch": null, "note": "no python3 with torch: no eager peer"'
fi
device=${GPU_CHECK_DEVICE:-$device}
note "device $device; python ${python:-none}; LibTorch ${torch_prefix:-installed (find_package)}"

# ---- Build ----
# -Werror where CI runs it; on the GPU machine (another compiler, a newer
# LibTorch) a warning must not cost the one run: they are counted instead.
werror=ON
[[ $device == cuda* ]] && werror=OFF
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DDEBERTA_WITH_SERVICE=OFF -DDEBERTA_WITH_TOKENIZERS=OFF
            -DDEBERTA_BUILD_TESTS=OFF -DDEBERTA_WERROR=$werror)
[[ -n $torch_prefix ]] && cmake_args+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
third_party=${GPU_CHECK_THIRD_PARTY:-.gpu-check/third_party}
[[ -d $third_party ]] && cmake_args+=(-DDEBERTA_THIRD_PARTY_DIR="$PWD/$third_party")
if [[ $device == cuda* ]]; then
  # LibTorch's CMake package enables CUDA and needs nvcc, often outside PATH.
  if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  command -v nvcc >/dev/null && note "nvcc: $(nvcc --version | tail -n 1)"
  # The machine's own GPU only: a shorter compile of the few CUDA parts.
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-$("$python" -c \
    'import torch; print("%d.%d" % torch.cuda.get_device_capability(0))')}
fi
build_started=$SECONDS
if cmake -S . -B "$build" "${cmake_args[@]}" >"$out/configure.log" 2>&1 &&
   cmake --build "$build" -j "$(nproc)" --target deberta-cli model_bench >"$out/build.log" 2>&1; then
  record build "\"ok\": true, \"seconds\": $((SECONDS - build_started)), \"werror\": \"$werror\", \"warnings\": $(grep -c 'warning:' "$out/build.log"), \"third_party_from_source\": $([[ -d $third_party ]] && echo true || echo false)"
  note "built in $((SECONDS - build_started)) s"
else
  record build "\"ok\": false, \"seconds\": $((SECONDS - build_started))"
  note "BUILD FAILED; the end of its log:"
  tail -n 40 "$out/configure.log" "$out/build.log" 2>/dev/null
  failed=1
fi
cli=$build/deberta-cli
bench=$build/bench/model_bench

# ---- 1. Golden cases ----
if [[ $device == cuda* ]]; then dtypes=(float32 bfloat16 float16); else dtypes=(float32 bfloat16); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -x $cli ]]; then
  for case_dir in tests/golden/*/; do
    case_dir=${case_dir%/}
    for dtype in "${dtypes[@]}"; do
      name=$(basename "$case_dir")-$dtype
      if "$cli" run --model="$case_dir" --inputs="$case_dir/inputs.json" --out="$work/$name.safetensors" \
           --device="$device" --dtype="$dtype" >"$work/$name.log" 2>&1; then
        python3 scripts/gpu_check/compare_golden.py "$case_dir" "$work/$name.safetensors" "$dtype" "$device" \
          >>"$records" || failed=1
        note "golden $name: $(tail -c 200 "$records" | grep -o '"ok": [a-z]*}$' || echo see records)"
      else
        record golden "\"case\": \"$(basename "$case_dir")\", \"dtype\": \"$dtype\", \"ok\": false, \"error\": $(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()[-500:]))' "$work/$name.log")"
        note "golden $name: deberta-cli run failed"; cat "$work/$name.log"
        failed=1
      fi
    done
  done
  # The comparison must be able to fail: a float32 answer with one logit
  # moved by 0.01 (100x the rule's absolute bound) is refused under the
  # float32 rule, else the verdicts above prove nothing. (Not the bfloat16
  # answers: on a CPU without bfloat16 kernels they are float32's.)
  one=tests/golden/b_v3_base_like
  if [[ -f $work/b_v3_base_like-float32.safetensors ]] &&
     python3 scripts/gpu_check/perturbed_copy.py "$work/b_v3_base_like-float32.safetensors" "$work/perturbed.safetensors" &&
     python3 scripts/gpu_check/compare_golden.py "$one" "$work/b_v3_base_like-float32.safetensors" float32 \
       "$device" >/dev/null &&
     ! python3 scripts/gpu_check/compare_golden.py "$one" "$work/perturbed.safetensors" float32 "$device" >/dev/null; then
    record self_check '"ok": true, "what": "a float32 answer with one logit moved by 0.01 refused under the float32 rule"'
  else
    note "the golden comparison accepted a float32 answer with one logit moved by 0.01: it cannot fail"
    record self_check '"ok": false'
    failed=1
  fi
fi

# ---- 2. Model benchmark ----
if [[ $device == cuda* ]]; then
  bench_args=(--dtypes=fp16,bf16 --shapes=1x128,8x128,32x128,128x128 --min_time=1 --threads=4 --graphs=off,on)
  peer_configs=base-v1,base-v3; peer_shapes=1x128,8x128,32x128,128x128; peer_dtypes=(float16 bfloat16)
else
  # The recorded path too (on the CPU it reruns its work: no saving, but
  # it runs), so CI proves both work.
  bench_args=(--dtypes=bf16 --shapes=1x128 --min_time=0.5 --threads="$(nproc)" --graphs=off,on)
  peer_configs=tiny,tiny-v3; peer_shapes=1x128; peer_dtypes=(bfloat16)
fi
if [[ -x $bench && ${GPU_CHECK_BENCH:-1} != 0 ]]; then
  if "$bench" --device="$device" --configs=v1,v3 "${bench_args[@]}" \
       --benchmark_out="$out/model_bench.json" --benchmark_out_format=json; then
    record model_bench "\"ok\": true, \"file\": \"model_bench.json\", \"cuda_graphs\": \"off and on: the /graph rows replay a recorded encoder per shape\""
  else
    record model_bench '"ok": false'
    failed=1
  fi
fi

# ---- 3. The eager PyTorch peer, same shapes and dtypes ----
peers=${GPU_CHECK_PEERS:-}
for candidate in .gpu-check/peers ../shared/peers; do
  [[ -z $peers && -f $candidate/eager_bench.py ]] && peers=$candidate
done
: >"$out/eager.jsonl"
if [[ -n $python && -n $peers && ${GPU_CHECK_BENCH:-1} != 0 ]]; then
  for dtype in "${peer_dtypes[@]}"; do
    PYTHONDONTWRITEBYTECODE=1 "$python" "$peers/eager_bench.py" --config "$peer_configs" --shapes "$peer_shapes" \
      --device "${device%%:*}" --dtype "$dtype" --runs 10 --json "$work/eager-$dtype.jsonl" >/dev/null ||
      note "eager peer in $dtype failed (its records say where)"
    cat "$work/eager-$dtype.jsonl" >>"$out/eager.jsonl" 2>/dev/null
  done
  record eager_peer "\"file\": \"eager.jsonl\", \"records\": $(wc -l <"$out/eager.jsonl"), \"from\": \"$peers\""
else
  record eager_peer "\"skipped\": \"no python3 with torch or no eager_bench.py (run scripts/gpu_check_prepare.sh)\""
fi

# ---- Summary ----
threads=$(nproc)
[[ -f $out/model_bench.json ]] && "${python:-python3}" bench/provenance.py stamp --threads="$threads" "$out/model_bench.json"
"${python:-python3}" bench/provenance.py json --threads="$threads" >"$work/provenance.json"
python3 - "$records" "$out/gpu_check.json" "$failed" "$((SECONDS - started))" "$device" "$work/provenance.json" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
provenance = json.load(open(sys.argv[6]))
summary = {"device": sys.argv[5], "ok": sys.argv[3] == "0", "seconds": int(sys.argv[4]),
           "commit": provenance["commit"], "provenance": provenance, "records": records}
json.dump(summary, open(sys.argv[2], "w"), indent=1)
golden = [r for r in records if r["kind"] == "golden"]
print("gpu_check: %d of %d golden runs passed" % (sum(r["ok"] for r in golden), len(golden)))
for r in golden:
    worst = {n: "%.3g" % t.get("max_abs_error", float("nan")) for n, t in r.get("tensors", {}).items()
             if "logits" in n}
    print("  %-18s %-9s %s %s" % (r["case"], r["dtype"], "ok  " if r["ok"] else "FAIL", worst))
PY
rm -f "$records"
note "$([[ $failed == 0 ]] && echo passed || echo FAILED) in $((SECONDS - started)) s; results in $out"
exit "$failed"
