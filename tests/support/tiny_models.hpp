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

// Nemotron-H: hidden 32, pattern M*M-M*- (3 Mamba-2 layers of 4 heads x 8, d_state 16, 1
// group, conv kernel 4; 2 attention layers of 4 heads, 2 kv heads x 8; 2 MLPs), vocab 100
// (tests/unit/estimate/engine_blocks_test.cpp derives its vLLM blocks).
inline constexpr const char* k_tiny_nemotron_h = R"({
  "model_type": "nemotron_h", "hidden_size": 32, "num_hidden_layers": 7,
  "hybrid_override_pattern": "M*M-M*-", "num_attention_heads": 4, "num_key_value_heads": 2,
  "head_dim": 8, "intermediate_size": 64, "vocab_size": 100, "mamba_num_heads": 4,
  "mamba_head_dim": 8, "ssm_state_size": 16, "n_groups": 1, "conv_kernel": 4, "expand": 1,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16"
})";

}  // namespace trace::test
