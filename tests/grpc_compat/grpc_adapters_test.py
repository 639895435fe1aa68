"""TEI's gRPC API (tei.v1) and KServe's Open Inference Protocol over gRPC,
called with clients generated from their own protos (vendored unchanged:
proto/tei/v1/tei.proto, proto/kserve/grpc_predict_v2.proto; Debian's
python3-grpcio and protoc's Python plugin) against the real deberta-server: every answer must equal
our own gRPC API's answer for the same input (through each API's rules),
a call without the API key is refused, a bad input is named with
INVALID_ARGUMENT, and the calls are counted under their protocol's label.

Two servers: the demo model (a classifier with a fill-mask head, with an
API key) and the golden reranker (tests/golden_tasks/rerank_spm). Run by
ctest (tests/grpc_compat/CMakeLists.txt) with PYTHONPATH set to the
generated stubs and DEBERTA_SERVER_BINARY, DEBERTA_GOLDEN_TASKS_DIR set.
"""
import math
import os
import re
import struct
import subprocess
import tempfile
import unittest
import urllib.request

import grpc

from deberta.serving.v1 import inference_pb2 as pb
from deberta.serving.v1 import inference_pb2_grpc as pb_grpc
from kserve import grpc_predict_v2_pb2 as oip
from kserve import grpc_predict_v2_pb2_grpc as oip_grpc
from tei.v1 import tei_pb2
from tei.v1 import tei_pb2_grpc

KEY = "grpc-compat-key"
TEXT = "the quick brown fox jumps over the lazy dog"
PAIR = "a fox is jumping"


def softmax(values):
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    return [e / sum(exps) for e in exps]


class Server:
    """deberta-server as a child process; its ports from the banner."""

    def __init__(self, *flags):
        self.proc = subprocess.Popen(
            [os.environ["DEBERTA_SERVER_BINARY"], "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
             "--threads=1", *flags], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        banner = self.proc.stdout.readline()
        match = re.search(r":(\d+), metrics on :(\d+)", banner)
        if not match:
            self.proc.kill()
            raise RuntimeError("no banner: " + banner)
        self.port, self.metrics_port = int(match.group(1)), int(match.group(2))
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.port)
        grpc.channel_ready_future(self.channel).result(timeout=30)

    def requests_total(self, protocol, endpoint):
        """deberta_requests_total{code="OK"} of this protocol and endpoint, summed."""
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10).read().decode()
        total = 0.0
        for line in text.splitlines():
            if (line.startswith("deberta_requests_total{") and 'protocol="%s"' % protocol in line
                    and 'endpoint="%s"' % endpoint in line and 'code="OK"' in line):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self):
        self.channel.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


