// compressed-tensors (llm-compressor / vLLM) checkpoints: stored elements, bytes and tensors per
// config group, with targets and ignore matched by name and "re:" pattern, and the errors for
// what trace cannot size. Layout: neuralmagic/compressed-tensors, compressors/
// quantized_compressors/ and quantization/lifecycle/initialize.py; docs/parameters.md,
// "compressed-tensors".
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"
#include "trace/error.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

// A 2-layer Llama: hidden 64, 4 heads / 2 KV heads of 16, MLP 128, vocab 256, untied, BF16.
nlohmann::json toy_llama() {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", 64},
          {"intermediate_size", 128},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"num_hidden_layers", 2},
          {"vocab_size", 256},
          {"max_position_embeddings", 128},
          {"rms_norm_eps", 1e-5},
          {"tie_word_embeddings", false},
          {"torch_dtype", "bfloat16"}};
}

nlohmann::json weights(int bits, const char* type, const char* strategy, int group_size) {
  nlohmann::json args = {{"num_bits", bits},    {"type", type},     {"strategy", strategy},
                         {"symmetric", true},   {"dynamic", false}, {"actorder", nullptr},
                         {"observer", "minmax"}};
  args["group_size"] = group_size > 0 ? nlohmann::json(group_size) : nlohmann::json();
  return args;
}

nlohmann::json ct_config(const char* format, nlohmann::json weight_args, nlohmann::json ignore,
                         nlohmann::json input = nullptr) {
  return {{"quant_method", "compressed-tensors"},
          {"format", format},
          {"quantization_status", "compressed"},
          {"kv_cache_scheme", nullptr},
          {"ignore", std::move(ignore)},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights", std::move(weight_args)},
              {"input_activations", std::move(input)},
              {"output_activations", nullptr}}}}}};
}

trace::StorageEstimate storage_of(const nlohmann::json& config) {
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  return trace::estimate_storage(model, trace::count_parameters(model));
}

std::int64_t dtype_bytes(const trace::StorageEstimate& storage, const std::string& dtype) {
  for (const auto& [name, bytes] : storage.by_dtype) {
    if (name == dtype) return bytes;
  }
  return 0;
}

