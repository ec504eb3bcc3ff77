// safetensors headers, read with nlohmann's SAX parser: no JSON tree is built, so a 100 MB header
// of a million tensors costs the tensor table and nothing more, and nesting depth cannot grow the
// stack (the handler refuses anything deeper than the format allows). Format: safetensors
// README "Format"; validation rules: tensor.rs Metadata::validate (docs/checkpoint.md).
#include "trace/checkpoint/safetensors.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_set>

#include "trace/error.hpp"

namespace trace::checkpoint {

namespace {

// safetensors tensor.rs `enum Dtype` with `bitsize()`.
constexpr std::array<SafetensorsDtype, 22> k_dtypes{{
    {"BOOL", 8},     {"F4", 4},       {"F6_E2M3", 6},     {"F6_E3M2", 6},     {"U8", 8},
    {"I8", 8},       {"F8_E5M2", 8},  {"F8_E4M3", 8},     {"F8_E8M0", 8},     {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},  {"U16", 16},        {"F16", 16},        {"BF16", 16},
    {"I32", 32},     {"U32", 32},     {"F32", 32},        {"I64", 64},        {"U64", 64},
    {"F64", 64},     {"C64", 64},
}};

constexpr std::int64_t k_int64_max = std::numeric_limits<std::int64_t>::max();
// No stored tensor has more dimensions than this; a longer shape is hostile (a header of a
// million 1s would otherwise be a legal 2 MB allocation per tensor).
constexpr std::size_t k_max_rank = 32;
constexpr std::size_t k_max_shown = 120;

// A name or value from the header as it may be shown: control bytes escaped, long ones cut.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, std::min(text.size(), k_max_shown))) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  if (text.size() > k_max_shown) out += "...";
  return out;
}

std::string where(std::string_view shard) {
  return shard.empty() ? "safetensors header" : fmt::format("safetensors header of {}", printable(shard));
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The handler nlohmann's SAX parser drives. It records the first problem and stops the parse by
// returning false; the caller turns that into a CheckpointError.
class HeaderReader {
public:
  using json = nlohmann::json;

  explicit HeaderReader(std::string_view shard) { header.shard = std::string(shard); }

  SafetensorsHeader header;
  std::string problem;
  bool finished() const { return at_ == At::done; }

  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t value) {
    if (value >= 0) return number(static_cast<std::uint64_t>(value));
    if (at_ == At::shape || at_ == At::offsets) {
      return fail(fmt::format("{} holds the negative value {}", list_name(), value));
    }
    return scalar("a number");
  }
  bool number_unsigned(json::number_unsigned_t value) { return number(value); }
  bool number_float(json::number_float_t, const json::string_t& text) {
    if (at_ == At::shape || at_ == At::offsets) {
      return fail(fmt::format("{} holds {}, not an integer in 0..2^63-1", list_name(),
                              printable(text)));
    }
    return scalar("a number");
  }
  bool string(json::string_t& value) {
    if (at_ == At::metadata) {
      header.metadata.emplace_back(key_, value);
      return true;
    }
    if (at_ == At::entry && key_ == "dtype") {
      if (has_dtype_) return fail("gives dtype twice");
      has_dtype_ = true;
      dtype_text_ = value;
      return true;
    }
    return scalar("a string");
  }
  bool binary(json::binary_t&) { return scalar("binary data"); }

  bool start_object(std::size_t) {
    switch (at_) {
      case At::start: at_ = At::entries; return true;
      case At::entries:
        if (entry_ == "__metadata__") {
          at_ = At::metadata;
        } else {
          begin_entry();
        }
        return true;
      case At::entry: return nested("an object");
      case At::skip: ++skip_depth_; return true;
      default: return scalar("an object");
    }
  }
  bool start_array(std::size_t) {
    switch (at_) {
      case At::start:
        return fail("is a JSON array; a safetensors header is an object of tensors");
      case At::entry:
        if (key_ == "shape" || key_ == "data_offsets") {
          const bool shape = key_ == "shape";
          if (shape ? has_shape_ : has_offsets_) return fail(fmt::format("gives {} twice", key_));
          (shape ? has_shape_ : has_offsets_) = true;
          at_ = shape ? At::shape : At::offsets;
          return true;
        }
        return nested("a list");
      case At::skip: ++skip_depth_; return true;
      default: return scalar("a list");
    }
  }
  bool key(json::string_t& value) {
    if (at_ == At::entries) {
      entry_ = value;
    } else {
      key_ = value;
    }
    return true;
  }
  bool end_object() {
    switch (at_) {
      case At::entry: at_ = At::entries; return finish_entry();
      case At::metadata: at_ = At::entries; return true;
      case At::entries: at_ = At::done; return true;
      case At::skip: return end_skipped();
      default: return true;
    }
  }
  bool end_array() {
    if (at_ == At::skip) return end_skipped();
    if (at_ == At::shape || at_ == At::offsets) at_ = At::entry;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    return fail(fmt::format("is not valid JSON (syntax error at byte {})", position));
  }

private:
  enum class At { start, entries, entry, metadata, shape, offsets, skip, done };

  bool fail(std::string message) {
    if (problem.empty()) {
      const bool in_entry = at_ == At::entry || at_ == At::shape || at_ == At::offsets;
      problem = in_entry ? fmt::format("tensor '{}' {}", printable(entry_), message)
                         : std::move(message);
    }
    return false;
  }
  const char* list_name() const { return at_ == At::shape ? "shape" : "data_offsets"; }

  bool scalar(const char* found) {
    switch (at_) {
      case At::start:
        return fail(fmt::format("is {}; a safetensors header is a JSON object of tensors", found));
      case At::entries:
        if (entry_ == "__metadata__") {
          return fail(fmt::format("has __metadata__ as {}; it must be an object of strings", found));
        }
        return fail(fmt::format("has tensor '{}' as {}; each tensor is an object "
                                "{{dtype, shape, data_offsets}}",
                                printable(entry_), found));
      case At::metadata:
        return fail(fmt::format("has __metadata__ entry '{}' as {}; its values must be strings",
                                printable(key_), found));
      case At::entry:
        if (key_ == "dtype") return fail(fmt::format("has dtype as {}, not a string", found));
        if (key_ == "shape" || key_ == "data_offsets") {
          return fail(fmt::format("has {} as {}, not a list of integers", key_, found));
        }
        return true;  // an extra field: ignored, as the reference reader does
      case At::shape:
      case At::offsets:
        return fail(fmt::format("{} holds {}, not an integer", list_name(), found));
      case At::skip:
      case At::done: return true;
    }
    return true;
  }
  bool nested(const char* found) {
    if (key_ == "dtype" || key_ == "shape" || key_ == "data_offsets") return scalar(found);
    // An extra field holding a structure: skipped whole.
    at_ = At::skip;
    skip_depth_ = 1;
    return true;
  }
  bool end_skipped() {
    if (--skip_depth_ == 0) at_ = At::entry;
    return true;
  }
  bool number(std::uint64_t value) {
    if (at_ != At::shape && at_ != At::offsets) return scalar("a number");
    if (value > static_cast<std::uint64_t>(k_int64_max)) {
      return fail(fmt::format("{} holds {}, above 2^63-1", list_name(), value));
    }
    if (at_ == At::shape) {
      if (shape_.size() >= k_max_rank) {
        return fail(fmt::format("has a shape of more than {} dimensions", k_max_rank));
      }
      shape_.push_back(static_cast<std::int64_t>(value));
    } else {
      if (offsets_count_ >= 2) return fail("has data_offsets of more than two values");
      offsets_[offsets_count_++] = static_cast<std::int64_t>(value);
    }
    return true;
  }

  void begin_entry() {
    at_ = At::entry;
    key_.clear();
    dtype_text_.clear();
    shape_.clear();
    offsets_count_ = 0;
    has_dtype_ = has_shape_ = has_offsets_ = false;
  }

  bool finish_entry() {
    at_ = At::entry;  // so fail() names the tensor
    if (!has_dtype_ || !has_shape_ || !has_offsets_) {
      return fail(fmt::format("lacks {}", !has_dtype_ ? "dtype" : !has_shape_ ? "shape" : "data_offsets"));
    }
    const SafetensorsDtype* dtype = find_safetensors_dtype(dtype_text_);
    if (dtype == nullptr) {
      std::string known;
      for (const SafetensorsDtype& row : k_dtypes) known += (known.empty() ? "" : ", ") + std::string(row.name);
      return fail(fmt::format("has dtype '{}', which safetensors does not define ({})",
                              printable(dtype_text_), known));
    }
    if (offsets_count_ != 2) return fail("needs data_offsets [begin, end]");
    std::int64_t elements = 1;
    for (const std::int64_t dim : shape_) {
      if (__builtin_mul_overflow(elements, dim, &elements)) {
        return fail(fmt::format("has shape {}, over 2^63-1 elements", shape_text(shape_)));
      }
    }
    // Sub-byte dtypes (F4, F6) need a whole number of bytes in all; the bit count itself must fit.
    std::int64_t bits = 0;
    if (__builtin_mul_overflow(elements, dtype->bits, &bits)) {
      return fail(fmt::format("has shape {}: {} x {} bits is over 2^63-1", shape_text(shape_),
                              elements, dtype->bits));
    }
    if (bits % 8 != 0) {
      return fail(fmt::format("has {} {} values of {} bits: not a whole number of bytes", elements,
                              dtype->name, dtype->bits));
    }
    const std::int64_t begin = offsets_[0];
    const std::int64_t end = offsets_[1];
    if (begin > end) return fail(fmt::format("has data_offsets [{}, {}]: begin after end", begin, end));
    const std::int64_t needed = bits / 8;
    if (needed != end - begin) {
      return fail(fmt::format("has data_offsets [{}, {}] ({} bytes) but {} {} needs {} bytes",
                              begin, end, end - begin, dtype->name, shape_text(shape_), needed));
    }
    header.tensors.push_back({entry_, dtype->name, shape_, elements, begin, end});
    at_ = At::entries;
    return true;
  }

  At at_ = At::start;
  int skip_depth_ = 0;
  std::string entry_;  // the current top-level key
  std::string key_;    // the current key inside an entry or __metadata__
  std::string dtype_text_;
  std::vector<std::int64_t> shape_;
  std::array<std::int64_t, 2> offsets_{};
  std::size_t offsets_count_ = 0;
  bool has_dtype_ = false;
  bool has_shape_ = false;
  bool has_offsets_ = false;
};

// Names must be unique; offsets must tile [0, data_bytes) exactly (tensor.rs validate).
void check_layout(SafetensorsHeader& header) {
  const std::vector<TensorHeader>& tensors = header.tensors;
  std::unordered_set<std::string_view> names;
  names.reserve(tensors.size());
  for (const TensorHeader& tensor : tensors) {
    if (!names.insert(tensor.name).second) {
      throw CheckpointError(fmt::format("{}: tensor '{}' appears twice", where(header.shard),
                                        printable(tensor.name)));
    }
  }
  const auto by_offset = [&](std::size_t a, std::size_t b) {
    return tensors[a].begin != tensors[b].begin ? tensors[a].begin < tensors[b].begin
                                                : tensors[a].end < tensors[b].end;
  };
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Writers list tensors in offset order; sort only when this one did not.
  if (!std::is_sorted(order.begin(), order.end(), by_offset)) {
    std::sort(order.begin(), order.end(), by_offset);
  }
  std::int64_t covered = 0;
  const TensorHeader* previous = nullptr;
  for (const std::size_t index : order) {
    const TensorHeader& tensor = tensors[index];
    if (tensor.begin < covered) {
      throw CheckpointError(fmt::format(
          "{}: tensor '{}' (bytes {}..{}) overlaps tensor '{}' (bytes {}..{})", where(header.shard),
          printable(tensor.name), tensor.begin, tensor.end, printable(previous->name),
          previous->begin, previous->end));
    }
    if (tensor.begin > covered) {
      throw CheckpointError(fmt::format(
          "{}: bytes {}..{} of the data buffer belong to no tensor (before '{}'); the format "
          "allows no holes",
          where(header.shard), covered, tensor.begin, printable(tensor.name)));
    }
    covered = tensor.end;
    previous = &tensor;
  }
  header.data_bytes = covered;
}

}  // namespace

