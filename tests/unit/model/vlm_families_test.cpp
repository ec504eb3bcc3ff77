// Vision-language models (mllama, qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe): exact totals
// against the published checkpoint counts and the text / vision split derived by hand from the
// tensor shapes (tests/data/configs/SOURCES-vlm.md, docs/parameters.md section 12), the
// cross-attention KV cache over image tokens, and the config errors.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/layer_graph.hpp"
#include "trace/model/model_config.hpp"

namespace {

using trace::test::fixture;

constexpr const char* k_mllama = "meta-llama--Llama-3.2-11B-Vision.reconstructed.json";
constexpr const char* k_qwen2_vl = "Qwen--Qwen2-VL-72B-Instruct.reconstructed.json";
constexpr const char* k_qwen2_5_vl = "Qwen--Qwen2.5-VL-72B-Instruct.reconstructed.json";

trace::ParameterCount count_json(const nlohmann::json& config) {
  return trace::count_parameters(trace::parse_model_config(config.dump()));
}

nlohmann::json load(const char* name) {
  return nlohmann::json::parse(trace::test::config_text(name));
}

}  // namespace

TEST_CASE("Llama-3.2-11B-Vision: 10,670,220,835 (text 9,775,192,080)", "[vlm][golden]") {
  const trace::ModelDescription model = fixture(k_mllama);
  const trace::ParameterCount count = trace::count_parameters(model);
  CHECK(count.total == 10'670'220'835);
  // Vision tower 863,567,379 + multi_modal_projector 7680 x 4096 + 4096.
  CHECK(count.vision == 863'567'379 + 31'461'376);
  CHECK(count.total - count.vision == 9'775'192'080);
  // 8 cross-attention layers: no self-attention, q/k/v/o + q_norm / k_norm [128].
  const trace::Stack& decoder = model.stacks.front();
  REQUIRE(decoder.name == "decoder");
  REQUIRE(decoder.blocks.size() == 40);
  int cross = 0;
  for (const trace::Block& block : decoder.blocks) cross += block.attention.is_cross ? 1 : 0;
  CHECK(cross == 8);
  CHECK(decoder.blocks[3].attention.is_cross);
  CHECK(trace::attention_params(decoder.blocks[3].attention) == 41'943'040 + 2 * 128);
  CHECK(decoder.blocks[3].attention.cross_source_tokens == 4 * 1601);
}

TEST_CASE("Llama-3.2-11B-Vision: cross-attention layers cache one image, not the context",
          "[vlm][memory]") {
  const trace::ModelDescription model = fixture(k_mllama);
  // 32 self-attention layers x 2 x 8 heads x 128 per token; 8 cross layers x 2 x 8 x 128 x 6404
  // image tokens (4 tiles x (40 x 40 patches + class token)) whatever the context.
  const std::int64_t self_per_token = 32LL * 2 * 8 * 128;
  const std::int64_t cross = 8LL * 2 * 8 * 128 * 6404;
  CHECK(trace::kv_cache_bytes(model, 1000, trace::Dtype::bf16) == (self_per_token * 1000 + cross) * 2);
  CHECK(trace::kv_cache_bytes(model, 8000, trace::Dtype::bf16) == (self_per_token * 8000 + cross) * 2);
  // A cross layer's queries see the 6404 image tokens; a self-attention layer's the sequence.
  const std::vector<trace::LayerActivation> layers = trace::layer_activations(model, 2048);
  REQUIRE(layers.size() == 40);
  CHECK(layers[3].attended_tokens == 6404);
  CHECK(layers[4].attended_tokens == 2048);
}

TEST_CASE("Qwen2-VL-72B-Instruct: 73,405,560,320 (vision 699,356,672)", "[vlm][golden]") {
  const trace::ParameterCount count = trace::count_parameters(fixture(k_qwen2_vl));
  CHECK(count.total == 73'405'560'320);
  CHECK(count.vision == 699'356'672);
  CHECK(count.total - count.vision == 72'706'203'648);  // = Qwen2.5-72B-Instruct's text model
}

TEST_CASE("Qwen2-VL-7B-Instruct: 8,291,375,616 (vision 675,759,104)", "[vlm][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen2-VL-7B-Instruct.reconstructed.json"));
  CHECK(count.total == 8'291'375'616);
  CHECK(count.vision == 675'759'104);
}

TEST_CASE("Qwen2.5-VL: 72B 73,406,351,360 by derivation / 7B and 3B Hub totals", "[vlm][golden]") {
  const trace::ParameterCount count = trace::count_parameters(fixture(k_qwen2_5_vl));
  CHECK(count.total == 73'406'351'360);
  CHECK(count.vision == 700'147'712);
  CHECK(count.total - count.vision == 72'706'203'648);

  // The same tower on the published 7B and 3B text models checks the vision formula against
  // exact Hub totals.
  nlohmann::json seven = load(k_qwen2_5_vl);
  seven.update({{"hidden_size", 3584}, {"intermediate_size", 18944}, {"num_hidden_layers", 28},
                {"num_attention_heads", 28}, {"num_key_value_heads", 4}});
  seven["vision_config"]["out_hidden_size"] = 3584;
  const trace::ParameterCount seven_count = count_json(seven);
  CHECK(seven_count.total == 8'292'166'656);
  CHECK(seven_count.vision == 676'550'144);

  // The 3B (H 2048, 36 layers of 16 / 2 heads, MLP 11008, vocabulary 151,936 tied, the tower
  // into 2048) is a fixture of its own (its checkpoint names: vlm_names_test.cpp).
  CHECK(trace::count_parameters(fixture("Qwen--Qwen2.5-VL-3B-Instruct.reconstructed.json")).total ==
        3'754'622'976);
}

TEST_CASE("Qwen2.5-VL config nested in text_config reads the same", "[vlm]") {
  nlohmann::json flat = load(k_qwen2_5_vl);
  nlohmann::json nested = flat;
  nlohmann::json text = nlohmann::json::object();
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads", "num_key_value_heads", "vocab_size"}) {
    text[key] = flat[key];
    nested.erase(key);
  }
  nested["text_config"] = text;
  CHECK(count_json(nested).total == count_json(flat).total);
}

TEST_CASE("Qwen3-VL-30B-A3B-Instruct: 31,070,754,032 (vision 538,631,408)", "[vlm][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen3-VL-30B-A3B-Instruct.reconstructed.json"));
  CHECK(count.total == 31'070'754'032);
  CHECK(count.vision == 538'631'408);
  CHECK(count.total - count.vision == 30'532'122'624);  // = Qwen3-30B-A3B
  // 48 layers x 120 idle experts x 3 x 2048 x 768; the tower runs per image.
  CHECK(count.active == 30'532'122'624 - 48LL * 120 * 3 * 2048 * 768);
}

TEST_CASE("Qwen3-VL-8B-Instruct: Hub total 8,767,123,696", "[vlm][golden]") {
  const trace::ParameterCount count =
      trace::count_parameters(fixture("Qwen--Qwen3-VL-8B-Instruct.reconstructed.json"));
  CHECK(count.total == 8'767'123'696);
  CHECK(count.vision == 576'388'336);
  CHECK(count.total - count.vision == 8'190'735'360);  // = Qwen3-8B
}

TEST_CASE("VLM layer graphs sum to the totals", "[vlm][graph]") {
  for (const char* name : {k_mllama, k_qwen2_vl, k_qwen2_5_vl,
                           "Qwen--Qwen3-VL-30B-A3B-Instruct.reconstructed.json"}) {
    INFO(name);
    const trace::ModelDescription model = fixture(name);
    const trace::LayerGraph graph = trace::build_layer_graph(model, 512);
    std::int64_t sum = 0;
    for (const trace::GraphNode& node : graph.nodes) sum += node.params;
    CHECK(sum == trace::count_parameters(model).total);
  }
}

TEST_CASE("VLM config errors name the key", "[vlm][errors]") {
  nlohmann::json mllama = load(k_mllama);
  mllama["text_config"].erase("cross_attention_layers");
  CHECK_THROWS_AS(trace::parse_model_config(mllama.dump()), trace::ConfigError);
  CHECK_THROWS_WITH(trace::parse_model_config(mllama.dump()),
                    Catch::Matchers::Contains("text_config.cross_attention_layers"));
  mllama = load(k_mllama);
  mllama["text_config"]["cross_attention_layers"] = {3, 40};
  CHECK_THROWS_WITH(trace::parse_model_config(mllama.dump()),
                    Catch::Matchers::Contains("cross_attention_layers"));
  mllama = load(k_mllama);
  mllama["vision_config"]["vision_output_dim"] = 6400;
  CHECK_THROWS_WITH(trace::parse_model_config(mllama.dump()),
                    Catch::Matchers::Contains("vision_config.vision_output_dim"));
  mllama = load(k_mllama);
  mllama["vision_config"].erase("supported_aspect_ratios");
  CHECK_THROWS_WITH(trace::parse_model_config(mllama.dump()),
                    Catch::Matchers::Contains("vision_config.supported_aspect_ratios"));

  nlohmann::json qwen2 = load(k_qwen2_vl);
  qwen2["vision_config"].erase("embed_dim");
  CHECK_THROWS_WITH(trace::parse_model_config(qwen2.dump()),
                    Catch::Matchers::Contains("vision_config.embed_dim"));
  nlohmann::json qwen25 = load(k_qwen2_5_vl);
  qwen25["vision_config"].erase("out_hidden_size");
  CHECK_THROWS_WITH(trace::parse_model_config(qwen25.dump()),
                    Catch::Matchers::Contains("vision_config.out_hidden_size"));
  qwen25.erase("vision_config");
  CHECK_THROWS_WITH(trace::parse_model_config(qwen25.dump()),
                    Catch::Matchers::Contains("vision_config"));
}

TEST_CASE("Qwen-VL-Chat (model_type qwen): 9,656,935,168, its text model Qwen-7B's 7,721,324,544",
          "[vlm][qwen][golden]") {
  const trace::ModelDescription model = fixture("Qwen--Qwen-VL-Chat.reconstructed.json");
  CHECK(model.model_type == "qwen");
  // max_position_embeddings (8,192) over the training seq_length (2,048) the config also gives
  CHECK(model.max_position_embeddings == 8'192);
  const trace::ParameterCount count = trace::count_parameters(model);
  // Published sum(numel) of Qwen-VL (SOURCES-vlm.md).
  CHECK(count.total == 9'656'935'168LL);
  // QWenBlock: ln_1, c_attn (weight + unconditional bias), c_proj, ln_2, w1, w2, mlp.c_proj.
  const std::int64_t block = 4'096 + (4'096LL * 12'288 + 12'288) + 4'096LL * 4'096 + 4'096 +
                             3 * 4'096LL * 11'008;
  CHECK(block == 202'395'648LL);
  // Qwen-7B as printed at load: 7,721,324,544 (wte and an untied lm_head, ln_f).
  CHECK(count.total - count.vision == 32 * block + 2 * 151'936LL * 4'096 + 4'096);
  CHECK(count.total - count.vision == 7'721'324'544LL);
  // ViT-bigG block: ln_1, in_proj (+ bias), out_proj (+ bias), ln_2, c_fc 1664 -> 8192, c_proj.
  const std::int64_t vit_block = 3'328 + (3 * 1'664LL * 1'664 + 3 * 1'664) +
                                 (1'664LL * 1'664 + 1'664) + 3'328 + (1'664LL * 8'192 + 8'192) +
                                 (8'192LL * 1'664 + 1'664);
  CHECK(vit_block == 38'361'728LL);
  // Resampler: pos_embed and query 256 x 4096, kv_proj 1664 -> 4096, MultiheadAttention(4096)
  // 4 d^2 + 4 d, ln_q and ln_kv.
  const std::int64_t resampler = 2 * 256LL * 4'096 + 1'664LL * 4'096 +
                                 (4 * 4'096LL * 4'096 + 4 * 4'096) + 2 * 8'192;
  CHECK(resampler == 76'054'528LL);
  // conv1 + positional_embedding + ln_pre + blocks + resampler + ln_post + proj.
  CHECK(count.vision == 1'664LL * 3 * 14 * 14 + 256LL * 1'664 + 3'328 + 48 * vit_block +
                            resampler + 8'192 + 4'096LL * 4'096);
  // The tower runs per image: active per text token is the text model.
  CHECK(count.active == 7'721'324'544LL);
  // Multi-head attention, 32 heads of 128: 32 layers x 2 x 4096 x 2 bytes per token.
  CHECK(trace::kv_cache_bytes(model, 1, trace::Dtype::bf16) == 32 * 2 * 4'096 * 2);
}

TEST_CASE("qwen: an odd intermediate_size, a kv width unlike hidden and a bad visual are refused",
          "[vlm][qwen][errors]") {
  const nlohmann::json config = load("Qwen--Qwen-VL-Chat.reconstructed.json");
  nlohmann::json odd = config;
  odd["intermediate_size"] = 22'015;
  CHECK_THROWS_WITH(trace::parse_model_config(odd.dump()),
                    Catch::Contains("intermediate_size") && Catch::Contains("odd"));
  nlohmann::json narrow = config;
  narrow["kv_channels"] = 64;
  CHECK_THROWS_WITH(trace::parse_model_config(narrow.dump()), Catch::Contains("kv_channels"));
  nlohmann::json no_ratio = config;
  no_ratio["visual"].erase("mlp_ratio");
  CHECK_THROWS_WITH(trace::parse_model_config(no_ratio.dump()), Catch::Contains("mlp_ratio"));
  nlohmann::json resampler = config;
  resampler["visual"]["output_dim"] = 4'000;
  CHECK_THROWS_WITH(trace::parse_model_config(resampler.dump()), Catch::Contains("output_dim"));
  // Without `visual`: the plain Qwen-7B count.
  nlohmann::json text_only = config;
  text_only.erase("visual");
  CHECK(count_json(text_only).total == 7'721'324'544LL);
  // Without max_position_embeddings the positions are seq_length's.
  text_only.erase("max_position_embeddings");
  CHECK(trace::parse_model_config(text_only.dump()).max_position_embeddings == 2'048);
}

TEST_CASE("A frozen vision tower: Qwen-VL-Chat trains its 7,721,324,544 text weights",
          "[vlm][qwen][job]") {
  const trace::ModelDescription model = fixture("Qwen--Qwen-VL-Chat.reconstructed.json");
  const trace::ParameterCount count = trace::count_parameters(model);
  constexpr std::int64_t k_total = 9'656'935'168LL;
  constexpr std::int64_t k_text = 7'721'324'544LL;  // the tower: 1,935,610,624
  trace::Job job;
  job.mode = trace::JobMode::full;
  job.precision = trace::Precision::mixed;
  job.optimizer = trace::Optimizer::adamw;
  job.foreach_step = false;  // no step temporary: the states alone
  job.seq_len = 768;
  const trace::JobEstimate trained = trace::estimate_job(model, count, job);
  // bf16 weights + fp32 master, fp32 gradients and two fp32 moments for every parameter.
  CHECK(trained.trainable_params == k_total);
  CHECK(trained.breakdown.weights == 2 * k_total + 4 * k_total);
  CHECK(trained.breakdown.gradients == 4 * k_total);
  CHECK(trained.breakdown.optimizer == 8 * k_total);
  job.freeze_vision = true;
  const trace::JobEstimate frozen = trace::estimate_job(model, count, job);
  // The tower stays in bf16 beside the text model; master, gradients and moments for the text
  // model only: 50,199,168,512 / 30,885,298,176 / 61,770,596,352 bytes.
  CHECK(frozen.trainable_params == k_text);
  CHECK(frozen.breakdown.weights == 2 * k_total + 4 * k_text);
  CHECK(frozen.breakdown.weights == 50'199'168'512LL);
  CHECK(frozen.breakdown.gradients == 30'885'298'176LL);
  CHECK(frozen.breakdown.optimizer == 61'770'596'352LL);
  // Activations and logits are the text path's either way.
  CHECK(frozen.breakdown.activations == trained.breakdown.activations);
  CHECK(frozen.breakdown.logits == trained.breakdown.logits);
  // ZeRO-2 over 8 GPUs partitions the trained weights' gradients only: an eighth of them
  // (7,721,324,544 / 8 = 965,165,568) in bf16, 1,930,331,136 bytes; in flight in backward,
  // DeepSpeed's 5e8-value bf16 bucket (1,000,000,000 bytes) and the largest gradient, the
  // embedding's 151,936 x 4,096 = 622,329,856 values (1,244,659,712 bytes): 4,174,990,848.
  // The step's own (the bf16 partition twice and the fp32 one, 3,860,662,272: 7,721,324,544)
  // comes after the 768 tokens' activations and logits are freed, and needs less.
  job.gpus = 8;
  job.sharding = trace::Sharding::zero2;
  CHECK(trace::estimate_job(model, count, job).breakdown.gradients == 4'174'990'848LL);
  // LoRA never adapts the tower: the flag changes nothing there.
  job = trace::Job{};
  job.mode = trace::JobMode::lora;
  const std::int64_t lora_total = trace::estimate_job(model, count, job).breakdown.total();
  job.freeze_vision = true;
  CHECK(trace::estimate_job(model, count, job).breakdown.total() == lora_total);
  // A model without a tower has nothing to freeze: said, not ignored.
  nlohmann::json text_only = load("Qwen--Qwen-VL-Chat.reconstructed.json");
  text_only.erase("visual");
  const trace::ModelDescription qwen_7b = trace::parse_model_config(text_only.dump());
  CHECK_THROWS_WITH(trace::estimate_job(qwen_7b, trace::count_parameters(qwen_7b), job),
                    Catch::Contains("--freeze-vision") && Catch::Contains("no vision tower"));
}
