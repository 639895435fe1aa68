// Test certificates from the openssl command line.
#include "tests/testing/certificates.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/testing/run_command.h"

namespace deberta::testing {
namespace {

// Runs a shell command; its output is the error's message on failure.
absl::Status Run(const std::string& command) {
  const CommandResult result = RunCommand(command);
  if (result.exit_code == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(command, " failed (", result.exit_code, "): ", result.output));
}

// A CA named `name` under `dir`, and a server and a client certificate.
absl::StatusOr<IssuedFiles> Issue(const std::string& dir, const std::string& name) {
  const std::string p = absl::StrCat(dir, "/", name);
  IssuedFiles files{p + "-ca.pem", p + "-server.pem", p + "-server.key", p + "-client.pem", p + "-client.key"};
  const std::string ext = p + "-server.ext";
  {
    std::ofstream out(ext);
    out << "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
  }
  const std::string client_ext = p + "-client.ext";
  {
    std::ofstream out(client_ext);
    out << "extendedKeyUsage=clientAuth\n";
  }
  const std::string key_opts = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  for (const std::string& command : {
           absl::StrCat("openssl req -x509 ", key_opts, " -days 2 -subj /CN=test-ca-", name, " -keyout ", p,
                        "-ca.key -out ", files.ca_cert),
           absl::StrCat("openssl req ", key_opts, " -subj /CN=localhost -keyout ", files.server_key, " -out ", p,
                        "-server.csr"),
           absl::StrCat("openssl x509 -req -in ", p, "-server.csr -CA ", files.ca_cert, " -CAkey ", p,
                        "-ca.key -CAcreateserial -days 2 -extfile ", ext, " -out ", files.server_cert),
           absl::StrCat("openssl req ", key_opts, " -subj /CN=test-client-", name, " -keyout ", files.client_key,
                        " -out ", p, "-client.csr"),
           absl::StrCat("openssl x509 -req -in ", p, "-client.csr -CA ", files.ca_cert, " -CAkey ", p,
                        "-ca.key -CAcreateserial -days 2 -extfile ", client_ext, " -out ", files.client_cert)}) {
    if (absl::Status s = Run(command); !s.ok()) return s;
  }
  return files;
}

}  // namespace

absl::StatusOr<Certificates> MakeCertificates(const std::string& dir) {
  if (absl::Status s = Run(absl::StrCat("mkdir -p ", dir)); !s.ok()) return s;
  Certificates certificates;
  certificates.dir = dir;
  absl::StatusOr<IssuedFiles> a = Issue(dir, "a");
  if (!a.ok()) return a.status();
  absl::StatusOr<IssuedFiles> b = Issue(dir, "b");
  if (!b.ok()) return b.status();
  certificates.a = *a;
  certificates.b = *b;
  return certificates;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ReplaceFile(const std::string& path, const std::string& text) {
  const std::string staging = path + ".new";
  {
    std::ofstream out(staging);
    out << text;
  }
  std::rename(staging.c_str(), path.c_str());
}

}  // namespace deberta::testing
