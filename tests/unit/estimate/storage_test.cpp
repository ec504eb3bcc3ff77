// Checkpoint storage against published safetensors totals and a GPTQ layout derived by hand.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::StorageEstimate storage_of(const std::string& text) {
  const trace::ModelDescription model = trace::parse_model_config(text);
  return trace::estimate_storage(model, trace::count_parameters(model));
}

}  // namespace

TEST_CASE("FP8 block scales: stored elements equal the Hub totals that count them", "[storage]") {
  // DeepSeek-V3: logical 684,489,845,504 + 41,540,496 F32 scale_inv = the Hub's 684,531,386,000.
  const trace::StorageEstimate v3 = storage_of(trace::test::catalog_text("deepseek-ai/DeepSeek-V3"));
  CHECK(v3.format == "fp8_block");
  CHECK(v3.scale_elements == 41'540'496);
  CHECK(v3.stored_elements == 684'531'386'000);
  // The routed experts expert parallelism splits are the 58 MoE layers' (the MTP layer's are in
  // mtp_bytes): 256 experts each of 3 FP8 matrices 2,048 x 7,168 with 16 x 56 F32 scales.
  constexpr std::int64_t expert_bytes = 3LL * 2048 * 7168 + 3 * 16 * 56 * 4;
  CHECK(v3.routed_expert_bytes == 58 * 256 * expert_bytes);
  // GLM-5-FP8's Hub total, 753,910,024,032 (logical + 45,885,024 scales).
  CHECK(storage_of(trace::test::config_text("zai-org--GLM-5-FP8.json")).stored_elements ==
        753'910'024'032);
  // Kimi-K2: 62,495,192 block scales (header audit).
  CHECK(storage_of(trace::test::config_text("moonshotai--Kimi-K2-Instruct.json")).scale_elements ==
        62'495'192);
}

TEST_CASE("MXFP4: experts as two values per byte plus a scale per 32", "[storage]") {
  // gpt-oss-20b raw safetensors element sum 11,956,805,184: BF16 1,804,459,584 + U8 blocks
  // 19,110,297,600 / 2 + U8 scales 19,110,297,600 / 32.
  const trace::StorageEstimate oss = storage_of(trace::test::catalog_text("openai/gpt-oss-20b"));
  CHECK(oss.quantized_values == 19'110'297'600);
  CHECK(oss.stored_elements == 11'956'805'184);
  CHECK(oss.scale_elements == 19'110'297'600 / 32);
}

TEST_CASE("GPTQ int4, group 128, by hand", "[storage]") {
  // One llama layer, hidden 256, 4 heads (kv 4), MLP 512, vocab 1000, fp16, untied.
  const nlohmann::json config = {
      {"model_type", "llama"},       {"vocab_size", 1000},        {"hidden_size", 256},
      {"num_hidden_layers", 1},      {"num_attention_heads", 4},  {"intermediate_size", 512},
      {"torch_dtype", "float16"},
      {"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}}}};
  const trace::StorageEstimate storage = storage_of(config.dump());
  // Per matrix [out, in]: qweight I32 in/8 x out, qzeros I32 ceil(in/128) x out/8, scales F16
  // ceil(in/128) x out, g_idx I32 in.
  //  q, k, v, o [256, 256]: 8,192 + 64 + 256 I32, 512 F16 each;
  //  gate, up [512, 256]: 16,384 + 128 + 256 I32, 1,024 F16 each;
  //  down [256, 512]: 16,384 + 128 + 512 I32, 1,024 F16.
  const std::int64_t i32 = 4 * (8'192 + 64 + 256) + 2 * (16'384 + 128 + 256) + (16'384 + 128 + 512);
  const std::int64_t f16_scales = 4 * 512 + 2 * 1'024 + 1'024;
  // The rest in fp16: embedding and head 2 x 256,000, norms 3 x 256.
  const std::int64_t rest = 2 * 256'000 + 3 * 256;
  CHECK(storage.format == "gptq");
  CHECK(storage.quantized_values == 4 * 65'536 + 3 * 131'072);
  CHECK(storage.bytes == 4 * i32 + 2 * f16_scales + 2 * rest);
}
