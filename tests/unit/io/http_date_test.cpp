// IMF-fixdate parsing and the Retry-After wait, on fixed strings. Every expected value is worked
// out by hand in the comment beside it (days since 1970-01-01 x 86,400 + the time of day).
#include "trace/io/http_date.hpp"

#include "catch.hpp"

using trace::http::parse_imf_fixdate;
using trace::http::retry_after_wait;

TEST_CASE("IMF-fixdate: seconds since the epoch", "[io][http_date]") {
  CHECK(parse_imf_fixdate("Thu, 01 Jan 1970 00:00:00 GMT") == 0);
  // RFC 9110's own example: 9,075 days to 1994-11-06 = 784,080,000 + 8:49:37 (31,777).
  CHECK(parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT") == 784'111'777);
  // 2015-01-01 is 45 x 365 + 11 leap days = 16,436 days; + 293 to 21 Oct = 16,729 days
  // = 1,445,385,600 s; + 7:28:00 (26,880 s).
  CHECK(parse_imf_fixdate("Wed, 21 Oct 2015 07:28:00 GMT") == 1'445'412'480);
  // 2000 is a leap year (divisible by 400): 10,957 days to 2000-01-01, + 31 + 28 = 11,016 days.
  CHECK(parse_imf_fixdate("Tue, 29 Feb 2000 00:00:00 GMT") == 951'782'400);
  // A leap second reads as the next second.
  CHECK(parse_imf_fixdate("Sat, 31 Dec 2016 23:59:60 GMT") ==
        *parse_imf_fixdate("Sun, 01 Jan 2017 00:00:00 GMT"));
}

TEST_CASE("IMF-fixdate: anything else is refused", "[io][http_date]") {
  CHECK_FALSE(parse_imf_fixdate(""));
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 07:28:00 UTC"));        // not GMT
  CHECK_FALSE(parse_imf_fixdate("Thu, 21 Oct 2015 07:28:00 GMT"));        // 21 Oct 2015 was a Wednesday
  CHECK_FALSE(parse_imf_fixdate("wed, 21 Oct 2015 07:28:00 GMT"));        // names are case-sensitive
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 oct 2015 07:28:00 GMT"));
  CHECK_FALSE(parse_imf_fixdate("Wednesday, 21-Oct-15 07:28:00 GMT"));    // obsolete RFC 850 form
  CHECK_FALSE(parse_imf_fixdate("Wed Oct 21 07:28:00 2015"));             // obsolete asctime form
  CHECK_FALSE(parse_imf_fixdate("Wed, 1 Oct 2015 07:28:00 GMT"));         // one-digit day
  CHECK_FALSE(parse_imf_fixdate("Sat, 32 Oct 2015 07:28:00 GMT"));        // no 32nd
  CHECK_FALSE(parse_imf_fixdate("Wed, 29 Feb 2023 00:00:00 GMT"));        // 2023 is not a leap year
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 24:00:00 GMT"));        // hour 24
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 07:60:00 GMT"));        // minute 60
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 07:28:61 GMT"));        // second 61
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 07:28:0x GMT"));
  CHECK_FALSE(parse_imf_fixdate("Wed, 21 Oct 2015 07:28:00 GMT "));       // trailing byte
}

TEST_CASE("Retry-After: delay-seconds or a date against the response's Date", "[io][http_date]") {
  const std::int64_t now = 1'445'412'480;  // Wed, 21 Oct 2015 07:28:00 GMT
  CHECK(retry_after_wait("120", "", now) == 120);
  CHECK(retry_after_wait(" 7 ", "", now) == 7);
  CHECK(retry_after_wait("0", "", now) == 0);
  CHECK_FALSE(retry_after_wait("-5", "", now));
  CHECK_FALSE(retry_after_wait("1.5", "", now));
  CHECK_FALSE(retry_after_wait("soon", "", now));
  CHECK_FALSE(retry_after_wait("", "", now));
  // 07:28:00 - 07:26:30 = 90 s, whatever this machine's clock says.
  CHECK(retry_after_wait("Wed, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:26:30 GMT", 0) == 90);
  // Across a year: 00:00:10 on 1 Jan 2016 - 23:59:50 on 31 Dec 2015 = 20 s.
  CHECK(retry_after_wait("Fri, 01 Jan 2016 00:00:10 GMT", "Thu, 31 Dec 2015 23:59:50 GMT", 0) == 20);
  // Across 29 Feb 2024: 28 Feb -> 1 Mar is 2 days = 172,800 s.
  CHECK(retry_after_wait("Fri, 01 Mar 2024 00:00:00 GMT", "Wed, 28 Feb 2024 00:00:00 GMT", 0) ==
        172'800);
  // A date already past waits nothing.
  CHECK(retry_after_wait("Wed, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:29:00 GMT", 0) == 0);
  // No Date (or an unreadable one): measured from `now`; 07:28:45 - 07:28:00 = 45 s.
  CHECK(retry_after_wait("Wed, 21 Oct 2015 07:28:45 GMT", "", now) == 45);
  CHECK(retry_after_wait("Wed, 21 Oct 2015 07:28:45 GMT", "yesterday", now) == 45);
  CHECK(retry_after_wait("Wed, 21 Oct 2015 07:27:00 GMT", "", now) == 0);
  CHECK_FALSE(retry_after_wait("Wed, 21 Oct 2015 07:28:45 UTC", "", now));
}
