// HttpGet: a minimal HTTP/1.0 GET over loopback, for scraping /metrics in
// tests without an HTTP client library.
#ifndef DEBERTA_TESTS_TESTING_HTTP_GET_H_
#define DEBERTA_TESTS_TESTING_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"

namespace deberta::testing {

// Returns the body of a 200 answer from http://127.0.0.1:`port``path`;
// any other status line is an error.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_HTTP_GET_H_
