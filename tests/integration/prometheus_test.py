#!/usr/bin/env python3
"""Prometheus integration test: a real Prometheus scrapes a real deberta-server.

Starts deberta-server (demo model) and Debian's prometheus on loopback, with
deploy/prometheus/rules.yaml loaded, sends traffic with `deberta-cli bench`
(plus one bad request, so error series exist), then asserts through
Prometheus's HTTP API that:
  * the target is up and the request counters moved,
  * a latency quantile computed from the histograms is finite,
  * every recording rule evaluates (rule health ok, series present, values sane),
  * every query of the Grafana dashboard is valid PromQL and returns data.

  tests/integration/prometheus_test.py --server build/service/deberta-server \
      --cli build/deberta-cli --repo .
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

JOB = "deberta-serve"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Prometheus:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path, **params):
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def query(self, expr):
        answer = self.get("/api/v1/query", query=expr)
        if answer.get("status") != "success":
            raise AssertionError(f"query failed: {expr}: {answer}")
        return answer["data"]["result"]

    def values(self, expr):
        return [float(sample["value"][1]) for sample in self.query(expr)]


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok   {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--prometheus", default=shutil.which("prometheus") or "prometheus")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="deberta-prometheus-")
    processes = []
    try:
        server = subprocess.Popen(
            [args.server, "--model=demo", "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
             "--threads=1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        processes.append(server)
        # Log lines (stderr) come first; the banner is the serving line.
        for _ in range(100):
            banner = server.stdout.readline()
            if not banner or "metrics on" in banner:
                break
        ports = re.search(r":(\d+), metrics on :(\d+)", banner)
        check(ports is not None, f"server started: {banner.strip()}")
        grpc_port, metrics_port = ports.group(1), ports.group(2)

        prometheus_port = free_port()
        rules = os.path.join(os.path.abspath(args.repo), "deploy/prometheus/rules.yaml")
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:
  - job_name: {JOB}
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
""")
        prometheus_log = open(os.path.join(work, "prometheus.log"), "w")
        prometheus = subprocess.Popen(
            [args.prometheus, f"--config.file={config}", f"--storage.tsdb.path={work}/data",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=prometheus_log, stderr=subprocess.STDOUT)
        processes.append(prometheus)
        prom = Prometheus(prometheus_port)
        def ready():
            if prometheus.poll() is not None:
                raise AssertionError("prometheus exited: " + open(os.path.join(work, "prometheus.log")).read())
            try:
                return urllib.request.urlopen(f"{prom.base}/-/ready", timeout=2).status == 200
            except OSError:
                return False
        wait_for("Prometheus ready", ready)
        wait_for("the target up", lambda: prom.values(f'up{{job="{JOB}"}}') == [1.0])
        check(True, "target is up")
        before = sum(prom.values(f'deberta_requests_total{{job="{JOB}",endpoint="classify",code="OK"}}'))

        # Traffic: classify and fill-mask load, and one bad request.
        target = f"--server=127.0.0.1:{grpc_port}"
        for endpoint in ("classify", "fill-mask"):
            subprocess.run([args.cli, "bench", target, f"--endpoint={endpoint}", "--concurrency=4",
                            "--duration=4s", "--min_len=8", "--max_len=48"], check=True,
                           stdout=subprocess.DEVNULL)
        bad = subprocess.run([args.cli, "classify", target, "--sequences=1 5000 2"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check(bad.returncode != 0, "the bad request was refused")
        time.sleep(3)  # Two more scrapes and rule evaluations after the traffic.

        after = sum(prom.values(f'deberta_requests_total{{job="{JOB}",endpoint="classify",code="OK"}}'))
        check(after > before, f"classify OK counter moved: {before} -> {after}")
        check(sum(prom.values(f'deberta_requests_total{{job="{JOB}",code="INVALID_ARGUMENT"}}')) >= 1,
              "the INVALID_ARGUMENT counter moved")
        p90 = prom.values('histogram_quantile(0.9, sum by (le) (rate('
                          f'deberta_request_duration_seconds_bucket{{job="{JOB}",endpoint="classify"}}[30s])))')
        check(len(p90) == 1 and math.isfinite(p90[0]) and p90[0] > 0, f"p90 latency is finite: {p90}")

        # Recording rules: all healthy, all produce series with sane values.
        groups = prom.get("/api/v1/rules")["data"]["groups"]
        recorded = [r for g in groups for r in g["rules"] if r["type"] == "recording"]
        check(len(recorded) >= 9, f"{len(recorded)} recording rules loaded")
        for rule in [r for g in groups for r in g["rules"]]:
            check(rule["health"] == "ok", f"rule {rule['name']} health ok")
        expectations = {
            "job_model_endpoint:deberta_requests:rate5m": lambda v: v > 0,
            "job_model_endpoint:deberta_request_errors:ratio_rate5m": lambda v: 0 <= v <= 1,
            "job_model_endpoint:deberta_request_server_errors:ratio_rate5m": lambda v: v == 0,
            "job_model_endpoint:deberta_request_duration_seconds:p50_rate5m": lambda v: 0 < v < 10,
            "job_model_endpoint:deberta_request_duration_seconds:p90_rate5m": lambda v: 0 < v < 10,
            "job_model_endpoint:deberta_request_duration_seconds:p99_rate5m": lambda v: 0 < v < 10,
            "job_model_endpoint:deberta_batch_fill:ratio_rate5m": lambda v: 0 < v <= 1,
            "job_model_endpoint:deberta_padding_waste:ratio_rate5m": lambda v: 0 <= v < 1,
            "instance_model_endpoint:deberta_queue:saturation": lambda v: 0 <= v <= 1,
        }
        for rule in recorded:
            check(rule["name"] in expectations, f"recording rule {rule['name']} has an expectation here")
        for name, sane in expectations.items():
            values = prom.values(f'{name}{{job="{JOB}",model="demo",endpoint="classify"}}')
            check(len(values) == 1 and sane(values[0]), f"{name} = {values}")

        # The dashboard: every query is valid PromQL and returns data.
        dashboard = json.load(open(os.path.join(args.repo, "deploy/grafana/deberta-serve.json")))
        queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
        queries += [v["query"]["query"] for v in dashboard["templating"]["list"]
                    if v["type"] == "query"]
        for expr in queries:
            concrete = expr.replace("$__rate_interval", "30s").replace("$job", JOB).replace("$model", "demo")
            if concrete.startswith("label_values("):
                metric = re.match(r"label_values\((\w+(?:\{[^}]*\})?),", concrete).group(1)
                concrete = f'count by (job) ({metric})'
            check(len(prom.query(concrete)) > 0, f"dashboard query returns data: {concrete[:90]}")
        print(f"PASS: {len(queries)} dashboard queries, {len(recorded)} recording rules")
        return 0
    finally:
        for p in reversed(processes):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
