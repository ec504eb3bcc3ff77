// The third set of added families (gemma3n, whisper, qwen2_audio, minicpmv, glm4v, internvl,
// kimi_vl, deepseek_vl_v2, smolvlm, llava_onevision, aya_vision, apertus, mimo, Ling 2.0): what
// each layout changes besides the golden totals (families_test.cpp, sparse_families_test.cpp).
// Every expected number is derived by hand in its comment from the fixture's hyperparameters.
#include <cmath>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/cost/flops.hpp"
#include "trace/error.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::ModelDescription model_of(const std::string& fixture) {
  return trace::parse_model_config(trace::test::config_text(fixture));
}

nlohmann::json fixture_json(const std::string& name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

std::int64_t total_of(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump())).total;
}

}  // namespace

TEST_CASE("Gemma 3n: KV-shared layers hold no cache of their own", "[families][gemma3n]") {
  // E2B: 30 layers [4 sliding (512), 1 full] x 6; the last num_kv_shared_layers = 10 read the
  // cache of layer 18 (sliding) or 19 (full). The 20 caching layers: 16 sliding, 4 full, each
  // 2 kv heads x 256 x (K and V) = 1,024 values = 2,048 bytes per token in bf16.
  const trace::ModelDescription model = model_of("google--gemma-3n-E2B-it.reconstructed.json");
  const std::vector<trace::Block>& blocks = model.stacks.at(0).blocks;
  REQUIRE(blocks.size() == 30);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    INFO(i);
    CHECK(blocks[i].attention.kv_from_earlier_layer == (i >= 20));
  }
  // 4,096 tokens: 16 x 512 + 4 x 4,096 = 24,576 layer-tokens x 2,048 bytes.
  CHECK(trace::kv_cache_bytes(model, 4096, trace::Dtype::bf16) == 2'048LL * 24'576);
  // Beyond the window only the 4 full layers grow: 2,048 x (16 x 512 + 4 x 32,768).
  CHECK(trace::kv_cache_bytes(model, 32'768, trace::Dtype::bf16) ==
        2'048LL * (16 * 512 + 4 * 32'768));
}