std::span<const SafetensorsDtype> safetensors_dtypes() { return k_dtypes; }

const SafetensorsDtype* find_safetensors_dtype(std::string_view name) {
  for (const SafetensorsDtype& row : k_dtypes) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::uint64_t safetensors_header_length(std::span<const unsigned char, 8> prefix) {
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    length |= static_cast<std::uint64_t>(prefix[i]) << (8 * i);
  }
  return length;
}

std::uint64_t checked_header_length(std::uint64_t length, std::uint64_t file_size_or_0,
                                    std::string_view shard) {
  if (length > k_max_header_bytes) {
    throw CheckpointError(fmt::format(
        "{}: the length prefix says {} bytes, above the format's limit of {} bytes "
        "(safetensors MAX_HEADER_SIZE); the file is corrupt or not safetensors",
        where(shard), length, k_max_header_bytes));
  }
  if (length < 2) {
    throw CheckpointError(fmt::format(
        "{}: the length prefix says {} bytes; the smallest header, {{}}, takes 2", where(shard),
        length));
  }
  if (file_size_or_0 != 0 && (file_size_or_0 < k_length_prefix_bytes ||
                              length > file_size_or_0 - k_length_prefix_bytes)) {
    throw CheckpointError(fmt::format(
        "{}: the length prefix says {} bytes but the file holds {} bytes in all", where(shard),
        length, file_size_or_0));
  }
  return length;
}

