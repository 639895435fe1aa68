"""A thin Python client for deberta-serve over gRPC.

    from deberta_serve import Client
    client = Client("dns:///deberta-serve-headless.ns.svc.cluster.local:50051", round_robin=True,
                    api_key="...", tls_ca="ca.pem")
    labels = client.classify(["A man plays a guitar."], top_k=2)      # texts or token-id lists
    masks = client.fill_mask(["Paris is the [MASK] of France."], top_k=3)
    info = client.model_info()

Answers are the generated protobuf messages (deberta.serving.v1), so every
field of the API is there. Calls carry a deadline and are retried with
exponential backoff on UNAVAILABLE (a draining or restarting replica) and
RESOURCE_EXHAUSTED (a full queue); other errors are raised at once as
grpc.RpcError. Stubs are generated from proto/ by the build into
build/clients/python (protoc with Debian's grpc_python_plugin).
"""
import copy
import random
import time
from typing import Callable, Iterable, List, Optional, Sequence, TypeVar, Union

import grpc

from deberta.serving.v1 import inference_pb2 as pb
from deberta.serving.v1 import inference_pb2_grpc as pb_grpc

__all__ = ["Client", "RETRYABLE", "pb"]

# Codes a call is retried on: the replica is away or momentarily full.
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})

Input = Union[str, Sequence[int]]
T = TypeVar("T")


def _read(path: Optional[str]) -> Optional[bytes]:
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


