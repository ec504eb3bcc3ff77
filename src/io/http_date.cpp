// IMF-fixdate by hand: a fixed 29-character layout, names compared as written, and the civil
// date turned into days since the epoch with Howard Hinnant's days_from_civil (the proleptic
// Gregorian calendar), so neither the locale nor the TZ variable can change the answer.
#include "trace/io/http_date.hpp"

#include <array>

#include "trace/text_match.hpp"

namespace trace::http {

namespace {

constexpr std::array<std::string_view, 7> k_days = {"Mon", "Tue", "Wed", "Thu",
                                                    "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 12> k_months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::int64_t k_max_delay_digits = 12;  // beyond any sane wait; keeps the sum in range

std::optional<int> digits(std::string_view text) {
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

template <std::size_t N>
std::optional<int> index_of(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

bool leap_year(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {  // month 1-12
  constexpr std::array<int, 12> k_lengths = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : k_lengths[static_cast<std::size_t>(month - 1)];
}

// Days from 1970-01-01 to year-month-day (month 1-12).
std::int64_t days_from_civil(std::int64_t year, std::int64_t month, std::int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const std::int64_t year_of_era = year - era * 400;
  const std::int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const std::int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

// 0 = Monday, as k_days.
int weekday_of(std::int64_t days_since_epoch) {
  const std::int64_t thursday_based = (days_since_epoch % 7 + 7) % 7;  // 1970-01-01 was a Thursday
  return static_cast<int>((thursday_based + 3) % 7);
}

std::optional<std::int64_t> delay_seconds(std::string_view text) {
  if (text.empty() || text.size() > k_max_delay_digits) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::optional<std::int64_t> parse_imf_fixdate(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  //  0123456789012345678901234567 8
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  const std::optional<int> weekday = index_of(k_days, text.substr(0, 3));
  const std::optional<int> day = digits(text.substr(5, 2));
  const std::optional<int> month = index_of(k_months, text.substr(8, 3));
  const std::optional<int> year = digits(text.substr(12, 4));
  const std::optional<int> hour = digits(text.substr(17, 2));
  const std::optional<int> minute = digits(text.substr(20, 2));
  const std::optional<int> second = digits(text.substr(23, 2));
  if (!weekday || !day || !month || !year || !hour || !minute || !second) return std::nullopt;
  if (*day < 1 || *day > days_in_month(*year, *month + 1) || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(*year, *month + 1, *day);
  if (weekday_of(days) != *weekday) return std::nullopt;  // "Mon, 06 Nov 1994" is no date
  return days * 86400 + *hour * 3600 + *minute * 60 + *second;
}

std::optional<std::int64_t> retry_after_wait(std::string_view retry_after,
                                             std::string_view date_header, std::int64_t now) {
  const std::string_view value = trimmed(retry_after);
  if (const std::optional<std::int64_t> seconds = delay_seconds(value)) return seconds;
  const std::optional<std::int64_t> at = parse_imf_fixdate(value);
  if (!at) return std::nullopt;
  const std::int64_t reference = parse_imf_fixdate(trimmed(date_header)).value_or(now);
  return *at > reference ? *at - reference : 0;
}

}  // namespace trace::http
