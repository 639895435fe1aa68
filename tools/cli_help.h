// `deberta-cli COMMAND --help`: the flags that COMMAND reads, from the
// command lists that begin each flag's help text ("classify, fill-mask:
// ..."; "client: ..." for every command that calls a server; "engine: ..."
// for every command that loads a model). Also keeps absl's --helpfull free
// of the build machine's source paths.
#ifndef DEBERTA_TOOLS_CLI_HELP_H_
#define DEBERTA_TOOLS_CLI_HELP_H_

#include <string>

namespace deberta::tools {

// Exit codes of deberta-cli.
inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;  // The server answered an error (or NOT_SERVING).
inline constexpr int kExitUsage = 2;        // Bad command line or input.
inline constexpr int kExitConnection = 3;   // The server could not be reached (UNAVAILABLE, deadline).

// Installs the usage configuration (file names relative to the source
// tree); before absl::ParseCommandLine.
void ConfigureHelp();

// The usage message: every command with a line on what it does.
std::string Usage();

// The help text of `command`: what it does and each flag it reads with its
// default. Empty for an unknown command.
std::string CommandHelp(const std::string& command);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_CLI_HELP_H_
