// One request with the curl command.
#include "tests/testing/curl.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tests/testing/run_command.h"

namespace deberta::testing {

HttpAnswer Curl(int port, const std::string& method, const std::string& path, const std::string& body,
                const std::string& extra) {
  // The status code on a last line of its own, after the body.
  std::string command = absl::StrCat("curl -s -w '\\n%{http_code}' -X ", method, " ", extra);
  if (!body.empty()) absl::StrAppend(&command, " -H 'Content-Type: application/json' --data-raw '", body, "'");
  absl::StrAppend(&command, " 'http://127.0.0.1:", port, path, "'");
  const std::string output = RunCommand(command).output;
  HttpAnswer answer;
  const size_t newline = output.rfind('\n');
  answer.body = output.substr(0, newline);
  answer.status = std::atoi(output.substr(newline + 1).c_str());
  return answer;
}

}  // namespace deberta::testing
