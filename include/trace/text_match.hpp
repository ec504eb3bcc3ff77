#pragma once
/// Small string helpers: case folding, "did you mean" suggestions, safe names.
#include <string>
#include <string_view>
#include <vector>

namespace trace {

std::string to_lower(std::string_view text);
/// The text without the spaces and tabs around it.
std::string_view trimmed(std::string_view text);
/// Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word` if it is plausibly a typo of it, else "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);
/// Shell-style match: '*' stands for any run of characters (dots included), '?' for one.
bool glob_match(std::string_view pattern, std::string_view text);
/// One safe path or repo-id part: 1..max_length of [A-Za-z0-9._-], never "." or "..".
bool is_plain_name(std::string_view part, std::size_t max_length);

}  // namespace trace
