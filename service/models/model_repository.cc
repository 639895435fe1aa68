// Reading a model repository: folders, versions, serving.json.
#include "service/models/model_repository.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deberta::service {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

absl::Status BadKey(const std::string& file, const std::string& key, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": \"", key, "\" ", why));
}

// The integer value of `key`, within [minimum, maximum].
absl::StatusOr<int64_t> IntegerOf(const json& value, const std::string& file, const std::string& key,
                                  int64_t minimum, int64_t maximum = INT64_MAX) {
  if (!value.is_number_integer()) return BadKey(file, key, "must be an integer");
  const int64_t n = value.get<int64_t>();
  if (n < minimum || n > maximum) {
    return BadKey(file, key, absl::StrCat("is ", n, "; it must be in [", minimum, ", ", maximum, "]"));
  }
  return n;
}

absl::StatusOr<std::string> StringOf(const json& value, const std::string& file, const std::string& key) {
  if (!value.is_string()) return BadKey(file, key, "must be a string");
  return value.get<std::string>();
}

// A plain folder name: no separators, not "." or "..", not hidden.
bool IsPlainName(absl::string_view name) {
  return !name.empty() && name[0] != '.' && name.find('/') == absl::string_view::npos &&
         name.find('\\') == absl::string_view::npos;
}

bool IsVersionName(const std::string& name) {
  int64_t n = 0;
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c); }) &&
         absl::SimpleAtoi(name, &n) && n > 0;
}

}  // namespace

absl::StatusOr<ModelSettings> ApplyServingJson(absl::string_view text, const std::string& file,
                                               const ModelSettings& defaults, int64_t* pinned_version) {
  *pinned_version = 0;
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(file, ": not valid JSON"));
  if (!doc.is_object()) return absl::InvalidArgumentError(absl::StrCat(file, ": must be a JSON object"));
  ModelSettings settings = defaults;
  for (const auto& [key, value] : doc.items()) {
    if (std::find_if(std::begin(kServingKeys), std::end(kServingKeys),
                     [&key = key](const char* known) { return key == known; }) == std::end(kServingKeys)) {
      return BadKey(file, key, absl::StrCat("is not a setting (known: ", absl::StrJoin(kServingKeys, ", "), ")"));
    }
    if (key == "version") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1);
      if (!n.ok()) return n.status();
      *pinned_version = *n;
    } else if (key == "dtype") {
      absl::StatusOr<std::string> name = StringOf(value, file, key);
      if (!name.ok()) return name.status();
      absl::StatusOr<model::ComputeDType> dtype = model::ParseComputeDType(*name);
      if (!dtype.ok()) return BadKey(file, key, dtype.status().message());
      settings.engine.dtype = *dtype;
    } else if (key == "device") {
      absl::StatusOr<std::string> device = StringOf(value, file, key);
      if (!device.ok()) return device.status();
      if (*device != "cpu" && device->rfind("cuda", 0) != 0) {
        return BadKey(file, key, absl::StrCat("is '", *device, "'; it must be cpu, cuda or cuda:N (a list with commas)"));
      }
      settings.engine.device = *device;
    } else if (key == "replicas") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1, 64);
      if (!n.ok()) return n.status();
      settings.replicas = static_cast<int>(*n);
    } else if (key == "threads") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1, 1024);
      if (!n.ok()) return n.status();
      settings.engine.num_threads = static_cast<int>(*n);
      settings.threads_set = true;
    } else if (key == "max_batch_size") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1, 1 << 20);
      if (!n.ok()) return n.status();
      settings.batcher.max_batch_size = static_cast<size_t>(*n);
    } else if (key == "max_batch_tokens") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1);
      if (!n.ok()) return n.status();
      settings.batcher.max_batch_tokens = *n;
    } else if (key == "max_queue_size") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1);
      if (!n.ok()) return n.status();
      settings.batcher.max_enqueued_tasks = static_cast<size_t>(*n);
    } else if (key == "batch_timeout_ms") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 0, 60'000);
      if (!n.ok()) return n.status();
      settings.batcher.batch_timeout = absl::Milliseconds(*n);
    } else if (key == "max_sequence_length") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 0);
      if (!n.ok()) return n.status();
      settings.engine.max_sequence_length = *n;
    } else if (key == "warmup_shapes") {
      absl::StatusOr<std::string> text = StringOf(value, file, key);
      if (!text.ok()) return text.status();
      absl::StatusOr<std::vector<model::BatchShape>> shapes = model::ParseShapes(*text);
      if (!shapes.ok()) return BadKey(file, key, shapes.status().message());
      settings.engine.warmup_shapes = *shapes;
    } else if (key == "max_windows") {
      absl::StatusOr<int64_t> n = IntegerOf(value, file, key, 1, 1 << 16);
      if (!n.ok()) return n.status();
      settings.requests.max_windows = static_cast<int>(*n);
    } else if (key == "truncate") {
      if (!value.is_boolean()) return BadKey(file, key, "must be true or false");
      settings.requests.truncate = value.get<bool>();
    }
  }
  // The warm-up's largest batch follows this model's batch limits.
  if (settings.engine.warmup_batch_tokens > 0) {
    settings.engine.warmup_batch_tokens = settings.batcher.max_batch_tokens;
    settings.engine.warmup_max_batch_size = static_cast<int64_t>(settings.batcher.max_batch_size);
  }
  return settings;
}

