// A config that names no dtype (docs/parameters.md §6, "A config that names no dtype"): the
// storage is priced at what the family's published uploads hold. Parameter counts are the
// goldens of families_test.cpp; the bytes are those counts times the dtype's width, by hand.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

namespace {

trace::StorageEstimate storage_of(const trace::ModelDescription& model) {
  return trace::estimate_storage(model, trace::count_parameters(model));
}

}  // namespace

TEST_CASE("no dtype: BERT-era families are stored in F32, DeBERTa in F16", "[storage]") {
  // gpt2-medium: 354,823,168 parameters x 4 bytes (its pytorch_model.bin is 1.52 GB).
  const trace::ModelDescription gpt2 = trace::test::fixture("openai-community--gpt2-medium.json");
  CHECK(gpt2.torch_dtype.empty());
  CHECK(gpt2.stored_dtype() == "float32");
  CHECK(storage_of(gpt2).bytes == 354'823'168LL * 4);
  // bert-base-uncased (BertForPreTraining's tensors): 110,106,428 x 4 = 440,425,712 bytes.
  const trace::ModelDescription bert = trace::test::fixture("google-bert--bert-base-uncased.json");
  CHECK(storage_of(bert).bytes == 440'425'712);
  // deberta-v3-base: Microsoft's upload is F16, 185,144,677 x 2.
  const trace::ModelDescription deberta = trace::test::fixture("microsoft--deberta-v3-base.json");
  CHECK(deberta.stored_dtype() == "float16");
  CHECK(storage_of(deberta).bytes == 185'144'677LL * 2);
}

TEST_CASE("no dtype: a named dtype wins, and transformers' newer `dtype` key is read",
          "[storage]") {
  nlohmann::json config =
      nlohmann::json::parse(trace::test::config_text("google-bert--bert-base-uncased.json"));
  // A fine-tune saved by transformers >= 4.56 writes "dtype".
  config["dtype"] = "bfloat16";
  const trace::ModelDescription bf16 = trace::parse_model_config(config.dump());
  CHECK(bf16.torch_dtype == "bfloat16");
  CHECK(storage_of(bf16).bytes == 110'106'428LL * 2);
  config.erase("dtype");
  config["torch_dtype"] = "float16";
  CHECK(storage_of(trace::parse_model_config(config.dump())).bytes == 110'106'428LL * 2);
  // A family that says nothing of its uploads keeps the BF16 default, with its note.
  const trace::ModelDescription llama =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  trace::ModelDescription unnamed = llama;
  unnamed.torch_dtype.clear();
  const trace::StorageEstimate storage = storage_of(unnamed);
  CHECK(storage.bytes == trace::count_parameters(llama).total * 2);
  bool noted = false;
  for (const std::string& note : storage.notes) noted |= note.find("BF16 assumed") != note.npos;
  CHECK(noted);
}
