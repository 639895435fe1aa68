// End-to-end over loopback with the demo model: health, model info,
// classify and fill-mask answers equal the engine's own, many concurrent
// clients each get their own answer, the bad-input table, the same answers
// over HTTP/JSON as over gRPC, and a /metrics scrape. One server for the
// whole suite.
#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "model/demo_model.h"
#include "model/engine_factory.h"
#include "service/status_util.h"
#include "tests/testing/test_server.h"
#include "tests/testing/http_get.h"
#include "tests/testing/run_command.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using ::testing::HasSubstr;

constexpr int kMaxMessageBytes = 1 << 20;
constexpr int kMaxSequencesPerRequest = 8;

std::unique_ptr<model::Engine> DemoEngine() {
  model::EngineOptions options;
  options.model = model::kDemoModelName;
  options.num_threads = 1;
  auto engine = model::CreateTorchEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

// A deterministic demo sequence: [CLS] ... [SEP], `length` tokens.
std::vector<int32_t> DemoTokens(int seed, int length) {
  std::vector<int32_t> tokens(length);
  for (int t = 0; t < length; ++t) tokens[t] = 10 + (seed * 31 + t * 7) % 1000;
  tokens.front() = model::kDemoClsId;
  tokens.back() = model::kDemoSepId;
  return tokens;
}

pb::Sequence ToProto(const std::vector<int32_t>& tokens) {
  pb::Sequence sequence;
  sequence.mutable_token_ids()->Add(tokens.begin(), tokens.end());
  return sequence;
}

class DemoServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    service::ServerConfig config;
    config.metrics_port = 0;
    config.http_port = 0;
    config.max_message_bytes = kMaxMessageBytes;
    config.service.requests.max_sequences_per_request = kMaxSequencesPerRequest;
    config.service.special_tokens = {model::kDemoPadId, model::kDemoClsId, model::kDemoSepId,
                                     model::kDemoUnkId, model::kDemoMaskId};
    config.service.server_version = "test";
    auto server = StartTestServer(DemoEngine(), config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    reference_ = DemoEngine().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete reference_;
  }

  // The engine's own answer for one sequence, run alone.
  static model::ClassifyOutput ReferenceClassify(const std::vector<int32_t>& tokens) {
    auto out = reference_->Classify({model::Sequence{tokens, {}}});
    EXPECT_TRUE(out.ok()) << out.status();
    return (*out)[0];
  }

  static TestServer* server_;
  static model::Engine* reference_;
};
TestServer* DemoServerTest::server_ = nullptr;
model::Engine* DemoServerTest::reference_ = nullptr;

TEST_F(DemoServerTest, HealthIsServingOverallAndForTheService) {
  EXPECT_EQ(server_->HealthStatus(), "SERVING");
  EXPECT_EQ(server_->HealthStatus("deberta.serving.v1.InferenceService"), "SERVING");
  EXPECT_EQ(server_->HealthStatus("no.such.Service"), "NOT_FOUND");
}

TEST_F(DemoServerTest, ModelInfoDescribesTheDemoModel) {
  pb::ModelInfo info;
  auto context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->GetModelInfo(context.get(), pb::GetModelInfoRequest(), &info).ok());
  EXPECT_EQ(info.model_name(), "demo");
  EXPECT_EQ(info.model_type(), "deberta-v2");
  EXPECT_EQ(info.vocab_size(), 1024);
  EXPECT_EQ(info.mask_token_id(), model::kDemoMaskId);
  EXPECT_EQ(info.cls_token_id(), model::kDemoClsId);
  EXPECT_THAT(info.labels(), ::testing::ElementsAre("negative", "neutral", "positive"));
  EXPECT_TRUE(info.emd_enabled());
  EXPECT_TRUE(info.has_classifier());
  EXPECT_TRUE(info.has_fill_mask());
  EXPECT_EQ(info.device(), "cpu");
  EXPECT_EQ(info.dtype(), "float32");
  EXPECT_EQ(info.server_version(), "test");
}

