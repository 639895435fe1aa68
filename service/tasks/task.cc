// Helpers every task file may use.
#include "service/tasks/task.h"

#include <algorithm>
#include <numeric>

namespace deberta::service {

std::vector<int> OrderByScore(const std::vector<float>& scores) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace deberta::service