TEST_CASE("Gemma 3n: the per-layer embedding table is a lookup, the towers never active",
          "[families][gemma3n]") {
  // E2B: embed_tokens_per_layer is vocab_size_per_layer_input 262,144 x (30 layers x 256).
  const trace::ModelDescription model = model_of("google--gemma-3n-E2B-it.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  const std::int64_t per_layer_table = 262'144LL * 30 * 256;
  // The head is tied, so embed_tokens stays in; only the per-layer table is a pure lookup.
  CHECK(count.active - count.active_without_embedding == per_layer_table);
  // Google's "effective" E2B size, 1.91B, leaves out both tables (embed_tokens: 262,400 x 2,048).
  const std::int64_t effective = count.active_without_embedding - 262'400LL * 2'048;
  CHECK(std::llround(static_cast<double>(effective) / 1e7) == 191);
  // The audio tower, MobileNetV5 (294,126,912) and both embedders are the inactive part.
  CHECK(count.vision == count.total - count.active);
  CHECK(count.vision > 294'126'912);
}

TEST_CASE("Gemma 3n: an unknown vision tower or a KV-share with no source is refused",
          "[families][gemma3n][errors]") {
  nlohmann::json config = fixture_json("google--gemma-3n-E2B-it.reconstructed.json");
  config["vision_config"]["architecture"] = "mobilenetv5_other";
  CHECK_THROWS_AS(total_of(config), trace::ConfigError);
  config = fixture_json("google--gemma-3n-E2B-it.reconstructed.json");
  // Layers 1..29 shared: layer 4, the first full-attention one, has no earlier full layer.
  config["text_config"]["num_kv_shared_layers"] = 29;
  CHECK_THROWS_AS(total_of(config), trace::ConfigError);
}

TEST_CASE("Qwen2-Audio: the Whisper encoder is a tower, the cache is the text decoder's",
          "[families][qwen2_audio]") {
  // Text: 32 layers, 32 kv heads x 128 (Qwen-7B sizes, MHA): 32 x 2 x 32 x 128 x 2 bytes =
  // 524,288 bytes per token in bf16; the encoder caches nothing.
  const trace::ModelDescription model = model_of("Qwen--Qwen2-Audio-7B.reconstructed.json");
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 524'288);
  // Inactive: the large-v3-sized encoder (conv1 128 x 1280 x 3 + 1280, conv2 1280 x 1280 x 3 +
  // 1280, positions 1500 x 1280, 32 layers x 19,676,160, final LayerNorm 2 x 1280 =
  // 636,968,960) + the projector 1280 x 4096 + 4096 = 5,246,976.
  const trace::ParameterCount count = trace::count_parameters(model);
  const std::int64_t encoder = 128LL * 1280 * 3 + 1280 + 1280LL * 1280 * 3 + 1280 + 1500LL * 1280 +
                               32LL * 19'676'160 + 2 * 1280;
  CHECK(encoder == 636'968'960);
  CHECK(count.total - count.active == encoder + 1280LL * 4096 + 4096);
}

TEST_CASE("MiniCPM-V: the dropped last vision layer and the refused MiniCPM-o",
          "[families][minicpmv]") {
  // V-2_6 stores all 27 SigLIP layers (drop_vision_last_layer false). Each layer: q/k/v/out
  // 4 x (1152^2 + 1152), fc1/fc2 2 x 1152 x 4304 + 4304 + 1152, two LayerNorms 4 x 1152 =
  // 5,308,416 + 4,608 + 9,916,416 + 5,456 + 4,608 = 15,239,504.
  nlohmann::json config = fixture_json("openbmb--MiniCPM-V-2_6.reconstructed.json");
  const std::int64_t all_layers = total_of(config);
  config["drop_vision_last_layer"] = true;
  CHECK(all_layers - total_of(config) == 15'239'504);
  config = fixture_json("openbmb--MiniCPM-V-2_6.reconstructed.json");
  config["init_audio"] = true;
  CHECK_THROWS_AS(total_of(config), trace::ConfigError);
}

TEST_CASE("Ling 2.0 under model_type bailing_moe: MoE layers after the dense ones",
          "[families][bailing_moe]") {
  // The architecture, not the model_type, picks the layout: the Ling 2.0 fixture has
  // BailingMoeV2ForCausalLM and expert biases (one F32 value per expert per MoE layer).
  const trace::ModelDescription model = model_of("inclusionAI--Ling-mini-2.0.reconstructed.json");
  CHECK(model.model_type == "bailing_moe");
  const trace::ParameterCount count = trace::count_parameters(model);
  // Ling-mini-2.0: 19 of its 20 layers are MoE with 256 experts: 4,864 router bias values.
  CHECK(count.router_bias_buffers == 19 * 256);
}

TEST_CASE("Gemma 3n: AltUp's streams in the training activations", "[families][gemma3n]") {
  // E2B: altup_num_inputs 4, hidden 2,048. Each of the 30 layers saves 2 x 4 x 2,048 = 16,384
  // values per token more than a one-stream layer (the predict step's input streams and the
  // correct step's repeated innovation), in bf16: 30 x 16,384 x 2 bytes per token.
  trace::ModelDescription model = model_of("google--gemma-3n-E2B-it.reconstructed.json");
  const trace::MemoryAssumptions assumptions;
  const std::int64_t with_streams = trace::training_activation_bytes(model, 1024, assumptions);
  for (trace::Block& block : model.stacks.at(0).blocks) {
    CHECK(block.residual_streams == 4);
    block.residual_streams = 1;
  }
  const std::int64_t one_stream = trace::training_activation_bytes(model, 1024, assumptions);
  CHECK(with_streams - one_stream == 30LL * 16'384 * 2 * 1024);
}

TEST_CASE("the alias model types build the same tensors", "[families][aliases]") {
  // Gemma3nForCausalLM (gemma3n_text) holds the wrapper's text model only: the total less the
  // towers and embedders.
  const nlohmann::json gemma = fixture_json("google--gemma-3n-E2B-it.reconstructed.json");
  const trace::ParameterCount wrapper =
      trace::count_parameters(trace::parse_model_config(gemma.dump()));
  nlohmann::json text = gemma["text_config"];
  text["model_type"] = "gemma3n_text";
  CHECK(total_of(text) == wrapper.total - wrapper.vision);
  // transformers' glm46v wrapper picks its decoder by text_config.model_type.
  nlohmann::json glm = fixture_json("zai-org--GLM-4.6V-Flash.reconstructed.json");
  const std::int64_t glm4v = total_of(glm);
  glm["model_type"] = "glm46v";
  CHECK(total_of(glm) == glm4v);
  // Ling 2.0 under the type third-party ports give it.
  nlohmann::json ling = fixture_json("inclusionAI--Ling-mini-2.0.reconstructed.json");
  ling["model_type"] = "bailing_moe_v2";
  CHECK(total_of(ling) == 16'255'643'392);
}

TEST_CASE("Whisper: the encoder runs its 1,500 frames whatever the text length",
          "[families][whisper]") {
  // whisper-tiny: d 384, FFN 1,536, 4 + 4 layers, 6 heads. An encoder layer saves per position
  // 2 norm inputs (768) + attention (input, Q, K, V, output: 5 x 384 = 1,920) + plain MLP (input
  // + fc1 output + activation: 384 + 2 x 1,536 = 3,456) = 6,144 values.
  const trace::ModelDescription model = model_of("openai--whisper-tiny.reconstructed.json");
  REQUIRE(model.stacks.at(0).fixed_tokens == 1500);
  // At 750 text tokens each text token carries 1,500 / 750 = 2 frames' worth; the attention
  // sees 1,500 x 1,500 scores = 750 x 3,000.
  const std::vector<trace::LayerActivation> layers = trace::layer_activations(model, 750);
  REQUIRE(layers.size() == 8);
  CHECK(layers[0].values_per_token == 2 * 6'144);
  CHECK(layers[0].input_width == 2 * 384);
  CHECK(layers[0].attended_tokens == 3'000);
  // The decoder's layers stay per text token; their cross-attention sees the 1,500 frames.
  trace::ModelDescription per_token = model;
  per_token.stacks[0].fixed_tokens = 0;
  const std::vector<trace::LayerActivation> unscaled = trace::layer_activations(per_token, 750);
  CHECK(layers[0].values_per_token == 2 * unscaled[0].values_per_token);
  CHECK(layers[4].values_per_token == unscaled[4].values_per_token);

  // FLOPs. An encoder layer's weights: q, v, out 3 x (384^2 + 384), k 384^2, fc1 / fc2
  // 2 x 384 x 1,536 + 1,536 + 384, two LayerNorms 4 x 384 = 590,976 + 1,181,568 + 1,536 =
  // 1,774,080; 4 layers 7,096,320. Training at 750 tokens runs them twice per text token;
  // decoding never (the encoder ran once for the request).
  const trace::ParameterCount count = trace::count_parameters(model);
  const double encoder = 4 * 1'774'080.0;
  CHECK(trace::training_token_flops(model, count, 750).matmul ==
        2 * (static_cast<double>(count.active_without_embedding) + encoder));
  CHECK(trace::decode_token_flops(model, count, 100).matmul ==
        2 * (static_cast<double>(count.active_without_embedding) - encoder));
}