std::uint64_t header_bytes_needed(std::span<const unsigned char> file_start,
                                  std::uint64_t file_size_or_0, std::string_view shard) {
  if (file_start.size() < k_length_prefix_bytes) {
    throw CheckpointError(fmt::format("{}: {} bytes read; the length prefix alone takes 8",
                                      where(shard), file_start.size()));
  }
  const std::uint64_t length =
      safetensors_header_length(file_start.first<k_length_prefix_bytes>());
  return k_length_prefix_bytes + checked_header_length(length, file_size_or_0, shard);
}

SafetensorsHeader parse_safetensors_file_start(std::span<const unsigned char> file_start,
                                               std::uint64_t file_size_or_0,
                                               std::string_view shard) {
  const std::uint64_t needed = header_bytes_needed(file_start, file_size_or_0, shard);
  if (file_start.size() < needed) {
    throw CheckpointError(fmt::format("{}: the header needs the first {} bytes, {} were read",
                                      where(shard), needed, file_start.size()));
  }
  const std::string_view json(reinterpret_cast<const char*>(file_start.data()) + k_length_prefix_bytes,
                              static_cast<std::size_t>(needed - k_length_prefix_bytes));
  return parse_safetensors_header(json, file_size_or_0, shard);
}

SafetensorsHeader parse_safetensors_header(std::string_view json, std::uint64_t file_size_or_0,
                                           std::string_view shard) {
  checked_header_length(json.size(), file_size_or_0, shard);
  // The format: "MUST begin with {"; trailing spaces are padding.
  if (json.front() != '{') {
    throw CheckpointError(fmt::format("{}: does not begin with '{{'; not a safetensors header",
                                      where(shard)));
  }
  HeaderReader reader(shard);
  const bool parsed = nlohmann::json::sax_parse(json.begin(), json.end(), &reader);
  if (!parsed || !reader.finished()) {
    throw CheckpointError(fmt::format(
        "{}: {}", where(shard), reader.problem.empty() ? "is not a complete JSON object" : reader.problem));
  }
  SafetensorsHeader header = std::move(reader.header);
  check_layout(header);
  if (file_size_or_0 != 0) {
    const std::uint64_t expected = k_length_prefix_bytes + json.size() +
                                   static_cast<std::uint64_t>(header.data_bytes);
    if (expected != file_size_or_0) {
      throw CheckpointError(fmt::format(
          "{}: 8 + {} header bytes + {} data bytes = {}, but the file holds {} bytes",
          where(shard), json.size(), header.data_bytes, expected, file_size_or_0));
    }
  }
  return header;
}