std::string error_of(const nlohmann::json& config) {
  try {
    (void)storage_of(config);
  } catch (const trace::ConfigError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("compressed-tensors W4A16 group 32 on a toy Llama, attention and lm_head ignored",
          "[compressed_tensors]") {
  nlohmann::json config = toy_llama();
  config["quantization_config"] =
      ct_config("pack-quantized", weights(4, "int", "group", 32), {"lm_head", "re:.*self_attn.*"});
  const trace::StorageEstimate storage = storage_of(config);
  // Quantized: the MLPs only. Per layer gate [128 x 64], up [128 x 64], down [64 x 128].
  //  weight_packed I32 (8 int4 per int32 along the input): gate 128 x 8 = 1,024, up 1,024,
  //    down 64 x 16 = 1,024 -> 3,072 a layer, 6,144 for 2 layers = 24,576 bytes.
  //  weight_scale BF16 (one per 32 inputs): gate 128 x 2 = 256, up 256, down 64 x 4 = 256 ->
  //    768 a layer, 1,536 = 3,072 bytes.
  //  weight_shape I64 [2]: 6 Linears x 2 = 12 elements = 96 bytes.
  // BF16: embed 256 x 64 = 16,384, lm_head 16,384, attention per layer q 4,096 + k 2,048 +
  //  v 2,048 + o 4,096 = 12,288 (x2 = 24,576), norms 2 x 2 x 64 + 64 = 320 -> 57,664 elements
  //  = 115,328 bytes.
  CHECK(dtype_bytes(storage, "I32") == 24'576);
  CHECK(dtype_bytes(storage, "I64") == 96);
  CHECK(dtype_bytes(storage, "BF16") == 3'072 + 115'328);
  CHECK(storage.bytes == 24'576 + 3'072 + 96 + 115'328);  // 143,072
  CHECK(storage.stored_elements == 6'144 + 1'536 + 12 + 57'664);
  CHECK(storage.quantized_values == 2 * 3 * 8'192);
  CHECK(storage.scale_elements == 1'536 + 12);
  // 21 tensors unquantized (embed, 2 x (7 Linears + 2 norms), final norm, lm_head); each of
  // the 6 MLP Linears stores 3 in place of 1.
  CHECK(storage.tensors == 21 + 6 * 2);
  CHECK(storage.format == "compressed-tensors pack-quantized");

  // The same names written in full ("model." prefix, exact names) select the same Linears.
  config["quantization_config"]["ignore"] = {"lm_head",
                                             "model.layers.0.self_attn.q_proj",
                                             "model.layers.0.self_attn.k_proj",
                                             "model.layers.0.self_attn.v_proj",
                                             "model.layers.0.self_attn.o_proj",
                                             "re:model.layers.1.self_attn"};
  CHECK(storage_of(config).bytes == storage.bytes);
  // re.match anchors at the start: "self_attn.*" alone matches no module name.
  config["quantization_config"]["ignore"] = {"lm_head", "re:self_attn.*"};
  CHECK(storage_of(config).quantized_values == 2 * (3 * 8'192 + 12'288));
}

TEST_CASE("compressed-tensors FP8 per channel with static input scales / NVFP4",
          "[compressed_tensors]") {
  nlohmann::json config = toy_llama();
  const nlohmann::json static_input = {{"num_bits", 8},
                                       {"type", "float"},
                                       {"strategy", "tensor"},
                                       {"symmetric", true},
                                       {"dynamic", false}};
  config["quantization_config"] =
      ct_config("float-quantized", weights(8, "float", "channel", 0), {"lm_head"}, static_input);
  const trace::StorageEstimate fp8 = storage_of(config);
  // All 14 Linears in the layers: F8_E4M3 weight, BF16 weight_scale [out, 1], BF16 input_scale
  // [1]. Values per layer 12,288 + 24,576 = 36,864 (x2 = 73,728 bytes); output rows per layer
  // 64 + 32 + 32 + 64 + 128 + 128 + 64 = 512 (x2 = 1,024) + 14 input scales = 1,038 BF16.
  // BF16 rest: embed + lm_head 32,768 + norms 320 = 33,088.
  CHECK(dtype_bytes(fp8, "F8_E4M3") == 73'728);
  CHECK(fp8.bytes == 73'728 + 2 * 1'038 + 2 * 33'088);  // 141,980
  CHECK(fp8.tensors == 21 + 14 * 2);

  nlohmann::json nvfp4 = weights(4, "float", "tensor_group", 16);
  const nlohmann::json local_input = {
      {"num_bits", 4},    {"type", "float"},   {"strategy", "tensor_group"},
      {"group_size", 16}, {"symmetric", true}, {"dynamic", "local"}};
  config["quantization_config"] =
      ct_config("nvfp4-pack-quantized", nvfp4, {"lm_head", "re:.*self_attn.*"}, local_input);
  const trace::StorageEstimate fp4 = storage_of(config);
  // MLPs only. U8 two per byte: gate 128 x 32 + up 128 x 32 + down 64 x 64 = 12,288 a layer
  // (24,576); F8_E4M3 scale per 16: 128 x 4 + 128 x 4 + 64 x 8 = 1,536 (3,072); F32
  // weight_global_scale + input_global_scale: 6 x 2 x 4 = 48 bytes; BF16 as the W4A16 case.
  CHECK(dtype_bytes(fp4, "U8") == 24'576);
  CHECK(dtype_bytes(fp4, "F8_E4M3") == 3'072);
  CHECK(dtype_bytes(fp4, "F32") == 48);
  CHECK(fp4.bytes == 24'576 + 3'072 + 48 + 115'328);
  CHECK(fp4.tensors == 21 + 6 * 3);  // weight_packed, weight_scale and two global scales

  // W8A8 int per channel, asymmetric weights, dynamic per-token inputs: I8 weight, BF16 scale
  // and I8 zero point [out, 1] each; nothing stored for the inputs.
  nlohmann::json int8 = weights(8, "int", "channel", 0);
  int8["symmetric"] = false;
  const nlohmann::json token_input = {{"num_bits", 8},
                                      {"type", "int"},
                                      {"strategy", "token"},
                                      {"symmetric", true},
                                      {"dynamic", true}};
  config["quantization_config"] = ct_config("int-quantized", int8, {"lm_head"}, token_input);
  const trace::StorageEstimate w8a8 = storage_of(config);
  CHECK(dtype_bytes(w8a8, "I8") == 73'728 + 1'024);
  CHECK(w8a8.bytes == 73'728 + 1'024 + 2 * 1'024 + 2 * 33'088);
}

TEST_CASE("Kimi-Linear AWQ-4bit: routed experts int4 group 32, the rest BF16",
          "[compressed_tensors][kimi_linear]") {
  const std::string text = trace::test::config_text(
      "cyankiwi--Kimi-Linear-48B-A3B-Instruct-AWQ-4bit.reconstructed.json");
  const trace::ModelDescription model = trace::parse_model_config(text);
  const trace::ParameterCount count = trace::count_parameters(model);
  REQUIRE(model.quantization);
  CHECK(model.quantization->format == trace::QuantFormat::compressed_tensors);
  CHECK(count.total == 49'122'681'728);  // the logical count is unchanged
  const trace::StorageEstimate storage = trace::estimate_storage(model, count);
  // Quantized: 26 MoE layers x 256 experts x 3 projections of 1,024 x 2,304 (w1, w3) or
  // 2,304 x 1,024 (w2) = 19,968 Linears, 47,110,422,528 values. Each stores values / 2 bytes of
  // I32, values / 32 BF16 scales and a 16-byte I64 weight_shape; everything else keeps the
  // original checkpoint's dtypes: BF16, but the 20 KDA layers' A_log [32] and dt_bias [4,096] in
  // F32 (the router biases BF16). The AWQ repository's own total_size was not found.
  const std::int64_t linears = 26LL * 256 * 3;
  const std::int64_t values = linears * 1'024 * 2'304;
  const std::int64_t f32 = 20 * (32 + 4'096);
  CHECK(values == 47'110'422'528);
  CHECK(storage.quantized_values == values);
  CHECK(dtype_bytes(storage, "I32") == values / 2);
  CHECK(dtype_bytes(storage, "I64") == 16 * linears);
  CHECK(dtype_bytes(storage, "F32") == 4 * f32);
  CHECK(storage.bytes ==
        2 * (count.total - f32 - values) + 4 * f32 + values / 2 + 2 * (values / 32) + 16 * linears);
}

TEST_CASE("compressed-tensors errors name the key and what is supported",
          "[compressed_tensors][bad_input]") {
  nlohmann::json config = toy_llama();
  nlohmann::json& q = config["quantization_config"];
  q = ct_config("marlin-24", weights(4, "int", "group", 128), {"lm_head"});
  CHECK_THAT(error_of(config), Catch::Contains("marlin-24") && Catch::Contains("pack-quantized"));
  q = ct_config("pack-quantized", weights(4, "int", "token", 128), {"lm_head"});
  CHECK_THAT(error_of(config), Catch::Contains("strategy") && Catch::Contains("token"));
  q = ct_config("pack-quantized", weights(16, "int", "group", 128), {"lm_head"});
  CHECK_THAT(error_of(config), Catch::Contains("num_bits 16"));
  q = ct_config("float-quantized", nullptr, {"lm_head"});
  CHECK_THAT(error_of(config), Catch::Contains("config_groups.group_0.weights") &&
                                   Catch::Contains("activation-only"));
  q = ct_config("pack-quantized", weights(4, "int", "group", 128), {"lm_head"});
  q["config_groups"]["group_0"]["targets"] = {"LlamaDecoderLayer"};
  CHECK_THAT(error_of(config), Catch::Contains("targets") && Catch::Contains("LlamaDecoderLayer"));
  q["config_groups"]["group_0"]["targets"] = {"Linear"};
  q["kv_cache_scheme"] = {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}};
  CHECK_THAT(error_of(config), Catch::Contains("kv_cache_scheme"));
  q["kv_cache_scheme"] = nullptr;
  q["config_groups"]["group_1"] = q["config_groups"]["group_0"];
  q["config_groups"]["group_1"]["targets"] = {"re:.*down_proj"};
  CHECK_THAT(error_of(config), Catch::Contains("group_0") && Catch::Contains("group_1") &&
                                   Catch::Contains("down_proj"));
  q["config_groups"].erase("group_1");
  q["quantization_status"] = "frozen";
  CHECK_THAT(error_of(config), Catch::Contains("quantization_status"));
  // Fields of the wrong type are named, not reported as an internal error (found by fuzzing).
  q["quantization_status"] = 7;
  CHECK_THAT(error_of(config), Catch::Contains("quantization_status"));
  q["quantization_status"] = "compressed";
  q["config_groups"]["group_0"]["weights"]["symmetric"] = "yes";
  CHECK_THAT(error_of(config), Catch::Contains("group_0.weights.symmetric") &&
                                   Catch::Contains("true or false"));
  q["config_groups"]["group_0"]["weights"]["symmetric"] = true;
  q["config_groups"]["group_0"]["weights"]["strategy"] = 5;
  CHECK_THAT(error_of(config), Catch::Contains("group_0.weights.strategy") &&
                                   Catch::Contains("must be a string"));
  q["config_groups"]["group_0"]["weights"]["strategy"] = "group";
  q["config_groups"]["group_0"]["weights"]["type"] = nullptr;  // null: the default, int
  CHECK(error_of(config) == "(no error)");
}

TEST_CASE("compressed-tensors inventory names the compressor's tensors",
          "[compressed_tensors][inventory]") {
  nlohmann::json config = toy_llama();
  config["quantization_config"] =
      ct_config("pack-quantized", weights(4, "int", "group", 32), {"lm_head", "re:.*self_attn.*"});
  const trace::ModelDescription model = trace::parse_model_config(config.dump());
  const trace::checkpoint::Inventory inventory = trace::checkpoint::build_inventory(model);
  CHECK(inventory.complete);
  const auto find = [&](const std::string& name) -> const trace::checkpoint::ExpectedTensor* {
    for (const trace::checkpoint::ExpectedTensor& tensor : inventory.tensors) {
      if (tensor.name == name) return &tensor;
    }
    return nullptr;
  };
  // down_proj [64 x 128]: 128 / 8 = 16 int32 a row, 128 / 32 = 4 scales a row.
  const auto* packed = find("model.layers.1.mlp.down_proj.weight_packed");
  REQUIRE(packed != nullptr);
  CHECK(packed->shape == std::vector<std::int64_t>{64, 16});
  CHECK(packed->dtype == "I32");
  CHECK(packed->logical_params == 64 * 128);
  const auto* scale = find("model.layers.1.mlp.down_proj.weight_scale");
  REQUIRE(scale != nullptr);
  CHECK(scale->shape == std::vector<std::int64_t>{64, 4});
  CHECK(scale->dtype == "BF16");
  const auto* shape = find("model.layers.1.mlp.down_proj.weight_shape");
  REQUIRE(shape != nullptr);
  CHECK(shape->dtype == "I64");
  CHECK(find("model.layers.1.mlp.down_proj.weight") == nullptr);
  CHECK(find("model.layers.1.self_attn.q_proj.weight") != nullptr);  // ignored: stays BF16
  // The inventory and the storage estimate agree tensor for tensor.
  std::int64_t bytes = 0;
  for (const trace::checkpoint::ExpectedTensor& tensor : inventory.tensors) bytes += tensor.bytes();
  const trace::StorageEstimate storage =
      trace::estimate_storage(model, trace::count_parameters(model));
  CHECK(bytes == storage.bytes);
  CHECK(static_cast<std::int64_t>(inventory.tensors.size()) == storage.tensors);
}
