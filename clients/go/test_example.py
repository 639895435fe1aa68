"""Test of the Go client example (clients/go/example) against the real
deberta-server on the demo model: every answer it prints equals the HTTP/JSON
API's answer to the same request (both are protobuf's JSON mapping of the
same message), also on a golden token classifier (tests/golden_tasks); on the
golden reranker its Rerank answer is the recorded order and scores; and a
failed call exits 1 with the code by name. Run by ctest with
DEBERTA_GO_EXAMPLE, DEBERTA_SERVER_BINARY and DEBERTA_GOLDEN_TASKS_DIR set.
"""
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
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


class Server:
    """A deberta-server on `model`, with its gRPC and HTTP ports."""

    def __init__(self, model, repository=None):
        source = ["--model_repository=" + repository] if repository else ["--model=" + model]
        self.process = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"]] + source + ["--listen_address=127.0.0.1", "--port=0",
                                                              "--metrics_port=-1", "--http_port=0", "--threads=2"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        banner = self.process.stdout.readline()
        self.port = int(re.search(r":(\d+), metrics on", banner).group(1))
        self.http_port = int(re.search(r"http on :(\d+)", banner).group(1))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)

    def example(self, text, *flags):
        return subprocess.run([os.environ["DEBERTA_GO_EXAMPLE"], "-server=127.0.0.1:%d" % self.port, "-text=" + text]
                              + list(flags), capture_output=True, text=True, timeout=60)

    def post(self, path, body):
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.http_port, path),
                                         data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())


class GoExampleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("demo")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def example(self, text):
        return self.server.example(text)

    def post(self, path, body):
        return self.server.post(path, body)

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

    def test_a_token_classifier_gets_its_entities(self):
        # The golden NER case of the authors' layout: no sequence head, no LM head.
        server = Server(os.path.join(os.environ["DEBERTA_GOLDEN_TASKS_DIR"], "tc_authors_gpt2"))
        try:
            text = "John Smith flew to Paris."
            run = server.example(text)
            self.assertEqual(run.returncode, 0, run.stderr)
            printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
            self.assertEqual(sorted(printed), ["ClassifyTokens", "GetModelInfo"])
            answer = server.post("/v1/classify-tokens", {"sequences": [{"text": text}],
                                                         "aggregation": "AGGREGATION_FIRST", "keepAllLabels": True})
            got = json.loads(printed["ClassifyTokens"])
            # The Go answer has every zero value; the HTTP one leaves them out.
            for result in got["results"]:
                for entity in result["entities"]:
                    self.assertEqual(entity["word"], text[entity["start"]:entity["end"]])
            self.assertEqual(len(got["results"][0]["entities"]), len(answer["results"][0]["entities"]))
            for g, h in zip(got["results"][0]["entities"], answer["results"][0]["entities"]):
                self.assertEqual(g["label"], h["label"])
                self.assertTrue(same(g["score"], h["score"]))
                self.assertEqual(g["start"], h.get("start", 0))
                self.assertEqual(g["end"], h.get("end", 0))
        finally:
            server.stop()

    def test_a_model_named_in_a_repository(self):
        # Two golden task models in one repository; -model names the token classifier.
        work = tempfile.mkdtemp()
        tasks = os.environ["DEBERTA_GOLDEN_TASKS_DIR"]
        os.makedirs(os.path.join(work, "ner"))
        os.symlink(os.path.join(tasks, "tc_authors_gpt2"), os.path.join(work, "ner", "1"))
        os.symlink(os.path.join(tasks, "rerank_spm"), os.path.join(work, "ranker"))
        server = Server(None, repository=work)
        try:
            text = "John Smith flew to Paris."
            run = server.example(text, "-model=ner")
            self.assertEqual(run.returncode, 0, run.stderr)
            printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
            self.assertEqual(sorted(printed), ["ClassifyTokens", "GetModelInfo", "ListModels"])
            self.assertEqual([m["name"] for m in json.loads(printed["ListModels"])["models"]], ["ner", "ranker"])
            self.assertEqual(json.loads(printed["GetModelInfo"])["modelName"], "ner")
            answer = server.post("/v1/models/ner/classify-tokens", {"sequences": [{"text": text}],
                                                                    "aggregation": "AGGREGATION_FIRST",
                                                                    "keepAllLabels": True})
            got = json.loads(printed["ClassifyTokens"])
            self.assertEqual([e["label"] for e in got["results"][0]["entities"]],
                             [e["label"] for e in answer["results"][0]["entities"]])
            unnamed = server.example(text)  # Two models and none named: refused, naming them.
            self.assertEqual(unnamed.returncode, 1)
            self.assertIn("InvalidArgument", unnamed.stderr)
            self.assertIn("(ner, ranker)", unnamed.stderr)
        finally:
            server.stop()
            shutil.rmtree(work, ignore_errors=True)

    def test_a_reranker_orders_the_documents(self):
        # The golden reranker: its Rerank answer equals the JSON API's.
        case = os.path.join(os.environ["DEBERTA_GOLDEN_TASKS_DIR"], "rerank_spm")
        with open(os.path.join(case, "expected.json")) as f:
            golden = json.load(f)
        server = Server(case)
        try:
            run = server.example(golden["query"], "-documents=" + "|".join(golden["documents"]))
            self.assertEqual(run.returncode, 0, run.stderr)
            printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
            self.assertEqual(sorted(printed), ["Classify", "GetModelInfo", "Rerank"])
            got = json.loads(printed["Rerank"])["results"]
            want = golden["answers"]["plain"]
            self.assertEqual([r["index"] for r in got], [w["index"] for w in want])
            for r in got:
                self.assertEqual(r["document"], golden["documents"][r["index"]])
                self.assertEqual(r["numWindows"], 1)
            for r, w in zip(got, want):
                self.assertTrue(abs(r["score"] - w["score"]) <= 1e-4 + 1e-4 * abs(w["score"]))
        finally:
            server.stop()

    def test_a_failed_call_exits_1_with_the_code_by_name(self):
        run = self.example("no mask in this text")  # Classify works; FillMask has no mask to fill.
        self.assertEqual(run.returncode, 1)
        self.assertIn("Classify ", run.stdout)
        self.assertRegex(run.stderr, r"^FillMask: InvalidArgument: ")


if __name__ == "__main__":
    unittest.main(verbosity=2)
