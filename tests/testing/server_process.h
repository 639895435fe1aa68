// ServerProcess: the real deberta-server binary as a child process, its
// standard output on a pipe (the banner names the ports it bound).
#ifndef DEBERTA_TESTS_TESTING_SERVER_PROCESS_H_
#define DEBERTA_TESTS_TESTING_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace deberta::testing {

class ServerProcess {
 public:
  // Starts `binary` with `flags`; false if it could not be spawned.
  bool Start(const std::string& binary, const std::vector<std::string>& flags);
  // The next line the server prints ("" at end of file).
  std::string ReadLine();
  int Signal(int signal);
  // Exit status as waitpid reports it.
  int Wait();
  // Kills the process if it is still running.
  ~ServerProcess();

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
};

// The gRPC and metrics ports of a banner line ("... :PORT, metrics on
// :PORT"); false if the line is not one.
bool ParseBannerPorts(const std::string& banner, int* port, int* metrics_port);
// The HTTP/JSON API's port of a banner line ("..., http on :PORT"); false
// if the line names none.
bool ParseBannerHttpPort(const std::string& banner, int* http_port);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_SERVER_PROCESS_H_