TEST_F(DemoServerTest, ClassifyAnswersEqualTheEngineAndAreSortedByScore) {
  pb::ClassifyRequest request;
  request.set_request_id("req-7");
  request.set_top_k(2);
  const std::vector<std::vector<int32_t>> inputs{DemoTokens(1, 9), DemoTokens(2, 30), DemoTokens(3, 4)};
  for (const auto& tokens : inputs) *request.add_sequences() = ToProto(tokens);
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = server_->stub->Classify(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.request_id(), "req-7");
  ASSERT_EQ(response.results_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const pb::Classification& result = response.results(i);
    const model::ClassifyOutput want = ReferenceClassify(inputs[i]);
    ASSERT_EQ(result.logits_size(), 3);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(result.logits(k), want.logits[k], 1e-4) << "sequence " << i;
      EXPECT_NEAR(result.probabilities(k), want.probabilities[k], 1e-5);
    }
    ASSERT_EQ(result.labels_size(), 2);
    EXPECT_GE(result.labels(0).probability(), result.labels(1).probability());
    EXPECT_EQ(result.labels(0).label(),
              std::vector<std::string>({"negative", "neutral", "positive"})[result.labels(0).label_id()]);
  }
}

TEST_F(DemoServerTest, FillMaskPredictsEveryMaskAndExplicitPositions) {
  std::vector<int32_t> tokens = DemoTokens(5, 12);
  tokens[3] = model::kDemoMaskId;
  tokens[7] = model::kDemoMaskId;
  pb::FillMaskRequest request;
  request.set_request_id("fm");
  request.set_top_k(4);
  *request.add_sequences()->mutable_sequence() = ToProto(tokens);
  pb::FillMaskSequence* explicit_positions = request.add_sequences();
  *explicit_positions->mutable_sequence() = ToProto(DemoTokens(6, 10));
  explicit_positions->add_positions(5);
  pb::FillMaskResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = server_->stub->FillMask(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.request_id(), "fm");
  ASSERT_EQ(response.results_size(), 2);
  ASSERT_EQ(response.results(0).predictions_size(), 2);
  EXPECT_EQ(response.results(0).predictions(0).position(), 3);
  EXPECT_EQ(response.results(0).predictions(1).position(), 7);
  ASSERT_EQ(response.results(1).predictions_size(), 1);
  EXPECT_EQ(response.results(1).predictions(0).position(), 5);

  auto want = reference_->FillMask({model::MaskedSequence{{tokens, {}}, {3, 7}, 4}});
  ASSERT_TRUE(want.ok());
  for (int p = 0; p < 2; ++p) {
    const pb::MaskPrediction& got = response.results(0).predictions(p);
    ASSERT_EQ(got.candidates_size(), 4);
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(got.candidates(c).token_id(), (*want)[0].predictions[p].candidates[c].token_id);
      EXPECT_NEAR(got.candidates(c).probability(), (*want)[0].predictions[p].candidates[c].probability,
                  1e-5);
    }
  }
}

