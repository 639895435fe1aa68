// The server's listeners: a second server on a gRPC port in use fails to
// start (gRPC's SO_REUSEPORT is off), and idle or slow HTTP clients do not
// keep Prometheus from scraping /metrics.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/http_get.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;

TEST(ListenerTest, ASecondServerOnAPortInUseFailsToStart) {
  auto first = StartTestServer(std::make_unique<FakeEngine>(), service::ServerConfig());
  ASSERT_TRUE(first.ok()) << first.status();
  service::ServerConfig config;
  config.listen_address = "127.0.0.1";
  config.port = (*first)->server->port();
  config.metrics_port = -1;
  service::Server second(config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  absl::Status started = second.Start();
  EXPECT_TRUE(absl::IsUnavailable(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr(absl::StrCat("cannot listen on 127.0.0.1:", config.port)));
  EXPECT_EQ((*first)->HealthStatus(), "SERVING");
}

// A TCP connection that sends nothing, as a stalled or malicious client.
int OpenIdleConnection(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(ListenerTest, IdleHttpClientsDoNotStarveMetricsScrapes) {
  service::ServerConfig config;
  config.metrics_port = 0;
  // Long enough that only free threads can let the scrape through.
  config.metrics_request_timeout = absl::Seconds(60);
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->server->metrics_port();
  ASSERT_GT(port, 0);
  // Twice the 2 worker threads /metrics once had, each held open.
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    const int fd = OpenIdleConnection(port);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  auto text = HttpGet(port, "/metrics");
  for (int fd : idle) close(fd);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("deberta_model_ready 1"));
}

TEST(ListenerTest, MetricsClientsThatSendNothingAreDroppedAfterTheRequestTimeout) {
  service::ServerConfig config;
  config.listen_address = "127.0.0.1";
  config.port = 0;
  config.metrics_port = 0;
  config.metrics_threads = 1;
  config.metrics_request_timeout = absl::Seconds(1);
  // A server of its own: its listen address and ports are kept.
  service::Server server(config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(server.Start().ok());
  const int idle = OpenIdleConnection(server.metrics_port());
  ASSERT_GE(idle, 0);
  // The only thread is held until the idle client times out; the scrape
  // gets through well within HttpGet's 20 s.
  auto text = HttpGet(server.metrics_port(), "/metrics");
  close(idle);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("deberta_model_ready 1"));
}

}  // namespace
}  // namespace deberta::testing
