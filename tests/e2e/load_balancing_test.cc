// Client-side load balancing, as the Kubernetes headless Service is meant
// to be used: deberta-cli with --lb=round_robin over a target that resolves
// to two servers spreads its requests over both; without it, gRPC's default
// pick_first sends them all to one.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/testing/test_server.h"
#include "tests/testing/fake_engine.h"

namespace deberta::testing {
namespace {

// OK classify requests the server has answered, from its own metrics.
int AnsweredRequests(TestServer& server) {
  const std::string text =
      prometheus::TextSerializer().Serialize(server.server->metrics().registry()->Collect());
  std::smatch match;
  static const std::regex kOk(R"(\ndeberta_requests_total\{code="OK",endpoint="classify",model="[^"]+",protocol="grpc",version="1"\} (\d+))");
  return std::regex_search(text, match, kOk) ? std::stoi(match[1]) : 0;
}

// Runs `deberta-cli bench` against both servers; returns its exit status.
int Bench(TestServer& a, TestServer& b, const std::string& lb) {
  const std::string command = absl::StrCat(
      DEBERTA_CLI_BINARY, " bench --server=ipv4:127.0.0.1:", a.server->port(), ",127.0.0.1:",
      b.server->port(), lb.empty() ? "" : " --lb=" + lb,
      " --concurrency=4 --duration=1s --vocab=100 --min_len=4 --max_len=16 >/dev/null");
  return std::system(command.c_str());
}

std::unique_ptr<TestServer> StartFakeServer() {
  auto server = StartTestServer(std::make_unique<FakeEngine>(), service::ServerConfig());
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(LoadBalancingTest, RoundRobinSpreadsOneClientOverEveryServer) {
  auto a = StartFakeServer(), b = StartFakeServer();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(Bench(*a, *b, "round_robin"), 0);
  EXPECT_GT(AnsweredRequests(*a), 0);
  EXPECT_GT(AnsweredRequests(*b), 0);
}

TEST(LoadBalancingTest, WithoutRoundRobinOneClientUsesOneServer) {
  auto a = StartFakeServer(), b = StartFakeServer();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(Bench(*a, *b, ""), 0);
  EXPECT_EQ(AnsweredRequests(*a) == 0, AnsweredRequests(*b) > 0);  // Exactly one got traffic.
}

}  // namespace
}  // namespace deberta::testing
