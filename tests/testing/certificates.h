// Test certificates made at test time with the openssl command: two CAs,
// a server certificate for localhost/127.0.0.1 from each, and a client
// certificate from each (for mutual TLS).
#ifndef DEBERTA_TESTS_TESTING_CERTIFICATES_H_
#define DEBERTA_TESTS_TESTING_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"

namespace deberta::testing {

// The PEM files of one CA and what it signed.
struct IssuedFiles {
  std::string ca_cert;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
};

struct Certificates {
  std::string dir;
  IssuedFiles a, b;  // Two independent CAs.
};

// Writes both sets under `dir` (created). Errors carry openssl's output.
absl::StatusOr<Certificates> MakeCertificates(const std::string& dir);

// The whole text of a file ("" if unreadable).
std::string ReadText(const std::string& path);
// Writes `text` to `path` through a rename, so readers see old or new.
void ReplaceFile(const std::string& path, const std::string& text);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_CERTIFICATES_H_
