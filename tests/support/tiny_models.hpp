#pragma once
// The tiny configs the cost, job and validation tests derive their numbers from by hand (see
// each test's header).
namespace trace::test {

// Llama: hidden 64, 2 layers, 4 heads x 16, 2 kv heads, intermediate 128, vocab 1000, untied:
// 202,048 parameters (the same model as tests/unit/estimate/job_test.cpp).
inline constexpr const char* k_tiny_llama = R"({
  "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16"
})";

// Mixtral: hidden 64, 1 layer, 4 heads x 16 (4 kv heads), 8 experts top-2 of width 32, vocab
// 100, untied: 79,040 parameters.
inline constexpr const char* k_tiny_mixtral = R"({
  "model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
  "num_key_value_heads": 4, "intermediate_size": 32, "vocab_size": 100,
  "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16"
})";

}  // namespace trace::test
