#pragma once
/// What the Hub fetcher hands to the safetensors parser: per shard, the first 8 + N bytes of the
/// file (the little-endian u64 header length N, then N bytes of header JSON) and the file's size.
/// Never weights. The parser (include/trace/checkpoint/) reads these bytes; the fetcher only
/// checks the length prefix and the size caps.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trace {

struct ShardHeaderBytes {
  std::string file;             ///< path in the repo, e.g. "model-00001-of-00004.safetensors"
  std::uint64_t file_size = 0;  ///< the whole shard, from Content-Range (or Content-Length)
  std::string bytes;            ///< the first 8 + N bytes of the shard

  /// The header JSON: bytes after the 8-byte length prefix.
  std::string_view header_json() const {
    return bytes.size() < 8 ? std::string_view() : std::string_view(bytes).substr(8);
  }
};

struct CheckpointHeaders {
  std::string index_file;  ///< "model.safetensors.index.json", or empty for one model.safetensors
  std::string index_text;  ///< the index JSON, or empty
  std::vector<ShardHeaderBytes> shards;  ///< in the index's order of first appearance
};

/// Reads the little-endian u64 at the start of `bytes` (at least 8 bytes).
std::uint64_t read_u64_le(std::string_view bytes);

/// The 8-byte little-endian encoding of `value`.
std::string u64_le_bytes(std::uint64_t value);

}  // namespace trace
