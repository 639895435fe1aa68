// Abseil's mutex deadlock detector, set once per process to match how our
// code is compiled (see ConfigureMutexDeadlockDetection).
#ifndef DEBERTA_SERVICE_MUTEX_DEADLOCK_DETECTION_H_
#define DEBERTA_SERVICE_MUTEX_DEADLOCK_DETECTION_H_

namespace deberta::service {

// Turns abseil's deadlock detector off in release (NDEBUG) builds, as
// abseil's own release builds do. Call first thing in main, before any
// absl::Mutex (ours or gRPC's) is locked.
//
// Why: Debian builds abseil without NDEBUG, so the library keeps a
// process-wide lock-order graph and aborts on a cycle. From abseil 2023 on
// (Debian 13's 20240722) a Mutex destructor compiled with NDEBUG is empty
// and inlined into our code, so a destroyed mutex is never removed from
// that graph; a new mutex at the same address inherits its edges, and the
// detector aborts the process on an order that never existed (a server
// creates and destroys mutexes with every call). Debug builds keep the
// library's default: their destructors do remove themselves.
void ConfigureMutexDeadlockDetection();

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_MUTEX_DEADLOCK_DETECTION_H_
