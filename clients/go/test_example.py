"""Test of the Go client example (clients/go/example) against the real
deberta-server on the demo model: every answer it prints equals the HTTP/JSON
API's answer to the same request (both are protobuf's JSON mapping of the
same message), and a failed call exits 1 with the code by name. Run by ctest
with DEBERTA_GO_EXAMPLE and DEBERTA_SERVER_BINARY set.
"""
import json
import math
import os
import re
import subprocess
import unittest
import urllib.request

TEXT = "Paris is the [MASK] of France."


def same(a, b):
    """JSON values equal, floats to float32 precision (Go prints the
    shortest float32, C++ nine digits)."""
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


class GoExampleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--model=demo", "--listen_address=127.0.0.1", "--port=0",
             "--metrics_port=-1", "--http_port=0", "--threads=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        banner = cls.server.stdout.readline()
        cls.port = int(re.search(r":(\d+), metrics on", banner).group(1))
        cls.http_port = int(re.search(r"http on :(\d+)", banner).group(1))

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=30)

    def example(self, text):
        return subprocess.run([os.environ["DEBERTA_GO_EXAMPLE"], "-server=127.0.0.1:%d" % self.port, "-text=" + text],
                              capture_output=True, text=True, timeout=60)

    def post(self, path, body):
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.http_port, path),
                                         data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def test_answers_equal_the_json_api(self):
        run = self.example(TEXT)
        self.assertEqual(run.returncode, 0, run.stderr)
        printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
        self.assertEqual(sorted(printed), ["Classify", "FillMask", "GetModelInfo"])
        expected = {
            "GetModelInfo": self.post("/v1/model", {}),
            "Classify": self.post("/v1/classify", {"sequences": [{"text": TEXT}], "topK": 2}),
            "FillMask": self.post("/v1/fill-mask", {"sequences": [{"sequence": {"text": TEXT}}], "topK": 3}),
        }
        for method, answer in expected.items():
            got = json.loads(printed[method])
            self.assertTrue(same(got, answer), "%s:\n go:   %s\n http: %s" % (method, got, answer))
        self.assertEqual(len(json.loads(printed["FillMask"])["results"][0]["predictions"][0]["candidates"]), 3)

    def test_a_failed_call_exits_1_with_the_code_by_name(self):
        run = self.example("no mask in this text")  # Classify works; FillMask has no mask to fill.
        self.assertEqual(run.returncode, 1)
        self.assertIn("Classify ", run.stdout)
        self.assertRegex(run.stderr, r"^FillMask: InvalidArgument: ")


if __name__ == "__main__":
    unittest.main(verbosity=2)
