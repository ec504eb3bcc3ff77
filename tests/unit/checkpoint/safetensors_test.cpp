// safetensors header parsing: the length prefix, the JSON header's rules, the totals, and hostile
// headers (absurd lengths, non-JSON, unknown dtypes, overflowing shapes, lying offsets,
// duplicates, a million tensors), each ending in a CheckpointError naming the problem.
#include "trace/checkpoint/safetensors.hpp"

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "catch.hpp"
#include "header_builder.hpp"
#include "trace/error.hpp"

namespace {

using trace::CheckpointError;
using trace::checkpoint::parse_safetensors_header;
using trace::test::header_json;
using trace::test::TensorSpec;

// The parse error's message, or "" when it parses.
std::string error_of(const std::string& json, std::uint64_t file_size = 0) {
  try {
    parse_safetensors_header(json, file_size, "model-00001-of-00002.safetensors");
  } catch (const CheckpointError& error) {
    return error.what();
  }
  return "";
}

std::string tensor(const std::string& body) { return R"({"w":)" + body + "}"; }

}  // namespace

TEST_CASE("the length prefix is a little-endian u64", "[checkpoint][safetensors]") {
  const std::array<unsigned char, 8> ten_thousand{0x10, 0x27, 0, 0, 0, 0, 0, 0};
  CHECK(trace::checkpoint::safetensors_header_length(ten_thousand) == 10'000);
  const std::array<unsigned char, 8> two_to_63{0, 0, 0, 0, 0, 0, 0, 0x80};
  CHECK(trace::checkpoint::safetensors_header_length(two_to_63) == (std::uint64_t{1} << 63));
  const std::array<unsigned char, 8> all_ones{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(trace::checkpoint::safetensors_header_length(all_ones) == UINT64_MAX);
}

TEST_CASE("absurd header lengths are refused before anything is read", "[checkpoint][safetensors]") {
  using trace::checkpoint::checked_header_length;
  CHECK_THROWS_AS(checked_header_length(std::uint64_t{1} << 63, 0), CheckpointError);
  CHECK_THROWS_AS(checked_header_length(UINT64_MAX, 0), CheckpointError);
  CHECK_THROWS_WITH(checked_header_length(100'000'001, 0, "a.safetensors"),
                    Catch::Contains("100000000") && Catch::Contains("a.safetensors"));
  CHECK(checked_header_length(100'000'000, 0) == 100'000'000);  // the format's own limit
  CHECK_THROWS_AS(checked_header_length(0, 0), CheckpointError);
  CHECK_THROWS_AS(checked_header_length(1, 0), CheckpointError);
  // 8 + N must fit in the file.
  CHECK_THROWS_WITH(checked_header_length(1'000, 1'007), Catch::Contains("1007"));
  CHECK(checked_header_length(1'000, 1'008) == 1'000);
  CHECK_THROWS_AS(checked_header_length(2, 5), CheckpointError);
}

TEST_CASE("a valid header: tensors, metadata, padding, file size", "[checkpoint][safetensors]") {
  // a: BF16 [2, 3] = 12 bytes at [0, 12); b: F32 scalar = 4 bytes at [12, 16);
  // c: U8 [0] = no bytes; d: F4 [4] = 16 bits = 2 bytes at [16, 18).
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
      R"("b":{"dtype":"F32","shape":[],"data_offsets":[12,16]},)"
      R"("c":{"dtype":"U8","shape":[0],"data_offsets":[16,16]},)"
      R"("d":{"dtype":"F4","shape":[4],"data_offsets":[16,18]}}      )";  // space padding
  const auto header = parse_safetensors_header(json, 8 + json.size() + 18, "x.safetensors");
  REQUIRE(header.tensors.size() == 4);
  CHECK(header.tensors[0].name == "a");
  CHECK(header.tensors[0].elements == 6);
  CHECK(header.tensors[0].bytes() == 12);
  CHECK(header.tensors[1].elements == 1);  // a 0-d tensor is one element
  CHECK(header.tensors[2].elements == 0);
  CHECK(header.tensors[3].dtype == "F4");
  CHECK(header.data_bytes == 18);
  REQUIRE(header.metadata.size() == 1);
  CHECK(header.metadata[0].first == "format");
  CHECK(header.metadata[0].second == "pt");
  // An unknown field is ignored, as the reference reader does; so is an empty header.
  CHECK(error_of(tensor(R"({"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":{"y":[1,[2]]}})")).empty());
  CHECK(error_of("{}").empty());
  // The file size must be exactly 8 + N + data.
  CHECK_THROWS_WITH(parse_safetensors_header(json, 8 + json.size() + 17),
                    Catch::Contains("file holds"));
}

TEST_CASE("non-JSON and wrong JSON shapes are refused", "[checkpoint][safetensors][hostile]") {
  CHECK_THAT(error_of("{not json"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of(R"({"a": )"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of("[1, 2, 3]"), Catch::Contains("begin with '{'"));
  CHECK_THAT(error_of("  {}"), Catch::Contains("begin with '{'"));
  CHECK_THAT(error_of(R"({"w": [1, 2]})"), Catch::Contains("tensor 'w'"));
  CHECK_THAT(error_of(R"({"w": 7})"), Catch::Contains("tensor 'w'"));
  CHECK_THAT(error_of(R"({"__metadata__": {"n": 1}})"), Catch::Contains("must be strings"));
  CHECK_THAT(error_of(R"({"__metadata__": [1]})"), Catch::Contains("__metadata__"));
  CHECK_THAT(error_of(R"({} {})"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of(std::string("{\"w\":\0}", 7)), Catch::Contains("not valid JSON"));
  // Invalid UTF-8 inside a string.
  CHECK_THAT(error_of("{\"\xff\xfe\":{}}"), Catch::Contains("not valid JSON"));
  // A control byte in a name is escaped in the message, never printed raw.
  const std::string message =
      error_of("{\"bad\\u0007name\":{\"dtype\":\"F99\",\"shape\":[],\"data_offsets\":[0,1]}}");
  CHECK_THAT(message, Catch::Contains("bad\\x07name"));
}

TEST_CASE("deep nesting neither recurses nor crashes", "[checkpoint][safetensors][hostile]") {
  const std::size_t depth = 200'000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  // Inside an ignored field: skipped whole.
  CHECK(error_of(tensor(R"({"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":)" + deep + "}")).empty());
  // Where a shape should be: refused at the first nested list.
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":)" + deep + "}")), Catch::Contains("shape"));
  // Unclosed.
  CHECK_THAT(error_of(std::string(depth, '{')), Catch::Contains("JSON"));
}

TEST_CASE("dtypes outside the format are refused", "[checkpoint][safetensors][hostile]") {
  CHECK_THAT(error_of(tensor(R"({"dtype":"F99","shape":[1],"data_offsets":[0,1]})")),
             Catch::Contains("tensor 'w'") && Catch::Contains("'F99'") && Catch::Contains("BF16"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"bf16","shape":[1],"data_offsets":[0,2]})")),
             Catch::Contains("'bf16'"));
  CHECK_THAT(error_of(tensor(R"({"dtype":16,"shape":[1],"data_offsets":[0,2]})")),
             Catch::Contains("dtype"));
  CHECK_THAT(error_of(tensor(R"({"shape":[1],"data_offsets":[0,2]})")), Catch::Contains("lacks dtype"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]})")),
             Catch::Contains("twice"));
  // F4 [3] is 12 bits: not whole bytes (tensor.rs MisalignedSlice).
  CHECK_THAT(error_of(tensor(R"({"dtype":"F4","shape":[3],"data_offsets":[0,2]})")),
             Catch::Contains("whole number of bytes"));
}

