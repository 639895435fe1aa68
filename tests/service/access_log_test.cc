// Access log: the line formats (text and JSON, client values escaped, a
// traceparent kept only when well-formed), and one line per request from a
// server over the FakeEngine with what happened to it and no payload unless
// --log_payloads is set (which needs the access log).
#include "service/access_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_split.h"
#include "service/server_config.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::service {
namespace {

using ::testing::AnyOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(AccessLogTest, KeepsOnlyWellFormedTraceparents) {
  EXPECT_EQ(ValidTraceparent(kTraceparent), kTraceparent);
  EXPECT_EQ(ValidTraceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), "");  // Uppercase.
  EXPECT_EQ(ValidTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nforged"), "");
  EXPECT_EQ(ValidTraceparent(""), "");
}

TEST(AccessLogTest, TextLinesEscapeWhatClientsSend) {
  AccessRecord record;
  record.request_id = "id with space\ninjected=line";
  record.method = "classify";
  record.code = absl::StatusCode::kInvalidArgument;
  record.sequences = 2;
  record.tokens = 9;
  record.queue = absl::Milliseconds(1.5);
  record.total = absl::Milliseconds(3);
  record.peer = "ipv4:127.0.0.1:5000";
  const std::string line = FormatAccessRecord(record, AccessLogFormat::kText);
  EXPECT_THAT(line, Not(HasSubstr("\n")));
  EXPECT_THAT(line, HasSubstr("grpc classify request_id=\"id with space\\ninjected=line\" code=INVALID_ARGUMENT "
                              "sequences=2 tokens=9 queue_ms=1.500 inference_ms=0.000 total_ms=3.000 "
                              "peer=ipv4:127.0.0.1:5000 traceparent=-"));
  const auto json = nlohmann::json::parse(FormatAccessRecord(record, AccessLogFormat::kJson));
  EXPECT_EQ(json["request_id"], record.request_id);
  EXPECT_EQ(json["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(json["queue_ms"], 1.5);
}

TEST(AccessLogTest, TheServerWritesOneLinePerRequestWithoutPayload) {
  std::ostringstream out;
  ServerConfig config;
  config.access_log = AccessLogFormat::kJson;
  config.access_log_out = &out;
  auto server = testing::StartTestServer(std::make_unique<testing::FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();

  serving::v1::ClassifyRequest request;
  request.set_request_id("req-7");
  serving::v1::Sequence* sequence = request.add_sequences();
  for (int id : {1, 61, 62, 2}) sequence->add_token_ids(id);
  serving::v1::ClassifyResponse response;
  auto context = testing::ContextWithDeadline(5);
  context->AddMetadata("traceparent", kTraceparent);
  ASSERT_TRUE((*server)->stub->Classify(context.get(), request, &response).ok());

  serving::v1::ClassifyRequest bad;
  bad.set_request_id("req-8");
  bad.add_sequences();  // Empty: INVALID_ARGUMENT.
  auto bad_context = testing::ContextWithDeadline(5);
  bad_context->AddMetadata("traceparent", "not-a-traceparent");
  EXPECT_FALSE((*server)->stub->Classify(bad_context.get(), bad, &response).ok());

  serving::v1::ModelInfo info;
  auto info_context = testing::ContextWithDeadline(5);
  ASSERT_TRUE((*server)->stub->GetModelInfo(info_context.get(), {}, &info).ok());

  const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  const auto ok = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(ok["request_id"], "req-7");
  EXPECT_EQ(ok["method"], "classify");
  EXPECT_EQ(ok["protocol"], "grpc");
  EXPECT_EQ(ok["code"], "OK");
  EXPECT_EQ(ok["sequences"], 1);
  EXPECT_EQ(ok["tokens"], 4);
  EXPECT_EQ(ok["traceparent"], kTraceparent);
  EXPECT_GE(ok["total_ms"].get<double>(), ok["inference_ms"].get<double>());
  EXPECT_THAT(ok["peer"].get<std::string>(), HasSubstr("127.0.0.1"));
  EXPECT_EQ(ok["model"], "fake");
  EXPECT_EQ(ok.size(), 13u) << lines[0];  // These fields only: no token ids or text.

  const auto rejected = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(rejected["request_id"], "req-8");
  EXPECT_EQ(rejected["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(rejected["traceparent"], "");
  EXPECT_EQ(nlohmann::json::parse(lines[2])["method"], "get_model_info");
}

// Two servers, one without --log_payloads and one with: only the second's
// lines carry the request (its token ids), nested as JSON.
TEST(AccessLogTest, PayloadsOnlyWithLogPayloads) {
  for (bool log_payloads : {false, true}) {
    std::ostringstream out;
    ServerConfig config;
    config.access_log = AccessLogFormat::kJson;
    config.access_log_out = &out;
    config.service.log_payloads = log_payloads;
    auto server = testing::StartTestServer(std::make_unique<testing::FakeEngine>(), config);
    ASSERT_TRUE(server.ok()) << server.status();
    serving::v1::ClassifyRequest request;
    request.set_request_id("req-9");
    for (int id : {1, 61, 62, 2}) request.add_sequences()->add_token_ids(id);
    serving::v1::ClassifyResponse response;
    auto context = testing::ContextWithDeadline(5);
    ASSERT_TRUE((*server)->stub->Classify(context.get(), request, &response).ok());

    const std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 1u) << out.str();
    const auto line = nlohmann::json::parse(lines[0]);
    if (!log_payloads) {
      // Only the record's own fields: no payload, no token ids. (Not a
      // search for "61": the times may contain it.)
      for (const auto& [key, value] : line.items()) {
        EXPECT_THAT(key, AnyOf("code", "inference_ms", "method", "model", "peer", "protocol", "queue_ms",
                               "request_id", "sequences", "time", "tokens", "total_ms", "traceparent"))
            << lines[0];
      }
      EXPECT_THAT(lines[0], Not(HasSubstr("tokenIds")));
      continue;
    }
    EXPECT_EQ(line["payload"]["requestId"], "req-9") << lines[0];
    EXPECT_EQ(line["payload"]["sequences"][1]["tokenIds"], nlohmann::json::parse("[61]")) << lines[0];
  }
}

TEST(AccessLogTest, TextLinesEndWithThePayloadEscaped) {
  AccessRecord record;
  record.payload = R"({"text":"a b"})";
  EXPECT_THAT(FormatAccessRecord(record, AccessLogFormat::kText), EndsWith(R"( payload="{\"text\":\"a b\"}")"));
}

TEST(AccessLogTest, LogPayloadsNeedsTheAccessLog) {
  ServerConfig config;
  config.service.log_payloads = true;
  const absl::Status status = config.Validate();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("--log_payloads needs --access_log"));
  config.access_log = AccessLogFormat::kText;
  EXPECT_TRUE(config.Validate().ok());
}

}  // namespace
}  // namespace deberta::service
