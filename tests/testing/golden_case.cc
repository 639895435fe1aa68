// Golden case access for the model tests.
#include "tests/testing/golden_case.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "nlohmann/json.hpp"

namespace deberta::testing {
namespace {

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

at::Tensor Matrix(const nlohmann::json& rows) {
  const int64_t b = rows.size(), l = rows[0].size();
  at::Tensor t = at::zeros({b, l}, at::kLong);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < l; ++j) t[i][j] = rows[i][j].get<int64_t>();
  }
  return t;
}

}  // namespace

std::string GoldenDir() { return DEBERTA_GOLDEN_DIR; }

std::vector<std::string> GoldenCaseNames() {
  std::vector<std::string> names;
  const nlohmann::json cases = ReadJson(GoldenDir() + "/cases.json");
  for (const auto& c : cases["cases"]) {
    names.push_back(c["name"].get<std::string>());
  }
  return names;
}

GoldenInputs ReadGoldenInputs(const std::string& case_name) {
  nlohmann::json j = ReadJson(GoldenDir() + "/" + case_name + "/inputs.json");
  GoldenInputs in;
  in.input_ids = Matrix(j["input_ids"]);
  in.attention_mask = Matrix(j["attention_mask"]).to(at::kFloat);
  in.lengths = j["lengths"].get<std::vector<int64_t>>();
  for (const auto& p : j["masked_positions"]) {
    in.masked_positions.emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
  }
  in.mask_id = j["special_token_ids"]["mask"].get<int64_t>();
  return in;
}

GoldenExpected::GoldenExpected(const std::string& case_name) {
  auto file = model::SafetensorsFile::Open(GoldenDir() + "/" + case_name + "/expected.safetensors");
  if (!file.ok()) throw std::runtime_error(std::string(file.status().message()));
  file_ = *std::move(file);
}

at::Tensor GoldenExpected::Get(const std::string& name) const {
  model::TensorView view = *file_->Get(name);
  const at::ScalarType dtype = view.dtype == model::TensorDType::kI64 ? at::kLong : at::kFloat;
  return at::from_blob(const_cast<uint8_t*>(view.data), view.shape, dtype).clone();
}

Comparison CompareTensors(const at::Tensor& got, const at::Tensor& expected, double atol,
                          double rtol, const at::Tensor& row_mask) {
  at::Tensor g = got.to(at::kCPU, at::kDouble), e = expected.to(at::kDouble);
  Comparison c;
  if (g.sizes() != e.sizes()) {
    c.max_excess = 1e30;
    return c;
  }
  at::Tensor diff = (g - e).abs();
  at::Tensor excess = diff - (atol + rtol * e.abs());
  if (row_mask.defined() && g.dim() >= 2 && g.size(0) == row_mask.size(0) &&
      g.size(1) == row_mask.size(1)) {
    at::Tensor keep = row_mask.to(at::kBool);
    diff = diff.index({keep});
    excess = excess.index({keep});
  }
  c.compared = diff.numel();
  if (c.compared > 0) {
    c.max_abs_error = diff.max().item<double>();
    c.max_excess = excess.max().item<double>();
  }
  return c;
}

}  // namespace deberta::testing
