// FileWatcher: stat() polling on one thread.
#include "service/file_watcher.h"

#include <sys/stat.h>

namespace deberta::service {

bool FileWatcher::FileState::operator==(const FileState& other) const {
  return exists == other.exists && inode == other.inode && size == other.size && mtime_ns == other.mtime_ns;
}

FileWatcher::FileState FileWatcher::Stat(const std::string& path) {
  struct stat st {};
  FileState state;
  if (::stat(path.c_str(), &st) != 0) return state;  // stat() follows symlinks.
  state.exists = true;
  state.inode = st.st_ino;
  state.size = st.st_size;
  state.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return state;
}

std::vector<FileWatcher::FileState> FileWatcher::StatAll() const {
  std::vector<FileState> states;
  states.reserve(paths_.size());
  for (const std::string& path : paths_) states.push_back(Stat(path));
  return states;
}

FileWatcher::FileWatcher(std::vector<std::string> paths, absl::Duration interval, std::function<void()> on_change)
    : paths_(std::move(paths)), interval_(interval), on_change_(std::move(on_change)), last_(StatAll()) {
  thread_ = std::thread([this] { Run(); });
}

FileWatcher::~FileWatcher() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void FileWatcher::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // Woken early only by the destructor.
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), interval_)) return;
    }
    std::vector<FileState> now = StatAll();
    if (now == last_) continue;
    last_ = std::move(now);
    on_change_();
  }
}

}  // namespace deberta::service