TEST_CASE("negative, fractional and overflowing shapes are refused", "[checkpoint][safetensors][hostile]") {
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[-1],"data_offsets":[0,1]})")),
             Catch::Contains("negative"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[1.5],"data_offsets":[0,1]})")),
             Catch::Contains("not an integer"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[1e300],"data_offsets":[0,1]})")),
             Catch::Contains("not an integer"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,1]})")),
             Catch::Contains("above 2^63-1"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[99999999999999999999999],"data_offsets":[0,1]})")),
             Catch::Contains("not an integer"));
  // 2^32 x 2^32 = 2^64 elements: the product overflows int64.
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]})")),
             Catch::Contains("over 2^63-1"));
  // 2^61 F64 elements fit int64, their 2^67 bits do not.
  CHECK_THAT(error_of(tensor(R"({"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,1]})")),
             Catch::Contains("over 2^63-1"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":"big","data_offsets":[0,1]})")),
             Catch::Contains("list of integers"));
  std::string many_dims = "[1";
  for (int i = 0; i < 100; ++i) many_dims += ",1";
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":)" + many_dims + R"(],"data_offsets":[0,1]})")),
             Catch::Contains("dimensions"));
}

TEST_CASE("offsets must match the shape, the file and each other", "[checkpoint][safetensors][hostile]") {
  // F32 [1] needs 4 bytes, not 3.
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,3]})")),
             Catch::Contains("needs 4 bytes"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[8,4]})")),
             Catch::Contains("begin after end"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})")),
             Catch::Contains("data_offsets"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})")),
             Catch::Contains("more than two"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})")),
             Catch::Contains("negative"));
  CHECK_THAT(error_of(tensor(R"({"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551615]})")),
             Catch::Contains("above 2^63-1"));
  // A hole before the first tensor, and two tensors over the same bytes.
  CHECK_THAT(error_of(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})")),
             Catch::Contains("no tensor"));
  CHECK_THAT(error_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})"),
             Catch::Contains("overlaps"));
  // Offsets past the end of a file of known size.
  const std::string json = tensor(R"({"dtype":"F32","shape":[1024],"data_offsets":[0,4096]})");
  CHECK_THAT(error_of(json, 8 + json.size() + 100), Catch::Contains("file holds"));
  CHECK(error_of(json, 8 + json.size() + 4096).empty());
}

