#!/usr/bin/env python3
"""Reliability benchmark (issue 14, item 7): a deberta-server on a random
deberta-v3-base-size model, loaded by `deberta-cli bench` on loopback, in
bounded phases:

  capacity   closed loop, 8 clients: the unloaded rate R (sequences/s)
  overload   open loop at 10 x R: useful rate kept (target >= 0.8 R),
             rejection latency p99, peak memory, no crash
  deadlines  open loop at 2 x R, deadlines of 1.5 x the capacity phase's
             median latency: share of engine time spent on sequences whose
             call was gone by the end of their batch (target < 5%)
  cancels    the same with clients cancelling after that time
  sigterm    SIGTERM during closed-loop load: every accepted call answered
             OK (refused ones UNAVAILABLE), exit 0
  soak       closed loop for SOAK seconds: memory growth after warm-up
             (target < 5%), client and /metrics OK counts equal

  bench/reliability.py                     # after scripts/test.sh
  SOAK=600 THREADS=2 bench/reliability.py --json bench/results/reliability/results.json
  PHASES=overload,sigterm bench/reliability.py   # some phases (capacity always)

Sequences are 16-64 tokens. Numbers depend on the machine: compare them
with the same run's capacity, not across machines.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
SERVER = os.environ.get("SERVER", os.path.join(BUILD, "service", "deberta-server"))
CLI = os.environ.get("CLI", os.path.join(BUILD, "deberta-cli"))
MODEL = os.environ.get("MODEL_DIR", os.path.join(BUILD, "bench-models", "deberta-v3-base-random"))
THREADS = os.environ.get("THREADS", "2")
SOAK = int(os.environ.get("SOAK", "600"))
PHASE = int(os.environ.get("PHASE", "30"))  # Seconds per load phase.
QUEUE = os.environ.get("QUEUE", "64")
PHASES = os.environ.get("PHASES", "overload,deadlines,cancels,sigterm,soak").split(",")


class Server:
    """deberta-server as a child process; its ports from the banner."""

    def __init__(self, work, name):
        self.log_path = os.path.join(work, name + ".log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [SERVER, "--model=" + MODEL, "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
             "--threads=" + THREADS, "--max_batch_size=16", "--max_queue_size=" + QUEUE, "--drain_timeout=20s"],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        banner = self.proc.stdout.readline()
        m = re.search(r":(\d+), metrics on :(\d+)", banner)
        if not m:
            sys.exit("server did not start: " + banner + open(self.log_path).read()[-2000:])
        self.port, self.metrics_port = int(m.group(1)), int(m.group(2))
        self.target = "127.0.0.1:%d" % self.port

    def rss_mb(self, field="VmRSS"):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def metric(self, name_and_labels):
        """Sum of the samples whose name{labels} starts with the argument."""
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10).read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name_and_labels):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)


def bench(target, *flags):
    out = subprocess.run([CLI, "bench", "--server=" + target, "--min_len=16", "--max_len=64", "--vocab=1000",
                          "--json"] + list(flags), capture_output=True, text=True)
    try:
        return json.loads(out.stdout)[0]
    except (ValueError, IndexError):
        sys.exit("bench failed: " + out.stdout + out.stderr)


def computed_sequences(server):
    return server.metric("deberta_batch_size_sum")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(MODEL, "model.safetensors")):
        subprocess.run([CLI, "make-random-model", "--shape=deberta-v3-base", "--out=" + MODEL], check=True)
    work = tempfile.mkdtemp(prefix="deberta-reliability-")
    results = {"threads": int(THREADS), "queue": int(QUEUE), "phase_s": PHASE}
    server = Server(work, "main")
    d = "%ds" % PHASE
    try:
        bench(server.target, "--concurrency=8", "--duration=5s")  # Warm-up.
        cap = bench(server.target, "--concurrency=8", "--duration=" + d)
        rate = cap["sequences_per_s"]
        results["capacity"] = {"sequences_per_s": rate, "p99_ms": cap["p99_ms"]}
        print("capacity: %.1f sequences/s (8 clients, closed loop), p99 %.0f ms" % (rate, cap["p99_ms"]))

        if "overload" in PHASES:
            rss_before = server.rss_mb()
            # Twice the phase: each client's first send is spread over one
            # interval (concurrency / rate), which the average must outlast.
            over = bench(server.target, "--rate=%f" % (10 * rate), "--concurrency=256", "--duration=%ds" % (2 * PHASE),
                         "--deadline=10s")
            offered = (over["ok"] + sum(over["errors"].values())) / over["seconds"]
            results["overload"] = {
                "offered_per_s": offered, "useful_per_s": over["sequences_per_s"],
                "useful_vs_capacity": over["sequences_per_s"] / rate, "errors": over["errors"],
                "rejection_p99_ms": over["error_p99_ms"].get("RESOURCE_EXHAUSTED"), "ok_p99_ms": over["p99_ms"],
                "rss_before_mb": rss_before, "rss_after_mb": server.rss_mb(), "rss_peak_mb": server.rss_mb("VmHWM"),
                "server_alive": server.proc.poll() is None}
            o = results["overload"]
            print("overload: offered %.0f/s (%.1f x capacity), useful %.1f/s = %.2f of capacity; rejected %s, "
                  "rejection p99 %s ms; RSS %.0f -> %.0f MB (peak %.0f)" % (
                      offered, offered / rate, o["useful_per_s"], o["useful_vs_capacity"], over["errors"],
                      o["rejection_p99_ms"], rss_before, o["rss_after_mb"], o["rss_peak_mb"]))

        if "deadlines" in PHASES or "cancels" in PHASES:
            patience_ms = int(1.5 * cap["p50_ms"])
            results["storm_patience_ms"] = patience_ms
            for name, flags in (("deadlines", ["--deadline=%dms" % patience_ms]),
                                ("cancels", ["--cancel_after=%dms" % patience_ms])):
                if name not in PHASES:
                    continue
                computed0, ok0 = computed_sequences(server), server.metric('deberta_requests_total{code="OK"')
                busy0 = server.metric("deberta_inference_duration_seconds_sum")
                wasted0 = server.metric("deberta_abandoned_inference_seconds_total")
                storm = bench(server.target, "--rate=%f" % (2 * rate), "--concurrency=128", "--duration=" + d, *flags)
                time.sleep(1)  # Batches in flight finish.
                computed = computed_sequences(server) - computed0
                ok_server = server.metric('deberta_requests_total{code="OK"') - ok0
                busy = server.metric("deberta_inference_duration_seconds_sum") - busy0
                wasted_s = server.metric("deberta_abandoned_inference_seconds_total") - wasted0
                wasted = wasted_s / busy if busy else 0.0
                results[name] = {"sent": storm["ok"] + sum(storm["errors"].values()), "client_ok": storm["ok"],
                                 "server_ok": ok_server, "batched_sequences": computed, "engine_seconds": busy,
                                 "abandoned_engine_seconds": wasted_s, "abandoned_share_of_engine_time": wasted,
                                 "errors": storm["errors"]}
                print("%s: %d calls, %d answered OK; engine busy %.1f s, %.1f%% of it for calls already gone "
                      "(%d sequences batched); errors %s" % (name, results[name]["sent"], storm["ok"], busy, 100 * wasted,
                                                            computed, storm["errors"]))

        if "sigterm" in PHASES:
            # SIGTERM under load: a server of its own. /metrics is scraped until
            # it goes (it is the last thing the server stops), so the last
            # scrape shows every accepted call answered.
            term = Server(work, "sigterm")
            load = subprocess.Popen([CLI, "bench", "--server=" + term.target, "--concurrency=16", "--duration=20s",
                                     "--min_len=16", "--max_len=64", "--vocab=1000", "--json", "--deadline=30s"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(8)
            in_queue = term.metric("deberta_queue_sequences")
            term.proc.send_signal(signal.SIGTERM)
            last = {}
            while term.proc.poll() is None:
                try:
                    last = {code: term.metric('deberta_requests_total{code="%s",endpoint="classify"' % code)
                            for code in ("OK", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "UNAVAILABLE")}
                except OSError:
                    break
                time.sleep(0.05)
            code = term.proc.wait(timeout=60)
            out, _ = load.communicate(timeout=120)
            r = json.loads(out)[0]
            # Accepted calls are those the server counted other than UNAVAILABLE
            # (its answer to calls arriving while it drains). Clients may also
            # see CANCELLED for calls that reach the port in the instant gRPC
            # closes it: gRPC resets those streams; they were never accepted.
            lost = {k: v for k, v in last.items() if k not in ("OK", "UNAVAILABLE") and v}
            results["sigterm"] = {"exit_code": code, "queued_at_signal": in_queue, "client_ok": r["ok"],
                                  "client_errors": r["errors"], "server_last_scrape": last, "lost": lost}
            print("sigterm: %d sequences queued at the signal; exit %d; client OK %d, errors %s; server's last count: "
                  "%s; accepted calls not answered OK: %s" % (in_queue, code, r["ok"], r["errors"], last, lost or "none"))

        if "soak" in PHASES:
            # Soak.
            ok0 = server.metric('deberta_requests_total{code="OK",endpoint="classify"')
            samples = []
            soak = subprocess.Popen([CLI, "bench", "--server=" + server.target, "--concurrency=8",
                                     "--duration=%ds" % SOAK, "--min_len=16", "--max_len=64", "--vocab=1000", "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            start = time.time()
            while soak.poll() is None:
                samples.append((round(time.time() - start), server.rss_mb()))
                time.sleep(10)
            out, _ = soak.communicate()
            r = json.loads(out)[0]
            ok_server = server.metric('deberta_requests_total{code="OK",endpoint="classify"') - ok0
            warm = [m for t, m in samples if t >= min(60, SOAK // 5)]
            growth = (warm[-1] - warm[0]) / warm[0] if len(warm) >= 2 else float("nan")
            results["soak"] = {"seconds": SOAK, "client_ok": r["ok"], "server_ok": ok_server, "errors": r["errors"],
                               "sequences_per_s": r["sequences_per_s"], "rss_samples_mb": samples,
                               "growth_after_warmup": growth}
            print("soak %d s: %.1f sequences/s; client OK %d, /metrics OK %d; RSS after warm-up %.0f -> %.0f MB "
                  "(%+.1f%%), errors %s" % (SOAK, r["sequences_per_s"], r["ok"], ok_server, warm[0] if warm else 0,
                                            warm[-1] if warm else 0, 100 * growth, r["errors"]))
    finally:
        server.stop()
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "provenance.py"), "stamp",
                        "--threads=" + THREADS, args.json], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
