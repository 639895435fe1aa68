// TLS, mutual TLS and API keys, end to end over loopback with certificates
// made by openssl at test time: who gets in over gRPC and /metrics, and
// that rotated certificates and keys take effect without a restart.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <cstdio>
#include <future>

#include "absl/strings/str_cat.h"
#include "service/api_keys.h"
#include "service/status_util.h"
#include "tests/testing/certificates.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/run_command.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using ::testing::HasSubstr;

// ---- API key parsing and comparison -------------------------------------

TEST(ApiKeysTest, ParsesOneKeyPerLineSkippingBlanksAndComments) {
  auto keys = service::ParseApiKeys("# team a\nkey-one\n\n  key-two  \r\n#key-three\n");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_THAT(*keys, ::testing::ElementsAre("key-one", "key-two"));
  EXPECT_TRUE(absl::IsInvalidArgument(service::ParseApiKeys("# only a comment\n\n").status()));
}

TEST(ApiKeysTest, ComparesWholeKeys) {
  EXPECT_TRUE(service::ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(service::ConstantTimeEquals("secreT", "secret"));
  EXPECT_FALSE(service::ConstantTimeEquals("secret-and-more", "secret"));
  EXPECT_FALSE(service::ConstantTimeEquals("secre", "secret"));
  EXPECT_FALSE(service::ConstantTimeEquals("", "secret"));
  EXPECT_FALSE(service::ConstantTimeEquals(absl::string_view("secret\0", 7), "secret"));
}

TEST(ApiKeysTest, ReadsTheKeyFromBearerOrBasicAuthorization) {
  EXPECT_EQ(service::PresentedKey("Bearer abc"), "abc");
  EXPECT_EQ(service::PresentedKey("bearer abc "), "abc");
  EXPECT_EQ(service::PresentedKey("Basic cHJvbTphYmM="), "abc");  // prom:abc
  EXPECT_EQ(service::PresentedKey("Basic YWJj"), "");             // abc: no user part.
  EXPECT_EQ(service::PresentedKey("Basic !!"), "");
  EXPECT_EQ(service::PresentedKey("Digest abc"), "");
  EXPECT_EQ(service::PresentedKey("Bearer "), "");
  EXPECT_EQ(service::PresentedKey("abc"), "");
}

// ---- Helpers ------------------------------------------------------------

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/deberta-security-", getpid(), "-", name);
}

// Certificates shared by the tests of this binary (made once: openssl takes
// a moment).
const Certificates& Certs() {
  static const Certificates* const certs = [] {
    absl::StatusOr<Certificates> made = MakeCertificates(TestDir("certs"));
    if (!made.ok()) {
      ADD_FAILURE() << made.status();
      return new Certificates();
    }
    return new Certificates(*made);
  }();
  return *certs;
}

// A channel of its own (no connection shared with other channels).
std::shared_ptr<grpc::Channel> Channel(int port, std::shared_ptr<grpc::ChannelCredentials> credentials) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetSslTargetNameOverride("localhost");
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port), credentials, args);
}

std::shared_ptr<grpc::ChannelCredentials> Tls(const std::string& ca, const std::string& cert = "",
                                              const std::string& key = "") {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadText(ca);
  if (!cert.empty()) {
    options.pem_cert_chain = ReadText(cert);
    options.pem_private_key = ReadText(key);
  }
  return grpc::SslCredentials(options);
}

// The status of a GetModelInfo over `channel`, with `authorization` sent
// when not empty.
grpc::Status ModelInfo(const std::shared_ptr<grpc::Channel>& channel, const std::string& authorization = "") {
  auto context = ContextWithDeadline(5);
  if (!authorization.empty()) context->AddMetadata("authorization", authorization);
  pb::ModelInfo info;
  return pb::InferenceService::NewStub(channel)->GetModelInfo(context.get(), {}, &info);
}

grpc::Status Classify(const std::shared_ptr<grpc::Channel>& channel, const std::string& authorization = "") {
  auto context = ContextWithDeadline(5);
  if (!authorization.empty()) context->AddMetadata("authorization", authorization);
  pb::ClassifyRequest request;
  pb::Sequence* sequence = request.add_sequences();
  for (int id : {1, 7, 8, 2}) sequence->add_token_ids(id);
  pb::ClassifyResponse response;
  return pb::InferenceService::NewStub(channel)->Classify(context.get(), request, &response);
}