TEST_F(DemoServerTest, ManyConcurrentClientsEachGetTheirOwnAnswer) {
  constexpr int kClients = 16;
  constexpr int kRequestsPerClient = 12;
  // Distinct sequences of many lengths, so batches mix and reorder them.
  std::vector<std::vector<int32_t>> inputs;
  std::vector<model::ClassifyOutput> expected;
  for (int i = 0; i < kClients * kRequestsPerClient; ++i) {
    inputs.push_back(DemoTokens(100 + i, 3 + (i * 13) % 60));
    expected.push_back(ReferenceClassify(inputs.back()));
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      // Each client its own channel, as separate processes would have.
      auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->server->port()),
                                         grpc::InsecureChannelCredentials());
      auto stub = pb::InferenceService::NewStub(channel);
      for (int r = 0; r < kRequestsPerClient; ++r) {
        const int i = c * kRequestsPerClient + r;
        pb::ClassifyRequest request;
        request.set_request_id(absl::StrCat("c", c, "-r", r));
        *request.add_sequences() = ToProto(inputs[i]);
        pb::ClassifyResponse response;
        auto context = ContextWithDeadline();
        if (!stub->Classify(context.get(), request, &response).ok()) {
          ++failures;
          continue;
        }
        bool same = response.request_id() == request.request_id() && response.results_size() == 1;
        for (int k = 0; same && k < 3; ++k) {
          same = std::abs(response.results(0).logits(k) - expected[i].logits[k]) <= 1e-4;
        }
        if (!same) ++mismatches;
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// The bad-input table: each case gets its precise code and a message that
// names the problem, and the server keeps serving.
struct BadInput {
  std::string name;
  std::function<void(pb::ClassifyRequest*)> classify;  // Set for classify cases.
  std::function<void(pb::FillMaskRequest*)> fill_mask;  // Set for fill-mask cases.
  grpc::StatusCode code;
  std::string message;
};

std::vector<BadInput> BadInputs() {
  auto good = [](int seed) { return ToProto(DemoTokens(seed, 8)); };
  auto masked = [](int seed) {
    pb::FillMaskSequence s;
    std::vector<int32_t> tokens = DemoTokens(seed, 8);
    tokens[2] = model::kDemoMaskId;
    *s.mutable_sequence() = ToProto(tokens);
    return s;
  };
  return {
      {"no_sequences", [](pb::ClassifyRequest*) {}, nullptr, grpc::INVALID_ARGUMENT, "no sequences"},
      {"empty_sequence",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->add_sequences();
       },
       nullptr, grpc::INVALID_ARGUMENT, "sequence 1"},
      {"id_above_vocabulary",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->mutable_sequences(0)->set_token_ids(4, 1024);
       },
       nullptr, grpc::INVALID_ARGUMENT, "1024"},
      {"negative_id",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->mutable_sequences(0)->set_token_ids(2, -5);
       },
       nullptr, grpc::INVALID_ARGUMENT, "-5"},
      {"too_long",
       [](pb::ClassifyRequest* r) { *r->add_sequences() = ToProto(DemoTokens(1, 513)); }, nullptr,
       grpc::INVALID_ARGUMENT, "513"},
      {"too_many_sequences",
       [&](pb::ClassifyRequest* r) {
         for (int i = 0; i <= kMaxSequencesPerRequest; ++i) *r->add_sequences() = good(i);
       },
       nullptr, grpc::INVALID_ARGUMENT, "the maximum is 8"},
      {"token_types_of_wrong_length",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->mutable_sequences(0)->add_token_type_ids(0);
       },
       nullptr, grpc::INVALID_ARGUMENT, "token_type_ids"},
      {"classify_top_k_negative",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->set_top_k(-1);
       },
       nullptr, grpc::INVALID_ARGUMENT, "top_k"},
      {"classify_top_k_above_labels",
       [&](pb::ClassifyRequest* r) {
         *r->add_sequences() = good(1);
         r->set_top_k(4);
       },
       nullptr, grpc::INVALID_ARGUMENT, "top_k"},
      {"oversized_message",
       [](pb::ClassifyRequest* r) {
         // 2 bytes per id on the wire: twice the limit.
         r->add_sequences()->mutable_token_ids()->Resize(kMaxMessageBytes, 300);
       },
       nullptr, grpc::RESOURCE_EXHAUSTED, ""},
      {"fill_mask_without_mask",
       nullptr,
       [&](pb::FillMaskRequest* r) {
         *r->add_sequences() = masked(1);
         *r->add_sequences()->mutable_sequence() = good(2);
       },
       grpc::INVALID_ARGUMENT, "sequence 1: no mask token (id 4)"},
      {"fill_mask_position_out_of_range",
       nullptr,
       [&](pb::FillMaskRequest* r) {
         pb::FillMaskSequence* s = r->add_sequences();
         *s->mutable_sequence() = good(1);
         s->add_positions(8);
       },
       grpc::INVALID_ARGUMENT, "sequence 0"},
      {"fill_mask_duplicate_position",
       nullptr,
       [&](pb::FillMaskRequest* r) {
         pb::FillMaskSequence* s = r->add_sequences();
         *s->mutable_sequence() = good(1);
         s->add_positions(3);
         s->add_positions(3);
       },
       grpc::INVALID_ARGUMENT, "sequence 0"},
      {"fill_mask_top_k_above_vocabulary",
       nullptr,
       [&](pb::FillMaskRequest* r) {
         *r->add_sequences() = masked(1);
         r->set_top_k(1025);
       },
       grpc::INVALID_ARGUMENT, "top_k is 1025"},
      {"fill_mask_top_k_above_the_servers_maximum",
       nullptr,
       [&](pb::FillMaskRequest* r) {
         *r->add_sequences() = masked(1);
         r->set_top_k(101);
       },
       grpc::INVALID_ARGUMENT, "top_k is 101; it must be in [1, 100] (the server's --max_top_k)"},
      {"fill_mask_answer_over_the_candidates_limit",
       nullptr,
       [](pb::FillMaskRequest* r) {
         // Every position of the longest sequences: 8 x 512 positions x 25 > 100,000.
         for (int i = 0; i < kMaxSequencesPerRequest; ++i) {
           pb::FillMaskSequence* s = r->add_sequences();
           s->mutable_sequence()->mutable_token_ids()->Resize(512, model::kDemoMaskId);
         }
         r->set_top_k(25);
       },
       grpc::INVALID_ARGUMENT, "(--max_fill_mask_candidates)"},
      {"fill_mask_empty_sequence",
       nullptr,
       [&](pb::FillMaskRequest* r) { r->add_sequences(); },
       grpc::INVALID_ARGUMENT, "sequence 0"},
  };
}