absl::StatusOr<ModelSource> ResolveVersion(const std::string& name, const std::string& model_folder,
                                           int64_t pinned) {
  ModelSource source;
  source.name = name;
  std::error_code error;
  int64_t highest = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(model_folder, error)) {
    const std::string child = entry.path().filename().string();
    int64_t n = 0;
    if (entry.is_directory() && IsVersionName(child) && absl::SimpleAtoi(child, &n)) highest = std::max(highest, n);
  }
  if (error) return absl::NotFoundError(absl::StrCat("cannot read the model folder ", model_folder, ": ", error.message()));
  if (pinned > 0) {
    source.version = pinned;
    source.folder = (fs::path(model_folder) / std::to_string(pinned)).string();
    if (!fs::is_directory(source.folder)) {
      return absl::NotFoundError(absl::StrCat("model ", name, ": serving.json pins version ", pinned, " but ",
                                              source.folder, " does not exist"));
    }
  } else if (highest > 0) {
    source.version = highest;
    source.folder = (fs::path(model_folder) / std::to_string(highest)).string();
  } else if (fs::exists(fs::path(model_folder) / "config.json")) {
    source.version = 1;
    source.folder = model_folder;
  } else {
    return absl::NotFoundError(absl::StrCat("model ", name, ": ", model_folder,
                                            " has neither config.json nor numbered version folders (1/, 2/, ...)"));
  }
  return source;
}

absl::StatusOr<ModelSource> ReadModel(const std::string& repository, const std::string& name,
                                      const ModelSettings& defaults) {
  if (!IsPlainName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a model name (a folder of the repository)"));
  }
  const fs::path folder = fs::path(repository) / name;
  if (!fs::is_directory(folder)) {
    return absl::NotFoundError(absl::StrCat("the repository ", repository, " has no model folder '", name, "'"));
  }
  ModelSettings settings = defaults;
  int64_t pinned = 0;
  const fs::path serving = folder / "serving.json";
  if (fs::exists(serving)) {
    std::ifstream in(serving);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", serving.string()));
    absl::StatusOr<ModelSettings> applied = ApplyServingJson(text.str(), serving.string(), defaults, &pinned);
    if (!applied.ok()) return applied.status();
    settings = *std::move(applied);
  }
  absl::StatusOr<ModelSource> source = ResolveVersion(name, folder.string(), pinned);
  if (!source.ok()) return source.status();
  source->settings = std::move(settings);
  source->settings.engine.model = source->folder;
  return source;
}