class Client:
    """One channel to a server (or, with round_robin, to every address a
    dns:/// target resolves to, e.g. a headless Service)."""

    def __init__(self, target: str, *, timeout: float = 30.0, retries: int = 3, backoff: float = 0.1,
                 round_robin: bool = False, api_key: Optional[str] = None, tls: bool = False,
                 tls_ca: Optional[str] = None, tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None, sleep: Callable[[float], None] = time.sleep,
                 model: str = ""):
        """`model` names the model every call runs on, for a server of several (list_models);
        empty: the server's only one."""
        options = [("grpc.max_receive_message_length", 64 << 20)]
        if round_robin:
            options.append(("grpc.lb_policy_name", "round_robin"))
        if tls_server_name:
            options.append(("grpc.ssl_target_name_override", tls_server_name))
        if tls or tls_ca or tls_cert:
            credentials = grpc.ssl_channel_credentials(_read(tls_ca), _read(tls_key), _read(tls_cert))
            self._channel = grpc.secure_channel(target, credentials, options)
        else:
            self._channel = grpc.insecure_channel(target, options)
        self._stub = pb_grpc.InferenceServiceStub(self._channel)
        self._metadata = [("authorization", "Bearer " + api_key)] if api_key else []
        self._timeout, self._retries, self._backoff, self._sleep = timeout, retries, backoff, sleep
        self._model = model

    def for_model(self, model: str) -> "Client":
        """A client on the same channel whose calls name `model` (closing either closes both)."""
        other = copy.copy(self)
        other._model = model
        return other

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def call(self, method: Callable[..., T], request) -> T:
        """Calls a stub method with the deadline, the key and the retries.
        Backoff doubles from `backoff` seconds, with jitter."""
        for attempt in range(self._retries + 1):
            try:
                return method(request, timeout=self._timeout, metadata=self._metadata)
            except grpc.RpcError as error:
                if error.code() not in RETRYABLE or attempt == self._retries:
                    raise
                self._sleep(self._backoff * (2 ** attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    @staticmethod
    def _sequence(value: Input) -> "pb.Sequence":
        if isinstance(value, str):
            return pb.Sequence(text=value)
        return pb.Sequence(token_ids=list(value))

    @staticmethod
    def _long_input(windows: bool, stride: int, aggregate: str = "max") -> "pb.LongInput":
        """Windows of the request's max_length sharing `stride` tokens, their scores combined by
        `aggregate` (max, mean or first); no windows: the truncation rules."""
        if not windows:
            return pb.LongInput()
        return pb.LongInput(mode=pb.LongInput.MODE_WINDOWS, stride=stride,
                            aggregate=pb.LongInput.Aggregate.Value("AGGREGATE_" + aggregate.upper()))

    def classify(self, inputs: Iterable[Input], top_k: int = 0, windows: bool = False, stride: int = 0,
                 aggregate: str = "max", max_length: int = 0) -> "pb.ClassifyResponse":
        request = pb.ClassifyRequest(model=self._model, sequences=[self._sequence(v) for v in inputs], top_k=top_k,
                                     max_length=max_length, long_input=self._long_input(windows, stride, aggregate))
        return self.call(self._stub.Classify, request)

    def fill_mask(self, inputs: Iterable[Input], top_k: int = 5,
                  positions: Optional[List[List[int]]] = None) -> "pb.FillMaskResponse":
        sequences = [pb.FillMaskSequence(sequence=self._sequence(v)) for v in inputs]
        for sequence, chosen in zip(sequences, positions or []):
            sequence.positions.extend(chosen)
        return self.call(self._stub.FillMask, pb.FillMaskRequest(model=self._model, sequences=sequences, top_k=top_k))

    def zero_shot(self, text: str, labels: Sequence[str], multi_label: bool = False, windows: bool = False,
                  stride: int = 0, aggregate: str = "max", max_length: int = 0) -> "pb.ZeroShotClassifyResponse":
        request = pb.ZeroShotClassifyRequest(model=self._model, text=text, candidate_labels=list(labels), multi_label=multi_label,
                                             max_length=max_length,
                                             long_input=self._long_input(windows, stride, aggregate))
        return self.call(self._stub.ZeroShotClassify, request)

    def rerank(self, query: str, documents: Sequence[str], top_n: int = 0, raw_scores: bool = False,
               return_documents: bool = False, windows: bool = False, stride: int = 0, aggregate: str = "max",
               max_length: int = 0) -> "pb.RerankResponse":
        """The documents by relevance to the query (a reranker: a one-label cross-encoder), highest
        first, the first top_n (0: all); scores are sigmoid(logit), or the logit with raw_scores."""
        request = pb.RerankRequest(model=self._model, query=query, documents=list(documents), top_n=top_n, raw_scores=raw_scores,
                                   return_documents=return_documents, max_length=max_length,
                                   long_input=self._long_input(windows, stride, aggregate))
        return self.call(self._stub.Rerank, request)

    def classify_tokens(self, inputs: Iterable[Input], aggregation: str = "simple",
                        ignore_labels: Sequence[str] = (), keep_all_labels: bool = False,
                        windows: bool = False, stride: int = 0, max_length: int = 0) -> "pb.ClassifyTokensResponse":
        """Entities of each text (or token ids) from a token classifier: aggregation is none, simple,
        first, average or max; windows runs long texts in windows of max_length sharing stride tokens."""
        request = pb.ClassifyTokensRequest(
            model=self._model,
            sequences=[self._sequence(v) for v in inputs],
            aggregation=pb.Aggregation.Value("AGGREGATION_" + aggregation.upper()),
            ignore_labels=list(ignore_labels), keep_all_labels=keep_all_labels, max_length=max_length,
            long_input=self._long_input(windows, stride))
        return self.call(self._stub.ClassifyTokens, request)

    def tokenize(self, text: str, text_pair: Optional[str] = None) -> "pb.TokenizeResponse":
        request = pb.TokenizeRequest(model=self._model, text=text)
        if text_pair is not None:
            request.text_pair = text_pair
        return self.call(self._stub.Tokenize, request)

    def model_info(self) -> "pb.ModelInfo":
        return self.call(self._stub.GetModelInfo, pb.GetModelInfoRequest(model=self._model))

    def list_models(self) -> "pb.ListModelsResponse":
        """The server's models: name, version, task, state (MODEL_STATE_READY, ...), error, dtype, device."""
        return self.call(self._stub.ListModels, pb.ListModelsRequest())

    def load_model(self, model: str) -> "pb.ModelStatus":
        """Loads `model` from the server's repository, or swaps in its newest version
        (--model_control=explicit; the client's api_key must be an admin key)."""
        return self.call(self._stub.LoadModel, pb.LoadModelRequest(model=model))

    def unload_model(self, model: str) -> "pb.ModelStatus":
        """Unloads `model` once its accepted calls are answered (an admin key, as load_model)."""
        return self.call(self._stub.UnloadModel, pb.UnloadModelRequest(model=model))
