// The masked-LM head's decoder over a bfloat16 word table (int8 engines):
// blocks of the table widened one at a time give float32's logits of the
// same bfloat16 values, over several blocks and a partial last one.
#include "model/torch/heads/mlm_head.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "model/config.h"

namespace deberta::model {
namespace {

TEST(LmHeadTest, ABfloat16TableWidenedInBlocksGivesTheLogitsOfItsValuesInFloat32) {
  // 5,000 rows: two full blocks of 2,048 and a partial one.
  auto config = ParseDebertaConfig(R"({"model_type": "deberta-v2", "vocab_size": 5000, "hidden_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64})");
  ASSERT_TRUE(config.ok()) << config.status();
  at::manual_seed(7);
  const at::Tensor dense_weight = at::randn({32, 32}) * 0.2, dense_bias = at::randn({32}) * 0.1,
                   vocab_bias = at::randn({5000});
  LmHead narrow(*config), wide(*config);
  for (LmHead* head : {&narrow, &wide}) {
    (*head)->dense->weight.copy_(dense_weight);
    (*head)->dense->bias.copy_(dense_bias);
    (*head)->bias.copy_(vocab_bias);
  }
  const at::Tensor table = at::randn({5000, 32}).to(at::kBFloat16);
  narrow->Prepare(table, at::kFloat);
  wide->Prepare(table.to(at::kFloat), at::kFloat);
  const at::Tensor hidden = at::randn({2, 3, 32});
  const at::Tensor got = narrow->forward(hidden), want = wide->forward(hidden);
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{2, 3, 5000}));
  EXPECT_EQ(got.scalar_type(), at::kFloat);
  EXPECT_LT((got - want).abs().max().item<float>(), 1e-4f);
}

}  // namespace
}  // namespace deberta::model
