// Qwen3.5's checkpoint names (docs/checkpoint.md, "Naming"): the text model under
// model.language_model.*, DeltaNet input projections split, the main layers' experts stacked and
// the MTP layer's one per expert, the Qwen3-VL tower under model.visual.*, A_log and the DeltaNet
// norm in F32 in Qwen's own uploads. The synthetic 27B checkpoint below is written by hand from
// the published layout (transformers modeling_qwen3_5.py; the 27B shard headers, whose
// total_size is 55,562,872,800 bytes; tests/data/configs/SOURCES-qwen3-next.md), not from the
// inventory; the 397B-A17B counts are the published header ledger's.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "header_builder.hpp"
#include "inventory_lookup.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/checkpoint/reconcile.hpp"
#include "trace/estimate/parameters.hpp"

namespace {

using trace::checkpoint::ExpectedTensor;
using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::find_tensor;
using trace::test::TensorSpec;
using Shape = std::vector<std::int64_t>;

// Qwen/Qwen3.5-27B as its uploads store it. H 5120; 64 layers, every fourth full attention;
// DeltaNet 16 key heads x 128, 48 value heads x 128, conv 4: q|k|v 2 x 2048 + 6144 = 10240
// channels; attention 24 heads x 256 (+ gate: 12288 q_proj rows), 4 KV heads (1024 rows); MLP
// 17408; vocabulary 248320, head untied; tower 27 blocks of 1152, MLP 4304, 16 x 16 patches over
// 2 frames, 2304 positions, 2 x 2 merge (4608) into 5120; one MTP layer (full attention).
// `delta_dtype`: the dtype of A_log and the DeltaNet norm (Qwen's own upload: F32).
std::vector<TensorSpec> qwen3_5_27b_tensors(const std::string& delta_dtype) {
  const std::string bf16 = "BF16";
  std::vector<TensorSpec> t = {{"model.language_model.embed_tokens.weight", bf16, {248320, 5120}}};
  const auto attention = [&](const std::string& p) {
    t.push_back({p + "self_attn.q_proj.weight", bf16, {12288, 5120}});
    t.push_back({p + "self_attn.k_proj.weight", bf16, {1024, 5120}});
    t.push_back({p + "self_attn.v_proj.weight", bf16, {1024, 5120}});
    t.push_back({p + "self_attn.o_proj.weight", bf16, {5120, 6144}});
    t.push_back({p + "self_attn.q_norm.weight", bf16, {256}});
    t.push_back({p + "self_attn.k_norm.weight", bf16, {256}});
  };
  const auto mlp = [&](const std::string& p) {
    t.push_back({p + "mlp.gate_proj.weight", bf16, {17408, 5120}});
    t.push_back({p + "mlp.up_proj.weight", bf16, {17408, 5120}});
    t.push_back({p + "mlp.down_proj.weight", bf16, {5120, 17408}});
    t.push_back({p + "input_layernorm.weight", bf16, {5120}});
    t.push_back({p + "post_attention_layernorm.weight", bf16, {5120}});
  };
  for (int i = 0; i < 64; ++i) {
    const std::string p = fmt::format("model.language_model.layers.{}.", i);
    if (i % 4 == 3) {
      attention(p);
    } else {
      t.push_back({p + "linear_attn.in_proj_qkv.weight", bf16, {10240, 5120}});
      t.push_back({p + "linear_attn.in_proj_z.weight", bf16, {6144, 5120}});
      t.push_back({p + "linear_attn.in_proj_b.weight", bf16, {48, 5120}});
      t.push_back({p + "linear_attn.in_proj_a.weight", bf16, {48, 5120}});
      t.push_back({p + "linear_attn.conv1d.weight", bf16, {10240, 1, 4}});
      t.push_back({p + "linear_attn.A_log", delta_dtype, {48}});
      t.push_back({p + "linear_attn.dt_bias", bf16, {48}});
      t.push_back({p + "linear_attn.norm.weight", delta_dtype, {128}});
      t.push_back({p + "linear_attn.out_proj.weight", bf16, {5120, 6144}});
    }
    mlp(p);
  }
  t.push_back({"model.language_model.norm.weight", bf16, {5120}});
  t.push_back({"lm_head.weight", bf16, {248320, 5120}});
  t.push_back({"model.visual.patch_embed.proj.weight", bf16, {1152, 3, 2, 16, 16}});
  t.push_back({"model.visual.patch_embed.proj.bias", bf16, {1152}});
  t.push_back({"model.visual.pos_embed.weight", bf16, {2304, 1152}});
  const auto biased = [&](const std::string& name, Shape shape) {
    t.push_back({name + ".bias", bf16, {shape.front()}});
    t.push_back({name + ".weight", bf16, std::move(shape)});
  };
  for (int i = 0; i < 27; ++i) {
    const std::string p = fmt::format("model.visual.blocks.{}.", i);
    for (const char* norm : {"norm1", "norm2"}) {
      t.push_back({p + norm + ".weight", bf16, {1152}});
      t.push_back({p + norm + ".bias", bf16, {1152}});
    }
    biased(p + "attn.qkv", {3456, 1152});
    biased(p + "attn.proj", {1152, 1152});
    biased(p + "mlp.linear_fc1", {4304, 1152});
    biased(p + "mlp.linear_fc2", {1152, 4304});
  }
  t.push_back({"model.visual.merger.norm.weight", bf16, {1152}});
  t.push_back({"model.visual.merger.norm.bias", bf16, {1152}});
  biased("model.visual.merger.linear_fc1", {4608, 4608});
  biased("model.visual.merger.linear_fc2", {5120, 4608});
  t.push_back({"mtp.fc.weight", bf16, {5120, 10240}});
  t.push_back({"mtp.pre_fc_norm_embedding.weight", bf16, {5120}});
  t.push_back({"mtp.pre_fc_norm_hidden.weight", bf16, {5120}});
  t.push_back({"mtp.norm.weight", bf16, {5120}});
  attention("mtp.layers.0.");
  mlp("mtp.layers.0.");
  return t;
}

trace::checkpoint::Reconciliation reconcile_27b(const std::vector<TensorSpec>& tensors) {
  const trace::ModelDescription model = trace::test::fixture("Qwen--Qwen3.5-27B.json");
  const trace::ParameterCount params = trace::count_parameters(model);
  const std::vector<trace::checkpoint::SafetensorsHeader> shards = {
      trace::checkpoint::parse_safetensors_header(trace::test::header_json(tensors), 0,
                                                  "model.safetensors-00001-of-00001.safetensors")};
  return trace::checkpoint::reconcile(trace::checkpoint::build_inventory(model), shards,
                                      params.total);
}

}  // namespace