absl::StatusOr<std::vector<std::string>> ListModelNames(const std::string& repository) {
  std::error_code error;
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(repository, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && IsPlainName(name)) names.push_back(name);
  }
  if (error) return absl::NotFoundError(absl::StrCat("cannot read the model repository ", repository, ": ", error.message()));
  std::sort(names.begin(), names.end());
  return names;
}

std::string FolderStamp(const std::string& folder) {
  std::vector<std::string> parts;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    std::error_code ignored;
    const auto size = entry.is_regular_file(ignored) ? entry.file_size(ignored) : 0;
    const auto time = entry.last_write_time(ignored).time_since_epoch().count();
    parts.push_back(absl::StrCat(entry.path().filename().string(), ":", size, ":", time));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<std::vector<ModelSource>> ScanRepository(const std::string& repository,
                                                        const ModelSettings& defaults) {
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(repository);
  if (!names.ok()) return names.status();
  std::vector<ModelSource> models;
  for (const std::string& name : *names) {
    absl::StatusOr<ModelSource> source = ReadModel(repository, name, defaults);
    if (!source.ok()) return source.status();
    models.push_back(*std::move(source));
  }
  return models;
}

absl::Status DivideThreads(std::vector<ModelSource>& models, int cores, bool allow_oversubscription) {
  int claimed = 0;
  int sharing = 0;
  std::vector<std::string> described;
  for (const ModelSource& m : models) {
    if (m.settings.engine.device != "cpu") continue;
    if (m.settings.threads_set) {
      claimed += m.settings.engine.num_threads;
      described.push_back(absl::StrCat(m.name, " ", m.settings.engine.num_threads));
    } else {
      ++sharing;
    }
  }
  const int left = cores - claimed;
  if (!allow_oversubscription && (left < 0 || (sharing > 0 && left < sharing))) {
    std::vector<std::string> parts;
    if (!described.empty()) parts.push_back(absl::StrCat("threads set: ", absl::StrJoin(described, ", ")));
    if (sharing > 0) parts.push_back(absl::StrCat(sharing, " more models that need at least one each"));
    return absl::InvalidArgumentError(absl::StrCat(
        "the models' CPU threads (", absl::StrJoin(parts, "; "), ") exceed the ", cores,
        " cores the server may use (--threads); lower their serving.json \"threads\", raise --threads, or "
        "start with --allow_thread_oversubscription"));
  }
  int index = 0;
  for (ModelSource& m : models) {
    if (m.settings.engine.device != "cpu" || m.settings.threads_set) continue;
    // The first ones get one more when the rest does not divide equally.
    const int share = sharing > 0 ? std::max(1, left / sharing + (index < left % sharing ? 1 : 0)) : 1;
    m.settings.engine.num_threads = share;
    ++index;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseMemorySize(absl::string_view text) {
  std::string s(absl::StripAsciiWhitespace(text));
  static const std::pair<const char*, double> kUnits[] = {
      {"GiB", 1024.0 * 1024 * 1024}, {"MiB", 1024.0 * 1024}, {"KiB", 1024.0}, {"G", 1024.0 * 1024 * 1024},
      {"M", 1024.0 * 1024}, {"K", 1024.0}, {"B", 1.0}};
  double scale = 1;
  for (const auto& [suffix, factor] : kUnits) {
    const std::string unit = suffix;
    if (s.size() > unit.size() && s.compare(s.size() - unit.size(), unit.size(), unit) == 0) {
      s.resize(s.size() - unit.size());
      scale = factor;
      break;
    }
  }
  double value = 0;
  if (!absl::SimpleAtod(s, &value) || value < 0 || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a memory size (bytes, or a number with K, M, G, KiB, MiB or GiB)"));
  }
  return static_cast<int64_t>(value * scale);
}

}  // namespace deberta::service