class DemoModelTest(unittest.TestCase):
    """TEI and KServe gRPC on the demo model, with an API key."""

    @classmethod
    def setUpClass(cls):
        cls.keys = tempfile.NamedTemporaryFile("w", suffix=".keys", delete=False)
        cls.keys.write(KEY + "\n")
        cls.keys.close()
        cls.server = Server("--model=demo", "--api_keys_file=" + cls.keys.name, "--metrics_without_api_key")
        cls.auth = (("authorization", "Bearer " + KEY),)
        cls.native = pb_grpc.InferenceServiceStub(cls.server.channel)
        cls.info = tei_pb2_grpc.InfoStub(cls.server.channel)
        cls.predict = tei_pb2_grpc.PredictStub(cls.server.channel)
        cls.tokenize = tei_pb2_grpc.TokenizeStub(cls.server.channel)
        cls.kserve = oip_grpc.GRPCInferenceServiceStub(cls.server.channel)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        os.unlink(cls.keys.name)

    def classify(self, text, pair=None):
        sequence = pb.Sequence(text=text)
        if pair is not None:
            sequence.text_pair = pair
        return self.native.Classify(pb.ClassifyRequest(sequences=[sequence], top_k=0), metadata=self.auth).results[0]

    def expected_predictions(self, result, raw):
        """TEI's rule: every label, highest first; softmax of the logits (sigmoid of one), or the logits."""
        scores = list(result.logits) if raw else softmax(list(result.logits))
        names = {label.label_id: label.label for label in result.labels}
        return sorted(((scores[i], names[i]) for i in range(len(scores))), key=lambda p: -p[0])

    def assert_predictions(self, response, expected):
        self.assertEqual(len(response.predictions), len(expected))
        for got, (score, label) in zip(response.predictions, expected):
            self.assertEqual(got.label, label)
            self.assertAlmostEqual(got.score, score, places=5)

    def test_tei_info_describes_the_classifier(self):
        info = self.info.Info(tei_pb2.InfoRequest(), metadata=self.auth)
        native = self.native.GetModelInfo(pb.GetModelInfoRequest(), metadata=self.auth)
        self.assertEqual(info.model_id, native.model_name)
        self.assertEqual(info.model_type, tei_pb2.MODEL_TYPE_CLASSIFIER)
        self.assertEqual(info.model_dtype, native.dtype)
        self.assertEqual(info.max_input_length, native.max_sequence_length)
        self.assertEqual(info.version, native.server_version)
        self.assertGreater(info.max_client_batch_size, 0)

    def test_tei_predict_and_pair_give_the_native_answers(self):
        result = self.classify(TEXT)
        response = self.predict.Predict(tei_pb2.PredictRequest(inputs=TEXT), metadata=self.auth)
        self.assert_predictions(response, self.expected_predictions(result, raw=False))
        self.assertGreater(response.metadata.compute_tokens, 0)
        self.assertEqual(response.metadata.compute_chars, len(TEXT))
        self.assertGreater(response.metadata.total_time_ns, 0)
        raw = self.predict.Predict(tei_pb2.PredictRequest(inputs=TEXT, raw_scores=True), metadata=self.auth)
        self.assert_predictions(raw, self.expected_predictions(result, raw=True))
        pair = self.predict.PredictPair(tei_pb2.PredictPairRequest(inputs=[TEXT, PAIR]), metadata=self.auth)
        self.assert_predictions(pair, self.expected_predictions(self.classify(TEXT, PAIR), raw=False))

    def test_tei_predict_streams_answer_in_order(self):
        texts = [TEXT, "hello world", "a third text"]
        responses = list(self.predict.PredictStream(iter([tei_pb2.PredictRequest(inputs=t) for t in texts]),
                                                    metadata=self.auth))
        self.assertEqual(len(responses), len(texts))
        for text, response in zip(texts, responses):
            self.assert_predictions(response, self.expected_predictions(self.classify(text), raw=False))
        pairs = list(self.predict.PredictPairStream(iter([tei_pb2.PredictPairRequest(inputs=[TEXT, PAIR])]),
                                                    metadata=self.auth))
        self.assert_predictions(pairs[0], self.expected_predictions(self.classify(TEXT, PAIR), raw=False))

    def test_tei_tokenize_and_decode_give_the_native_answers(self):
        native = self.native.Tokenize(pb.TokenizeRequest(text=TEXT, truncation=pb.TRUNCATION_NONE),
                                      metadata=self.auth)
        tokens = self.tokenize.Tokenize(tei_pb2.EncodeRequest(inputs=TEXT, add_special_tokens=True),
                                        metadata=self.auth).tokens
        self.assertEqual([t.id for t in tokens], list(native.token_ids))
        self.assertTrue(tokens[0].special and tokens[-1].special)
        self.assertFalse(tokens[0].HasField("start"))
        for token in tokens[1:-1]:
            self.assertFalse(token.special)
            # Byte offsets: the token's text is the text's bytes between them.
            self.assertEqual(TEXT.encode()[token.start:token.stop].decode(), token.text)
        content = self.tokenize.Tokenize(tei_pb2.EncodeRequest(inputs=TEXT), metadata=self.auth).tokens
        self.assertEqual([t.id for t in content], list(native.token_ids)[1:-1])
        ids = list(native.token_ids)[1:-1]
        text = self.native.Detokenize(pb.DetokenizeRequest(token_ids=ids), metadata=self.auth).text
        self.assertEqual(self.tokenize.Decode(tei_pb2.DecodeRequest(ids=ids, skip_special_tokens=True),
                                              metadata=self.auth).text, text)
        # Keeping special tokens: the same text when the ids hold none, refused when they do.
        self.assertEqual(self.tokenize.Decode(tei_pb2.DecodeRequest(ids=ids), metadata=self.auth).text, text)
        with self.assertRaises(grpc.RpcError) as refused:
            self.tokenize.Decode(tei_pb2.DecodeRequest(ids=list(native.token_ids)), metadata=self.auth)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("skip_special_tokens", refused.exception.details())
        streamed = list(self.tokenize.TokenizeStream(iter([tei_pb2.EncodeRequest(inputs=TEXT)] * 2),
                                                     metadata=self.auth))
        self.assertEqual([[t.id for t in r.tokens] for r in streamed], [ids, ids])
        decoded = list(self.tokenize.DecodeStream(iter([tei_pb2.DecodeRequest(ids=ids, skip_special_tokens=True)]),
                                                  metadata=self.auth))
        self.assertEqual([d.text for d in decoded], [text])

    def test_tei_refusals(self):
        with self.assertRaises(grpc.RpcError) as no_key:
            self.predict.Predict(tei_pb2.PredictRequest(inputs=TEXT))
        self.assertEqual(no_key.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        with self.assertRaises(grpc.RpcError) as left:
            self.predict.Predict(tei_pb2.PredictRequest(
                inputs=TEXT, truncation_direction=tei_pb2.TRUNCATION_DIRECTION_LEFT), metadata=self.auth)
        self.assertEqual(left.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("truncation_direction", left.exception.details())
        with self.assertRaises(grpc.RpcError) as one_text:
            self.predict.PredictPair(tei_pb2.PredictPairRequest(inputs=[TEXT]), metadata=self.auth)
        self.assertEqual(one_text.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # A stream's first failure ends it with that status.
        with self.assertRaises(grpc.RpcError) as stream:
            list(self.predict.PredictPairStream(iter([tei_pb2.PredictPairRequest(inputs=[TEXT, PAIR]),
                                                      tei_pb2.PredictPairRequest(inputs=[TEXT])]),
                                                metadata=self.auth))
        self.assertEqual(stream.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # TEI's embedding service, in TEI's proto, is not served.
        embed = tei_pb2_grpc.EmbedStub(self.server.channel)
        with self.assertRaises(grpc.RpcError) as unimplemented:
            embed.Embed(tei_pb2.EmbedRequest(inputs=TEXT), metadata=self.auth)
        self.assertEqual(unimplemented.exception.code(), grpc.StatusCode.UNIMPLEMENTED)

    def test_kserve_health_and_metadata(self):
        self.assertTrue(self.kserve.ServerLive(oip.ServerLiveRequest()).live)
        self.assertTrue(self.kserve.ServerReady(oip.ServerReadyRequest()).ready)
        native = self.native.GetModelInfo(pb.GetModelInfoRequest(), metadata=self.auth)
        self.assertTrue(self.kserve.ModelReady(oip.ModelReadyRequest(name="demo"), metadata=self.auth).ready)
        server = self.kserve.ServerMetadata(oip.ServerMetadataRequest())
        self.assertEqual((server.name, server.version), ("deberta-serve", native.server_version))
        metadata = self.kserve.ModelMetadata(oip.ModelMetadataRequest(name="demo"), metadata=self.auth)
        self.assertEqual(metadata.name, "demo")
        self.assertEqual(list(metadata.versions), [str(native.version)])
        self.assertEqual({(t.name, t.datatype) for t in metadata.inputs},
                         {("text", "BYTES"), ("text_pair", "BYTES"), ("input_ids", "INT64"),
                          ("attention_mask", "INT64"), ("token_type_ids", "INT64")})
        outputs = {t.name: (t.datatype, list(t.shape)) for t in metadata.outputs}
        self.assertEqual(outputs["logits"], ("FP32", [-1, len(native.labels)]))
        self.assertEqual(outputs["label"], ("BYTES", [-1]))
        with self.assertRaises(grpc.RpcError) as other_version:
            self.kserve.ModelMetadata(oip.ModelMetadataRequest(name="demo", version="999"), metadata=self.auth)
        self.assertEqual(other_version.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_kserve_infer_text_gives_the_native_answers(self):
        texts = [TEXT, "hello world"]
        request = oip.ModelInferRequest(model_name="demo", id="req-1")
        tensor = request.inputs.add(name="text", datatype="BYTES", shape=[2])
        tensor.contents.bytes_contents.extend(t.encode() for t in texts)
        response = self.kserve.ModelInfer(request, metadata=self.auth)
        self.assertEqual((response.model_name, response.id), ("demo", "req-1"))
        outputs = {o.name: o for o in response.outputs}
        labels = len(self.classify(TEXT).logits)
        self.assertEqual(list(outputs["logits"].shape), [2, labels])
        for row, text in enumerate(texts):
            result = self.classify(text)
            got = outputs["logits"].contents.fp32_contents[row * labels:(row + 1) * labels]
            for g, e in zip(got, result.logits):
                self.assertAlmostEqual(g, e, places=5)
            probabilities = outputs["probabilities"].contents.fp32_contents[row * labels:(row + 1) * labels]
            for g, e in zip(probabilities, result.probabilities):
                self.assertAlmostEqual(g, e, places=5)
            self.assertEqual(outputs["label"].contents.bytes_contents[row].decode(), result.labels[0].label)

    def test_kserve_infer_raw_token_ids_and_chosen_outputs(self):
        native = self.native.Tokenize(pb.TokenizeRequest(text=TEXT, truncation=pb.TRUNCATION_NONE),
                                      metadata=self.auth)
        ids = list(native.token_ids)
        # Two rows, the second padded: attention_mask's zeros are cut.
        row2 = ids[:4] + [0] * (len(ids) - 4)
        mask = [1] * len(ids) + [1] * 4 + [0] * (len(ids) - 4)
        request = oip.ModelInferRequest(model_name="demo")
        request.inputs.add(name="input_ids", datatype="INT64", shape=[2, len(ids)])
        request.inputs.add(name="attention_mask", datatype="INT64", shape=[2, len(ids)])
        request.raw_input_contents.append(struct.pack("<%dq" % (2 * len(ids)), *(ids + row2)))
        request.raw_input_contents.append(struct.pack("<%dq" % len(mask), *mask))
        request.outputs.add(name="logits")
        response = self.kserve.ModelInfer(request, metadata=self.auth)
        self.assertEqual([o.name for o in response.outputs], ["logits"])
        self.assertEqual(len(response.raw_output_contents), 1)
        logits = struct.unpack("<%df" % (len(response.raw_output_contents[0]) // 4), response.raw_output_contents[0])
        expected = []
        for row in (ids, ids[:4]):
            expected += list(self.native.Classify(pb.ClassifyRequest(sequences=[pb.Sequence(token_ids=row)]),
                                                  metadata=self.auth).results[0].logits)
        self.assertEqual(len(logits), len(expected))
        for g, e in zip(logits, expected):
            self.assertAlmostEqual(g, e, places=5)
        # Raw BYTES: a 4-byte length and the bytes, per element.
        raw_text = oip.ModelInferRequest(model_name="demo")
        raw_text.inputs.add(name="text", datatype="BYTES", shape=[1])
        raw_text.raw_input_contents.append(struct.pack("<I", len(TEXT.encode())) + TEXT.encode())
        raw_text.outputs.add(name="label")
        answer = self.kserve.ModelInfer(raw_text, metadata=self.auth)
        length = struct.unpack("<I", answer.raw_output_contents[0][:4])[0]
        self.assertEqual(answer.raw_output_contents[0][4:4 + length].decode(), self.classify(TEXT).labels[0].label)

    def test_kserve_refusals(self):
        request = oip.ModelInferRequest(model_name="demo")
        request.inputs.add(name="text", datatype="BYTES", shape=[1]).contents.bytes_contents.append(TEXT.encode())
        with self.assertRaises(grpc.RpcError) as no_key:
            self.kserve.ModelInfer(request)
        self.assertEqual(no_key.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        bad = oip.ModelInferRequest(model_name="demo")
        bad.inputs.add(name="pixels", datatype="FP32", shape=[1])
        with self.assertRaises(grpc.RpcError) as unknown:
            self.kserve.ModelInfer(bad, metadata=self.auth)
        self.assertEqual(unknown.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("pixels", unknown.exception.details())
        short = oip.ModelInferRequest(model_name="demo")
        short.inputs.add(name="text", datatype="BYTES", shape=[1])
        short.raw_input_contents.append(b"\x09\x00")
        with self.assertRaises(grpc.RpcError) as truncated:
            self.kserve.ModelInfer(short, metadata=self.auth)
        self.assertEqual(truncated.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(grpc.RpcError) as unknown_model:
            self.kserve.ModelInfer(oip.ModelInferRequest(model_name="nope", inputs=request.inputs),
                                   metadata=self.auth)
        self.assertEqual(unknown_model.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_zz_calls_are_counted_under_their_protocol(self):
        # Runs last (unittest sorts by name): the calls above were made.
        self.assertGreater(self.server.requests_total("tei", "classify"), 0)
        self.assertGreater(self.server.requests_total("kserve", "classify"), 0)
        self.assertGreater(self.server.requests_total("tei", "tokenize"), 0)


class RerankerTest(unittest.TestCase):
    """TEI's Rerank and RerankStream on the golden reranker."""

    @classmethod
    def setUpClass(cls):
        model = os.path.join(os.environ["DEBERTA_GOLDEN_TASKS_DIR"], "rerank_spm")
        cls.server = Server("--model=" + model)
        cls.native = pb_grpc.InferenceServiceStub(cls.server.channel)
        cls.rerank = tei_pb2_grpc.RerankStub(cls.server.channel)
        cls.info = tei_pb2_grpc.InfoStub(cls.server.channel)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    QUERY = "what is the capital of france"
    TEXTS = ["paris is the capital of france", "berlin is in germany", "the sky is blue"]

    def native_ranks(self, raw):
        response = self.native.Rerank(pb.RerankRequest(query=self.QUERY, documents=self.TEXTS, raw_scores=raw))
        return [(r.index, r.score) for r in response.results]

    def assert_ranks(self, ranks, expected, with_text):
        self.assertEqual([r.index for r in ranks], [index for index, _ in expected])
        for rank, (index, score) in zip(ranks, expected):
            self.assertAlmostEqual(rank.score, score, places=5)
            self.assertEqual(rank.HasField("text"), with_text)
            if with_text:
                self.assertEqual(rank.text, self.TEXTS[index])

    def test_info_says_reranker(self):
        self.assertEqual(self.info.Info(tei_pb2.InfoRequest()).model_type, tei_pb2.MODEL_TYPE_RERANKER)

    def test_rerank_gives_the_native_order_and_scores(self):
        response = self.rerank.Rerank(tei_pb2.RerankRequest(query=self.QUERY, texts=self.TEXTS, return_text=True))
        self.assert_ranks(response.ranks, self.native_ranks(raw=False), with_text=True)
        self.assertGreater(response.metadata.compute_tokens, 0)
        raw = self.rerank.Rerank(tei_pb2.RerankRequest(query=self.QUERY, texts=self.TEXTS, raw_scores=True))
        self.assert_ranks(raw.ranks, self.native_ranks(raw=True), with_text=False)

    def test_rerank_stream_takes_one_text_per_message(self):
        messages = [tei_pb2.RerankStreamRequest(query=self.QUERY, text=self.TEXTS[0], return_text=True)]
        messages += [tei_pb2.RerankStreamRequest(text=t) for t in self.TEXTS[1:]]
        response = self.rerank.RerankStream(iter(messages))
        self.assert_ranks(response.ranks, self.native_ranks(raw=False), with_text=True)


if __name__ == "__main__":
    unittest.main()