TEST_CASE("Qwen3.5-27B: model.language_model.*, split DeltaNet projections, model.visual.*, mtp.*",
          "[checkpoint][names]") {
  const Inventory inventory =
      trace::checkpoint::build_inventory(trace::test::fixture("Qwen--Qwen3.5-27B.json"));
  CHECK(inventory.complete);
  CHECK(inventory.layer_prefix == "model.language_model.layers.");
  // Shapes the published 27B shard headers list.
  check_tensor(inventory, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight",
               {10240, 5120});
  check_tensor(inventory, "model.language_model.layers.0.linear_attn.in_proj_z.weight",
               {6144, 5120});
  check_tensor(inventory, "model.language_model.layers.0.linear_attn.conv1d.weight", {10240, 1, 4});
  check_tensor(inventory, "model.language_model.layers.3.self_attn.k_proj.weight", {1024, 5120});
  check_tensor(inventory, "model.language_model.layers.3.self_attn.o_proj.weight", {5120, 6144});
  check_tensor(inventory, "lm_head.weight", {248320, 5120});
  const ExpectedTensor* a_log =
      find_tensor(inventory, "model.language_model.layers.0.linear_attn.A_log");
  REQUIRE(a_log != nullptr);
  CHECK(a_log->shape == Shape{48});
  CHECK(a_log->also_stored_as == "F32");  // the headers: F32 [48]
  // From the modeling code and the config.
  check_tensor(inventory, "model.language_model.layers.0.linear_attn.in_proj_b.weight", {48, 5120});
  check_tensor(inventory, "model.language_model.layers.0.linear_attn.in_proj_a.weight", {48, 5120});
  check_tensor(inventory, "model.visual.patch_embed.proj.weight", {1152, 3, 2, 16, 16});
  check_tensor(inventory, "model.visual.blocks.26.attn.qkv.weight", {3456, 1152});
  check_tensor(inventory, "model.visual.blocks.26.mlp.linear_fc2.bias", {1152});
  check_tensor(inventory, "model.visual.merger.linear_fc2.weight", {5120, 4608});
  check_tensor(inventory, "mtp.fc.weight", {5120, 10240});
  check_tensor(inventory, "mtp.norm.weight", {5120});
  check_absent(inventory, "model.language_model.layers.0.linear_attn.in_proj_qkvz.weight");
  // Tensors: 48 DeltaNet layers x 14 (2 norms, 4 projections, conv, A_log, dt_bias, norm,
  // out_proj, 3 MLP) + 16 attention layers x 11 (2 norms, q/k/v/o, q/k norms, 3 MLP) + embedding,
  // norm, head = 851; tower 2 + 1 + 27 x 12 + 6 = 333; MTP fc, 2 pre-fc norms, norm + one
  // attention layer of 11 = 15: 1,199.
  CHECK(inventory.tensors.size() == 1'199);
}

TEST_CASE("Qwen3.5-27B reconciles with Qwen's upload (F32 A_log and norm) and an all-BF16 one",
          "[checkpoint][reconcile]") {
  SECTION("Qwen's own upload: published total_size 55,562,872,800 bytes") {
    const trace::checkpoint::Reconciliation r = reconcile_27b(qwen3_5_27b_tensors("F32"));
    CHECK(r.inventory_complete);
    CHECK(r.only_in_checkpoint_count == 0);
    CHECK(r.only_in_trace_count == 0);
    CHECK(r.mismatch_count == 0);
    CHECK(r.delta_params == 0);
    CHECK(r.logical_params == 27'781'427'952);  // the Hub total (SOURCES-qwen3-next.md)
    CHECK(r.found.bytes == 55'562'872'800);
    CHECK(r.expected == r.found);
    // 48 layers x (A_log 48 + norm 128) x 2 more bytes = 16,896.
    CHECK(std::any_of(r.explanations.begin(), r.explanations.end(), [](const std::string& line) {
      return line.find("96 tensors are stored as F32") != std::string::npos &&
             line.find("+16896 bytes") != std::string::npos;
    }));
    CHECK(r.agrees());
  }
  SECTION("an upload that keeps them at BF16 (Qwen3.6 and later)") {
    const trace::checkpoint::Reconciliation r = reconcile_27b(qwen3_5_27b_tensors("BF16"));
    CHECK(r.mismatch_count == 0);
    CHECK(r.found.bytes == 2 * 27'781'427'952);
    CHECK(r.expected == r.found);
  }
  SECTION("any other dtype is a mismatch") {
    const trace::checkpoint::Reconciliation r = reconcile_27b(qwen3_5_27b_tensors("F16"));
    CHECK(r.mismatch_count == 96);
  }
}

TEST_CASE("Qwen3.5-MoE: stacked experts in the main layers, one per expert in the MTP layer",
          "[checkpoint][names]") {
  SECTION("35B-A3B: 256 experts of 512 on H 2048 (the index: gate_up_proj [256, 1024, 2048])") {
    const Inventory inventory = trace::checkpoint::build_inventory(
        trace::test::fixture("Qwen--Qwen3.5-35B-A3B.reconstructed.json"));
    CHECK(inventory.complete);
    check_tensor(inventory, "model.language_model.layers.0.mlp.experts.gate_up_proj",
                 {256, 1024, 2048});
    check_tensor(inventory, "model.language_model.layers.39.mlp.experts.down_proj",
                 {256, 2048, 512});
    check_tensor(inventory, "model.language_model.layers.0.mlp.gate.weight", {256, 2048});
    check_tensor(inventory, "model.language_model.layers.0.mlp.shared_expert_gate.weight",
                 {1, 2048});
    check_tensor(inventory, "mtp.layers.0.mlp.experts.255.down_proj.weight", {2048, 512});
    check_absent(inventory, "model.language_model.layers.0.mlp.experts.0.gate_proj.weight");
    CHECK(trace::checkpoint::component_of("model.language_model.layers.0.mlp.experts.gate_up_proj",
                                          inventory) == "experts");
  }
  SECTION("397B-A17B: the published header ledger's 2,924 tensors, 90 of them F32") {
    const trace::ModelDescription model =
        trace::test::fixture("Qwen--Qwen3.5-397B-A17B.reconstructed.json");
    const Inventory inventory = trace::checkpoint::build_inventory(model);
    CHECK(inventory.complete);
    CHECK(inventory.tensors.size() == 2'924);
    std::int64_t f32 = 0;
    std::int64_t bytes = 0;  // with A_log and the norms at F32, as Qwen's upload stores them
    std::int64_t logical = 0;
    for (const ExpectedTensor& tensor : inventory.tensors) {
      const bool wide = tensor.also_stored_as == "F32";
      f32 += wide ? 1 : 0;
      bytes += wide ? 4 * tensor.elements() : tensor.bytes();
      logical += tensor.logical_params;
    }
    CHECK(f32 == 90);                   // 45 DeltaNet layers x 2
    CHECK(bytes == 806'795'875'168);    // the index's total_size
    CHECK(logical == 403'397'928'944);  // the ledger's parameters
    check_tensor(inventory, "model.language_model.layers.0.mlp.experts.gate_up_proj",
                 {512, 2048, 4096});  // as slime's bridge quotes the HF tensor
    check_tensor(inventory, "mtp.layers.0.mlp.experts.511.up_proj.weight", {1024, 4096});
  }
}