TEST_CASE("duplicate tensor names are refused, in a shard and across shards",
          "[checkpoint][safetensors][hostile]") {
  CHECK_THAT(error_of(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                      R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})"),
             Catch::Contains("'a' appears twice"));
  const auto one = parse_safetensors_header(header_json({{"a", "U8", {1}}}), 0, "one");
  const auto two = parse_safetensors_header(header_json({{"a", "U8", {1}}}), 0, "two");
  CHECK_THROWS_WITH(trace::checkpoint::summarize({one, two}),
                    Catch::Contains("'a'") && Catch::Contains("one") && Catch::Contains("two"));
}

TEST_CASE("summaries: stored elements, bytes and dtypes over shards", "[checkpoint][safetensors]") {
  // Shard 1: BF16 [4, 8] (32 elements, 64 bytes), F32 [] (1, 4).
  // Shard 2: U8 [4, 4] (16, 16), F8_E4M3 [4, 1] (4, 4).
  const auto one = parse_safetensors_header(
      header_json({{"w", "BF16", {4, 8}}, {"s", "F32", {}}}), 0, "one");
  const auto two = parse_safetensors_header(
      header_json({{"q", "U8", {4, 4}}, {"q_scale", "F8_E4M3", {4, 1}}}), 0, "two");
  const auto summary = trace::checkpoint::summarize({one, two});
  CHECK(summary.shards == 2);
  CHECK(summary.tensors == 4);
  CHECK(summary.stored_elements == 32 + 1 + 16 + 4);
  CHECK(summary.bytes == 64 + 4 + 16 + 4);
  CHECK(summary.scalar_tensors == 1);
  CHECK(summary.elements_without_scalars == 52);
  REQUIRE(summary.by_dtype.size() == 4);
  CHECK(summary.by_dtype[0].dtype == "BF16");  // largest bytes first
  CHECK(summary.by_dtype[0].bytes == 64);
  CHECK(summary.by_dtype[1].dtype == "U8");
}

TEST_CASE("a million tiny tensors parse in bounded time", "[checkpoint][safetensors][hostile]") {
  // 10^6 U8 [1] tensors: about 60 MB of header, under the 100 MB cap. Unoptimized and sanitized
  // builds (ten to fifty times slower) run a tenth of it through the same code, untimed.
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  constexpr int count = 1'000'000;
  constexpr double limit_seconds = 10.0;  // about 1 s on one core
#else
  constexpr int count = 100'000;
  constexpr double limit_seconds = 1e9;
#endif
  std::string json = "{";
  json.reserve(static_cast<std::size_t>(count) * 64);
  for (int i = 0; i < count; ++i) {
    if (i > 0) json += ',';
    json += "\"t";
    json += std::to_string(i);
    json += R"(":{"dtype":"U8","shape":[1],"data_offsets":[)";
    json += std::to_string(i);
    json += ',';
    json += std::to_string(i + 1);
    json += "]}";
  }
  json += '}';
  REQUIRE(json.size() < trace::checkpoint::k_max_header_bytes);
  const auto start = std::chrono::steady_clock::now();
  const auto header = parse_safetensors_header(json, 8 + json.size() + count);
  const auto summary = trace::checkpoint::summarize({header});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(summary.tensors == count);
  CHECK(summary.bytes == count);
  CHECK(header.data_bytes == count);
  CHECK(seconds < limit_seconds);
}

TEST_CASE("a header from a file's first bytes: enough, too few, a lying prefix",
          "[checkpoint][safetensors]") {
  using trace::checkpoint::header_bytes_needed;
  using trace::checkpoint::parse_safetensors_file_start;
  const std::string json = header_json({{"w", "F32", {4}}});  // 16 data bytes
  std::vector<unsigned char> file(8);
  for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<unsigned char>((json.size() >> (8 * i)) & 0xff);
  file.insert(file.end(), json.begin(), json.end());
  file.resize(file.size() + 16, 0);
  const std::uint64_t size = file.size();
  const std::span<const unsigned char> bytes(file);
  // Complete iff 8 + N <= bytes read (huggingface_hub#4602 was off by one here).
  CHECK(header_bytes_needed(bytes.first(8), size) == 8 + json.size());
  CHECK(parse_safetensors_file_start(bytes.first(8 + json.size()), size).tensors.size() == 1);
  CHECK(parse_safetensors_file_start(bytes, size).data_bytes == 16);
  CHECK_THROWS_WITH(parse_safetensors_file_start(bytes.first(8 + json.size() - 1), size),
                    Catch::Contains("needs the first"));
  CHECK_THROWS_AS(header_bytes_needed(bytes.first(7), size), CheckpointError);
  // A prefix of 2^63 - 1 is refused from the 8 bytes alone.
  std::vector<unsigned char> lying = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
  CHECK_THROWS_AS(parse_safetensors_file_start(lying, 0), CheckpointError);
}
