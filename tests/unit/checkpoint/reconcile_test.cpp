// Reconciliation of trace's tensor inventory with safetensors headers written here from the
// published tensor layouts (transformers' LlamaForCausalLM module names; the Nemotron 3 Nano
// NVFP4 layout of docs and tests/data/configs/SOURCES-nvfp4.md): a faithful checkpoint agrees to
// the tensor, a doctored one is named tensor by tensor, and a packed NVFP4 checkpoint shows no
// bogus parameter delta. Every expected number is derived by hand in the comments.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "nemotron_fixtures.hpp"
#include "header_builder.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/checkpoint/reconcile.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/checkpoint.hpp"

namespace {

using trace::checkpoint::Reconciliation;
using trace::test::TensorSpec;

// A small Llama: vocab 1000, hidden 64, 2 layers, 4 heads of 16, 2 KV heads, MLP 128, untied.
constexpr const char* k_tiny_llama = R"({
  "model_type": "llama", "vocab_size": 1000, "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "max_position_embeddings": 256
})";

// LlamaForCausalLM's state dict, written from transformers' module names.
std::vector<TensorSpec> tiny_llama_tensors() {
  std::vector<TensorSpec> t = {{"model.embed_tokens.weight", "BF16", {1000, 64}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    t.push_back({p + "input_layernorm.weight", "BF16", {64}});
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {64, 64}});  // 4 heads x 16
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {32, 64}});  // 2 KV heads x 16
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {32, 64}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {64, 64}});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {64}});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {128, 64}});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {128, 64}});
    t.push_back({p + "mlp.down_proj.weight", "BF16", {64, 128}});
  }
  t.push_back({"model.norm.weight", "BF16", {64}});
  t.push_back({"lm_head.weight", "BF16", {1000, 64}});
  return t;
}

// Two shards, as an index would split them.
std::vector<trace::checkpoint::SafetensorsHeader> shards_of(const std::vector<TensorSpec>& all) {
  const auto half = all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2);
  return {trace::checkpoint::parse_safetensors_header(
              trace::test::header_json({all.begin(), half}), 0, "model-00001-of-00002.safetensors"),
          trace::checkpoint::parse_safetensors_header(
              trace::test::header_json({half, all.end()}), 0, "model-00002-of-00002.safetensors")};
}

Reconciliation reconcile_config(const std::string& config, const std::vector<TensorSpec>& tensors,
                                const std::string& quant = {}) {
  const trace::ModelDescription model = trace::parse_model_config(config, quant);
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::StorageEstimate storage = trace::estimate_storage(model, params);
  trace::checkpoint::ReconcileOptions options;
  options.storage = &storage;
  Reconciliation r = trace::checkpoint::reconcile(trace::checkpoint::build_inventory(model),
                                                  shards_of(tensors), params.total, options);
  r.source = "synthetic";
  return r;
}