std::string Code(const grpc::Status& status) { return service::GrpcCodeName(status.error_code()); }

// ---- TLS and mutual TLS over gRPC ---------------------------------------

TEST(TlsTest, TlsServerAnswersTlsClientsThatTrustItsCaOnly) {
  const Certificates& certs = Certs();
  service::ServerConfig config;
  config.security.tls_cert = certs.a.server_cert;
  config.security.tls_key = certs.a.server_key;
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->server->port();

  EXPECT_TRUE(ModelInfo(Channel(port, Tls(certs.a.ca_cert))).ok());
  EXPECT_TRUE(Classify(Channel(port, Tls(certs.a.ca_cert))).ok());
  EXPECT_EQ(Code(ModelInfo(Channel(port, Tls(certs.b.ca_cert)))), "UNAVAILABLE");  // Untrusted server.
  EXPECT_EQ(Code(ModelInfo(Channel(port, grpc::InsecureChannelCredentials()))), "UNAVAILABLE");
}

TEST(TlsTest, MutualTlsNeedsAClientCertificateFromTheClientCa) {
  const Certificates& certs = Certs();
  service::ServerConfig config;
  config.security.tls_cert = certs.a.server_cert;
  config.security.tls_key = certs.a.server_key;
  config.security.tls_client_ca = certs.a.ca_cert;
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->server->port();

  EXPECT_TRUE(ModelInfo(Channel(port, Tls(certs.a.ca_cert, certs.a.client_cert, certs.a.client_key))).ok());
  EXPECT_EQ(Code(ModelInfo(Channel(port, Tls(certs.a.ca_cert)))), "UNAVAILABLE");  // No certificate.
  EXPECT_EQ(Code(ModelInfo(Channel(port, Tls(certs.a.ca_cert, certs.b.client_cert, certs.b.client_key)))),
            "UNAVAILABLE");  // Signed by another CA.
}

// A TLS config whose certificate files (CA a's, at first) live in a folder
// of their own, to be replaced by the test; checked every second.
service::ServerConfig RotatableTlsConfig(const std::string& name) {
  const Certificates& certs = Certs();
  const std::string dir = TestDir(name);
  EXPECT_EQ(system(absl::StrCat("mkdir -p ", dir).c_str()), 0);
  service::ServerConfig config;
  config.security.tls_cert = dir + "/server.pem";
  config.security.tls_key = dir + "/server.key";
  config.security.reload_interval = absl::Seconds(1);
  ReplaceFile(config.security.tls_cert, ReadText(certs.a.server_cert));
  ReplaceFile(config.security.tls_key, ReadText(certs.a.server_key));
  return config;
}

TEST(TlsTest, ARotatedCertificateServesNewConnectionsWithoutARestart) {
  const Certificates& certs = Certs();
  const service::ServerConfig config = RotatableTlsConfig("rotation");
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->server->port();
  ASSERT_TRUE(ModelInfo(Channel(port, Tls(certs.a.ca_cert))).ok());
  ASSERT_EQ(Code(ModelInfo(Channel(port, Tls(certs.b.ca_cert)))), "UNAVAILABLE");

  // As a Secret update does: new files, same paths.
  ReplaceFile(config.security.tls_key, ReadText(certs.b.server_key));
  ReplaceFile(config.security.tls_cert, ReadText(certs.b.server_cert));
  bool rotated = false;
  for (const absl::Time until = absl::Now() + absl::Seconds(30); !rotated && absl::Now() < until;) {
    rotated = ModelInfo(Channel(port, Tls(certs.b.ca_cert))).ok();
  }
  EXPECT_TRUE(rotated) << "new connections never got the new certificate";
  EXPECT_EQ(Code(ModelInfo(Channel(port, Tls(certs.a.ca_cert)))), "UNAVAILABLE");
}

