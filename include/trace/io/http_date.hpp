#pragma once
/// HTTP dates (RFC 9110 §5.6.7) and the Retry-After field (§10.2.3), parsed without the C
/// library's locale- and time-zone-dependent functions: pure, so tests give fixed strings.
#include <cstdint>
#include <optional>
#include <string_view>

namespace trace::http {

/// Seconds since 1970-01-01T00:00:00Z of an IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"
/// (the form RFC 9110 requires senders to use), or nullopt when the text is not exactly one:
/// day and month names case-sensitive, two-digit day, four-digit year, "GMT", a valid calendar
/// date, hour 0-23, minute 0-59, second 0-60 (a leap second reads as the next :00). The obsolete
/// RFC 850 and asctime forms are not accepted.
std::optional<std::int64_t> parse_imf_fixdate(std::string_view text);

/// The wait a Retry-After value asks for, in seconds: delay-seconds ("120") as is; an HTTP date
/// minus the response's Date (`date_header`, when it parses) or else minus `now` (seconds since
/// the epoch). A date in the past waits 0. nullopt when the value is neither form.
std::optional<std::int64_t> retry_after_wait(std::string_view retry_after,
                                             std::string_view date_header, std::int64_t now);

}  // namespace trace::http
