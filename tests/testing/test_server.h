// TestServer: a deberta-server in the test process on loopback port 0,
// with a client stub and a health stub on one channel.
#ifndef DEBERTA_TESTS_TESTING_TEST_SERVER_H_
#define DEBERTA_TESTS_TESTING_TEST_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "model/engine.h"
#include "service/server.h"

namespace deberta::testing {

struct TestServer {
  std::unique_ptr<service::Server> server;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<serving::v1::InferenceService::Stub> stub;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;

  // Health of `service_name` ("" for the whole server), as the enum's name,
  // or the RPC's error code name.
  std::string HealthStatus(const std::string& service_name = "");
};

// Starts `engine` behind a server configured by `config` (its ports are
// replaced: gRPC on port 0 of 127.0.0.1). /metrics is served only when
// config.metrics_port is 0 (then on a free port); the JSON API likewise
// with config.http_port.
absl::StatusOr<std::unique_ptr<TestServer>> StartTestServer(
    std::unique_ptr<model::Engine> engine, service::ServerConfig config,
    std::unique_ptr<model::Tokenizer> tokenizer = nullptr);

// The same with several engine replicas behind the one batcher.
absl::StatusOr<std::unique_ptr<TestServer>> StartTestServer(
    std::vector<std::unique_ptr<model::Engine>> engines, service::ServerConfig config,
    std::unique_ptr<model::Tokenizer> tokenizer = nullptr);

// A server of the models of config.models.repository, whose engines
// `create` makes (a fake in the service tests); ports as above.
absl::StatusOr<std::unique_ptr<TestServer>> StartRepositoryServer(service::ServerConfig config,
                                                                  service::EngineFactory create);

// A ClientContext with a deadline `seconds` from now.
std::unique_ptr<grpc::ClientContext> ContextWithDeadline(double seconds = 30);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_TEST_SERVER_H_
