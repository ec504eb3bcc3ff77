// ChatGLM's checkpoint names (src/checkpoint/naming_chatglm.cpp), one model_type in two layouts:
// the first ChatGLM-6B (transformer.word_embeddings, transformer.layers.N.attention.
// query_key_value, biased LayerNorms and Linears, a tied lm_head the .bin shards store again, one
// rotary inv_freq buffer per layer) and ChatGLM2 / 3 (transformer.embedding.word_embeddings,
// transformer.encoder.layers.N.self_attention.query_key_value, RMSNorms,
// transformer.encoder.final_layernorm, transformer.output_layer, one transformer.rotary_pos_emb.
// inv_freq). Names, shapes and counts are written by hand from the remote modeling_chatglm.py
// files, chatglm2-6b's pytorch_model.bin.index.json and the configs
// (tests/data/configs/SOURCES-chatglm-names.md, SOURCES-glm-ernie.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::buffer_count;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::dtype_of;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_bytes;
using trace::test::inventory_params;

// The inventory of a fixture config as edited.
Inventory inventory_of(const nlohmann::json& config) {
  return trace::checkpoint::build_inventory(trace::parse_model_config(config.dump()));
}

bool is_buffer(const Inventory& inventory, const std::string& name) {
  INFO(name);
  const ExpectedTensor* tensor = find_tensor(inventory, name);
  REQUIRE(tensor != nullptr);
  return tensor->buffer;
}

}  // namespace

