// ServerProcess: posix_spawn with stdout on a pipe.
#include "tests/testing/server_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

extern char** environ;

namespace deberta::testing {

bool ServerProcess::Start(const std::string& binary, const std::vector<std::string>& flags) {
  int out[2];
  if (pipe(out) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args{binary};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int error = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (error != 0) return false;
  stdout_ = fdopen(out[0], "r");
  return stdout_ != nullptr;
}

std::string ServerProcess::ReadLine() {
  char line[1024];
  return fgets(line, sizeof(line), stdout_) ? std::string(line) : std::string();
}

int ServerProcess::Signal(int signal) { return kill(pid_, signal); }

int ServerProcess::Wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Wait();
  }
  if (stdout_) fclose(stdout_);
}

bool ParseBannerPorts(const std::string& banner, int* port, int* metrics_port) {
  std::smatch ports;
  if (!std::regex_search(banner, ports, std::regex(R"(:(\d+), metrics on :(\d+))"))) return false;
  *port = std::stoi(ports[1]);
  *metrics_port = std::stoi(ports[2]);
  return true;
}

bool ParseBannerHttpPort(const std::string& banner, int* http_port) {
  std::smatch port;
  if (!std::regex_search(banner, port, std::regex(R"(http on :(\d+))"))) return false;
  *http_port = std::stoi(port[1]);
  return true;
}

}  // namespace deberta::testing