class BadInputTest : public DemoServerTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadInputTest, GetsPreciseCodeAndMessageAndServerKeepsServing) {
  const BadInput& bad = GetParam();
  grpc::Status status;
  auto context = ContextWithDeadline();
  if (bad.classify) {
    pb::ClassifyRequest request;
    bad.classify(&request);
    pb::ClassifyResponse response;
    status = server_->stub->Classify(context.get(), request, &response);
  } else {
    pb::FillMaskRequest request;
    bad.fill_mask(&request);
    pb::FillMaskResponse response;
    status = server_->stub->FillMask(context.get(), request, &response);
  }
  EXPECT_EQ(status.error_code(), bad.code) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(bad.message));

  pb::ClassifyRequest good;
  *good.add_sequences() = ToProto(DemoTokens(9, 6));
  pb::ClassifyResponse response;
  auto next = ContextWithDeadline();
  EXPECT_TRUE(server_->stub->Classify(next.get(), good, &response).ok());
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputTest, ::testing::ValuesIn(BadInputs()),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// The largest fill-mask the default limits allow (every position of the
// longest sequences, 8 x 512 x top_k 24 candidates) is answered in full.
TEST_F(DemoServerTest, LargestFillMaskWithinTheLimitsIsAnsweredInFull) {
  pb::FillMaskRequest request;
  for (int i = 0; i < kMaxSequencesPerRequest; ++i) {
    request.add_sequences()->mutable_sequence()->mutable_token_ids()->Resize(512, model::kDemoMaskId);
  }
  request.set_top_k(24);
  pb::FillMaskResponse response;
  auto context = ContextWithDeadline(120);
  grpc::Status status = server_->stub->FillMask(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), kMaxSequencesPerRequest);
  for (const pb::FillMaskResult& result : response.results()) {
    ASSERT_EQ(result.predictions_size(), 512);
    for (const pb::MaskPrediction& p : result.predictions()) ASSERT_EQ(p.candidates_size(), 24);
  }
}

