// TestServer start-up and the health query.
#include "tests/testing/test_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "service/status_util.h"

namespace deberta::testing {
// Starts the test's server and connects its stubs.
static absl::StatusOr<std::unique_ptr<TestServer>> Connect(std::unique_ptr<TestServer> test);

std::string TestServer::HealthStatus(const std::string& service_name) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service_name);
  grpc::health::v1::HealthCheckResponse response;
  auto context = ContextWithDeadline(5);
  grpc::Status status = health->Check(context.get(), request, &response);
  if (!status.ok()) return service::GrpcCodeName(status.error_code());
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

absl::StatusOr<std::unique_ptr<TestServer>> StartTestServer(std::unique_ptr<model::Engine> engine,
                                                            service::ServerConfig config,
                                                            std::unique_ptr<model::Tokenizer> tokenizer) {
  std::vector<std::unique_ptr<model::Engine>> engines;
  engines.push_back(std::move(engine));
  return StartTestServer(std::move(engines), std::move(config), std::move(tokenizer));
}

absl::StatusOr<std::unique_ptr<TestServer>> StartTestServer(std::vector<std::unique_ptr<model::Engine>> engines,
                                                            service::ServerConfig config,
                                                            std::unique_ptr<model::Tokenizer> tokenizer) {
  config.listen_address = "127.0.0.1";
  config.port = 0;
  if (config.metrics_port != 0) config.metrics_port = -1;
  if (config.http_port != 0) config.http_port = -1;
  auto test = std::make_unique<TestServer>();
  if (tokenizer != nullptr) config.service.special_tokens = tokenizer->special_tokens();
  test->server = std::make_unique<service::Server>(config, std::move(engines),
                                                   std::make_shared<prometheus::Registry>(), std::move(tokenizer));
  return Connect(std::move(test));
}

absl::StatusOr<std::unique_ptr<TestServer>> StartRepositoryServer(service::ServerConfig config,
                                                                  service::EngineFactory create) {
  config.listen_address = "127.0.0.1";
  config.port = 0;
  if (config.metrics_port != 0) config.metrics_port = -1;
  if (config.http_port != 0) config.http_port = -1;
  auto test = std::make_unique<TestServer>();
  test->server =
      std::make_unique<service::Server>(config, std::move(create), std::make_shared<prometheus::Registry>());
  return Connect(std::move(test));
}

static absl::StatusOr<std::unique_ptr<TestServer>> Connect(std::unique_ptr<TestServer> test) {
  if (absl::Status s = test->server->Start(); !s.ok()) return s;
  test->channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", test->server->port()),
                                      grpc::InsecureChannelCredentials());
  test->stub = serving::v1::InferenceService::NewStub(test->channel);
  test->health = grpc::health::v1::Health::NewStub(test->channel);
  return test;
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(double seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
  return context;
}

}  // namespace deberta::testing
