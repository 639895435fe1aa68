"""Tests of the Python client against the real deberta-server on the demo
model (Debian's python3-grpcio) and, for classify_tokens and rerank, on
golden task models (tests/golden_tasks): every method, errors raised as
grpc.RpcError, retries with backoff on UNAVAILABLE, none on
INVALID_ARGUMENT. Run by ctest (tests/CMakeLists.txt) with PYTHONPATH set to
the generated stubs and this folder, and DEBERTA_SERVER_BINARY.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import grpc

from deberta.serving.v1 import inference_pb2 as pb
from deberta_serve import Client


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--model=demo", "--listen_address=127.0.0.1", "--port=0",
             "--metrics_port=-1", "--threads=1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        banner = cls.server.stdout.readline()
        cls.port = int(re.search(r":(\d+), metrics on", banner).group(1))
        cls.client = Client("127.0.0.1:%d" % cls.port, timeout=10)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.terminate()
        cls.server.wait(timeout=30)

    def test_every_method(self):
        info = self.client.model_info()
        self.assertEqual(info.model_name, "demo")
        classified = self.client.classify([[1, 17, 42, 2], "A man plays a guitar."], top_k=2)
        self.assertEqual(len(classified.results), 2)
        self.assertEqual(len(classified.results[0].labels), 2)
        filled = self.client.fill_mask(["Paris is the [MASK] of France."], top_k=3)
        self.assertEqual(len(filled.results[0].predictions[0].candidates), 3)
        chosen = self.client.fill_mask([[1, 17, 42, 9, 2]], top_k=1, positions=[[1, 3]])
        self.assertEqual([p.position for p in chosen.results[0].predictions], [1, 3])
        tokens = self.client.tokenize("Hello world")
        self.assertEqual(tokens.token_ids[0], info.cls_token_id)

    def test_classify_tokens_on_a_token_classifier(self):
        # The golden NER case of the authors' layout (GPT-2 tokenizer), served on its own.
        case = os.path.join(os.environ["DEBERTA_GOLDEN_TASKS_DIR"], "tc_authors_gpt2")
        server = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--model=" + case, "--listen_address=127.0.0.1", "--port=0",
             "--metrics_port=-1", "--threads=1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(re.search(r":(\d+), metrics", server.stdout.readline()).group(1))
            with Client("127.0.0.1:%d" % port, timeout=10) as client:
                text = "John Smith flew to Paris."
                answer = client.classify_tokens([text], aggregation="first", keep_all_labels=True)
                entities = answer.results[0].entities
                self.assertGreater(len(entities), 0)
                for entity in entities:
                    self.assertEqual(entity.word, text[entity.start:entity.end])
                    self.assertEqual(entity.index, -1)
                per_token = client.classify_tokens([text], aggregation="none", keep_all_labels=True)
                self.assertEqual([e.index for e in per_token.results[0].entities],
                                 list(range(1, per_token.results[0].num_tokens - 1)))
        finally:
            server.terminate()
            server.wait(timeout=30)
        with self.assertRaises(grpc.RpcError) as raised:  # The demo model has no token head.
            self.client.classify_tokens(["Hello"])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def test_rerank_and_windows_on_a_reranker(self):
        # The golden reranker, served on its own: the recorded order, plain and in windows.
        case = os.path.join(os.environ["DEBERTA_GOLDEN_TASKS_DIR"], "rerank_spm")
        with open(os.path.join(case, "expected.json")) as f:
            golden = json.load(f)
        server = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--model=" + case, "--listen_address=127.0.0.1", "--port=0",
             "--metrics_port=-1", "--threads=1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(re.search(r":(\d+), metrics", server.stdout.readline()).group(1))
            with Client("127.0.0.1:%d" % port, timeout=30) as client:
                top = client.rerank(golden["query"], golden["documents"], top_n=3, raw_scores=True,
                                    return_documents=True)
                want = golden["answers"]["top3_raw_docs"]
                self.assertEqual([r.index for r in top.results], [w["index"] for w in want])
                self.assertEqual([r.document for r in top.results], [w["document"] for w in want])
                for got, expected in zip(top.results, want):
                    self.assertAlmostEqual(got.score, expected["score"], delta=1e-4 + 1e-4 * abs(expected["score"]))
                windowed = client.rerank(golden["query"], golden["documents"], windows=True, stride=8,
                                         max_length=64)
                self.assertEqual([(r.index, r.num_windows) for r in windowed.results],
                                 [(w["index"], w["num_windows"]) for w in golden["answers"]["windowed"]])
        finally:
            server.terminate()
            server.wait(timeout=30)
        with self.assertRaises(grpc.RpcError) as raised:  # The demo model has 3 labels: no reranker.
            self.client.rerank("q", ["d"])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def test_models_by_name_in_a_repository(self):
        # Two golden task models in one repository, explicit control with an admin key.
        work = tempfile.mkdtemp()
        tasks = os.environ["DEBERTA_GOLDEN_TASKS_DIR"]
        os.makedirs(os.path.join(work, "models", "ner"))
        os.symlink(os.path.join(tasks, "tc_authors_gpt2"), os.path.join(work, "models", "ner", "1"))
        os.symlink(os.path.join(tasks, "rerank_spm"), os.path.join(work, "models", "ranker"))
        with open(os.path.join(work, "admin_keys"), "w") as f:
            f.write("admin-secret\n")
        server = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--model_repository=" + os.path.join(work, "models"),
             "--model_control=explicit", "--admin_api_keys_file=" + os.path.join(work, "admin_keys"),
             "--listen_address=127.0.0.1", "--port=0", "--metrics_port=-1", "--threads=2"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(re.search(r":(\d+), metrics", server.stdout.readline()).group(1))
            with Client("127.0.0.1:%d" % port, timeout=30, retries=0) as client:
                listed = client.list_models()
                self.assertEqual([(m.name, m.state) for m in listed.models],
                                 [("ner", pb.MODEL_STATE_READY), ("ranker", pb.MODEL_STATE_READY)])
                ner = client.for_model("ner")
                self.assertEqual(ner.model_info().model_name, "ner")
                self.assertGreater(len(ner.classify_tokens(["John Smith flew to Paris."]).results[0].entities), 0)
                ranked = client.for_model("ranker").rerank("q", ["a document", "another one"])
                self.assertEqual(len(ranked.results), 2)
                with self.assertRaises(grpc.RpcError) as raised:  # Several models: name one.
                    client.classify(["text"])
                self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                with self.assertRaises(grpc.RpcError) as raised:  # Not an admin key.
                    client.unload_model("ner")
                self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            with Client("127.0.0.1:%d" % port, timeout=30, retries=0, api_key="admin-secret") as admin:
                self.assertEqual(admin.unload_model("ner").state, pb.MODEL_STATE_UNAVAILABLE)
                with self.assertRaises(grpc.RpcError) as raised:
                    admin.for_model("ner").model_info()
                self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)
                self.assertEqual(admin.load_model("ner").state, pb.MODEL_STATE_READY)
                self.assertEqual(admin.for_model("ner").model_info().version, 1)
        finally:
            server.terminate()
            server.wait(timeout=30)
            shutil.rmtree(work, ignore_errors=True)

    def test_bad_input_is_raised_at_once_without_retries(self):
        slept = []
        client = Client("127.0.0.1:%d" % self.port, retries=3, sleep=slept.append)
        with self.assertRaises(grpc.RpcError) as raised:
            client.classify([[]])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(slept, [])
        client.close()

    def test_an_unreachable_server_is_retried_with_growing_backoff(self):
        slept = []
        client = Client("127.0.0.1:1", timeout=2, retries=3, backoff=0.01, sleep=slept.append)
        with self.assertRaises(grpc.RpcError) as raised:
            client.model_info()
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(slept), 3)
        self.assertLess(slept[0], slept[2])  # Doubles each time (jitter is at most 1.5x / 0.5x).
        client.close()


if __name__ == "__main__":
    unittest.main()
