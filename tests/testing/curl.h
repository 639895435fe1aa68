// curl as an HTTP client for tests: the status and the body of one request,
// so that a test sees the bytes a real client sends and receives.
#ifndef DEBERTA_TESTS_TESTING_CURL_H_
#define DEBERTA_TESTS_TESTING_CURL_H_

#include <string>

namespace deberta::testing {

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// `method` `path` on 127.0.0.1:`port`; a non-empty `body` goes as JSON;
// `extra` is more curl arguments (headers: "-H 'Name: value'").
HttpAnswer Curl(int port, const std::string& method, const std::string& path, const std::string& body = "",
                const std::string& extra = "");

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_CURL_H_
