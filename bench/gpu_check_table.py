#!/usr/bin/env python3
"""The GPU check's speed table: ours (model_bench, eager and CUDA graph rows)
against the eager PyTorch peer measured in the same run, tokens/s.

  gpu_check_table.py RESULTS_DIR     (model_bench.json and eager.jsonl of
                                      one scripts/gpu_check.sh run)
"""
import json
import os
import sys

DTYPES = {"float16": "fp16", "bfloat16": "bf16"}


def main():
    folder = sys.argv[1]
    bench = json.load(open(os.path.join(folder, "model_bench.json")))
    ours = {}
    for row in bench["benchmarks"]:
        parts = row["name"].split("/")
        batch = int(next(p for p in parts if p.startswith("batch:"))[6:])
        ours[(parts[1].replace("deberta_base_", "base-"), parts[2], "graph" in parts, batch)] = row["tokens_per_s"]
    eager = {}
    for line in open(os.path.join(folder, "eager.jsonl")):
        record = json.loads(line)
        if record["kind"] == "shape":
            eager[(record["config"], DTYPES[record["dtype"]], record["batch"])] = record["tokens_per_s"]
    print("commit %s, %s" % (bench.get("commit"), bench.get("provenance", {}).get("date")))
    print("| config | dtype | batch x 128 | eager PyTorch | ours | ours / eager | ours, CUDA graph | graph / eager |")
    print("|---|---|---|---|---|---|---|---|")
    for (config, dtype, batch), peer in sorted(eager.items()):
        plain, graph = ours.get((config, dtype, False, batch)), ours.get((config, dtype, True, batch))
        if plain is None or graph is None:
            continue
        print("| %s | %s | %d | %.0fk | %.0fk | %.2f | %.0fk | %.2f |"
              % (config, dtype, batch, peer / 1e3, plain / 1e3, plain / peer, graph / 1e3, graph / peer))


if __name__ == "__main__":
    main()
