#!/usr/bin/env python3
"""Writes a copy of a `deberta-cli run` output with one logit moved, for
gpu_check.sh's self-check that compare_golden.py can fail (standard library
only, as compare_golden.py):

  perturbed_copy.py RUN.safetensors OUT.safetensors [TENSOR] [DELTA]

TENSOR (default classifier_logits, F32) has its first value moved by DELTA
(default 0.01: 100x the float32 rule's absolute bound).
"""
import json
import struct
import sys


def main():
    source, target = sys.argv[1], sys.argv[2]
    tensor = sys.argv[3] if len(sys.argv) > 3 else "classifier_logits"
    delta = float(sys.argv[4]) if len(sys.argv) > 4 else 0.01
    with open(source, "rb") as f:
        raw = bytearray(f.read())
    header_size = struct.unpack("<Q", raw[:8])[0]
    entry = json.loads(raw[8:8 + header_size])[tensor]
    if entry["dtype"] != "F32":
        sys.exit(f"perturbed_copy: {tensor} is {entry['dtype']}, not F32")
    at = 8 + header_size + entry["data_offsets"][0]
    value = struct.unpack_from("<f", raw, at)[0]
    struct.pack_into("<f", raw, at, value + delta)
    with open(target, "wb") as f:
        f.write(raw)


if __name__ == "__main__":
    main()
