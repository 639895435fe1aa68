// Opening the SentencePiece plugin (see the header for why it is one).
#include "model/sentencepiece_model.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

namespace deberta::model {
namespace {

constexpr char kPluginName[] = "libdeberta_sentencepiece.so";
using Factory = SentencePieceModel* (*)();

std::vector<std::string> Candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("DEBERTA_SENTENCEPIECE_PLUGIN")) paths.emplace_back(env);
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    paths.push_back((exe.parent_path() / kPluginName).string());
    paths.push_back((exe.parent_path() / ".." / "lib" / "deberta-serve" / kPluginName).string());
  }
#ifdef DEBERTA_SENTENCEPIECE_PLUGIN_DIR
  paths.push_back(std::string(DEBERTA_SENTENCEPIECE_PLUGIN_DIR) + "/" + kPluginName);
#endif
  return paths;
}

// Opens the plugin once per process; the handle is never closed.
Factory LoadFactory(std::string* error) {
  static std::once_flag once;
  static Factory factory = nullptr;
  static std::string load_error;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : Candidates()) {
      if (!std::filesystem::exists(path)) continue;
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (handle == nullptr) {
        tried += std::string(" ") + dlerror();
        continue;
      }
      factory = reinterpret_cast<Factory>(dlsym(handle, "deberta_new_sentencepiece_model"));
      if (factory != nullptr) return;
      tried += " " + path + " has no deberta_new_sentencepiece_model";
    }
    load_error = std::string("cannot open the SentencePiece plugin ") + kPluginName +
                 (tried.empty() ? " (not found; set DEBERTA_SENTENCEPIECE_PLUGIN)" : ":" + tried);
  });
  if (factory == nullptr) *error = load_error;
  return factory;
}

}  // namespace

std::unique_ptr<SentencePieceModel> NewSentencePieceModel(std::string* error) {
  Factory factory = LoadFactory(error);
  return factory == nullptr ? nullptr : std::unique_ptr<SentencePieceModel>(factory());
}

}  // namespace deberta::model
