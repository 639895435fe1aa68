// The HTTP/JSON API over a FakeEngine server, called with curl: the same
// answer as gRPC for the same request, errors as HTTP statuses with a JSON
// body, health, deadlines, API keys, the access log's and the metrics'
// protocol, the OpenAPI document and the try-it page's headers.
#include <gmock/gmock.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "service/protocols/json_routes.h"
#include "service/protocols/openapi.h"
#include "tests/testing/certificates.h"
#include "tests/testing/curl.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;

std::string Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

class JsonApiTest : public ::testing::Test {
 protected:
  void Start(service::ServerConfig config = {}) {
    config.http_port = 0;
    config.access_log = service::AccessLogFormat::kJson;
    config.access_log_out = &log_;
    auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    port_ = server_->server->http_port();
    ASSERT_GT(port_, 0);
  }

  std::ostringstream log_;
  std::unique_ptr<TestServer> server_;
  int port_ = 0;
};

TEST_F(JsonApiTest, AnswersAsGrpcDoesForTheSameRequest) {
  Start();
  const std::string body = R"({"requestId": "h-1", "sequences": [{"tokenIds": [1, 7, 8, 2]}, {"tokenIds": [1, 9, 2]}]})";
  HttpAnswer http = Curl(port_, "POST", "/v1/classify", body);
  ASSERT_EQ(http.status, 200) << http.body;

  serving::v1::ClassifyRequest request;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(body, &request).ok());
  serving::v1::ClassifyResponse response;
  auto context = ContextWithDeadline(5);
  ASSERT_TRUE(server_->stub->Classify(context.get(), request, &response).ok());
  EXPECT_EQ(http.body, Json(response));
  EXPECT_THAT(http.body, HasSubstr("\"labelId\":0"));  // Zero values are printed.

  HttpAnswer fill = Curl(port_, "POST", "/v1/fill-mask",
                         R"({"sequences": [{"sequence": {"tokenIds": [1, 7, 8, 2]}, "positions": [2]}], "topK": 2})");
  EXPECT_EQ(fill.status, 200) << fill.body;
  EXPECT_THAT(fill.body, HasSubstr("\"position\":2"));
  HttpAnswer model = Curl(port_, "POST", "/v1/model", "{}");
  EXPECT_EQ(model.status, 200) << model.body;
  EXPECT_THAT(model.body, HasSubstr("\"vocabSize\""));

  // The request metrics say which protocol each call came by.
  const std::string metrics =
      prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  EXPECT_THAT(metrics, HasSubstr("\ndeberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"http\",version=\"1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("\ndeberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"fake\",protocol=\"grpc\",version=\"1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("\ndeberta_requests_total{code=\"OK\",endpoint=\"fill_mask\",model=\"fake\",protocol=\"http\",version=\"1\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("\ndeberta_request_duration_seconds_count{endpoint=\"get_model_info\",model=\"fake\",protocol=\"http\",version=\"1\"} 1\n"));

  // One access-log line per call, marked as HTTP with the HTTP peer. Read
  // once the server is stopped (its threads joined), not while it may write.
  server_.reset();
  const std::vector<std::string> lines = absl::StrSplit(log_.str(), '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 2u);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["protocol"], "http");
  EXPECT_EQ(first["request_id"], "h-1");
  EXPECT_THAT(first["peer"].get<std::string>(), HasSubstr("127.0.0.1:"));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["protocol"], "grpc");
}

TEST_F(JsonApiTest, ErrorsAreHttpStatusesWithTheCodeAndMessage) {
  Start();
  HttpAnswer empty = Curl(port_, "POST", "/v1/classify", R"({"sequences": [{}]})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(nlohmann::json::parse(empty.body)["code"], "INVALID_ARGUMENT");
  EXPECT_THAT(nlohmann::json::parse(empty.body)["message"].get<std::string>(), HasSubstr("sequence 0"));

  HttpAnswer not_json = Curl(port_, "POST", "/v1/classify", "{not json");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_THAT(not_json.body, HasSubstr("deberta.serving.v1.ClassifyRequest"));
  HttpAnswer misspelt = Curl(port_, "POST", "/v1/classify", R"({"sequencez": []})");
  EXPECT_EQ(misspelt.status, 400) << misspelt.body;

  HttpAnswer bad_deadline = Curl(port_, "POST", "/v1/model?deadline_ms=soon", "{}");
  EXPECT_EQ(bad_deadline.status, 400);
  EXPECT_EQ(Curl(port_, "POST", "/v1/model", "{}", "-H 'X-Deadline-Ms: 5000'").status, 200);
  EXPECT_EQ(Curl(port_, "GET", "/v1/no-such-thing").status, 404);
}

TEST_F(JsonApiTest, HealthSaysLiveAndReady) {
  Start();
  EXPECT_EQ(Curl(port_, "GET", "/health/live").status, 200);
  HttpAnswer ready = Curl(port_, "GET", "/health/ready");
  EXPECT_EQ(ready.status, 200);
  EXPECT_THAT(ready.body, HasSubstr("SERVING"));
}

TEST_F(JsonApiTest, ApiKeysComeFromTheAuthorizationHeader) {
  const std::string keys = absl::StrCat(::testing::TempDir(), "/deberta-json-keys-", getpid());
  ReplaceFile(keys, "json-key\n");
  service::ServerConfig config;
  config.security.api_keys_file = keys;
  Start(config);
  HttpAnswer missing = Curl(port_, "POST", "/v1/model", "{}");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(nlohmann::json::parse(missing.body)["code"], "UNAUTHENTICATED");
  EXPECT_EQ(Curl(port_, "POST", "/v1/model", "{}", "-H 'Authorization: Bearer json-key'").status, 200);
  EXPECT_EQ(Curl(port_, "GET", "/health/ready").status, 200);  // Probes need no key.
}


TEST_F(JsonApiTest, OpenApiDocumentDescribesEveryRpcOfTheService) {
  Start();
  HttpAnswer answer = Curl(port_, "GET", "/v1/openapi.json");
  ASSERT_EQ(answer.status, 200);
  const auto document = nlohmann::json::parse(answer.body);
  EXPECT_EQ(document["openapi"], "3.0.3");
  EXPECT_FALSE(document.contains("security"));  // No API keys on this server.
  const auto& schemas = document["components"]["schemas"];
  const google::protobuf::ServiceDescriptor* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      serving::v1::InferenceService::service_full_name());
  ASSERT_NE(service, nullptr);
  ASSERT_EQ(service->method_count(), static_cast<int>(std::size(service::kRoutes)));
  for (int i = 0; i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* method = service->method(i);
    const std::string path(service::JsonPath(method->name()));
    ASSERT_FALSE(path.empty()) << method->name();
    const auto& operation = document["paths"][path]["post"];
    EXPECT_EQ(operation["operationId"], method->name());
    EXPECT_FALSE(operation["summary"].get<std::string>().empty()) << method->name();  // From the proto comment.
    const std::string request_ref =
        operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].get<std::string>();
    EXPECT_EQ(request_ref, "#/components/schemas/" + method->input_type()->full_name());
    EXPECT_TRUE(schemas.contains(method->input_type()->full_name()));
    EXPECT_TRUE(schemas.contains(method->output_type()->full_name()));
  }
  // Fields by their JSON names and types as the canonical mapping has them.
  const auto& classify = schemas["deberta.serving.v1.ClassifyRequest"]["properties"];
  EXPECT_EQ(classify["topK"]["type"], "integer");
  EXPECT_EQ(classify["sequences"]["items"]["$ref"], "#/components/schemas/deberta.serving.v1.Sequence");
  EXPECT_EQ(classify["truncation"]["enum"][2], "TRUNCATION_LONGEST_FIRST");
  EXPECT_THAT(classify["truncation"]["description"].get<std::string>(), HasSubstr("- TRUNCATION_NONE: "));
  EXPECT_EQ(schemas["deberta.serving.v1.ModelInfo"]["properties"]["vocabSize"]["type"], "string");  // int64.
  EXPECT_TRUE(document["paths"].contains("/health/ready"));
}