// The same request over HTTP/JSON (curl) and gRPC: the HTTP body is byte for
// byte the gRPC answer in protobuf's JSON mapping.
TEST_F(DemoServerTest, HttpAndGrpcAnswersAreIdentical) {
  const int http_port = server_->server->http_port();
  ASSERT_GT(http_port, 0);
  auto post = [http_port](const std::string& path, const google::protobuf::Message& request) {
    std::string body;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(request, &body).ok());
    CommandResult curl = RunCommand(absl::StrCat("curl -sf -X POST --data-raw '", body, "' http://127.0.0.1:",
                                                 http_port, path));
    EXPECT_EQ(curl.exit_code, 0) << path << ": " << curl.output;
    return curl.output;
  };
  auto json = [](const google::protobuf::Message& message) {
    google::protobuf::util::JsonPrintOptions options;
    options.always_print_primitive_fields = true;
    std::string text;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &text, options).ok());
    return text;
  };

  pb::ClassifyRequest classify;
  classify.set_request_id("same-1");
  *classify.add_sequences() = ToProto(DemoTokens(3, 12));
  *classify.add_sequences() = ToProto(DemoTokens(4, 30));
  pb::ClassifyResponse classified;
  auto context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->Classify(context.get(), classify, &classified).ok());
  EXPECT_EQ(post("/v1/classify", classify), json(classified));

  pb::FillMaskRequest fill;
  fill.set_top_k(4);
  std::vector<int32_t> tokens = DemoTokens(5, 16);
  tokens[3] = tokens[9] = model::kDemoMaskId;
  *fill.add_sequences()->mutable_sequence() = ToProto(tokens);
  pb::FillMaskResponse filled;
  auto fill_context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->FillMask(fill_context.get(), fill, &filled).ok());
  ASSERT_EQ(filled.results(0).predictions_size(), 2);
  EXPECT_EQ(post("/v1/fill-mask", fill), json(filled));

  pb::ModelInfo info;
  auto info_context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->GetModelInfo(info_context.get(), pb::GetModelInfoRequest(), &info).ok());
  EXPECT_EQ(post("/v1/model", pb::GetModelInfoRequest()), json(info));
}

TEST_F(DemoServerTest, MetricsScrapeShowsTheTraffic) {
  pb::ClassifyRequest request;
  *request.add_sequences() = ToProto(DemoTokens(1, 10));
  *request.add_sequences() = ToProto(DemoTokens(2, 20));
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->Classify(context.get(), request, &response).ok());
  pb::ClassifyRequest bad;
  auto bad_context = ContextWithDeadline();
  EXPECT_FALSE(server_->stub->Classify(bad_context.get(), bad, &response).ok());

  const int port = server_->server->metrics_port();
  ASSERT_GT(port, 0);
  auto text = HttpGet(port, "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  for (const char* expected : {
           "deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"demo\",protocol=\"grpc\",version=\"1\"}",
           "deberta_requests_total{code=\"INVALID_ARGUMENT\",endpoint=\"classify\",model=\"demo\",protocol=\"grpc\",version=\"1\"}",
           "deberta_rejections_total{model=\"demo\",reason=\"invalid_argument\",version=\"1\"}",
           "deberta_request_duration_seconds_bucket{endpoint=\"classify\",model=\"demo\",protocol=\"grpc\",version=\"1\",le=\"+Inf\"}",
           "deberta_queue_duration_seconds_count{endpoint=\"classify\",model=\"demo\",version=\"1\"}",
           "deberta_inference_duration_seconds_sum{endpoint=\"classify\",model=\"demo\",version=\"1\"}",
           "deberta_batch_size_bucket{endpoint=\"classify\"",
           "deberta_batch_tokens_bucket{endpoint=\"classify\"",
           "deberta_input_tokens_total{endpoint=\"classify\",model=\"demo\",version=\"1\"}",
           "deberta_real_tokens_total{endpoint=\"classify\",model=\"demo\",version=\"1\"}",
           "deberta_padding_tokens_total{endpoint=\"classify\",model=\"demo\",version=\"1\"}",
           "\ndeberta_queue_sequences{endpoint=\"classify\",model=\"demo\",version=\"1\"} 0\n",
           "\ndeberta_queue_tokens{endpoint=\"fill_mask\",model=\"demo\",version=\"1\"} 0\n",
           "\ndeberta_inflight_requests 0\n",
           "\ndeberta_model_ready 1\n",
           "\ndeberta_draining 0\n",
           "\ndeberta_model_ready{model=\"demo\",version=\"1\"} 1\n",
           "\ndeberta_batcher_limit{limit=\"max_batch_size\",model=\"demo\",version=\"1\"} 32\n",
           "\ndeberta_batcher_limit{limit=\"max_queue_size\",model=\"demo\",version=\"1\"} 1024\n",
           "\ndeberta_model_state{model=\"demo\",state=\"ready\",version=\"1\"} 1\n",
           "deberta_build_info{device=\"cpu\",dtype=\"float32\",model=\"demo\",version=\"test\"} 1",
       }) {
    EXPECT_THAT(*text, HasSubstr(expected));
  }
}

}  // namespace
}  // namespace deberta::testing
