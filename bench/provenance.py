#!/usr/bin/env python3
"""Where a measurement was made: the fields every results file carries.

  provenance.py json  [--threads N]           prints them as one JSON object
  provenance.py stamp [--threads N] FILE...   merges them into each JSON
                                              object file (top level), or
                                              writes FILE.provenance.json
                                              beside a file that is not one
  provenance.py check DIR                     fails (exit 1, naming each
                                              file) unless every results
                                              run under DIR carries them

What `check` asks (ctest's results_provenance runs it on bench/results):
every file sits in a run's directory, not loose at the top; every JSON
object file there has a "commit" (or a FILE.provenance.json beside it);
and each directory holds at least one file so stamped, which dates its
companions (logs, tables, READMEs, patches made in the same run).

Fields: commit and dirty ($DEBERTA_COMMIT and $DEBERTA_DIRTY where set, as
on the lent GPU machine, whose copy of the tree has a stale .git; else git),
date (UTC), cpu_model, cpu_flags (the SIMD ones that choose kernels, and
the full list), threads, libtorch and onednn (the installed packages' or
python3 torch's versions), and the ISA caps in force (ONEDNN_MAX_CPU_ISA,
DNNL_MAX_CPU_ISA, ATEN_CPU_CAPABILITY). Standard library only.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16",
                "amx_bf16", "amx_int8")
CAP_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY")


def run(*command):
    try:
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def git_state():
    # The variables first: the lent GPU machine's copy of the tree has a
    # .git that names the last landed commit, not the one that travelled.
    if "DEBERTA_COMMIT" in os.environ:
        return os.environ["DEBERTA_COMMIT"], os.environ.get("DEBERTA_DIRTY", "unknown")
    commit = run("git", "rev-parse", "HEAD")
    if commit is None:
        return "unknown", "unknown"
    # Results a run writes into the tree (bench/results/) are not code.
    dirty = run("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results")
    return commit, bool(dirty)


def cpu():
    model, flags = "unknown", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = value.split()
    except OSError:
        pass
    return model, flags


def package_version(pattern):
    out = run("dpkg-query", "-W", "-f=${Package} ${Version}\\n", pattern)
    return out.splitlines()[0] if out else None


def torch_versions():
    libtorch = package_version("libtorch-dev") or package_version("libtorch-cuda-dev")
    onednn = package_version("libdnnl-dev")
    if libtorch is None or onednn is None:
        out = run(sys.executable, "-c", "import torch; print(torch.__version__); print(torch.__config__.show())")
        if out:
            lines = out.splitlines()
            libtorch = libtorch or "python torch " + lines[0]
            match = re.search(r"(?:oneDNN|MKL-DNN)[^\n]*?v?(\d+\.\d+(?:\.\d+)?)", out)
            onednn = onednn or (match.group(1) if match else None)
    return libtorch, onednn


def provenance(threads):
    commit, dirty = git_state()
    model, flags = cpu()
    libtorch, onednn = torch_versions()
    return {
        "commit": commit,
        "dirty": dirty,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_model": model,
        "cpu_kernel_flags": [f for f in KERNEL_FLAGS if f in flags],
        "cpu_flags": " ".join(flags),
        "cores": os.cpu_count(),
        "threads": threads,
        "libtorch": libtorch,
        "onednn": onednn,
        "isa_caps": {v: os.environ[v] for v in CAP_VARIABLES if v in os.environ},
    }


def stamp(path, fields):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        data.update({"provenance": fields, "commit": fields["commit"]})
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
    else:
        with open(path + ".provenance.json", "w") as f:
            json.dump(fields, f, indent=1)


def is_stamped(path):
    if os.path.exists(path + ".provenance.json"):
        return True
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "commit" in data


def is_json_object_file(path):
    if not path.endswith(".json"):
        return False
    try:
        with open(path) as f:
            return isinstance(json.load(f), dict)
    except (OSError, ValueError):
        return False


def check(root):
    """The problems found under root, one line each."""
    problems = []
    for directory, _, names in sorted(os.walk(root)):
        files = sorted(n for n in names if not n.endswith(".provenance.json"))
        if directory == root:
            problems += [f"{os.path.join(root, n)}: loose at the top; put each run in its own directory"
                         for n in files]
            continue
        paths = [os.path.join(directory, n) for n in files]
        if not files:
            continue
        problems += [f"{p}: a JSON results file without its provenance (provenance.py stamp)"
                     for p in paths if is_json_object_file(p) and not is_stamped(p)]
        if not any(is_stamped(p) for p in paths):
            problems.append(f"{directory}: no file in it carries the run's provenance")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("verb", choices=("json", "stamp", "check"))
    parser.add_argument("files", nargs="*")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_intermixed_args()
    if args.verb == "check":
        problems = [p for root in args.files for p in check(root)]
        for problem in problems:
            print(problem)
        sys.exit(1 if problems else 0)
    fields = provenance(args.threads)
    if args.verb == "json":
        print(json.dumps(fields))
    else:
        for path in args.files:
            stamp(path, fields)


if __name__ == "__main__":
    main()
