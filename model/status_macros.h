// Early-return helpers for absl::Status / absl::StatusOr, in the style of
// abseil's internal macros (which Debian's Abseil does not export).
#ifndef DEBERTA_MODEL_STATUS_MACROS_H_
#define DEBERTA_MODEL_STATUS_MACROS_H_

#include "absl/status/status.h"

#define DEBERTA_STATUS_CONCAT_INNER(a, b) a##b
#define DEBERTA_STATUS_CONCAT(a, b) DEBERTA_STATUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define DEBERTA_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    ::absl::Status _deberta_status = (expr);          \
    if (!_deberta_status.ok()) return _deberta_status; \
  } while (0)

// `lhs = value of expr`, or returns its status. `lhs` may declare a variable.
#define DEBERTA_ASSIGN_OR_RETURN(lhs, expr) \
  DEBERTA_ASSIGN_OR_RETURN_IMPL(DEBERTA_STATUS_CONCAT(_deberta_or_, __LINE__), lhs, expr)
#define DEBERTA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = *std::move(tmp)

#endif  // DEBERTA_MODEL_STATUS_MACROS_H_
