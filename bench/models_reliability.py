#!/usr/bin/env python3
"""Many models in one server (issue 31, item 7): reliability figures.

A deberta-server serves a model repository of two random
deberta-v3-base-size classifiers, "a" and "b" (each with 1 of the 2 cores:
serving.json "threads"), loaded by `deberta-cli bench` on loopback:

  alone      each model by itself, closed loop (8 clients): its capacity
  together   both at once, each closed loop: each one's rate and p99
  overload   "a" open loop at 5 x its capacity while "b" runs closed loop:
             b's p99 and rate against `together` (target within 20%), and
             b's answer to a fixed input identical to its answer at rest
  swap       16 clients on "a" while version 2 is written into the
             repository (--model_control=poll, 1 s): failed calls (target 0),
             seconds from the version's rename to ListModels showing it,
             RSS before, at the peak and after the old version is freed
  unload     a server with --model_control=explicit: "a" unloaded by
             `deberta-cli unload-model` under 16 clients: every accepted
             call answered OK, later calls UNAVAILABLE (no other code)

  bench/models_reliability.py --json bench/results/models-reliability/results.json
  PHASE=10 bench/models_reliability.py          # shorter phases

The results file carries its provenance (bench/provenance.py). Compare a
model's figures with the same run's other phases, not across machines.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import reliability  # Its Server's memory and metrics readers (this folder).

ROOT, SERVER, CLI, MODEL = reliability.ROOT, reliability.SERVER, reliability.CLI, reliability.MODEL
PHASE = int(os.environ.get("PHASE", "20"))  # Seconds per load phase.
SEQUENCE = "1 100 200 300 400 500 600 700 2"  # The fixed input of the answer check.


class Server(reliability.Server):
    """deberta-server on a repository, as a child process; ports from its
    banner; memory and metrics as reliability.Server reads them."""

    def __init__(self, work, name, repository, *flags):
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(
            [SERVER, "--model_repository=" + repository, "--listen_address=127.0.0.1", "--port=0",
             "--metrics_port=0", "--threads=2", "--max_batch_size=16", "--max_queue_size=64",
             "--drain_timeout=20s"] + list(flags),
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        banner = self.proc.stdout.readline()
        m = re.search(r":(\d+), metrics on :(\d+)", banner)
        if not m:
            sys.exit("server did not start: " + banner)
        self.port, self.metrics_port = int(m.group(1)), int(m.group(2))
        self.target = "127.0.0.1:%d" % self.port

    def cli(self, *args):
        return subprocess.run([CLI] + list(args) + ["--server=" + self.target], capture_output=True, text=True)

    def versions(self):
        out = self.cli("models", "--json")
        return {m["name"]: int(m.get("version", 0)) for m in json.loads(out.stdout)["models"]}


def bench_args(target, model, *flags):
    return [CLI, "bench", "--server=" + target, "--model_name=" + model, "--min_len=16", "--max_len=64",
            "--vocab=1000", "--json"] + list(flags)


def bench(target, model, *flags):
    out = subprocess.run(bench_args(target, model, *flags), capture_output=True, text=True)
    try:
        return json.loads(out.stdout)[0]
    except (ValueError, IndexError):
        sys.exit("bench failed: " + out.stdout + out.stderr)


def concurrently(*runs):
    """Runs each (target, model, flags...) bench at once; their results in order."""
    procs = [subprocess.Popen(bench_args(*run), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for run in runs]
    results = []
    for p in procs:
        out, err = p.communicate()
        try:
            results.append(json.loads(out)[0])
        except (ValueError, IndexError):
            sys.exit("bench failed: " + out + err)
    return results


def answer(server, model):
    out = server.cli("classify", "--model_name=" + model, "--sequences=" + SEQUENCE, "--json")
    return json.loads(out.stdout)["results"][0]


def same_answer(x, y):
    """The same labels in the same order, probabilities within 1e-4 (a batch's
    padding may move the last float bits)."""
    if x is None or y is None or len(x["labels"]) != len(y["labels"]):
        return False
    return all(p["label"] == q["label"] and abs(p["probability"] - q["probability"]) < 1e-4
               for p, q in zip(x["labels"], y["labels"]))


def link_version(model_folder, version):
    """Writes version `version` beside the model folder and renames it in."""
    staging = os.path.join(os.path.dirname(model_folder), ".staging-%d" % version)
    os.symlink(MODEL, staging)
    os.rename(staging, os.path.join(model_folder, str(version)))


def make_repository(work, name):
    repository = os.path.join(work, name)
    for model in ("a", "b"):
        os.makedirs(os.path.join(repository, model))
        link_version(os.path.join(repository, model), 1)
        with open(os.path.join(repository, model, "serving.json"), "w") as f:
            json.dump({"threads": 1}, f)
    return repository


def summary(r):
    return {"sequences_per_s": r["sequences_per_s"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "ok": r["ok"],
            "errors": r["errors"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here too (with their provenance)")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(MODEL, "model.safetensors")):
        subprocess.run([CLI, "make-random-model", "--shape=deberta-v3-base", "--out=" + MODEL], check=True)
    work = tempfile.mkdtemp(prefix="deberta-models-reliability-")
    results = {"phase_s": PHASE, "model": "random deberta-v3-base classifier, float32, 1 thread per model"}
    d = "%ds" % PHASE
    repository = make_repository(work, "poll")
    server = Server(work, "poll", repository, "--model_control=poll", "--repository_poll_interval=1s")
    try:
        for model in ("a", "b"):
            bench(server.target, model, "--concurrency=8", "--duration=5s")  # Warm-up.
        alone = {m: bench(server.target, m, "--concurrency=8", "--duration=" + d) for m in ("a", "b")}
        results["alone"] = {m: summary(r) for m, r in alone.items()}
        print("alone: " + ", ".join("%s %.1f seq/s p99 %.0f ms" % (m, r["sequences_per_s"], r["p99_ms"])
                                   for m, r in alone.items()))

        both = concurrently((server.target, "a", "--concurrency=8", "--duration=" + d),
                            (server.target, "b", "--concurrency=8", "--duration=" + d))
        results["together"] = {"a": summary(both[0]), "b": summary(both[1])}
        print("together: a %.1f seq/s p99 %.0f ms, b %.1f seq/s p99 %.0f ms" % (
            both[0]["sequences_per_s"], both[0]["p99_ms"], both[1]["sequences_per_s"], both[1]["p99_ms"]))

        at_rest = answer(server, "b")
        rate_a = alone["a"]["sequences_per_s"]
        checked = {}

        def check_answer_midway():
            time.sleep(PHASE / 2)
            checked["answer"] = answer(server, "b")

        checker = threading.Thread(target=check_answer_midway)
        checker.start()
        over = concurrently((server.target, "a", "--rate=%f" % (5 * rate_a), "--concurrency=256",
                             "--duration=" + d, "--deadline=10s"),
                            (server.target, "b", "--concurrency=8", "--duration=" + d))
        checker.join()
        b_over, b_together = over[1], both[1]
        results["overload"] = {
            "a_offered_per_s": (over[0]["ok"] + sum(over[0]["errors"].values())) / over[0]["seconds"],
            "a": summary(over[0]), "b": summary(b_over),
            "b_p99_vs_together": b_over["p99_ms"] / b_together["p99_ms"],
            "b_rate_vs_together": b_over["sequences_per_s"] / b_together["sequences_per_s"],
            "b_answer_unchanged": same_answer(checked.get("answer"), at_rest),
            "b_answer_at_rest": at_rest, "b_answer_under_a_overload": checked.get("answer")}
        o = results["overload"]
        print("overload: a offered %.0f/s (5 x %.1f), answered %.1f/s, errors %s; b %.1f seq/s p99 %.0f ms = "
              "%.2f x rate, %.2f x p99 of `together`; b's answer unchanged: %s" % (
                  o["a_offered_per_s"], rate_a, over[0]["sequences_per_s"], over[0]["errors"],
                  b_over["sequences_per_s"], b_over["p99_ms"], o["b_rate_vs_together"], o["b_p99_vs_together"],
                  o["b_answer_unchanged"]))

        # Swap under 16 clients: version 2 of a appears mid-run.
        time.sleep(2)
        rss_before = server.rss_mb()
        load = subprocess.Popen(bench_args(server.target, "a", "--concurrency=16", "--duration=%ds" % (3 * PHASE)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(PHASE)
        written = time.time()
        link_version(os.path.join(repository, "a"), 2)
        switched, peak = None, rss_before
        while load.poll() is None:
            peak = max(peak, server.rss_mb())
            if switched is None and server.versions().get("a") == 2:
                switched = time.time() - written
            time.sleep(0.2)
        out, err = load.communicate()
        swap = json.loads(out)[0]
        time.sleep(3)
        results["swap"] = {"clients": 16, "ok": swap["ok"], "errors": swap["errors"],
                           "failed": sum(swap["errors"].values()), "switch_seconds": switched,
                           "poll_interval_s": 1, "rss_before_mb": rss_before, "rss_peak_mb": peak,
                           "rss_after_mb": server.rss_mb(),
                           "load_seconds": server.metric('deberta_model_load_seconds{model="a",version="2"}')}
        s = results["swap"]
        print("swap: %d calls OK, %d failed %s; ListModels showed version 2 %.1f s after it was written (poll 1 s, "
              "load %.1f s); RSS %.0f -> peak %.0f -> %.0f MB after" % (
                  s["ok"], s["failed"], s["errors"], switched or -1, s["load_seconds"], rss_before, peak,
                  s["rss_after_mb"]))
    finally:
        server.stop()

    # Unload under load, explicit control.
    keys = os.path.join(work, "admin_keys")
    with open(keys, "w") as f:
        f.write("bench-admin\n")
    explicit = Server(work, "explicit", make_repository(work, "explicit"), "--model_control=explicit",
                      "--admin_api_keys_file=" + keys)
    try:
        bench(explicit.target, "a", "--concurrency=8", "--duration=3s")
        load = subprocess.Popen(bench_args(explicit.target, "a", "--concurrency=16", "--duration=%ds" % PHASE),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(PHASE / 2)
        started = time.time()
        unloaded = explicit.cli("unload-model", "--model_name=a", "--api_key=bench-admin")
        unload_s = time.time() - started
        out, err = load.communicate()
        r = json.loads(out)[0]
        codes = {code: explicit.metric('deberta_requests_total{code="%s",endpoint="classify",model="a"' % code)
                 for code in ("OK", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "UNKNOWN")}
        refused = explicit.metric('deberta_requests_total{code="UNAVAILABLE",endpoint="classify"')
        results["unload"] = {"unload_rpc_ok": unloaded.returncode == 0, "unload_rpc_seconds": unload_s,
                             "client_ok": r["ok"], "client_errors": r["errors"],
                             "server_codes_of_a": codes, "unavailable_after": refused,
                             "accepted_not_ok": sum(v for k, v in codes.items() if k != "OK")}
        u = results["unload"]
        print("unload: RPC %s in %.2f s; clients %d OK, errors %s; a's accepted calls not OK: %d; refused UNAVAILABLE "
              "after: %d" % ("ok" if u["unload_rpc_ok"] else unloaded.stderr.strip(), unload_s, r["ok"], r["errors"],
                             u["accepted_not_ok"], refused))
    finally:
        explicit.stop()
        shutil.rmtree(work, ignore_errors=True)

    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "provenance.py"), "stamp", "--threads", "2",
                        args.json], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
