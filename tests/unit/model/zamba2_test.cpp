// Zamba2: a Mamba-2 backbone with shared transformer blocks. The checks run on a small config
// written here (the published Zamba2 configs were not available to transcribe; see
// tests/data/configs/SOURCES-falcon-h1-zamba2.md) and hand-derived from the tensor shapes of
// transformers' modeling_zamba2.py.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

nlohmann::json small_zamba2() {
  return nlohmann::json{
      {"model_type", "zamba2"},
      {"vocab_size", 100},
      {"hidden_size", 64},
      {"num_hidden_layers", 6},
      {"layers_block_type", {"mamba", "hybrid", "mamba", "hybrid", "mamba", "hybrid"}},
      {"num_mem_blocks", 2},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 4},
      {"intermediate_size", 128},
      {"adapter_rank", 8},
      {"use_shared_attention_adapter", true},
      {"use_shared_mlp_adapter", true},
      {"use_mem_rope", true},
      {"mamba_expand", 2},
      {"n_mamba_heads", 8},
      {"mamba_d_state", 16},
      {"mamba_ngroups", 1},
      {"mamba_d_conv", 4},
      {"chunk_size", 256},
      {"add_bias_linear", false},
      {"use_conv_bias", true},
      {"hidden_act", "gelu"},
      {"tie_word_embeddings", true},
  };
}

}  // namespace

TEST_CASE("Zamba2: shared blocks counted once, adapters and linears per use", "[zamba2]") {
  const trace::ModelDescription model = trace::parse_model_config(small_zamba2().dump());
  const trace::ParameterCount count = trace::count_parameters(model);
  // Mamba layer: in_proj 64 x (128 + 160 + 8) = 18,944; conv1d 160 x 4 + 160 = 800; A_log/D/dt_bias
  // 24; gated norm 128; out_proj 128 x 64 = 8,192; input_layernorm 64: 28,152, x 6 = 168,912.
  // Shared block: input_layernorm 128; q/k/v 3 x 128 x 128 = 49,152 and o 128 x 64 = 8,192;
  // pre_ff_layernorm 64; gate_up 64 x 256 = 16,384 and down 128 x 64 = 8,192: 82,112, x 2 blocks.
  // Per hybrid use (3): linear 64 x 64 = 4,096; MLP adapter 8 x (64 + 256) = 2,560; q/k/v
  // adapters 3 x (128 x 8 + 8 x 128) = 6,144: 12,800, x 3 = 38,400.
  // Embedding (tied) 100 x 64 = 6,400; final_layernorm 64.
  CHECK(count.total == 168'912 + 2 * 82'112 + 38'400 + 6'400 + 64);
  CHECK(count.total == 378'000);
  CHECK(trace::component_count(count, "ssm") == 6 * 28'088);
  int shared = 0;
  int first_uses = 0;
  for (const trace::Block& block : model.stacks.front().blocks) {
    if (block.attention.kind != trace::AttentionKind::standard) continue;
    (block.shared_weights ? shared : first_uses) += 1;
    CHECK(block.attention.input_dim == 128);
    CHECK(block.attention.head_dim == 32);
  }
  CHECK(first_uses == 2);
  CHECK(shared == 1);

  nlohmann::json one_block = small_zamba2();
  one_block["num_mem_blocks"] = 1;
  one_block["use_shared_attention_adapter"] = false;
  CHECK(trace::count_parameters(trace::parse_model_config(one_block.dump())).total ==
        378'000 - 82'112 - 3 * 6'144);
}

TEST_CASE("Zamba2 serving: KV only at the hybrid layers", "[zamba2][memory]") {
  const trace::ModelDescription model = trace::parse_model_config(small_zamba2().dump());
  // 3 hybrid uses x 2 (K, V) x 4 kv heads x 32 x 2 bytes = 1,536 bytes per token, each use its own.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 1'536);
  // 6 Mamba layers x (conv 3 x 160 x 2 bytes + SSM 8 x 16 x 16 x 4 bytes).
  CHECK(trace::ssm_state_bytes(model, trace::Dtype::fp32, 2) == 6 * (3 * 160 * 2 + 8 * 16 * 16 * 4));
}

TEST_CASE("Zamba2 errors name the key", "[zamba2][errors]") {
  for (const char* key : {"n_mamba_heads", "mamba_d_state", "mamba_expand", "num_mem_blocks",
                          "adapter_rank", "layers_block_type"}) {
    nlohmann::json broken = small_zamba2();
    broken.erase(key);
    CHECK_THROWS_AS(trace::parse_model_config(broken.dump()), trace::ConfigError);
    CHECK_THROWS_WITH(trace::parse_model_config(broken.dump()), Catch::Matchers::Contains(key));
  }
  nlohmann::json unknown = small_zamba2();
  unknown["layers_block_type"][2] = "attention";
  CHECK_THROWS_AS(trace::parse_model_config(unknown.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(unknown.dump()),
                    Catch::Matchers::Contains("layers_block_type") &&
                        Catch::Matchers::Contains("attention"));
  nlohmann::json short_list = small_zamba2();
  short_list["num_hidden_layers"] = 7;
  CHECK_THROWS_WITH(trace::parse_model_config(short_list.dump()),
                    Catch::Matchers::Contains("layers_block_type"));
}
