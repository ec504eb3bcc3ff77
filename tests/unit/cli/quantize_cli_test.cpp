// Serving an unquantized checkpoint quantized (--quantize, and --dtype fp8 / int8 / int4): the
// weights are priced as that format's checkpoint stores them, the layers' Linear weights
// quantized and everything else at 16 bits. Expected bytes are derived by hand from the shapes,
// and for FP8 blocks from a published checkpoint's Hub total.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

using trace::test::CliResult;
using trace::test::TempDir;

CliResult run_cli(const std::vector<std::string>& args) {
  return trace::test::run_cli_offline(args);
}

nlohmann::json serve_plan(std::vector<std::string> args) {
  args.insert(args.end(), {"--mode", "serve", "--json"});
  const CliResult result = run_cli(args);
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == trace::cli::k_exit_ok);
  return nlohmann::json::parse(result.out);
}

std::int64_t serve_weight_bytes(const std::vector<std::string>& args) {
  return serve_plan(args)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
}

// Llama-3.1-8B's Linear weights inside its 32 layers: q 4096x4096, k and v 1024x4096, o
// 4096x4096, gate and up 14336x4096, down 4096x14336 = 218,103,808 a layer, 7 matrices.
constexpr std::int64_t k_llama8b_linear_values = 32LL * 218'103'808;  // 6,979,321,856
constexpr std::int64_t k_llama8b_matrices = 32LL * 7;
// Everything else (embeddings, head, norms) stays BF16: 8,030,261,248 - the Linear values.
constexpr std::int64_t k_llama8b_rest_bytes = 2 * (8'030'261'248LL - k_llama8b_linear_values);

}  // namespace

