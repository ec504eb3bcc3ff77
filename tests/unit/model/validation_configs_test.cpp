// Fixtures written for the memory validator (rows of measured.csv that had no config). Every
// expected number below is a published parameter count (sources, one per model, in
// tests/data/configs/SOURCES-validation-configs.md), never the program's own output.
#include <cstdint>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::int64_t total_of(const char* name) {
  return trace::count_parameters(trace::parse_model_config(trace::test::config_text(name))).total;
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
