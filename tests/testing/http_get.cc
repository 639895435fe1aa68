// HttpGet over a plain socket: send, read to EOF, split off the headers.
#include "tests/testing/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deberta::testing {

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A server that never answers fails the call after 20 s instead of hanging the test.
  timeval timeout{/*tv_sec=*/20, /*tv_usec=*/0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to 127.0.0.1:", port));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::InternalError("short write");
  }
  std::string answer;
  char buffer[16384];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) answer.append(buffer, n);
  close(fd);
  const size_t body = answer.find("\r\n\r\n");
  if (!absl::StartsWith(answer, "HTTP/1.") || body == std::string::npos) {
    return absl::InternalError(absl::StrCat("not an HTTP answer: ", answer.substr(0, 80)));
  }
  const std::string status_line = answer.substr(0, answer.find("\r\n"));
  if (!absl::StrContains(status_line, " 200")) return absl::InternalError(status_line);
  return answer.substr(body + 4);
}

}  // namespace deberta::testing