bool has(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

TEST_CASE("a faithful Llama checkpoint reconciles to zero everywhere", "[checkpoint][reconcile]") {
  const Reconciliation r = reconcile_config(k_tiny_llama, tiny_llama_tensors());
  // Parameters: embedding 1000 x 64 = 64,000; per layer q 4,096 + k 2,048 + v 2,048 + o 4,096 +
  // MLP 3 x 8,192 + two norms 128 = 36,992, x 2 = 73,984; final norm 64; head 64,000.
  // 64,000 + 73,984 + 64 + 64,000 = 202,048, two bytes each; 1 + 2 x 9 + 2 = 21 tensors.
  CHECK(r.trace_params == 202'048);
  CHECK(r.logical_params == 202'048);
  CHECK(r.delta_params == 0);
  CHECK(r.found.tensors == 21);
  CHECK(r.found.stored_elements == 202'048);
  CHECK(r.found.bytes == 404'096);
  CHECK(r.expected == r.found);
  CHECK(r.inventory_complete);
  CHECK(r.only_in_checkpoint_count == 0);
  CHECK(r.only_in_trace_count == 0);
  CHECK(r.mismatch_count == 0);
  CHECK(r.explanations.empty());  // nothing packed, no scales
  for (const auto& component : r.components) {
    INFO(component.component);
    CHECK(component.agrees());
  }
  CHECK(r.agrees());

  const nlohmann::json json = trace::checkpoint_json(r);
  CHECK(json["tensors"] == 21);
  CHECK(json["bytes"] == 404'096);
  CHECK(json["stored_elements"] == 202'048);
  CHECK(json["logical_params"] == 202'048);
  CHECK(json["delta_params"] == 0);
  CHECK(json["by_dtype"]["BF16"]["bytes"] == 404'096);
  CHECK(json["unmatched"]["only_in_checkpoint"]["count"] == 0);
  CHECK(json["source"] == "synthetic");
  CHECK(json["agrees"] == true);
  CHECK_THAT(trace::render_checkpoint_text(r), Catch::Contains("agrees"));
}

TEST_CASE("a doctored Llama checkpoint names the tensors that differ", "[checkpoint][reconcile]") {
  std::vector<TensorSpec> tensors = tiny_llama_tensors();
  const auto find = [&](const std::string& name) {
    return std::find_if(tensors.begin(), tensors.end(),
                        [&](const TensorSpec& spec) { return spec.name == name; });
  };
  find("model.layers.1.mlp.up_proj.weight")->name = "model.layers.1.mlp.upproj.weight";  // renamed
  tensors.erase(find("model.layers.0.post_attention_layernorm.weight"));                 // missing
  find("model.layers.0.self_attn.k_proj.weight")->shape = {64, 64};                     // wrong shape
  const Reconciliation r = reconcile_config(k_tiny_llama, tensors);

  CHECK(r.only_in_checkpoint_count == 1);
  CHECK(has(r.only_in_checkpoint, "model.layers.1.mlp.upproj.weight"));
  CHECK(r.only_in_trace_count == 2);
  CHECK(has(r.only_in_trace, "model.layers.1.mlp.up_proj.weight"));
  CHECK(has(r.only_in_trace, "model.layers.0.post_attention_layernorm.weight"));
  REQUIRE(r.mismatch_count == 1);
  CHECK(r.mismatches[0].name == "model.layers.0.self_attn.k_proj.weight");
  CHECK(r.mismatches[0].expected == "BF16 [32, 64]");
  CHECK(r.mismatches[0].found == "BF16 [64, 64]");
  // The renamed tensor keeps its 8,192 elements; the missing norm takes 64; k_proj gains
  // 4,096 - 2,048 = 2,048: +1,984 parameters, one tensor fewer.
  CHECK(r.delta_params == 1'984);
  CHECK(r.found.tensors == 20);
  CHECK(!r.agrees());
  const auto norm = std::find_if(r.components.begin(), r.components.end(),
                                 [](const auto& c) { return c.component == "norm"; });
  REQUIRE(norm != r.components.end());
  CHECK(norm->expected.tensors == 5);
  CHECK(norm->found.tensors == 4);

  const std::string text = trace::render_checkpoint_text(r);
  CHECK_THAT(text, Catch::Contains("model.layers.1.mlp.upproj.weight"));
  CHECK_THAT(text, Catch::Contains("model.layers.0.post_attention_layernorm.weight"));
  CHECK_THAT(text, Catch::Contains("k_proj"));
  const nlohmann::json json = trace::checkpoint_json(r);
  CHECK(json["unmatched"]["only_in_trace"]["count"] == 2);
  CHECK(json["unmatched"]["mismatched"]["tensors"][0]["found"] == "BF16 [64, 64]");
  CHECK(json["delta_params"] == 1'984);
}

TEST_CASE("the names list is capped, the counts are not", "[checkpoint][reconcile]") {
  std::vector<TensorSpec> tensors = tiny_llama_tensors();
  for (TensorSpec& spec : tensors) spec.name = "renamed." + spec.name;
  const Reconciliation r = reconcile_config(k_tiny_llama, tensors);
  CHECK(r.only_in_checkpoint_count == 21);
  CHECK(r.only_in_checkpoint.size() == 10);
  CHECK(r.only_in_trace_count == 21);
  CHECK(r.only_in_trace.size() == 10);
  CHECK(r.delta_params == 0);  // the same tensors under other names
}

namespace {

using trace::test::nano_hf_quant_config;

// The Nano NVFP4 checkpoint's tensors, from the published layout (nemotron.md sections 3 and 6:
// Mamba-2 mixer, GQA attention, ReLU^2 MoE with an F32 router, NVFP4 per Linear as
// U8 [out, in/2] + F8_E4M3 [out, in/16] + two F32 scalars; no KV scales in Nano).
std::vector<TensorSpec> nano_nvfp4_tensors() {
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  const std::vector<int> bf16_mamba = {4, 11, 18, 25, 32, 41};
  std::vector<TensorSpec> t = {{"backbone.embeddings.weight", "BF16", {131072, 2688}}};
  const auto nvfp4 = [&](const std::string& name, std::int64_t out, std::int64_t in) {
    t.push_back({name + ".weight", "U8", {out, in / 2}});
    t.push_back({name + ".weight_scale", "F8_E4M3", {out, in / 16}});
    t.push_back({name + ".weight_scale_2", "F32", {}});
    t.push_back({name + ".input_scale", "F32", {}});
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const std::string p = fmt::format("backbone.layers.{}.", i);
    t.push_back({p + "norm.weight", "BF16", {2688}});
    if (pattern[i] == 'M') {
      // d_inner 64 x 64 = 4096; conv over x, B, C = 4096 + 2 x 8 x 128 = 6144;
      // in_proj = z + xBC + dt = 4096 + 6144 + 64 = 10304.
      const bool bf16 = std::find(bf16_mamba.begin(), bf16_mamba.end(), static_cast<int>(i)) !=
                        bf16_mamba.end();
      if (bf16) {
        t.push_back({p + "mixer.in_proj.weight", "BF16", {10304, 2688}});
        t.push_back({p + "mixer.out_proj.weight", "BF16", {2688, 4096}});
      } else {
        nvfp4(p + "mixer.in_proj", 10304, 2688);
        nvfp4(p + "mixer.out_proj", 2688, 4096);
      }
      t.push_back({p + "mixer.conv1d.weight", "BF16", {6144, 1, 4}});
      t.push_back({p + "mixer.conv1d.bias", "BF16", {6144}});
      t.push_back({p + "mixer.A_log", "BF16", {64}});
      t.push_back({p + "mixer.D", "BF16", {64}});
      t.push_back({p + "mixer.dt_bias", "BF16", {64}});
      t.push_back({p + "mixer.norm.weight", "BF16", {4096}});
    } else if (pattern[i] == '*') {
      t.push_back({p + "mixer.q_proj.weight", "BF16", {4096, 2688}});  // 32 heads x 128
      t.push_back({p + "mixer.k_proj.weight", "BF16", {256, 2688}});   // 2 KV heads x 128
      t.push_back({p + "mixer.v_proj.weight", "BF16", {256, 2688}});
      t.push_back({p + "mixer.o_proj.weight", "BF16", {2688, 4096}});
    } else {
      t.push_back({p + "mixer.gate.weight", "F32", {128, 2688}});
      t.push_back({p + "mixer.gate.e_score_correction_bias", "F32", {128}});
      for (int e = 0; e < 128; ++e) {
        nvfp4(fmt::format("{}mixer.experts.{}.up_proj", p, e), 1856, 2688);
        nvfp4(fmt::format("{}mixer.experts.{}.down_proj", p, e), 2688, 1856);
      }
      nvfp4(p + "mixer.shared_experts.up_proj", 3712, 2688);
      nvfp4(p + "mixer.shared_experts.down_proj", 2688, 3712);
    }
  }
  t.push_back({"backbone.norm_f.weight", "BF16", {2688}});
  t.push_back({"lm_head.weight", "BF16", {131072, 2688}});
  return t;
}

}  // namespace

TEST_CASE("Nemotron 3 Nano NVFP4: the published layout reconciles with no bogus delta",
          "[checkpoint][reconcile][modelopt]") {
  const std::vector<TensorSpec> tensors = nano_nvfp4_tensors();
  const Reconciliation r = reconcile_config(
      trace::test::config_text("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"), tensors,
      nano_hf_quant_config());
  // The published header totals (SOURCES-nvfp4.md, S3): the generator above reproduces them.
  CHECK(r.found.tensors == 24'147);
  CHECK(r.found.bytes == 19'339'781'632);
  // The Hub's figure for this repo: header elements with the 0-d scales skipped.
  CHECK(r.summary.elements_without_scalars == 18'237'772'608);
  // 5,968 NVFP4 Linears (17 x 2 Mamba + 23 x 258 MoE) store two 0-d F32 scales each.
  CHECK(r.summary.scalar_tensors == 2 * 5'968);
  // Unpacked, the headers hold transformers' 31,577,937,344 parameters (16,332,031,424 nn.Parameter
  // elements the Hub shows + 15,245,905,920 values packed two per byte) + the 23 x 128 F32
  // correction biases trace counts.
  CHECK(r.logical_params == 31'577'937'344 + 23 * 128);
  CHECK(r.delta_params == 0);
  CHECK(r.inventory_complete);
  CHECK(r.only_in_checkpoint_count == 0);
  CHECK(r.only_in_trace_count == 0);
  CHECK(r.mismatch_count == 0);
  CHECK(r.expected == r.found);
  CHECK(r.agrees());
  // The packing is explained rather than shown as a delta.
  REQUIRE(!r.explanations.empty());
  CHECK_THAT(r.explanations[0], Catch::Contains("two 4-bit values"));
  const std::string text = trace::render_checkpoint_text(r);
  CHECK_THAT(text, !Catch::Contains("%"));
}

TEST_CASE("a partial inventory lists no names as missing or unexpected",
          "[checkpoint][reconcile]") {
  // Every family trace parses is named tensor by tensor now (Mllama, Qwen2-Audio, Arcee Trinity,
  // Gemma 3n, Qwen2.5-Omni and Qwen3-Omni served here until their naming). Qwen2.5-Omni's
  // token2wav is named only as released (naming_qwen_omni.cpp): a DiT of 12 blocks instead of
  // 22 leaves the inventory partial, totals only.
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("Qwen--Qwen2.5-Omni-3B.reconstructed.json"));
  config["token2wav_config"]["dit_config"]["depth"] = 12;
  config["token2wav_config"]["dit_config"]["num_hidden_layers"] = 12;
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  const trace::checkpoint::Inventory inventory = trace::checkpoint::build_inventory(model);
  CHECK(!inventory.complete);
  CHECK(!inventory.gaps.empty());
  // Qwen2.5-Omni-3B's thinker: vocab 151936, H 2048, 16 query heads of 128; and a tensor the
  // partial inventory does not list.
  const auto shards =
      shards_of({{"thinker.model.embed_tokens.weight", "BF16", {151936, 2048}},
                 {"thinker.model.layers.0.self_attn.q_proj.weight", "BF16", {2048, 2048}},
                 {"token2wav.code2wav_dit_model.proj_out.weight", "F32", {80, 1024}}});
  const Reconciliation r = trace::checkpoint::reconcile(inventory, shards, 0);
  CHECK(r.only_in_checkpoint.empty());
  CHECK(r.only_in_trace.empty());
  CHECK(r.only_in_checkpoint_count == 0);
}

TEST_CASE("inventory names for the MoE and DeepSeek layouts", "[checkpoint][inventory]") {
  const auto names_of = [](const std::string& config) {
    const trace::checkpoint::Inventory inventory =
        trace::checkpoint::build_inventory(trace::parse_model_config(config));
    std::vector<std::string> names;
    for (const auto& tensor : inventory.tensors) names.push_back(tensor.name);
    return std::make_pair(inventory.complete, names);
  };
  SECTION("Mixtral: block_sparse_moe, experts.E.w1/w2/w3") {
    const auto [complete, names] = names_of(trace::test::config_text("mistralai--Mixtral-8x7B.json"));
    CHECK(complete);
    CHECK(has(names, "model.layers.0.block_sparse_moe.gate.weight"));
    CHECK(has(names, "model.layers.31.block_sparse_moe.experts.7.w1.weight"));
    CHECK(has(names, "model.layers.0.block_sparse_moe.experts.0.w2.weight"));
    CHECK(has(names, "model.layers.0.block_sparse_moe.experts.0.w3.weight"));
    // 1 + 32 x (2 norms + 4 attention + router + 8 x 3 experts) + norm + head = 995.
    CHECK(names.size() == 995);
  }
  SECTION("Qwen1.5-MoE: shared_expert (singular) and its gate") {
    const auto [complete, names] = names_of(trace::test::config_text("Qwen--Qwen1.5-MoE-A2.7B.json"));
    CHECK(complete);
    CHECK(has(names, "model.layers.0.mlp.shared_expert.up_proj.weight"));
    CHECK(has(names, "model.layers.0.mlp.shared_expert_gate.weight"));
    CHECK(has(names, "model.layers.0.mlp.experts.59.down_proj.weight"));
    CHECK(has(names, "model.layers.0.self_attn.q_proj.bias"));
  }
  SECTION("DeepSeek-V3: MLA, correction bias, FP8 block scales, MTP as layer 61") {
    const auto [complete, names] =
        names_of(trace::test::config_text("deepseek-ai--DeepSeek-R1-0528.reconstructed.json"));
    CHECK(complete);
    CHECK(has(names, "model.layers.0.self_attn.q_a_proj.weight"));
    CHECK(has(names, "model.layers.0.self_attn.q_a_proj.weight_scale_inv"));
    CHECK(has(names, "model.layers.0.self_attn.kv_a_layernorm.weight"));
    CHECK(has(names, "model.layers.3.mlp.gate.e_score_correction_bias"));
    CHECK(has(names, "model.layers.3.mlp.experts.255.down_proj.weight_scale_inv"));
    CHECK(has(names, "model.layers.61.eh_proj.weight"));
    CHECK(has(names, "model.layers.61.self_attn.kv_b_proj.weight"));
    CHECK(has(names, "model.layers.61.shared_head.head.weight"));
    CHECK(!has(names, "mtp.layers.0.self_attn.kv_b_proj.weight"));
  }
}

namespace {

// A small GPT-2: vocab 100, n_embd 32, 2 layers, 4 heads, 16 positions, F32.
constexpr const char* k_tiny_gpt2 = R"({
  "model_type": "gpt2", "vocab_size": 100, "n_embd": 32, "n_layer": 2, "n_head": 4,
  "n_positions": 16, "torch_dtype": "float32"
})";

// GPT2Model's state dict as openai-community/gpt2's model.safetensors spells it: no prefix,
// Conv1D weights [in, out], and (when `masks`) the h.N.attn.bias causal-mask buffers.
std::vector<TensorSpec> tiny_gpt2_tensors(bool masks) {
  std::vector<TensorSpec> t = {{"wte.weight", "F32", {100, 32}}, {"wpe.weight", "F32", {16, 32}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("h.{}.", i);
    t.push_back({p + "ln_1.weight", "F32", {32}});
    t.push_back({p + "ln_1.bias", "F32", {32}});
    if (masks) t.push_back({p + "attn.bias", "F32", {1, 1, 16, 16}});
    t.push_back({p + "attn.c_attn.weight", "F32", {32, 96}});
    t.push_back({p + "attn.c_attn.bias", "F32", {96}});
    t.push_back({p + "attn.c_proj.weight", "F32", {32, 32}});
    t.push_back({p + "attn.c_proj.bias", "F32", {32}});
    t.push_back({p + "ln_2.weight", "F32", {32}});
    t.push_back({p + "ln_2.bias", "F32", {32}});
    t.push_back({p + "mlp.c_fc.weight", "F32", {32, 128}});
    t.push_back({p + "mlp.c_fc.bias", "F32", {128}});
    t.push_back({p + "mlp.c_proj.weight", "F32", {128, 32}});
    t.push_back({p + "mlp.c_proj.bias", "F32", {32}});
  }
  t.push_back({"ln_f.weight", "F32", {32}});
  t.push_back({"ln_f.bias", "F32", {32}});
  return t;
}

}  // namespace

TEST_CASE("GPT-2: Conv1D weights and mask buffers reconcile, stored or not", "[checkpoint][reconcile]") {
  // Parameters: wte 3,200 + wpe 512; per layer ln_1 64 + c_attn 3,072 + 96 + c_proj 1,024 + 32 +
  // ln_2 64 + c_fc 4,096 + 128 + c_proj 4,096 + 32 = 12,704, x 2 = 25,408; ln_f 64: 29,184.
  SECTION("with the masks: 512 more stored elements, no parameter delta") {
    const Reconciliation r = reconcile_config(k_tiny_gpt2, tiny_gpt2_tensors(true));
    CHECK(r.inventory_complete);
    CHECK(r.trace_params == 29'184);
    CHECK(r.found.tensors == 30);  // 2 + 2 x 13 + 2
    CHECK(r.found.stored_elements == 29'184 + 2 * 256);
    CHECK(r.logical_params == 29'184);
    CHECK(r.delta_params == 0);
    CHECK(r.expected == r.found);
    CHECK(r.only_in_checkpoint_count == 0);
    CHECK(r.only_in_trace_count == 0);
    CHECK(r.mismatch_count == 0);
    CHECK(r.agrees());
    CHECK(std::any_of(r.explanations.begin(), r.explanations.end(), [](const std::string& line) {
      return line.find("512 elements are buffers") != std::string::npos;
    }));
  }
  SECTION("without them (a re-saved upload): nothing reported missing") {
    const Reconciliation r = reconcile_config(k_tiny_gpt2, tiny_gpt2_tensors(false));
    CHECK(r.found.tensors == 28);
    CHECK(r.logical_params == 29'184);
    CHECK(r.expected == r.found);
    CHECK(r.only_in_trace_count == 0);
    CHECK(r.agrees());
  }
  SECTION("a mask of another shape is named") {
    std::vector<TensorSpec> tensors = tiny_gpt2_tensors(true);
    for (TensorSpec& spec : tensors) {
      if (spec.name == "h.1.attn.bias") spec.shape = {1, 1, 8, 8};
    }
    const Reconciliation r = reconcile_config(k_tiny_gpt2, tensors);
    CHECK(r.mismatch_count == 1);
    REQUIRE(r.mismatches.size() == 1);
    CHECK(r.mismatches[0].name == "h.1.attn.bias");
  }
  SECTION("an nn.Linear-shaped c_attn (not transposed) is a mismatch") {
    std::vector<TensorSpec> tensors = tiny_gpt2_tensors(false);
    for (TensorSpec& spec : tensors) {
      if (spec.name == "h.0.attn.c_attn.weight") spec.shape = {96, 32};
    }
    const Reconciliation r = reconcile_config(k_tiny_gpt2, tensors);
    CHECK(r.mismatch_count == 1);
  }
}

TEST_CASE("a compressed-tensors W4A16 checkpoint reconciles with no bogus delta",
          "[checkpoint][reconcile][compressed_tensors]") {
  // The tiny Llama with its MLPs int4, group 32 (pack-quantized; attention and lm_head ignored).
  nlohmann::json config = nlohmann::json::parse(k_tiny_llama);
  config["quantization_config"] = {{"quant_method", "compressed-tensors"},
                                   {"format", "pack-quantized"},
                                   {"quantization_status", "compressed"},
                                   {"ignore", {"lm_head", "re:.*self_attn.*"}},
                                   {"config_groups",
                                    {{"group_0",
                                      {{"targets", {"Linear"}},
                                       {"weights",
                                        {{"num_bits", 4},
                                         {"type", "int"},
                                         {"strategy", "group"},
                                         {"group_size", 32},
                                         {"symmetric", true},
                                         {"dynamic", false}}}}}}}};
  // The headers as compressed-tensors' pack_quantized.py writes them: each MLP weight becomes
  // weight_packed I32 [out, in / 8], weight_scale BF16 [out, in / 32], weight_shape I64 [2].
  std::vector<TensorSpec> tensors;
  for (const TensorSpec& spec : tiny_llama_tensors()) {
    const bool mlp = spec.name.find(".mlp.") != std::string::npos;
    if (!mlp) {
      tensors.push_back(spec);
      continue;
    }
    const std::string stem = spec.name.substr(0, spec.name.size() - std::string(".weight").size());
    const std::int64_t out = spec.shape[0];
    const std::int64_t in = spec.shape[1];
    tensors.push_back({stem + ".weight_packed", "I32", {out, in / 8}});
    tensors.push_back({stem + ".weight_scale", "BF16", {out, in / 32}});
    tensors.push_back({stem + ".weight_shape", "I64", {2}});
  }
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::StorageEstimate storage = trace::estimate_storage(model, params);
  const Reconciliation r =
      trace::checkpoint::reconcile_model(model, params, storage, shards_of(tensors), "synthetic");
  // Parameters as the plain checkpoint: 202,048. Stored: the 6 MLP Linears' 49,152 values as
  // 6,144 int32 + 1,536 scales + 12 shape elements; 21 + 6 x 2 = 33 tensors.
  CHECK(r.logical_params == 202'048);
  CHECK(r.delta_params == 0);
  CHECK(r.found.tensors == 33);
  CHECK(r.found.stored_elements == 202'048 - 49'152 + 6'144 + 1'536 + 12);
  CHECK(r.expected == r.found);
  CHECK(r.only_in_checkpoint_count == 0);
  CHECK(r.only_in_trace_count == 0);
  CHECK(r.mismatch_count == 0);
  CHECK(r.agrees());
}

namespace {

// A small PegasusForConditionalGeneration: vocab 100, d_model 16, one encoder and one decoder
// layer, ffn 32, 8 positions, float32, the shared table tied to the head.
constexpr const char* k_tiny_pegasus = R"({
  "model_type": "pegasus", "architectures": ["PegasusForConditionalGeneration"],
  "vocab_size": 100, "d_model": 16, "encoder_layers": 1, "decoder_layers": 1,
  "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 32,
  "decoder_ffn_dim": 32, "max_position_embeddings": 8, "torch_dtype": "float32"
})";

// modeling_pegasus.py's state dict: model.shared, per stack embed_positions (when the upload
// keeps it), layer_norm and BART's layer modules; final_logits_bias a buffer.
std::vector<TensorSpec> tiny_pegasus_tensors(bool with_positions) {
  std::vector<TensorSpec> t = {{"model.shared.weight", "F32", {100, 16}}};
  const auto linear = [&](const std::string& at, std::int64_t out, std::int64_t in) {
    t.push_back({at + ".weight", "F32", {out, in}});
    t.push_back({at + ".bias", "F32", {out}});
  };
  const auto norm = [&](const std::string& at) {
    t.push_back({at + ".weight", "F32", {16}});
    t.push_back({at + ".bias", "F32", {16}});
  };
  for (const std::string stack : {"encoder", "decoder"}) {
    const std::string at = "model." + stack;
    if (with_positions) t.push_back({at + ".embed_positions.weight", "F32", {8, 16}});
    norm(at + ".layer_norm");
    std::vector<std::string> attentions{"self_attn"};
    if (stack == "decoder") attentions.push_back("encoder_attn");
    for (const std::string& attention : attentions) {
      for (const char* projection : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        linear(at + ".layers.0." + attention + "." + projection, 16, 16);
      }
      norm(at + ".layers.0." + attention + "_layer_norm");
    }
    linear(at + ".layers.0.fc1", 32, 16);
    linear(at + ".layers.0.fc2", 16, 32);
    norm(at + ".layers.0.final_layer_norm");
  }
  t.push_back({"final_logits_bias", "F32", {1, 100}});
  return t;
}

}  // namespace

TEST_CASE("Pegasus: an upload without its sinusoidal tables reconciles, and so does one with them",
          "[checkpoint][reconcile]") {
  // Parameters: shared 1,600; two 8 x 16 position tables 256; two final layer_norms 64; the
  // encoder layer 4 x (256 + 16) + 32 + (512 + 32) + (512 + 16) + 32 = 2,224; the decoder layer
  // that + a cross-attention 1,088 + its norm 32 = 3,344. Total 7,488; without the tables 7,232.
  SECTION("as convert_pegasus_tf_to_pytorch.py saves it: the two tables left out") {
    const Reconciliation r = reconcile_config(k_tiny_pegasus, tiny_pegasus_tensors(false));
    CHECK(r.inventory_complete);
    CHECK(r.trace_params == 7'488);
    CHECK(r.logical_params == 7'232);  // 7,332 stored elements less the 100-element buffer
    CHECK(r.unstored_params == 256);
    CHECK(r.delta_params == 0);
    CHECK(r.found.tensors == 1 + 2 * 2 + 16 + 26 + 1);  // layers: 8 + 2 + 4 + 2; + 8 + 2
    CHECK(r.expected == r.found);
    CHECK(r.only_in_trace_count == 0);
    CHECK(r.agrees());
    CHECK(std::any_of(r.explanations.begin(), r.explanations.end(), [](const std::string& line) {
      return line.find("256 parameters are fixed tables this upload does not store") !=
                 std::string::npos &&
             line.find("model.decoder.embed_positions.weight") != std::string::npos;
    }));
    const nlohmann::json json = trace::checkpoint_json(r);
    CHECK(json["unstored_params"] == 256);
    CHECK(json["delta_params"] == 0);
    CHECK(trace::render_checkpoint_text(r).find("0 (tables not stored)") != std::string::npos);
  }
  SECTION("saved with them: matched like any tensor, nothing unstored") {
    const Reconciliation r = reconcile_config(k_tiny_pegasus, tiny_pegasus_tensors(true));
    CHECK(r.logical_params == 7'488);
    CHECK(r.unstored_params == 0);
    CHECK(r.delta_params == 0);
    CHECK(r.agrees());
  }
  SECTION("a missing layer weight is still reported, and the delta counts it") {
    std::vector<TensorSpec> tensors = tiny_pegasus_tensors(false);
    std::erase_if(tensors, [](const TensorSpec& spec) {
      return spec.name == "model.encoder.layers.0.fc1.weight";
    });
    const Reconciliation r = reconcile_config(k_tiny_pegasus, tensors);
    CHECK(r.only_in_trace_count == 1);
    CHECK(r.delta_params == -512);
    CHECK_FALSE(r.agrees());
  }
}

TEST_CASE("an upload saved from the bare base class reconciles without the wrapper",
          "[checkpoint][reconcile]") {
  // facebook/opt-350m, -6.7b, -13b and -30b were saved from OPTModel: decoder.* for OPT's
  // model.decoder.*, and no lm_head (SOURCES-opt.md). Every parameter of opt-125m's inventory
  // spelled so, in its dtype and shape, must agree; the explanation names the wrapper.
  const trace::ModelDescription model =
      trace::parse_model_config(trace::test::config_text("facebook--opt-125m.json"));
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::checkpoint::Inventory inventory = trace::checkpoint::build_inventory(model);
  REQUIRE(inventory.complete);
  REQUIRE(inventory.bare_prefix == "model.");
  std::vector<TensorSpec> bare;
  std::vector<TensorSpec> wrapped;
  for (const auto& tensor : inventory.tensors) {
    if (tensor.buffer) continue;
    REQUIRE(tensor.name.starts_with("model."));
    bare.push_back({tensor.name.substr(6), std::string(tensor.dtype), tensor.shape});
    wrapped.push_back({tensor.name, std::string(tensor.dtype), tensor.shape});
  }
  const Reconciliation r =
      trace::checkpoint::reconcile(inventory, shards_of(bare), params.total, {});
  CHECK(r.only_in_checkpoint_count == 0);
  CHECK(r.only_in_trace_count == 0);
  CHECK(r.agrees());
  CHECK(std::any_of(r.explanations.begin(), r.explanations.end(), [](const std::string& line) {
    return line.find("lack the 'model.' wrapper") != std::string::npos;
  }));
  // The wrapped spelling agrees as well, without the explanation.
  const Reconciliation w =
      trace::checkpoint::reconcile(inventory, shards_of(wrapped), params.total, {});
  CHECK(w.agrees());
  CHECK(std::none_of(w.explanations.begin(), w.explanations.end(), [](const std::string& line) {
    return line.find("wrapper") != std::string::npos;
  }));
  // A family without a bare spelling finds nothing under a stripped name: the tiny Llama's
  // tensors without "model." are all only in the checkpoint but lm_head.weight.
  std::vector<TensorSpec> stripped = tiny_llama_tensors();
  for (TensorSpec& tensor : stripped) {
    if (tensor.name.starts_with("model.")) tensor.name.erase(0, 6);
  }
  const Reconciliation llama = reconcile_config(k_tiny_llama, stripped);
  CHECK(llama.only_in_checkpoint_count == static_cast<std::int64_t>(stripped.size()) - 1);
  CHECK_FALSE(llama.agrees());
}
