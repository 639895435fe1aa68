#!/usr/bin/env python3
"""The table of bench/cpu_peers.sh: per shape, each engine's tokens/s (the
median over the rounds; each round's figure in brackets) and the ratios of
ours to ONNX Runtime (of the medians; each paired round's in brackets). Standard library only.

    bench/cpu_peers_table.py OUT_DIR      (reads ours-N.json and ort-N.json)
"""
import glob
import json
import os
import re
import statistics
import sys


def ours(path):
    """{(dtype, 'BxL'): tokens/s} from one model_bench JSON (Google Benchmark)."""
    found = {}
    for b in json.load(open(path))["benchmarks"]:
        m = re.match(r"Classify/deberta_base_v\d/(\w+)/batch:(\d+)/len:(\d+)", b["name"])
        if m:
            found[(m.group(1), f"{m.group(2)}x{m.group(3)}")] = b["tokens_per_s"]
    return found


def ort(path):
    """{(variant, 'BxL'): tokens/s} from one bench.js --out file."""
    found = {}
    for r in json.load(open(path))["results"]:
        if r.get("engine", "").startswith("ort-") and "tokens_per_s" in r:
            found[(r["engine"][4:], f"{r['batch']}x{r['len']}")] = r["tokens_per_s"]
    return found


def rounds(out, prefix, read):
    files = sorted(glob.glob(os.path.join(out, f"{prefix}-*.json")))
    return [read(f) for f in files]


def main():
    out = sys.argv[1]
    ours_rounds = rounds(out, "ours", ours)
    ort_rounds = rounds(out, "ort", ort)
    shapes = sorted({s for r in ours_rounds for (_, s) in r}, key=lambda s: [int(x) for x in s.split("x")])
    engines = [("ours fp32", ours_rounds, "fp32"), ("ours bf16", ours_rounds, "bf16"),
               ("ours int8", ours_rounds, "int8"), ("ORT fp32", ort_rounds, "fp32"),
               ("ORT int8", ort_rounds, "int8")]
    median = {}
    print(f"{len(ours_rounds)} rounds of ours, {len(ort_rounds)} of ONNX Runtime, alternating; tokens/s, "
          "median over the rounds [each round]\n")
    print("| shape | " + " | ".join(e for e, _, _ in engines) +
          " | int8 / ORT int8 | bf16 / ORT int8 | fp32 / ORT fp32 |")
    print("|---" * (len(engines) + 4) + "|")
    for shape in shapes:
        cells = []
        for name, data, key in engines:
            values = [r[(key, shape)] for r in data if (key, shape) in r]
            median[(name, shape)] = statistics.median(values) if values else float("nan")
            cells.append(f"{median[(name, shape)]:.0f} [" + ", ".join(f"{v:.0f}" for v in values) + "]")
        def ratio(ours_key, ort_key):
            """The ratio of the medians [and of each paired round: ours round k over ORT round k]."""
            paired = [a[(ours_key, shape)] / b[(ort_key, shape)] for a, b in zip(ours_rounds, ort_rounds)
                      if (ours_key, shape) in a and (ort_key, shape) in b]
            names = {"fp32": "fp32", "bf16": "bf16", "int8": "int8"}
            m = median[(f"ours {names[ours_key]}", shape)] / median[(f"ORT {ort_key}", shape)]
            return f"{m:.2f} [" + ", ".join(f"{r:.2f}" for r in paired) + "]"
        print(f"| {shape} | " + " | ".join(cells) +
              f" | {ratio('int8', 'int8')} | {ratio('bf16', 'int8')} | {ratio('fp32', 'fp32')} |")


if __name__ == "__main__":
    main()
