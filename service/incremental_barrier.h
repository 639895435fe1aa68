// IncrementalBarrier: runs a callback once every one of a dynamic number of
// parallel pieces of work has finished, in the manner of TF Serving's
// batching/incremental_barrier.h. A request's sequences run as separate
// batch tasks; the barrier answers the request after the last one.
//
//   {
//     IncrementalBarrier barrier([call] { call->Finish(); });
//     for (task : tasks) task->done = [piece = barrier.Inc()](...) { ...; piece(); };
//     Schedule(tasks);
//   }  // From here `done` may run at once, on this thread or another.
//
// The callback runs after the barrier is destroyed and every callback from
// Inc() has been called, on the thread that made the last of these.
#ifndef DEBERTA_SERVICE_INCREMENTAL_BARRIER_H_
#define DEBERTA_SERVICE_INCREMENTAL_BARRIER_H_

#include <atomic>
#include <functional>
#include <memory>

namespace deberta::service {

// Inc() is not thread-safe against the destructor (both belong to the
// owner); the callbacks it returns may be called from any thread.
class IncrementalBarrier {
 public:
  explicit IncrementalBarrier(std::function<void()> done_callback);
  // Releases the owner's hold: the done callback runs now if every piece
  // has already finished.
  ~IncrementalBarrier();
  IncrementalBarrier(const IncrementalBarrier&) = delete;
  IncrementalBarrier& operator=(const IncrementalBarrier&) = delete;

  // One more piece of work. The returned callback must be called at most
  // once; one that is destroyed uncalled keeps the done callback from ever
  // running (as when work that was never scheduled is dropped: its owner
  // then answers by other means).
  std::function<void()> Inc();

 private:
  struct State {
    explicit State(std::function<void()> done) : done_callback(std::move(done)) {}
    void Release() {
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) done_callback();
    }
    std::atomic<int> pending{1};  // The owner's hold plus one per Inc().
    std::function<void()> done_callback;
  };
  std::shared_ptr<State> state_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INCREMENTAL_BARRIER_H_
