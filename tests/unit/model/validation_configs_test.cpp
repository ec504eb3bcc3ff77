// Fixtures written for the memory validator (rows of measured.csv that had no config). Every
// expected number below is a published parameter count (sources, one per model, in
// tests/data/configs/SOURCES-validation-configs.md), never the program's own output.
#include <cstdint>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::int64_t total_of(const char* name) {
  return trace::count_parameters(trace::parse_model_config(trace::test::config_text(name))).total;
}

trace::ParameterCount count_of(const char* name) {
  return trace::count_parameters(trace::parse_model_config(trace::test::config_text(name)));
}

std::int64_t stored_of(const char* name) {
  const trace::ModelDescription model = trace::parse_model_config(trace::test::config_text(name));
  return trace::estimate_storage(model, trace::count_parameters(model)).stored_elements;
}

}  // namespace

TEST_CASE("StarCoder / OctoCoder (gpt_bigcode 15.5B): 15,517,456,384", "[validation][golden]") {
  CHECK(total_of("bigcode--starcoder.reconstructed.json") == 15'517'456'384);
  CHECK(total_of("bigcode--octocoder.reconstructed.json") == 15'517'456'384);
}

TEST_CASE("T0_3B (T5 v1.1 XL shape): 2,849,757,184", "[validation][golden]") {
  CHECK(total_of("bigscience--T0_3B.reconstructed.json") == 2'849'757'184);
}

TEST_CASE("bloomz-7b1 (bloom-7b1 shape): 7,069,016,064", "[validation][golden]") {
  CHECK(total_of("bigscience--bloomz-7b1.reconstructed.json") == 7'069'016'064);
}

TEST_CASE("CodeLlama-34b-hf: 33,743,970,304", "[validation][golden]") {
  CHECK(total_of("codellama--CodeLlama-34b-hf.reconstructed.json") == 33'743'970'304);
}

TEST_CASE("Yi-34B: 34,388,917,248", "[validation][golden]") {
  CHECK(total_of("01-ai--Yi-34B.reconstructed.json") == 34'388'917'248);
}

TEST_CASE("vicuna-7b-v1.5: 6,738,415,616", "[validation][golden]") {
  CHECK(total_of("lmsys--vicuna-7b-v1.5.reconstructed.json") == 6'738'415'616);
}

TEST_CASE("TinyLlama 1.1B 3T: 1,100,048,384", "[validation][golden]") {
  CHECK(total_of("TinyLlama--TinyLlama-1.1B-intermediate-step-1431k-3T.reconstructed.json") == 1'100'048'384);
}

TEST_CASE("Mistral-7B-v0.2: 7,241,732,096", "[validation][golden]") {
  CHECK(total_of("mistral-community--Mistral-7B-v0.2.reconstructed.json") == 7'241'732'096);
}

TEST_CASE("Mistral-Nemo 2407: 12,247,782,400", "[validation][golden]") {
  CHECK(total_of("mistralai--Mistral-Nemo-Base-2407.reconstructed.json") == 12'247'782'400);
}

TEST_CASE("Mistral-Small-Instruct-2409: 22,247,282,688", "[validation][golden]") {
  CHECK(total_of("mistralai--Mistral-Small-Instruct-2409.reconstructed.json") == 22'247'282'688);
}

TEST_CASE("Phi-3-medium-4k-instruct: 13,960,238,080", "[validation][golden]") {
  CHECK(total_of("microsoft--Phi-3-medium-4k-instruct.reconstructed.json") == 13'960'238'080);
}

TEST_CASE("phi-4: 14,659,507,200", "[validation][golden]") {
  CHECK(total_of("microsoft--phi-4.reconstructed.json") == 14'659'507'200);
}

TEST_CASE("codegemma-7b (gemma-7b shape): 8,537,680,896", "[validation][golden]") {
  CHECK(total_of("google--codegemma-7b.reconstructed.json") == 8'537'680'896);
}

TEST_CASE("deepseek-coder 6.7b / 33b: 6,740,512,768 and 33,342,991,360", "[validation][golden]") {
  CHECK(total_of("deepseek-ai--deepseek-coder-6.7b-base.reconstructed.json") == 6'740'512'768);
  CHECK(total_of("deepseek-ai--deepseek-coder-33b-instruct.reconstructed.json") == 33'342'991'360);
}

TEST_CASE("Qwen1.5-7B (Qwen-7B shape), Qwen2-7B-Instruct, Qwen2-72B", "[validation][golden]") {
  CHECK(total_of("Qwen--Qwen1.5-7B.reconstructed.json") == 7'721'324'544);
  CHECK(total_of("Qwen--Qwen2-7B-Instruct.reconstructed.json") == 7'615'616'512);
  CHECK(total_of("Qwen--Qwen2-72B.reconstructed.json") == 72'706'203'648);
}

// Second batch (sources in the "Second batch" section of SOURCES-validation-configs.md).

TEST_CASE("gemma-3-12b-it (gemma3 + SigLIP vision): Hub total 12,187,325,040", "[validation][golden]") {
  CHECK(total_of("google--gemma-3-12b-it.reconstructed.json") == 12'187'325'040);
}

TEST_CASE("gemma-3-270m-it: 268,098,176", "[validation][golden]") {
  CHECK(total_of("google--gemma-3-270m-it.reconstructed.json") == 268'098'176);
}

TEST_CASE("DeepSeek-R1-0528: Hub total 684,531,386,000 with FP8 scales", "[validation][golden]") {
  // The Hub counts the 41,540,496 F32 weight_scale_inv tensors for R1-0528; without them the
  // tensors are DeepSeek-R1's 684,489,845,504 (same shapes, R1's own Hub figure).
  CHECK(stored_of("deepseek-ai--DeepSeek-R1-0528.reconstructed.json") == 684'531'386'000);
  CHECK(total_of("deepseek-ai--DeepSeek-R1-0528.reconstructed.json") == 684'489'845'504);
}

TEST_CASE("DeepSeek-Coder-V2-Instruct (deepseek_v2 236B): 235,741,434,880", "[validation][golden]") {
  CHECK(total_of("deepseek-ai--DeepSeek-Coder-V2-Instruct.reconstructed.json") == 235'741'434'880);
}

TEST_CASE("Qwen3.5-122B-A10B (qwen3_5_moe + vision + MTP): 125,086,497,008", "[validation][golden]") {
  CHECK(total_of("Qwen--Qwen3.5-122B-A10B.json") == 125'086'497'008);
}

TEST_CASE("Qwen3-30B-A3B-Instruct-2507-FP8: Hub total 30,533,947,392 with FP8 scales", "[validation][golden]") {
  // Hub total of the FP8 repo counts 1,824,768 F32 block scales; the BF16 Instruct-2507 repo's
  // total (same tensors, no scales) is 30,532,122,624.
  CHECK(stored_of("Qwen--Qwen3-30B-A3B-Instruct-2507-FP8.reconstructed.json") == 30'533'947'392);
  CHECK(total_of("Qwen--Qwen3-30B-A3B-Instruct-2507-FP8.reconstructed.json") == 30'532'122'624);
}

TEST_CASE("NVIDIA-Nemotron-3-Super-120B-A12B (BF16 repo id): Hub total 123,611,012,096", "[validation][golden]") {
  const trace::ParameterCount count = count_of("nvidia--NVIDIA-Nemotron-3-Super-120B-A12B.reconstructed.json");
  // The Hub's figure leaves the F32 router-bias buffers out.
  CHECK(count.total - count.router_bias_buffers == 123'611'012'096);
}

TEST_CASE("Qwen2.5-14B: 14,770,033,664", "[validation][golden]") {
  CHECK(total_of("Qwen--Qwen2.5-14B.reconstructed.json") == 14'770'033'664);
}

TEST_CASE("Mixtral-8x7B-Instruct-v0.1-AWQ: logical count = Mixtral-8x7B's 46,702,792,704", "[validation][golden]") {
  // The AWQ repo's own (packed) Hub total was not found; the unquantized tensor count is the
  // published Mixtral-8x7B figure.
  CHECK(total_of("TheBloke--Mixtral-8x7B-Instruct-v0.1-AWQ.reconstructed.json") == 46'702'792'704);
}
