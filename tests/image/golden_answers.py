#!/usr/bin/env python3
"""Checks a served model's classify answers against a golden case, with the
standard library only (for image tests, which have neither the C++ test
binaries nor numpy):

  golden_answers.py sequences CASE_DIR        the case's inputs as deberta-cli
                                              --sequences (padding stripped)
  golden_answers.py check CASE_DIR ANSWERS    ANSWERS: `deberta-cli classify
                                              --json` output for those sequences

`check` applies the golden README's rule to classifier_logits (|d| <= 1e-4 +
1e-4 |e|, same argmax) and exits 1 naming the first mismatch.
"""
import json
import struct
import sys


def read_tensor(path, name):
    with open(path, "rb") as f:
        header_size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_size))
        entry = header[name]
        if entry["dtype"] != "F32":
            sys.exit("%s: %s is %s, not F32" % (path, name, entry["dtype"]))
        begin, end = entry["data_offsets"]
        f.seek(8 + header_size + begin)
        values = struct.unpack("<%df" % ((end - begin) // 4), f.read(end - begin))
    rows, cols = entry["shape"]
    return [list(values[r * cols:(r + 1) * cols]) for r in range(rows)]


def sequences(case_dir):
    inputs = json.load(open(case_dir + "/inputs.json"))
    return ";".join(" ".join(str(t) for t in ids[:length])
                    for ids, length in zip(inputs["input_ids"], inputs["lengths"]))


def check(case_dir, answers_path):
    expected = read_tensor(case_dir + "/expected.safetensors", "classifier_logits")
    answers = json.load(open(answers_path))
    got = [r["logits"] for r in answers["results"]]
    if len(got) != len(expected):
        sys.exit("FAIL: %d answers for %d golden sequences" % (len(got), len(expected)))
    worst = 0.0
    for row, (g, e) in enumerate(zip(got, expected)):
        if len(g) != len(e):
            sys.exit("FAIL: sequence %d has %d logits, golden %d" % (row, len(g), len(e)))
        for col, (gv, ev) in enumerate(zip(g, e)):
            if abs(gv - ev) > 1e-4 + 1e-4 * abs(ev):
                sys.exit("FAIL: sequence %d logit %d is %.6f, golden %.6f" % (row, col, gv, ev))
            worst = max(worst, abs(gv - ev))
        if g.index(max(g)) != e.index(max(e)):
            sys.exit("FAIL: sequence %d argmax differs" % row)
    print("%d sequences match the golden logits (largest difference %.2g)" % (len(got), worst))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "sequences":
        print(sequences(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
