// FileWatcher: calls back when any of a set of files changes (its
// modification time, size or inode), checked on its own thread at a fixed
// interval. Credentials on Kubernetes are Secret volumes, updated by an
// atomic symlink swap, so polling stat() sees every update; inotify would
// need to follow the symlinks.
#ifndef DEBERTA_SERVICE_FILE_WATCHER_H_
#define DEBERTA_SERVICE_FILE_WATCHER_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deberta::service {

class FileWatcher {
 public:
  // Starts watching at once; the files' current state is the baseline, so
  // `on_change` runs only after a later change. A file that disappears or
  // reappears is a change.
  FileWatcher(std::vector<std::string> paths, absl::Duration interval, std::function<void()> on_change);
  // Stops the thread; `on_change` is not running once this returns.
  ~FileWatcher();

  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

 private:
  struct FileState {
    bool exists = false;
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileState& other) const;
  };
  static FileState Stat(const std::string& path);
  std::vector<FileState> StatAll() const;
  void Run();

  const std::vector<std::string> paths_;
  const absl::Duration interval_;
  const std::function<void()> on_change_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<FileState> last_;  // Only the thread touches it after start.
  std::thread thread_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_FILE_WATCHER_H_
