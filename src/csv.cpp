#include "trace/csv.hpp"

#include "trace/error.hpp"

namespace trace {

// RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      fields.emplace_back();
      any = true;
    } else if (c == '\n') {
      if (any || !fields.back().empty()) records.push_back(std::move(fields));
      fields.assign(1, std::string());
      any = false;
    } else if (c != '\r') {
      fields.back() += c;
      any = true;
    }
  }
  if (quoted) throw ConfigError("the CSV ends inside a quoted field");
  if (any || !fields.back().empty()) records.push_back(std::move(fields));
  return records;
}

}  // namespace trace
