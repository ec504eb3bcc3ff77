#pragma once
/// safetensors headers: the 8-byte length prefix, the JSON header, and totals over shards.
/// Pure: the caller reads the bytes (a Range read of each shard); nothing here touches files or
/// the network. Every malformed or hostile header ends in a CheckpointError naming the shard and
/// the tensor, never in a crash, an overflow or an allocation beyond the header's own size.
/// Format and caps: docs/checkpoint.md.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trace::checkpoint {

/// The safetensors reader's own limit (safetensors tensor.rs MAX_HEADER_SIZE = 100,000,000).
inline constexpr std::uint64_t k_max_header_bytes = 100'000'000;
/// huggingface_hub and huggingface.js refuse headers above this; larger ones are legal but rare.
inline constexpr std::uint64_t k_large_header_bytes = 25'000'000;
/// Bytes before the JSON header: its length, a little-endian u64.
inline constexpr std::size_t k_length_prefix_bytes = 8;

/// The header length N the first 8 bytes of a .safetensors file encode (little-endian u64).
std::uint64_t safetensors_header_length(std::span<const unsigned char, 8> prefix);

/// N, checked: at least 2 ("{}"), at most k_max_header_bytes, and, when the file size is known
/// (non-zero), 8 + N <= file size. Throws CheckpointError naming `shard`.
std::uint64_t checked_header_length(std::uint64_t length, std::uint64_t file_size_or_0,
                                    std::string_view shard = "");

/// For a reader holding the first bytes of a file (a Range read of, say, 256 KiB): how many bytes
/// from the start hold the whole header, 8 + N, checked as above. Throws CheckpointError when
/// fewer than 8 bytes are given.
std::uint64_t header_bytes_needed(std::span<const unsigned char> file_start,
                                  std::uint64_t file_size_or_0, std::string_view shard = "");

/// One safetensors dtype: its name and bits per element (safetensors tensor.rs Dtype::bitsize).
struct SafetensorsDtype {
  std::string_view name;
  std::int64_t bits;
};
/// Every dtype the safetensors format defines.
std::span<const SafetensorsDtype> safetensors_dtypes();
/// The row of a dtype name ("BF16"), or nullptr when the format does not define it.
const SafetensorsDtype* find_safetensors_dtype(std::string_view name);

struct TensorHeader {
  std::string name;
  std::string_view dtype;  ///< a safetensors_dtypes() name (static storage, no allocation)
  std::vector<std::int64_t> shape;  ///< [] is a scalar: one element
  std::int64_t elements = 0;        ///< product of the shape (packed values count once)
  std::int64_t begin = 0;           ///< data_offsets, relative to the data buffer
  std::int64_t end = 0;             ///< exclusive; end - begin = stored bytes
  std::int64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::string shard;                 ///< file name, for messages and reports
  std::vector<TensorHeader> tensors;  ///< in the header's order
  /// "__metadata__": string to string, kept aside (e.g. {"format": "pt"}).
  std::vector<std::pair<std::string, std::string>> metadata;
  std::int64_t data_bytes = 0;  ///< the data buffer: the largest end offset
};

/// Parses and validates the JSON header (the N bytes after the length prefix, padding
/// included). Checks: a JSON object; every entry an object with a known dtype, a shape of
/// non-negative integers whose product fits int64, data_offsets [begin, end] with
/// end - begin = elements x bits / 8 (whole bytes); no duplicate names; the offsets tile the
/// data buffer from 0 without gaps or overlaps; and, when file_size_or_0 is non-zero,
/// 8 + N + data_bytes == file size. Throws CheckpointError naming the shard and the tensor.
SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t file_size_or_0,
                                           std::string_view shard = "");

/// The header of a file from its first bytes (at least header_bytes_needed of them; more are
/// ignored): the length prefix, then parse_safetensors_header on the N bytes after it.
SafetensorsHeader parse_safetensors_file_start(std::span<const unsigned char> file_start,
                                               std::uint64_t file_size_or_0,
                                               std::string_view shard = "");

struct DtypeTotals {
  std::string dtype;
  std::int64_t tensors = 0;
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
};

/// Totals over every shard of a checkpoint.
struct CheckpointSummary {
  std::int64_t shards = 0;
  std::int64_t tensors = 0;
  /// Stored elements: a packed byte or int32 counts once, a 0-d tensor counts 1 (huggingface_hub's
  /// rule, get_safetensors_metadata).
  std::int64_t stored_elements = 0;
  std::int64_t bytes = 0;  ///< sum of end - begin: exact for every dtype
  std::int64_t scalar_tensors = 0;  ///< 0-d tensors (ModelOpt's weight_scale_2, input_scale, ...)
  /// huggingface.js's rule (parse-safetensors-metadata.ts): 0-d tensors skipped.
  std::int64_t elements_without_scalars = 0;
  std::vector<DtypeTotals> by_dtype;  ///< largest bytes first
};

/// Sums the shards. Throws CheckpointError when one tensor name appears in two shards.
CheckpointSummary summarize(const std::vector<SafetensorsHeader>& shards);

}  // namespace trace::checkpoint