TEST_CASE("quantized serving, awq: 4-bit values, F16 scales and packed zeros per 128 inputs",
          "[cli][quantize]") {
  // qweight: values / 8 int32 = values / 2 bytes; scales: values / 128 F16; qzeros: values /
  // 128 / 8 int32 = values / 256 bytes.
  const std::int64_t v = k_llama8b_linear_values;
  const std::int64_t expected = v / 2 + v / 128 * 2 + v / 256 + k_llama8b_rest_bytes;
  CHECK(expected == 5'727'854'592);
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--quantize", "awq"}) == expected);
  // --dtype int4 names the same layout: no engine casts embeddings and norms to 4 bits.
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--dtype", "int4"}) == expected);
}

TEST_CASE("quantized serving, gptq: AWQ's tensors and an int32 g_idx per input column",
          "[cli][quantize]") {
  // g_idx: q 4096, k 4096, v 4096, o 4096, gate 4096, up 4096, down 14336 columns a layer.
  const std::int64_t g_idx_bytes = 32LL * (6 * 4096 + 14336) * 4;
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--quantize", "gptq"}) ==
        5'727'854'592 + g_idx_bytes);
}

TEST_CASE("quantized serving, nf4: bitsandbytes' double-quantized blocks of 64",
          "[cli][quantize]") {
  // U8: two values a byte + an absmax per 64 values. F32 per matrix: an absmax per 256 blocks,
  // the 256-entry nested code book and the 16-entry nf4 map. Blocks of 64 per layer: q and o
  // 262,144, k and v 65,536, gate, up and down 917,504, so ceil(blocks / 256) = 1,024 + 1,024 +
  // 256 + 256 + 3 x 3,584 = 13,312, and 7 x (256 + 16) code-book entries.
  const std::int64_t v = k_llama8b_linear_values;
  const std::int64_t f32 = 32LL * (13'312 + 7 * 272);
  const std::int64_t expected = v / 2 + v / 64 + 4 * f32 + k_llama8b_rest_bytes;
  CHECK(expected == 5'702'539'264);
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--quantize", "nf4"}) == expected);
}

TEST_CASE("quantized serving, nvfp4: two values a byte, an FP8 scale per 16, two F32 scalars",
          "[cli][quantize]") {
  const std::int64_t v = k_llama8b_linear_values;
  const std::int64_t expected = v / 2 + v / 16 + 8 * k_llama8b_matrices + k_llama8b_rest_bytes;
  CHECK(expected == 6'027'749'120);
  const nlohmann::json plan = serve_plan({"meta-llama/Llama-3.1-8B", "--quantize", "nvfp4"});
  CHECK(plan["estimate"]["breakdown"]["weights"].get<std::int64_t>() == expected);
  CHECK(plan["workload"]["serve_dtype"] == "quantized (nvfp4)");
}

TEST_CASE("quantized serving, fp8 and int8: a byte a value, an F32 scale a matrix or a row",
          "[cli][quantize]") {
  const std::int64_t v = k_llama8b_linear_values;
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--quantize", "fp8"}) ==
        v + 4 * k_llama8b_matrices + k_llama8b_rest_bytes);
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--dtype", "fp8"}) ==
        v + 4 * k_llama8b_matrices + k_llama8b_rest_bytes);
  // Output rows a layer: q 4096 + k 1024 + v 1024 + o 4096 + gate 14336 + up 14336 + down 4096.
  const std::int64_t rows = 32LL * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096);
  CHECK(serve_weight_bytes({"meta-llama/Llama-3.1-8B", "--quantize", "int8"}) ==
        v + 4 * rows + k_llama8b_rest_bytes);
}

TEST_CASE("quantized serving, fp8-block: the published FP8 checkpoint of the same model",
          "[cli][quantize]") {
  // Qwen/Qwen3-30B-A3B-Instruct-2507-FP8: Hub total 30,533,947,392 = the BF16 repo's
  // 30,532,122,624 parameters + 1,824,768 F32 block scales. Its FP8 values are the 48 layers'
  // Linears: attention 2048 x (4096 + 2 x 512 + 4096) + 128 experts x 3 x 768 x 2048.
  const std::int64_t fp8_values = 48LL * (2048LL * 9216 + 128LL * 3 * 768 * 2048);
  const std::int64_t scales = 30'533'947'392LL - 30'532'122'624LL;
  const std::int64_t expected = fp8_values + 4 * scales + 2 * (30'532'122'624LL - fp8_values);
  CHECK(serve_weight_bytes({"Qwen/Qwen3-30B-A3B", "--quantize", "fp8-block"}) == expected);
}

TEST_CASE("quantized serving runs FP8 and FP4 matmuls where the card has them", "[cli][quantize]") {
  const auto compute = [](const std::string& scheme, const std::string& gpu) {
    const CliResult result =
        run_cli({"meta-llama/Llama-3.1-8B", "--quantize", scheme, "--gpu", gpu, "--json"});
    REQUIRE(result.exit_code == trace::cli::k_exit_ok);
    return nlohmann::json::parse(result.out)["serving"]["compute_dtype"].get<std::string>();
  };
  CHECK(compute("nvfp4", "b200") == "nvfp4");
  CHECK(compute("nvfp4", "h100-80gb") == "fp8");  // no FP4 tensor cores: its FP8 path
  CHECK(compute("fp8", "h100-80gb") == "fp8");
  CHECK(compute("awq", "h100-80gb") == "bf16");  // weight-only: dequantized, 16-bit matmuls
}

TEST_CASE("quantized serving takes a hybrid model's Mamba projections too", "[cli][quantize]") {
  // One Mamba-2 layer and one MLP layer. in_proj: 2 x d_inner (512) + 2 x groups (2) x state
  // (16) + heads (8) = 1,096 outputs from 256; out_proj 256 x 512; the MLP 1,024 x 256 twice.
  const nlohmann::json config = {{"model_type", "nemotron_h"},
                                 {"vocab_size", 1000},
                                 {"hidden_size", 256},
                                 {"num_hidden_layers", 2},
                                 {"hybrid_override_pattern", "M-"},
                                 {"num_attention_heads", 4},
                                 {"num_key_value_heads", 2},
                                 {"head_dim", 64},
                                 {"intermediate_size", 1024},
                                 {"mamba_num_heads", 8},
                                 {"mamba_head_dim", 64},
                                 {"n_groups", 2},
                                 {"ssm_state_size", 16},
                                 {"conv_kernel", 4},
                                 {"expand", 2},
                                 {"use_conv_bias", true},
                                 {"mamba_proj_bias", false},
                                 {"mlp_bias", false},
                                 {"use_bias", false},
                                 {"attention_bias", false},
                                 {"mlp_hidden_act", "relu2"},
                                 {"tie_word_embeddings", false},
                                 {"max_position_embeddings", 4096},
                                 {"torch_dtype", "bfloat16"}};
  const std::int64_t quantized = 1096LL * 256 + 256LL * 512 + 2 * 1024LL * 256;
  // Everything else: embedding and head 1000 x 256 each; the Mamba layer's conv1d over
  // d_inner + 2 x groups x state = 576 channels (4 taps + a bias each), A_log, D and dt_bias
  // (8 each) and its gated norm (512); a norm per layer (256 each) and the final one (256).
  const std::int64_t total = 2 * 1000LL * 256 + quantized + 576 * 5 + 3 * 8 + 512 + 2 * 256 + 256;
  CHECK(total == 1'452'120);
  const TempDir dir;
  const std::string path = dir.write("config.json", config.dump());
  // F8 values + an F32 scale for each of the 4 matrices + the rest at BF16.
  CHECK(serve_weight_bytes({path, "--quantize", "fp8"}) ==
        quantized + 4 * 4 + 2 * (total - quantized));
}

TEST_CASE("trace check names the quantized layout it checked", "[cli][quantize][check]") {
  // Llama-3.1-70B in AWQ: 80 layers x (8192 x (8192 + 2 x 1024 + 8192) + 3 x 28672 x 8192)
  // = 68,451,041,280 Linear values at 4 bits with F16 scales and zeros, and 4.2 GB of BF16
  // embedding, head and norms: weights of 37.0 GiB, where BF16 needs 131.4 GiB.
  const CliResult result = run_cli({"check", "meta-llama/Llama-3.1-70B", "--mode", "serve", "--gpu",
                                    "h100-80gb", "--quantize", "awq"});
  CHECK(result.exit_code == trace::cli::k_exit_ok);
  CHECK(result.out.rfind("fits: meta-llama/Llama-3.1-70B serve awq on 1x h100-80gb: ", 0) == 0);
  const CliResult json = run_cli({"check", "meta-llama/Llama-3.1-70B", "--mode", "serve", "--gpu",
                                  "h100-80gb", "--quantize", "awq", "--json"});
  CHECK(nlohmann::json::parse(json.out)["serve_dtype"] == "awq");
  const CliResult bf16 =
      run_cli({"check", "meta-llama/Llama-3.1-70B", "--mode", "serve", "--gpu", "h100-80gb"});
  CHECK(bf16.exit_code == trace::cli::k_exit_does_not_fit);
  CHECK(bf16.out.rfind("does not fit: meta-llama/Llama-3.1-70B serve on 1x h100-80gb: ", 0) == 0);
}

TEST_CASE("quantized serving: --quantize refuses what it cannot mean",
          "[cli][quantize][bad_input]") {
  const auto refused = [](const std::vector<std::string>& args, const std::string& needle) {
    const CliResult result = run_cli(args);
    INFO("stderr: " << result.err);
    CHECK(result.exit_code == trace::cli::k_exit_bad_input);
    CHECK(trace::test::line_count(result.err) == 1);
    CHECK(result.err.find(needle) != std::string::npos);
  };
  refused({"meta-llama/Llama-3.1-8B", "--quantize", "int3"}, "awq, gptq");
  refused({"meta-llama/Llama-3.1-8B", "--quantize", "gptq", "--dtype", "int4"}, "give one");
  // A checkpoint already quantized is served in its own format.
  refused({"openai/gpt-oss-20b", "--quantize", "awq"}, "already quantized (mxfp4)");
}

TEST_CASE("LoRA over a quantized checkpoint holds its base as stored", "[cli][quantize][lora]") {
  // TheBloke's Mixtral-8x7B-Instruct AWQ (4 bits, group 128, zero points, router kept F16).
  // Linear values a layer: attention 4096 x (4096 + 1024 + 1024 + 4096) = 41,943,040, experts
  // 8 x 3 x 14336 x 4096 = 1,409,286,144; x 32 layers = 46,439,333,888 values V.
  const std::int64_t v = 46'439'333'888;
  const std::int64_t stored = v / 2 + v / 128 * 2 + v / 256 + 2 * (46'702'792'704LL - v);
  CHECK(stored == 24'653'602'816);
  // Adapters at r 16 on every Linear but the router: a layer's q and o 16 x (4096 + 4096), k
  // and v 16 x (4096 + 1024), experts 8 x 3 x 16 x (4096 + 14336); fp32.
  const std::int64_t adapters = 32LL * (2 * 16 * 8192 + 2 * 16 * 5120 + 8 * 3 * 16 * 18432);
  CHECK(adapters == 240'123'904);
  // Each Linear computes through a bf16 copy of its weight: the largest, 14336 x 4096.
  const std::int64_t expected = stored + 4 * adapters + 2 * 14336LL * 4096;
  const std::string awq =
      trace::test::config_path("TheBloke--Mixtral-8x7B-Instruct-v0.1-AWQ.reconstructed.json");
  for (const char* mode : {"lora", "qlora"}) {
    INFO(mode);
    const CliResult result = run_cli({awq, "--mode", mode, "--seq-len", "1024", "--json"});
    REQUIRE(result.exit_code == trace::cli::k_exit_ok);
    const nlohmann::json plan = nlohmann::json::parse(result.out);
    CHECK(plan["estimate"]["breakdown"]["weights"].get<std::int64_t>() == expected);
    CHECK(plan["estimate"]["read_as"].get<std::string>().find("the checkpoint's quantized base") !=
          std::string::npos);
  }
  // The same model unquantized holds its 46.7B parameters at bf16.
  const CliResult bf16 =
      run_cli({"mistralai/Mixtral-8x7B-v0.1", "--mode", "lora", "--seq-len", "1024", "--json"});
  REQUIRE(bf16.exit_code == trace::cli::k_exit_ok);
  CHECK(nlohmann::json::parse(bf16.out)["estimate"]["breakdown"]["weights"].get<std::int64_t>() ==
        2 * 46'702'792'704LL + 4 * adapters);
}

TEST_CASE("serving AWQ Mixtral as vLLM 0.2 did: split-K partial sums, whole experts",
          "[cli][quantize][serve]") {
  const std::string awq =
      trace::test::config_path("TheBloke--Mixtral-8x7B-Instruct-v0.1-AWQ.reconstructed.json");
  const auto activations = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {awq,         "--mode", "serve",           "--gpus", "2",
                                     "--context", "32768",  "--prefill-chunk", "0",      "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = run_cli(args);
    REQUIRE(result.exit_code == trace::cli::k_exit_ok);
    return nlohmann::json::parse(result.out)["estimate"]["breakdown"]["activations"]
        .get<std::int64_t>();
  };
  // The whole 32,768-token prompt in one pass at TP 2. Today's fused MoE: 8 router logits and
  // the 4,096-wide output, per routed copy (top 2) w13 14,336, act 7,168 and w2 4,096; plus the
  // input and residual 8,192: 4,104 + 2 x 25,600 + 8,192 = 63,496 fp16 values per token.
  CHECK(activations({}) == 63'496LL * 32'768 * 2);
  // vLLM 0.2.7: each rank's experts whole on every token, w3's output and its 8 partial sums
  // beside act(w1): 8 + 4,096 + 10 x 14,336 + 8,192 = 155,656 (9.50 GiB).
  CHECK(activations({"--awq-split-k", "8", "--moe-dense-experts"}) == 155'656LL * 32'768 * 2);
  const CliResult refused = run_cli({awq, "--mode", "serve", "--awq-split-k", "65"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  // On weights that are not AWQ's and a model without experts, the plan says the flags change
  // nothing instead of ignoring them.
  const CliResult dense = run_cli({"meta-llama/Llama-3.1-8B", "--mode", "serve", "--awq-split-k",
                                   "8", "--moe-dense-experts", "--json"});
  REQUIRE(dense.exit_code == trace::cli::k_exit_ok);
  const std::string notes = nlohmann::json::parse(dense.out)["notes"].dump();
  CHECK(notes.find("--awq-split-k changes nothing here") != std::string::npos);
  CHECK(notes.find("--moe-dense-experts changes nothing here") != std::string::npos);
}

TEST_CASE("LoRA over a bitsandbytes 4-bit checkpoint is QLoRA over its nf4 base",
          "[cli][quantize][lora]") {
  nlohmann::json config = {{"model_type", "llama"},     {"vocab_size", 32000},
                           {"hidden_size", 2048},       {"num_hidden_layers", 4},
                           {"num_attention_heads", 16}, {"num_key_value_heads", 4},
                           {"intermediate_size", 5632}, {"max_position_embeddings", 4096},
                           {"torch_dtype", "bfloat16"}};
  const TempDir dir;
  const std::string plain = dir.write("plain/config.json", config.dump());
  config["quantization_config"] = {{"quant_method", "bitsandbytes"},
                                   {"load_in_4bit", true},
                                   {"bnb_4bit_quant_type", "nf4"},
                                   {"bnb_4bit_use_double_quant", true}};
  const std::string stored = dir.write("bnb/config.json", config.dump());
  const auto weights = [](const std::vector<std::string>& args) {
    const CliResult result = run_cli(args);
    REQUIRE(result.exit_code == trace::cli::k_exit_ok);
    return nlohmann::json::parse(result.out)["estimate"]["breakdown"]["weights"]
        .get<std::int64_t>();
  };
  const std::int64_t qlora = weights({plain, "--mode", "qlora", "--json"});
  CHECK(weights({stored, "--mode", "lora", "--json"}) == qlora);
  CHECK(weights({stored, "--mode", "qlora", "--json"}) == qlora);
  // and not the bf16 base a plain LoRA holds
  CHECK(weights({plain, "--mode", "lora", "--json"}) > qlora);
}

TEST_CASE("LoRA over an MXFP4 checkpoint trains it dequantized, and says so",
          "[cli][quantize][lora]") {
  // gpt-oss-20b: 20,914,757,184 parameters (its Hub total). Transformers dequantizes MXFP4 for
  // training (Mxfp4Config(dequantize=True)), so the frozen base is bf16 beside fp32 adapters.
  const CliResult result = run_cli({"openai/gpt-oss-20b", "--mode", "lora", "--json"});
  REQUIRE(result.exit_code == trace::cli::k_exit_ok);
  const nlohmann::json plan = nlohmann::json::parse(result.out);
  const nlohmann::json& estimate = plan["estimate"];
  CHECK(estimate["breakdown"]["weights"].get<std::int64_t>() -
            4 * estimate["trainable_params"].get<std::int64_t>() ==
        2 * 20'914'757'184LL);
  CHECK(estimate["read_as"].get<std::string>().find("quantized base") == std::string::npos);
  bool said = false;
  for (const nlohmann::json& note : plan["notes"]) {
    said = said || note.get<std::string>().find("mxfp4 checkpoint is trained dequantized") !=
                       std::string::npos;
  }
  CHECK(said);
}