TEST(TlsTest, MissingOrMismatchedSettingsFailAtStartWithTheFlagNamed) {
  const Certificates& certs = Certs();
  service::ServerConfig config;
  config.security.tls_cert = certs.a.server_cert;
  service::Server no_key(config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  absl::Status started = no_key.Start();
  EXPECT_TRUE(absl::IsInvalidArgument(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr("--tls_key"));

  config.security.tls_key = certs.b.server_key;
  config.port = 0;
  config.metrics_port = -1;
  service::Server mismatched(config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  started = mismatched.Start();
  EXPECT_TRUE(absl::IsInvalidArgument(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr("is not the key of"));

  config.security.tls_key = certs.dir + "/no-such.key";
  service::Server missing(config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  started = missing.Start();
  EXPECT_TRUE(absl::IsInvalidArgument(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr("--tls_key"));
  EXPECT_THAT(started.message(), HasSubstr("no-such.key"));

  service::ServerConfig keys_config;
  keys_config.port = 0;
  keys_config.metrics_port = -1;
  keys_config.security.api_keys_file = certs.a.ca_cert + ".absent";
  service::Server no_keys(keys_config, std::make_unique<FakeEngine>(), std::make_shared<prometheus::Registry>());
  started = no_keys.Start();
  EXPECT_TRUE(absl::IsInvalidArgument(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr("--api_keys_file"));
}

// ---- API keys over gRPC -------------------------------------------------

// The status of a reflection request listing the services: UNIMPLEMENTED
// when reflection is not served.
grpc::Status ListServices(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  // ServerReflectionRequest{list_services: ""} (field 7, length 0).
  const char request_bytes[] = {0x3a, 0x00};
  grpc::Slice slice(request_bytes, sizeof(request_bytes));
  grpc::ByteBuffer request(&slice, 1), response;
  auto context = ContextWithDeadline(5);
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", {}, &request,
                 &response, [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

class ApiKeyServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(system(absl::StrCat("mkdir -p ", dir_).c_str()), 0);
    keys_file_ = dir_ + "/keys";
    ReplaceFile(keys_file_, "# rotated monthly\nfirst-key\nsecond-key\n");
  }

  service::ServerConfig Config() const {
    service::ServerConfig config;
    config.security.api_keys_file = keys_file_;
    config.security.reload_interval = absl::Seconds(1);
    return config;
  }

  std::string dir_, keys_file_;
};

TEST_F(ApiKeyServerTest, CallsNeedAValidKeyAndHealthDoesNot) {
  auto server = StartTestServer(std::make_unique<FakeEngine>(), Config());
  ASSERT_TRUE(server.ok()) << server.status();
  const auto& channel = (*server)->channel;

  grpc::Status missing = ModelInfo(channel);
  EXPECT_EQ(Code(missing), "UNAUTHENTICATED");
  EXPECT_THAT(missing.error_message(), HasSubstr("authorization: Bearer <key>"));
  EXPECT_EQ(Code(ModelInfo(channel, "Bearer wrong-key")), "UNAUTHENTICATED");
  EXPECT_EQ(Code(ModelInfo(channel, "Basic Zmlyc3Qta2V5")), "UNAUTHENTICATED");  // No user part.
  EXPECT_EQ(Code(Classify(channel)), "UNAUTHENTICATED");
  EXPECT_TRUE(ModelInfo(channel, "Bearer first-key").ok());
  EXPECT_TRUE(ModelInfo(channel, "bearer second-key").ok());
  EXPECT_TRUE(ModelInfo(channel, "Basic eDpzZWNvbmQta2V5").ok());  // x:second-key
  EXPECT_TRUE(Classify(channel, "Bearer second-key").ok());
  EXPECT_EQ((*server)->HealthStatus(), "SERVING");
  EXPECT_EQ((*server)->HealthStatus("deberta.serving.v1.InferenceService"), "SERVING");

  const std::string metrics =
      prometheus::TextSerializer().Serialize((*server)->server->metrics().registry()->Collect());
  EXPECT_THAT(metrics, HasSubstr("deberta_rejections_total{reason=\"unauthenticated\"} 4"));
}

TEST_F(ApiKeyServerTest, ReflectionIsOffWithKeysUnlessExempted) {
  auto closed = StartTestServer(std::make_unique<FakeEngine>(), Config());
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(Code(ListServices((*closed)->channel)), "UNIMPLEMENTED");

  service::ServerConfig exempt = Config();
  exempt.security.reflection_without_api_key = true;
  auto open = StartTestServer(std::make_unique<FakeEngine>(), exempt);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_TRUE(ListServices((*open)->channel).ok());

  auto plain = StartTestServer(std::make_unique<FakeEngine>(), service::ServerConfig());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(ListServices((*plain)->channel).ok());
}

TEST_F(ApiKeyServerTest, RotatedKeysTakeEffectWithoutARestart) {
  auto server = StartTestServer(std::make_unique<FakeEngine>(), Config());
  ASSERT_TRUE(server.ok()) << server.status();
  const auto& channel = (*server)->channel;
  ASSERT_TRUE(ModelInfo(channel, "Bearer first-key").ok());

  ReplaceFile(keys_file_, "second-key\nthird-key\n");
  bool rotated = false;
  for (const absl::Time until = absl::Now() + absl::Seconds(30); !rotated && absl::Now() < until;) {
    rotated = ModelInfo(channel, "Bearer third-key").ok();
  }
  EXPECT_TRUE(rotated) << "the new key was never accepted";
  EXPECT_EQ(Code(ModelInfo(channel, "Bearer first-key")), "UNAUTHENTICATED");
  EXPECT_TRUE(ModelInfo(channel, "Bearer second-key").ok());
}

// ---- /metrics over HTTPS with a client certificate and the key ----------

// curl's HTTP status code for `url` (000 when no HTTP answer came).
std::string CurlStatus(const std::string& options, const std::string& url) {
  return RunCommand(absl::StrCat("curl -s -o /dev/null -w '%{http_code}' --max-time 10 ", options, " ", url)).output;
}

TEST_F(ApiKeyServerTest, MetricsOverMutualTlsNeedTheClientCertificateAndTheKey) {
  const Certificates& certs = Certs();
  service::ServerConfig config = Config();
  config.metrics_port = 0;
  config.security.tls_cert = certs.a.server_cert;
  config.security.tls_key = certs.a.server_key;
  config.security.tls_client_ca = certs.a.ca_cert;
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string url = absl::StrCat("https://localhost:", (*server)->server->metrics_port(), "/metrics");
  const std::string tls = absl::StrCat("--cacert ", certs.a.ca_cert, " --cert ", certs.a.client_cert, " --key ",
                                       certs.a.client_key);

  EXPECT_EQ(CurlStatus(tls + " -u prometheus:second-key", url), "200");
  EXPECT_EQ(CurlStatus(tls, url), "401");
  EXPECT_EQ(CurlStatus(tls + " -u prometheus:wrong", url), "401");
  EXPECT_EQ(CurlStatus(absl::StrCat("--cacert ", certs.a.ca_cert, " -u prometheus:second-key"), url), "000");
  EXPECT_EQ(CurlStatus("-u prometheus:second-key",
                       absl::StrCat("http://localhost:", (*server)->server->metrics_port(), "/metrics")),
            "000");
}

TEST(MetricsTlsTest, ARotatedCertificateServesNewHttpsConnectionsWithoutARestart) {
  const Certificates& certs = Certs();
  service::ServerConfig config = RotatableTlsConfig("metrics-rotation");
  config.metrics_port = 0;
  auto server = StartTestServer(std::make_unique<FakeEngine>(), config);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string url = absl::StrCat("https://localhost:", (*server)->server->metrics_port(), "/metrics");
  ASSERT_EQ(CurlStatus("--cacert " + certs.a.ca_cert, url), "200");
  ASSERT_EQ(CurlStatus("--cacert " + certs.b.ca_cert, url), "000");

  ReplaceFile(config.security.tls_key, ReadText(certs.b.server_key));
  ReplaceFile(config.security.tls_cert, ReadText(certs.b.server_cert));
  bool rotated = false;
  for (const absl::Time until = absl::Now() + absl::Seconds(30); !rotated && absl::Now() < until;) {
    rotated = CurlStatus("--cacert " + certs.b.ca_cert, url) == "200";
  }
  EXPECT_TRUE(rotated) << "new HTTPS connections never got the new certificate";
  EXPECT_EQ(CurlStatus("--cacert " + certs.a.ca_cert, url), "000");
}

}  // namespace
}  // namespace deberta::testing
