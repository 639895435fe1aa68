// The gRPC adapters (TEI's tei.v1 and KServe's Open Inference Protocol,
// service/protocols/tei_grpc.h and kserve_grpc.h) over a FakeEngine server
// with a real GPT-2 tokenizer, called with their generated C++ stubs on the
// server's gRPC port: the answers follow each API's rules over our own
// gRPC answers, streams answer in order and stop at their first failure,
// raw tensor contents are read and written, and the calls are counted
// under their protocol. The adapters' threads: adapter_workers_test.cc.
// The same APIs through clients generated in Python, against the real
// server: tests/grpc_compat/grpc_adapters_test.py.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "model/tokenizer.h"
#include "service/server_config.h"
#include "tei/v1/tei.grpc.pb.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace tei = ::tei::v1;
namespace oip = ::inference;
using ::testing::HasSubstr;

class GrpcAdaptersTest : public ::testing::Test {
 protected:
  // A fake engine with `labels` (one: a reranker; else three, as many as
  // the fake's logits) behind the golden GPT-2 token classifier's tokenizer.
  void Start(std::vector<std::string> labels) {
    auto engine = std::make_unique<FakeEngine>();
    engine->mutable_info()->has_token_classifier = false;  // A sequence classifier.
    engine->mutable_info()->labels = std::move(labels);
    engine->mutable_info()->vocab_size = 861;  // tc_authors_gpt2's.
    engine->mutable_info()->max_sequence_length = 64;
    auto tokenizer = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    auto server = StartTestServer(std::move(engine), service::ServerConfig(), *std::move(tokenizer));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // Our Classify's logits of one text (and its pair), over gRPC.
  std::vector<float> Logits(const std::string& text, const std::string& pair = "") {
    serving::v1::ClassifyRequest request;
    serving::v1::Sequence* sequence = request.add_sequences();
    sequence->set_text(text);
    if (!pair.empty()) sequence->set_text_pair(pair);
    serving::v1::ClassifyResponse response;
    EXPECT_TRUE(server_->stub->Classify(ContextWithDeadline().get(), request, &response).ok());
    return {response.results(0).logits().begin(), response.results(0).logits().end()};
  }

  // TEI's predictions of these logits: softmax, every label, highest first.
  static void ExpectTeiPredictions(const tei::PredictResponse& response, const std::vector<float>& logits,
                                   const std::vector<std::string>& labels) {
    ASSERT_EQ(response.predictions_size(), static_cast<int>(logits.size()));
    double sum = 0;
    for (float logit : logits) sum += std::exp(double{logit});
    for (int i = 0; i < response.predictions_size(); ++i) {
      const tei::Prediction& prediction = response.predictions(i);
      const size_t id = static_cast<size_t>(
          std::find(labels.begin(), labels.end(), prediction.label()) - labels.begin());
      ASSERT_LT(id, labels.size()) << prediction.label();
      EXPECT_NEAR(prediction.score(), std::exp(double{logits[id]}) / sum, 1e-6);
      if (i > 0) {
        EXPECT_LE(prediction.score(), response.predictions(i - 1).score());
      }
    }
  }

  std::string Metrics() const {
    return prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(GrpcAdaptersTest, TeiPredictFollowsTeisRuleOverOurLogitsWithItsMetadata) {
  const std::vector<std::string> labels = {"a", "b", "c"};
  Start(labels);
  auto predict = tei::Predict::NewStub(server_->channel);
  tei::PredictRequest request;
  request.set_inputs("the quick brown fox");
  tei::PredictResponse response;
  ASSERT_TRUE(predict->Predict(ContextWithDeadline().get(), request, &response).ok());
  ExpectTeiPredictions(response, Logits("the quick brown fox"), labels);
  EXPECT_EQ(response.metadata().compute_chars(), 19u);
  const size_t tokens = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2")
                            .value()->Tokenize("the quick brown fox")->size();
  EXPECT_EQ(response.metadata().compute_tokens(), tokens + 2);
  EXPECT_GT(response.metadata().total_time_ns(), 0u);

  tei::PredictPairRequest pair;
  pair.add_inputs("a premise");
  pair.add_inputs("a hypothesis");
  tei::PredictResponse paired;
  ASSERT_TRUE(predict->PredictPair(ContextWithDeadline().get(), pair, &paired).ok());
  ExpectTeiPredictions(paired, Logits("a premise", "a hypothesis"), labels);

  tei::PredictPairRequest one;
  one.add_inputs("alone");
  tei::PredictResponse refused;
  const grpc::Status status = predict->PredictPair(ContextWithDeadline().get(), one, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("two texts"));
  EXPECT_THAT(Metrics(),
              HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"tei\""));
}

TEST_F(GrpcAdaptersTest, TeiPredictStreamAnswersInOrderAndEndsAtItsFirstFailure) {
  const std::vector<std::string> labels = {"a", "b", "c"};
  Start(labels);
  auto predict = tei::Predict::NewStub(server_->channel);
  const std::vector<std::string> texts = {"one", "the second text", "three"};
  {
    auto context = ContextWithDeadline();
    auto stream = predict->PredictStream(context.get());
    for (const std::string& text : texts) {
      tei::PredictRequest request;
      request.set_inputs(text);
      ASSERT_TRUE(stream->Write(request));
    }
    stream->WritesDone();
    tei::PredictResponse response;
    size_t answered = 0;
    while (stream->Read(&response)) {
      ASSERT_LT(answered, texts.size());
      ExpectTeiPredictions(response, Logits(texts[answered]), labels);
      ++answered;
    }
    EXPECT_EQ(answered, texts.size());
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    auto context = ContextWithDeadline();
    auto stream = predict->PredictStream(context.get());
    tei::PredictRequest good, left;
    good.set_inputs("fine");
    left.set_inputs("refused");
    left.set_truncation_direction(tei::TRUNCATION_DIRECTION_LEFT);
    ASSERT_TRUE(stream->Write(good));
    tei::PredictResponse response;
    ASSERT_TRUE(stream->Read(&response));
    stream->Write(left);
    stream->WritesDone();
    while (stream->Read(&response)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("truncation_direction"));
  }
}

TEST_F(GrpcAdaptersTest, TeiRerankAndItsStreamGiveOurOrder) {
  Start({"LABEL_0"});
  auto rerank = tei::Rerank::NewStub(server_->channel);
  const std::vector<std::string> texts = {"a fox", "a dog in the park", "the quick brown fox"};
  serving::v1::RerankRequest native;
  native.set_query("where is the fox");
  for (const std::string& text : texts) native.add_documents(text);
  serving::v1::RerankResponse expected;
  ASSERT_TRUE(server_->stub->Rerank(ContextWithDeadline().get(), native, &expected).ok());

  tei::RerankRequest request;
  request.set_query("where is the fox");
  for (const std::string& text : texts) request.add_texts(text);
  request.set_return_text(true);
  tei::RerankResponse response;
  ASSERT_TRUE(rerank->Rerank(ContextWithDeadline().get(), request, &response).ok());
  ASSERT_EQ(response.ranks_size(), expected.results_size());
  for (int i = 0; i < response.ranks_size(); ++i) {
    EXPECT_EQ(response.ranks(i).index(), static_cast<uint32_t>(expected.results(i).index()));
    EXPECT_NEAR(response.ranks(i).score(), expected.results(i).score(), 1e-6);
    EXPECT_EQ(response.ranks(i).text(), texts[response.ranks(i).index()]);
  }

  auto context = ContextWithDeadline();
  tei::RerankResponse streamed;
  auto writer = rerank->RerankStream(context.get(), &streamed);
  for (size_t i = 0; i < texts.size(); ++i) {
    tei::RerankStreamRequest message;
    if (i == 0) message.set_query("where is the fox");
    message.set_text(texts[i]);
    ASSERT_TRUE(writer->Write(message));
  }
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  ASSERT_EQ(streamed.ranks_size(), expected.results_size());
  for (int i = 0; i < streamed.ranks_size(); ++i) {
    EXPECT_EQ(streamed.ranks(i).index(), static_cast<uint32_t>(expected.results(i).index()));
    EXPECT_FALSE(streamed.ranks(i).has_text());
  }
}

TEST_F(GrpcAdaptersTest, KserveInferReadsContentsOrRawAndAnswersTheSameWay) {
  Start({"neg", "neutral", "pos"});
  auto kserve = oip::GRPCInferenceService::NewStub(server_->channel);
  const std::vector<float> logits = Logits("the quick brown fox");

  oip::ModelInferRequest typed;
  typed.set_id("r1");
  auto* text = typed.add_inputs();
  text->set_name("text");
  text->set_datatype("BYTES");
  text->add_shape(1);
  text->mutable_contents()->add_bytes_contents("the quick brown fox");
  oip::ModelInferResponse answer;
  ASSERT_TRUE(kserve->ModelInfer(ContextWithDeadline().get(), typed, &answer).ok());
  EXPECT_EQ(answer.id(), "r1");
  EXPECT_EQ(answer.model_name(), "fake");
  EXPECT_EQ(answer.raw_output_contents_size(), 0);
  ASSERT_EQ(answer.outputs(0).name(), "logits");
  ASSERT_EQ(answer.outputs(0).contents().fp32_contents_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(answer.outputs(0).contents().fp32_contents(i), logits[i]);

  // The same text as raw BYTES (length, then bytes): raw outputs back.
  oip::ModelInferRequest raw = typed;
  raw.mutable_inputs(0)->clear_contents();
  const std::string bytes = "the quick brown fox";
  const uint32_t length = static_cast<uint32_t>(bytes.size());
  std::string element(reinterpret_cast<const char*>(&length), sizeof(length));
  raw.add_raw_input_contents(element + bytes);
  raw.add_outputs()->set_name("logits");
  oip::ModelInferResponse raw_answer;
  ASSERT_TRUE(kserve->ModelInfer(ContextWithDeadline().get(), raw, &raw_answer).ok());
  ASSERT_EQ(raw_answer.outputs_size(), 1);
  ASSERT_EQ(raw_answer.raw_output_contents_size(), 1);
  ASSERT_EQ(raw_answer.raw_output_contents(0).size(), 3 * sizeof(float));
  float got[3];
  std::memcpy(got, raw_answer.raw_output_contents(0).data(), sizeof(got));
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(got[i], logits[i]);

  // A length running past the bytes sent is named.
  oip::ModelInferRequest cut = typed;
  cut.mutable_inputs(0)->clear_contents();
  cut.add_raw_input_contents(element + "the quick");
  oip::ModelInferResponse refused;
  const grpc::Status status = kserve->ModelInfer(ContextWithDeadline().get(), cut, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("end inside an element"));

  oip::ServerReadyResponse ready;
  ASSERT_TRUE(kserve->ServerReady(ContextWithDeadline().get(), oip::ServerReadyRequest(), &ready).ok());
  EXPECT_TRUE(ready.ready());
  EXPECT_THAT(Metrics(),
              HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"kserve\""));
}

}  // namespace
}  // namespace deberta::testing