TEST_CASE("ChatGLM-6B: transformer.layers.N, attention.query_key_value, lm_head copy: 368 tensors",
          "[checkpoint][names][chatglm]") {
  const Inventory inventory = fixture_inventory("THUDM--chatglm-6b.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // H 4096, 28 layers, 32 heads of 128 (q, k and v fused: 3 x 4096 rows), inner 16384 (GELU, not
  // gated), vocab 130528; every Linear and LayerNorm biased.
  check_tensor(inventory, "transformer.word_embeddings.weight", {130528, 4096});
  const std::string layer = "transformer.layers.27.";
  check_tensor(inventory, layer + "input_layernorm.weight", {4096});
  check_tensor(inventory, layer + "input_layernorm.bias", {4096});
  check_tensor(inventory, layer + "attention.query_key_value.weight", {3 * 4096, 4096});
  check_tensor(inventory, layer + "attention.query_key_value.bias", {3 * 4096});
  check_tensor(inventory, layer + "attention.dense.weight", {4096, 4096});
  check_tensor(inventory, layer + "attention.dense.bias", {4096});
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {4096});
  check_tensor(inventory, layer + "post_attention_layernorm.bias", {4096});
  check_tensor(inventory, layer + "mlp.dense_h_to_4h.weight", {16384, 4096});
  check_tensor(inventory, layer + "mlp.dense_h_to_4h.bias", {16384});
  check_tensor(inventory, layer + "mlp.dense_4h_to_h.weight", {4096, 16384});
  check_tensor(inventory, layer + "mlp.dense_4h_to_h.bias", {4096});
  check_tensor(inventory, "transformer.final_layernorm.weight", {4096});
  check_tensor(inventory, "transformer.final_layernorm.bias", {4096});
  // RotaryEmbedding(4096 / (32 x 2) = 64) per layer: arange(0, 64, 2), 32 values, a buffer.
  check_tensor(inventory, "transformer.layers.0.attention.rotary_emb.inv_freq", {32});
  check_tensor(inventory, layer + "attention.rotary_emb.inv_freq", {32});
  CHECK(is_buffer(inventory, layer + "attention.rotary_emb.inv_freq"));
  // The tied head, stored again by THUDM's shards (issue #665): a buffer, not a parameter.
  check_tensor(inventory, "lm_head.weight", {130528, 4096});
  CHECK(is_buffer(inventory, "lm_head.weight"));
  CHECK(dtype_of(inventory, layer + "attention.query_key_value.weight") == "F16");
  CHECK(dtype_of(inventory, "transformer.word_embeddings.weight") == "F16");
  CHECK_FALSE(is_buffer(inventory, "transformer.word_embeddings.weight"));
  // Nothing of the ChatGLM2 / 3 layout, nothing past layer 27, no generic names.
  check_absent(inventory, "transformer.layers.28.input_layernorm.weight");
  check_absent(inventory, "transformer.layers.28.attention.rotary_emb.inv_freq");
  check_absent(inventory, "transformer.embedding.word_embeddings.weight");
  check_absent(inventory, "transformer.encoder.layers.0.self_attention.query_key_value.weight");
  check_absent(inventory, "transformer.encoder.final_layernorm.weight");
  check_absent(inventory, "transformer.output_layer.weight");
  check_absent(inventory, "transformer.rotary_pos_emb.inv_freq");
  check_absent(inventory, "transformer.layers.0.attention.qkv_proj.weight");
  check_absent(inventory, "transformer.layers.0.mlp.up_proj.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
  // word_embeddings + 28 layers x 12 (2 LayerNorms x 2, 4 Linears x 2) + final_layernorm x 2 =
  // 339 parameters; 28 inv_freq + lm_head.weight = 29 buffers.
  CHECK(buffer_count(inventory) == 28 + 1);
  CHECK(inventory.tensors.size() == static_cast<std::size_t>(1 + 28 * 12 + 2 + 28 + 1));
  CHECK(inventory.tensors.size() == 368);
  // The published count (SOURCES-glm-ernie.md): 130528 x 4096 + 28 x 201,379,840 + 2 x 4096.
  CHECK(inventory_params(inventory) == 130'528LL * 4'096 + 28 * 201'379'840LL + 2 * 4'096);
  CHECK(inventory_params(inventory) == 6'173'286'400);
  // All F16 (torch_dtype float16): the parameters, the 28 x 32 inv_freq values and the head copy.
  CHECK(inventory_bytes(inventory) ==
        2 * 6'173'286'400LL + 2 * (28 * 32) + 2 * (130'528LL * 4'096));
  CHECK(inventory_bytes(inventory) == 13'415'859'968);
}

TEST_CASE("ChatGLM3-6B-32k: transformer.encoder.layers.N, output_layer, inv_freq: 200 tensors",
          "[checkpoint][names][chatglm]") {
  const Inventory inventory = fixture_inventory("THUDM--chatglm3-6b-32k.reconstructed.json");
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  // H 4096, 28 layers, 32 heads of kv_channels 128 and 2 query groups: q 4096 + k, v 2 x 128 each
  // = 4608 rows, biased (add_qkv_bias); dense and the MLP bias-free; SwiGLU of 13696 with gate and
  // up fused in dense_h_to_4h (2 x 13696 = 27392 rows); RMSNorms; padded vocab 65024, untied.
  check_tensor(inventory, "transformer.embedding.word_embeddings.weight", {65024, 4096});
  const std::string layer = "transformer.encoder.layers.27.";
  check_tensor(inventory, layer + "input_layernorm.weight", {4096});
  check_absent(inventory, layer + "input_layernorm.bias");
  check_tensor(inventory, layer + "self_attention.query_key_value.weight", {4608, 4096});
  check_tensor(inventory, layer + "self_attention.query_key_value.bias", {4608});
  check_tensor(inventory, layer + "self_attention.dense.weight", {4096, 4096});
  check_absent(inventory, layer + "self_attention.dense.bias");
  check_tensor(inventory, layer + "post_attention_layernorm.weight", {4096});
  check_tensor(inventory, layer + "mlp.dense_h_to_4h.weight", {27392, 4096});
  check_absent(inventory, layer + "mlp.dense_h_to_4h.bias");
  check_tensor(inventory, layer + "mlp.dense_4h_to_h.weight", {4096, 13696});
  check_tensor(inventory, "transformer.encoder.layers.0.self_attention.query_key_value.weight",
               {4608, 4096});
  check_tensor(inventory, "transformer.encoder.final_layernorm.weight", {4096});
  check_tensor(inventory, "transformer.output_layer.weight", {65024, 4096});
  CHECK_FALSE(is_buffer(inventory, "transformer.output_layer.weight"));
  // RotaryEmbedding(kv_channels // 2 = 64): arange(0, 64, 2), 32 values in torch_dtype (F16).
  check_tensor(inventory, "transformer.rotary_pos_emb.inv_freq", {32});
  CHECK(is_buffer(inventory, "transformer.rotary_pos_emb.inv_freq"));
  CHECK(dtype_of(inventory, "transformer.rotary_pos_emb.inv_freq") == "F16");
  CHECK(dtype_of(inventory, layer + "mlp.dense_4h_to_h.weight") == "F16");
  // Nothing of the first layout, nothing past layer 27, no generic names.
  check_absent(inventory, "transformer.encoder.layers.28.input_layernorm.weight");
  check_absent(inventory, "transformer.final_layernorm.weight");
  check_absent(inventory, "transformer.word_embeddings.weight");
  check_absent(inventory, "transformer.layers.0.attention.query_key_value.weight");
  check_absent(inventory, "transformer.encoder.layers.0.attention.rotary_emb.inv_freq");
  check_absent(inventory, "lm_head.weight");
  check_absent(inventory, "transformer.lm_head.weight");
  check_absent(inventory, "transformer.encoder.layers.0.self_attention.qkv_proj.weight");
  check_absent(inventory, "transformer.encoder.layers.0.mlp.gate_up_proj.weight");
  check_absent(inventory, "model.layers.0.self_attn.q_proj.weight");
  // embedding + 28 layers x 7 (2 norms, query_key_value weight + bias, dense, dense_h_to_4h,
  // dense_4h_to_h) + final_layernorm + output_layer = 199 parameters, + the inv_freq buffer:
  // 200, the names chatglm2-6b's pytorch_model.bin.index.json lists (the same shapes).
  CHECK(buffer_count(inventory) == 1);
  CHECK(inventory.tensors.size() == static_cast<std::size_t>(1 + 28 * 7 + 1 + 1 + 1));
  CHECK(inventory.tensors.size() == 200);
  // The published count (SOURCES-glm-ernie.md): 28 x 203,960,832 + 2 x 65024 x 4096 + 4096.
  CHECK(inventory_params(inventory) == 28 * 203'960'832LL + 2 * 65'024LL * 4'096 + 4'096);
  CHECK(inventory_params(inventory) == 6'243'584'000);
  // F16 throughout: chatglm2-6b's index metadata.total_size, 2 x 6,243,584,000 + 2 x 32.
  CHECK(inventory_bytes(inventory) == 2 * 6'243'584'000LL + 2 * 32);
  CHECK(inventory_bytes(inventory) == 12'487'168'064);
}

TEST_CASE("ChatGLM2 layout: final_layernorm under transformer.encoder. even with LayerNorms",
          "[checkpoint][names][chatglm]") {
  // rmsnorm false: GLMTransformer's final_layernorm is a LayerNorm (weight and bias), still
  // beside encoder.layers; post_layer_norm false: no final norm at all.
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("THUDM--chatglm3-6b-32k.reconstructed.json"));
  config["rmsnorm"] = false;
  Inventory inventory = inventory_of(config);
  CHECK(inventory.complete);
  check_tensor(inventory, "transformer.encoder.final_layernorm.weight", {4096});
  check_tensor(inventory, "transformer.encoder.final_layernorm.bias", {4096});
  check_tensor(inventory, "transformer.encoder.layers.0.input_layernorm.bias", {4096});
  config["post_layer_norm"] = false;
  inventory = inventory_of(config);
  CHECK(inventory.complete);
  check_absent(inventory, "transformer.encoder.final_layernorm.weight");
  check_absent(inventory, "transformer.final_layernorm.weight");
}
