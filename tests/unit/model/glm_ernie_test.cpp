// GLM, ChatGLM and ERNIE: exact totals against published checkpoint counts or hand derivations
// from the modeling code (sources and tensor-by-tensor derivations:
// tests/data/configs/SOURCES-glm-ernie.md), and the config errors these parsers raise.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ParameterCount count_of(const std::string& fixture) {
  return trace::count_parameters(trace::test::fixture(fixture));
}

nlohmann::json json_of(const std::string& fixture) {
  return nlohmann::json::parse(trace::test::config_text(fixture));
}

std::int64_t sum_of_components(const trace::ParameterCount& count) {
  std::int64_t sum = 0;
  for (const auto& component : count.by_component) sum += component.second;
  return sum;
}

}  // namespace

TEST_CASE("GLM-4.7-Flash (glm4_moe_lite) equals the published safetensors total", "[glm][moe]") {
  const trace::ModelDescription model =
      trace::test::fixture("unsloth--GLM-4.7-Flash.reconstructed.json");
  CHECK(model.model_type == "glm4_moe_lite");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Hub safetensors.total and the index's metadata.total_size: 31,221,488,576.
  CHECK(count.total == 31'221'488'576LL);
  // MTP layer 47: MLA attention 21,759,232 + MoE 613,548,096 + two norms 4,096 + enorm, hnorm,
  // eh_proj 8,392,704 + shared_head.norm 2,048 + its own embedding and head 2 x 317,194,240.
  CHECK(count.mtp == 21'759'232LL + 613'548'096LL + 4'096LL + 8'392'704LL + 2'048LL +
                         2LL * 317'194'240LL);
  // e_score_correction_bias: 64 per MoE layer, 46 main + 1 MTP (F32 in the checkpoint).
  CHECK(count.router_bias_buffers == 47 * 64);
  CHECK(sum_of_components(count) == count.total);
  // MLA caches kv_lora_rank + qk_rope_head_dim = 576 values per token in each of 47 layers.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 47 * 576 * 2);
}

TEST_CASE("glm4_moe_lite without first_k_dense_replace keeps Glm4MoeLiteConfig's one dense layer",
          "[glm][moe]") {
  nlohmann::json config = json_of("unsloth--GLM-4.7-Flash.reconstructed.json");
  config.erase("first_k_dense_replace");
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 31'221'488'576LL);
  bool noted = false;
  for (const std::string& note : model.notes) noted = noted || note.find("mlp_layer_types") != std::string::npos;
  CHECK(noted);
  for (const char* key : {"kv_lora_rank", "q_lora_rank", "n_routed_experts", "n_shared_experts"}) {
    nlohmann::json missing = config;
    missing.erase(key);
    CHECK_THROWS_WITH(trace::parse_model_config(missing.dump()), Catch::Matchers::Contains(key));
  }
}

TEST_CASE("ZhipuAI/GLM-4.5-Air (ModelScope) equals the Hub total of zai-org/GLM-4.5-Air",
          "[glm][moe]") {
  const trace::ParameterCount count = count_of("ZhipuAI--GLM-4.5-Air.reconstructed.json");
  // Hub safetensors.total 110,468,824,832, its MTP layer (with embedding and head copies) inside.
  CHECK(count.total == 110'468'824'832LL);
  CHECK(count.mtp == 3'616'573'568LL);
}

TEST_CASE("ChatGLM3-6B-32k equals the published ChatGLM3-6B count", "[glm][chatglm]") {
  const trace::ModelDescription model =
      trace::test::fixture("THUDM--chatglm3-6b-32k.reconstructed.json");
  CHECK(model.model_type == "chatglm");
  const trace::ParameterCount count = trace::count_parameters(model);
  // torchinfo / num_parameters() of ChatGLM3-6B (same shapes): 6,243,584,000 =
  // 2 x 65,024 x 4,096 (word_embeddings, output_layer) + 4,096 (final_layernorm)
  // + 28 x 203,960,832 (one GLMBlock).
  CHECK(count.total == 6'243'584'000LL);
  const std::int64_t block = 4'096                       // input_layernorm
                             + 4'608LL * 4'096 + 4'608   // query_key_value weight and bias
                             + 4'096LL * 4'096           // dense
                             + 4'096                     // post_attention_layernorm
                             + 27'392LL * 4'096          // dense_h_to_4h (gate and up)
                             + 4'096LL * 13'696;         // dense_4h_to_h
  CHECK(block == 203'960'832LL);
  CHECK(count.total == 28 * block + 2 * 65'024LL * 4'096 + 4'096);
  CHECK(count.active == count.total);
  CHECK(sum_of_components(count) == count.total);
  // Two key/value groups of 128: 28 layers x 2 x 2 x 128 x 2 bytes per token.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 28 * 2 * 2 * 128 * 2);
  CHECK(model.max_position_embeddings == 32'768);
}

TEST_CASE("GLM-4-9B-chat (chatglm remote code) equals its published count", "[glm][chatglm]") {
  // THUDM/glm-4-9b-chat's config (printed in a LLaMA-Factory log, SOURCES-glm-ernie.md) differs
  // from ChatGLM3's in padded_vocab_size 151552, num_layers 40, layernorm_epsilon and rope_ratio.
  // Published: "9399951392 parameters, 9399951360 (100.00%) are trainable" (the 32 extra elements
  // are the rotary inv_freq buffer) and "served by GLM-4, with 9399951360 (9.4B) parameters".
  nlohmann::json config = json_of("THUDM--chatglm3-6b-32k.reconstructed.json");
  config["padded_vocab_size"] = 151'552;
  config["vocab_size"] = 151'552;
  config["num_layers"] = 40;
  config["num_hidden_layers"] = 40;
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  CHECK(trace::count_parameters(model).total == 9'399'951'360LL);
  CHECK(model.stored_extras.size() == 1);
  CHECK(model.stored_extras.front().elements_each == 32);
}

TEST_CASE("ChatGLM-6B, first generation: 6,173,286,400 with the head tied", "[glm][chatglm]") {
  const trace::ModelDescription model = trace::test::fixture("THUDM--chatglm-6b.json");
  CHECK(model.model_type == "chatglm");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published: calflops' table "chatglm-6b 6.17B 6173286400" and PEFT-style logs "all params:
  // 6173286400" (SOURCES-glm-ernie.md). One GLMBlock (modeling_chatglm.py):
  const std::int64_t block = 2 * 4'096                    // input_layernorm weight + bias
                             + 4'096LL * 12'288 + 12'288  // query_key_value weight and bias
                             + 4'096LL * 4'096 + 4'096    // dense weight and bias
                             + 2 * 4'096                  // post_attention_layernorm
                             + 4'096LL * 16'384 + 16'384  // dense_h_to_4h (GELU, not gated)
                             + 16'384LL * 4'096 + 4'096;  // dense_4h_to_h
  CHECK(block == 201'379'840LL);
  // word_embeddings (130,528 x 4,096), 28 blocks, final_layernorm; lm_head tied to the embedding.
  CHECK(count.total == 130'528LL * 4'096 + 28 * block + 2 * 4'096);
  CHECK(count.total == 6'173'286'400LL);
  CHECK(model.tie_word_embeddings);
  CHECK(sum_of_components(count) == count.total);
  // Multi-head attention, 32 heads of 128: 28 layers x 2 x 4,096 x 2 bytes per token.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 28 * 2 * 4'096 * 2);
  CHECK(model.max_position_embeddings == 2'048);
  // Each layer's RotaryEmbedding(hidden / (heads x 2) = 64) saves inv_freq: 32 fp16 values; the
  // .bin shards also hold lm_head.weight, the tied table again (ChatGLM-6B issue #665).
  REQUIRE(model.stored_extras.size() == 2);
  CHECK(model.stored_extras.front().count == 28);
  CHECK(model.stored_extras.front().elements_each == 32);
  CHECK(model.stored_extras.front().dtype == "F16");
  CHECK(model.stored_extras.back().name == "lm_head.weight");
  CHECK(model.stored_extras.back().elements_each == 130'528LL * 4'096);
}

TEST_CASE("ChatGLM-6B: quantized repos, P-tuning prefixes and odd heads are refused by key",
          "[glm][chatglm][errors]") {
  const nlohmann::json v1 = json_of("THUDM--chatglm-6b.json");
  nlohmann::json int4 = v1;
  int4["quantization_bit"] = 4;
  CHECK_THROWS_WITH(trace::parse_model_config(int4.dump()),
                    Catch::Matchers::Contains("quantization_bit"));
  nlohmann::json prefix = v1;
  prefix["pre_seq_len"] = 128;
  CHECK_THROWS_WITH(trace::parse_model_config(prefix.dump()),
                    Catch::Matchers::Contains("pre_seq_len"));
  nlohmann::json heads = v1;
  heads["num_attention_heads"] = 30;
  // GLM-1 reads no head_dim, so the message does not offer one
  CHECK_THROWS_WITH(trace::parse_model_config(heads.dump()),
                    Catch::Matchers::Contains("num_attention_heads") &&
                        !Catch::Matchers::Contains("head_dim"));
  nlohmann::json no_inner = v1;
  no_inner.erase("inner_hidden_size");
  CHECK_THROWS_WITH(trace::parse_model_config(no_inner.dump()),
                    Catch::Matchers::Contains("inner_hidden_size"));
}

TEST_CASE("chatglm: a config of neither layout and bad group counts are refused by key",
          "[glm][chatglm][errors]") {
  nlohmann::json config = json_of("THUDM--chatglm3-6b-32k.reconstructed.json");
  nlohmann::json neither = config;
  neither.erase("padded_vocab_size");
  CHECK_THROWS_WITH(trace::parse_model_config(neither.dump()),
                    Catch::Matchers::Contains("padded_vocab_size") &&
                        Catch::Matchers::Contains("ChatGLM-6B"));
  nlohmann::json groups = config;
  groups["multi_query_group_num"] = 3;
  CHECK_THROWS_WITH(trace::parse_model_config(groups.dump()),
                    Catch::Matchers::Contains("multi_query_group_num"));
  nlohmann::json channels = config;
  channels.erase("kv_channels");
  CHECK_THROWS_WITH(trace::parse_model_config(channels.dump()),
                    Catch::Matchers::Contains("kv_channels"));
  // Without multi-query attention every head keeps its own key and value: 32 x 128 each.
  nlohmann::json mha = config;
  mha["multi_query_attention"] = false;
  CHECK(trace::count_parameters(trace::parse_model_config(mha.dump())).total ==
        6'243'584'000LL + 28LL * (2 * (32 - 2) * 128) * (4'096 + 1));
}

TEST_CASE("ERNIE-4.5-21B-A3B-PT: hand derivation from the modeling code", "[ernie][moe]") {
  const trace::ModelDescription model =
      trace::test::fixture("unsloth--ERNIE-4.5-21B-A3B-PT.reconstructed.json");
  CHECK(model.model_type == "ernie4_5_moe");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Attention q, k, v, o: 2 x 2,560^2 + 2 x 512 x 2,560 = 15,728,640; dense SwiGLU
  // 3 x 2,560 x 12,288 = 94,371,840; MoE layer: 64 x 3 x 2,560 x 1,536 (experts) + 3 x 2,560 x
  // 3,072 (shared) + 64 x 2,560 (gate) + 64 (moe_statics) = 778,731,584.
  const std::int64_t attention = 15'728'640;
  const std::int64_t norms = 2 * 2'560;
  const std::int64_t dense = 94'371'840;
  const std::int64_t moe = 778'731'584;
  const std::int64_t main = 103'424LL * 2'560 + 2'560 + 28 * (attention + norms) + dense + 27 * moe;
  CHECK(main == 21'825'437'888LL);
  // MTP: mtp_block.0 (attention, dense MLP, two norms) + mtp_emb_norm + mtp_hidden_norm +
  // mtp_linear_proj (5,120 -> 2,560).
  const std::int64_t mtp = attention + dense + norms + 2 * 2'560 + 5'120LL * 2'560;
  CHECK(mtp == 123'217'920LL);
  CHECK(count.mtp == mtp);
  CHECK(count.total == main + mtp);
  CHECK(count.total == 21'948'655'808LL);
  CHECK(count.router_bias_buffers == 27 * 64);
  CHECK(sum_of_components(count) == count.total);
  // Tied head: the embedding is counted once.
  CHECK(model.tie_word_embeddings);
}

TEST_CASE("ERNIE-4.5 LoRA r=8 on every Linear matches the trainable count Unsloth printed",
          "[ernie][moe]") {
  // measured.csv row 226 (unslothai/notebooks ERNIE_4_5_21B_A3B_PT-Conversational): trainable
  // params 177,545,216 for r = 8 on q, k, v, o, gate, up, down. r x (in + out) per Linear:
  // 28 x (40,960 + 24,576 + 24,576 + 40,960) + 3 x 118,784 (layer 0)
  // + 27 x (64 x 3 x 32,768 + 3 x 45,056) (experts and shared experts).
  const std::int64_t lora =
      28LL * 131'072 + 3LL * 118'784 + 27LL * (64LL * 3 * 32'768 + 3LL * 45'056);
  CHECK(lora == 177'545'216LL);
  const trace::ModelDescription model =
      trace::test::fixture("unsloth--ERNIE-4.5-21B-A3B-PT.reconstructed.json");
  std::int64_t moe_layers = 0;
  for (const trace::Block& block : model.stacks.front().blocks) moe_layers += block.moe ? 1 : 0;
  CHECK(moe_layers == 27);
  CHECK(model.stacks.front().blocks.front().mlp.intermediate == 12'288);
  CHECK(model.stacks.front().blocks.back().moe->shared->intermediate == 3'072);
}

TEST_CASE("ernie4_5_moe: layer placement keys and VL-style lists", "[ernie][errors]") {
  nlohmann::json config = json_of("unsloth--ERNIE-4.5-21B-A3B-PT.reconstructed.json");
  // Every other layer from index 1: (i + 1) % 2 == 0 -> layers 1, 3, ..., 27: 14 MoE layers.
  nlohmann::json every_other = config;
  every_other["moe_layer_interval"] = 2;
  const trace::ModelDescription sparse = trace::parse_model_config(every_other.dump());
  std::int64_t moe_layers = 0;
  for (const trace::Block& block : sparse.stacks.front().blocks) moe_layers += block.moe ? 1 : 0;
  CHECK(moe_layers == 14);
  nlohmann::json none = config;
  none["moe_layer_start_index"] = 28;
  CHECK_THROWS_WITH(trace::parse_model_config(none.dump()),
                    Catch::Matchers::Contains("moe_layer_start_index"));
  nlohmann::json vl = config;
  vl["moe_num_experts"] = {64, 64};
  CHECK_THROWS_WITH(trace::parse_model_config(vl.dump()),
                    Catch::Matchers::Contains("moe_num_experts"));
  nlohmann::json no_k = config;
  no_k.erase("moe_k");
  CHECK_THROWS_WITH(trace::parse_model_config(no_k.dump()), Catch::Matchers::Contains("moe_k"));
}
