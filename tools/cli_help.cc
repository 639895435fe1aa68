// Per-command help from the flags' own help texts.
#include "tools/cli_help.h"

#include <algorithm>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deberta::tools {
namespace {

struct Command {
  const char* name;
  const char* summary;
  bool calls_server;
  bool loads_model;
};

constexpr Command kCommands[] = {
    {"run", "offline: run a golden-format batch and write its tensors", false, true},
    {"make-random-model", "write a random-weight checkpoint of a real size (benchmarks)", false, false},
    {"convert", "write DIR/model.safetensors from pytorch_model.bin (--model DIR)", false, true},
    {"tokenize", "--model DIR --jsonl: the checkpoint's tokenizer offline; --text: a server's tokenization", true, true},
    {"classify", "classify --sequences (token ids) or --text [--text_pair] on a server", true, false},
    {"fill-mask", "predict masked tokens of --sequences [--positions] or --text with [MASK]", true, false},
    {"zero-shot", "zero-shot classification of --text over --labels (NLI checkpoints)", true, false},
    {"classify-tokens", "entities of --text (or --sequences) from a token classifier (NER, PII)", true, false},
    {"rerank", "order --documents by relevance to --query with a reranker (cross-encoder)", true, false},
    {"info", "print the served model's description (every field, zeros included)", true, false},
    {"health", "query the gRPC health service; exit 0 only when SERVING", true, false},
    {"models", "list the server's models: name, version, state, task, device, dtype", true, false},
    {"load-model", "load --model_name from the server's repository, or swap in its newest version (admin key)", true, false},
    {"unload-model", "unload --model_name after answering its accepted calls (admin key)", true, false},
    {"bench", "load-test a server", true, false},
    {"engine-bench", "the same load on the engine alone, in batches", false, true},
};

const Command* Find(const std::string& name) {
  for (const Command& command : kCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

// The parts of `help` ("a, b: text; c: text") that apply to `command`.
std::vector<std::string> PartsFor(const Command& command, absl::string_view help) {
  std::vector<std::string> parts;
  for (absl::string_view segment : absl::StrSplit(help, "; ")) {
    const size_t colon = segment.find(": ");
    if (colon == absl::string_view::npos) continue;
    for (absl::string_view name : absl::StrSplit(segment.substr(0, colon), ", ")) {
      if (name == command.name || (name == "client" && command.calls_server)) {
        parts.emplace_back(segment.substr(colon + 2));
        break;
      }
    }
  }
  return parts;
}

}  // namespace

void ConfigureHelp() {
  absl::FlagsUsageConfig config;
  // "tools/client_commands.cc", not the build machine's absolute path.
  config.normalize_filename = [](absl::string_view file) {
    for (absl::string_view root : {"tools/", "model/", "service/"}) {
      const size_t at = file.rfind(root);
      if (at != absl::string_view::npos) return std::string(file.substr(at));
    }
    return std::string(file);
  };
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StartsWith(file, "tools/") || absl::StartsWith(file, "model/engine_flags");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);
}

std::string CommandHelp(const std::string& name) {
  const Command* command = Find(name);
  if (command == nullptr) return "";
  std::vector<std::string> lines;
  for (const auto& [flag_name, flag] : absl::GetAllFlags()) {
    const std::string file = flag->Filename();
    std::vector<std::string> parts;
    if (command->loads_model && absl::StrContains(file, "model/engine_flags")) {
      parts.push_back(flag->Help());
    } else if (absl::StrContains(file, "tools/")) {
      parts = PartsFor(*command, flag->Help());
    }
    if (parts.empty()) continue;
    lines.push_back(absl::StrCat("  --", flag_name, " (default ", flag->DefaultValue().empty() ? "''" : flag->DefaultValue(),
                                 "): ", absl::StrJoin(parts, "; ")));
  }
  std::sort(lines.begin(), lines.end());
  return absl::StrCat("deberta-cli ", command->name, ": ", command->summary, "\n\nflags:\n", absl::StrJoin(lines, "\n"),
                      "\n\nexit codes: 0 ok, 1 server error, 2 usage or input error, 3 server unreachable\n");
}

std::string Usage() {
  std::string usage = "deberta-cli COMMAND [flags]   (deberta-cli COMMAND --help: that command's flags)\n";
  for (const Command& command : kCommands) {
    absl::StrAppend(&usage, "  ", command.name, std::string(19 - std::string(command.name).size(), ' '),
                    command.summary, "\n");
  }
  return usage;
}

}  // namespace deberta::tools