TEST_F(JsonApiTest, OpenApiDocumentAsksForTheKeyWhenTheServerWantsOne) {
  const std::string keys = absl::StrCat(::testing::TempDir(), "/deberta-openapi-keys-", getpid());
  ReplaceFile(keys, "doc-key\n");
  service::ServerConfig config;
  config.security.api_keys_file = keys;
  Start(config);
  HttpAnswer answer = Curl(port_, "GET", "/v1/openapi.json");  // The document needs no key.
  ASSERT_EQ(answer.status, 200);
  const auto document = nlohmann::json::parse(answer.body);
  EXPECT_EQ(document["security"], nlohmann::json::parse(R"([{"bearerAuth": []}])"));
  EXPECT_EQ(document["paths"]["/health/live"]["get"]["security"], nlohmann::json::array());
}

TEST(OpenApiTest, AnRpcWithoutAnHttpPathIsAnError) {
  google::protobuf::FileDescriptorProto file;
  file.set_name("other.proto");
  file.set_package("other");
  file.set_syntax("proto3");
  file.add_message_type()->set_name("Empty");
  auto* service = file.add_service();
  service->set_name("Other");
  auto* method = service->add_method();
  method->set_name("Frobnicate");
  method->set_input_type(".other.Empty");
  method->set_output_type(".other.Empty");
  google::protobuf::FileDescriptorSet set;
  *set.add_file() = file;
  auto document = service::MakeOpenApiDocument({}, set.SerializeAsString(), "other.Other");
  ASSERT_FALSE(document.ok());
  EXPECT_THAT(std::string(document.status().message()), HasSubstr("other.Other.Frobnicate has no HTTP path"));
}

TEST_F(JsonApiTest, TryItPageIsServedWithAStrictContentSecurityPolicy) {
  Start();
  HttpAnswer page = Curl(port_, "GET", "/", "", "-D -");
  EXPECT_EQ(page.status, 200);
  EXPECT_THAT(page.body, HasSubstr("Content-Security-Policy: default-src 'none'"));
  EXPECT_THAT(page.body, HasSubstr("<script src=\"/try-it.js\" defer></script>"));
  EXPECT_EQ(Curl(port_, "GET", "/try-it.js").status, 200);
  EXPECT_EQ(Curl(port_, "GET", "/favicon.ico").status, 204);
}

}  // namespace
}  // namespace deberta::testing