CheckpointSummary summarize(const std::vector<SafetensorsHeader>& shards) {
  CheckpointSummary summary;
  std::map<std::string_view, DtypeTotals> by_dtype;
  std::vector<std::pair<std::string_view, std::string_view>> names;  // tensor, shard
  const auto add = [](std::int64_t& total, std::int64_t value) {
    if (__builtin_add_overflow(total, value, &total)) {
      throw CheckpointError("safetensors headers: the checkpoint's totals exceed 2^63-1");
    }
  };
  for (const SafetensorsHeader& shard : shards) {
    ++summary.shards;
    for (const TensorHeader& tensor : shard.tensors) {
      if (shards.size() > 1) names.emplace_back(tensor.name, shard.shard);
      ++summary.tensors;
      add(summary.stored_elements, tensor.elements);
      add(summary.bytes, tensor.bytes());
      if (tensor.shape.empty()) {
        ++summary.scalar_tensors;
      } else {
        add(summary.elements_without_scalars, tensor.elements);
      }
      DtypeTotals& totals = by_dtype[tensor.dtype];
      totals.dtype = std::string(tensor.dtype);
      ++totals.tensors;
      add(totals.elements, tensor.elements);
      add(totals.bytes, tensor.bytes());
    }
  }
  // Each shard's names are unique already (check_layout); only several shards can repeat one.
  if (shards.size() > 1) {
    std::sort(names.begin(), names.end());
    for (std::size_t i = 1; i < names.size(); ++i) {
      if (names[i].first == names[i - 1].first) {
        throw CheckpointError(fmt::format(
            "safetensors headers: tensor '{}' is stored in both {} and {}",
            printable(names[i].first), printable(names[i - 1].second), printable(names[i].second)));
      }
    }
  }
  for (auto& [dtype, totals] : by_dtype) summary.by_dtype.push_back(std::move(totals));
  std::stable_sort(summary.by_dtype.begin(), summary.by_dtype.end(),
                   [](const DtypeTotals& a, const DtypeTotals& b) { return a.bytes > b.bytes; });
  return summary;
}

}  // namespace trace::checkpoint
