// The deberta-server binary with TLS, mutual TLS and API keys from its
// flags, called by deberta-cli with its --tls_* and --api_key flags, and
// /metrics scraped with curl: certificates made by openssl at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tests/testing/certificates.h"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

using ::testing::HasSubstr;

TEST(SecureCliTest, MutualTlsAndApiKeysFromFlagsEndToEnd) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/deberta-secure-cli-", getpid());
  absl::StatusOr<Certificates> certs = MakeCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  const std::string keys = dir + "/api-keys";
  ReplaceFile(keys, "cli-test-key\n");

  ServerProcess server;
  ASSERT_TRUE(server.Start(DEBERTA_SERVER_BINARY,
                           {"--model=demo", "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0",
                            "--threads=1", "--tls_cert=" + certs->a.server_cert, "--tls_key=" + certs->a.server_key,
                            "--tls_client_ca=" + certs->a.ca_cert, "--api_keys_file=" + keys}));
  const std::string banner = server.ReadLine();
  int port = 0, metrics_port = 0;
  ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port)) << banner;

  const std::string cli = absl::StrCat(DEBERTA_CLI_BINARY, " info --server=localhost:", port);
  const std::string tls = absl::StrCat(" --tls_ca=", certs->a.ca_cert, " --tls_cert=", certs->a.client_cert,
                                       " --tls_key=", certs->a.client_key);
  CommandResult ok = RunCommand(cli + tls + " --api_key=cli-test-key");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("demo"));
  CommandResult from_env = RunCommand("DEBERTA_API_KEY=cli-test-key " + cli + tls);
  EXPECT_EQ(from_env.exit_code, 0) << from_env.output;

  CommandResult no_key = RunCommand(cli + tls);
  EXPECT_NE(no_key.exit_code, 0);
  EXPECT_THAT(no_key.output, HasSubstr("API key"));
  CommandResult no_client_cert = RunCommand(cli + " --tls_ca=" + certs->a.ca_cert + " --api_key=cli-test-key");
  EXPECT_NE(no_client_cert.exit_code, 0) << no_client_cert.output;
  CommandResult plaintext = RunCommand(cli + " --api_key=cli-test-key");
  EXPECT_NE(plaintext.exit_code, 0) << plaintext.output;
  // Health needs no key (probes), but still the client certificate.
  CommandResult health = RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " health --server=localhost:", port, tls));
  EXPECT_EQ(health.exit_code, 0) << health.output;

  const std::string curl = absl::StrCat("curl -sS -o /dev/null -w '%{http_code}' --cacert ", certs->a.ca_cert,
                                        " --cert ", certs->a.client_cert, " --key ", certs->a.client_key,
                                        " https://localhost:", metrics_port, "/metrics");
  EXPECT_EQ(RunCommand(curl + " -H 'Authorization: Bearer cli-test-key'").output, "200");
  EXPECT_EQ(RunCommand(curl).output, "401");

  ASSERT_EQ(server.Signal(SIGTERM), 0);
  const int status = server.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace deberta::testing
