#pragma once
// Searches over a monotone predicate that start from a guess: the memory estimates the cost
// module searches (cards for a training job, requests for a serving card) are close to linear,
// so a guess from two evaluations is usually exact and the search costs two or three more.
#include <algorithm>
#include <cstdint>

namespace trace::search {

/// The smallest x in [low, high] with pred(x) true, for pred false..false true..true and
/// pred(high) true (the caller checks). Starts at `guess` and gallops outwards.
template <typename Pred>
std::int64_t first_true(Pred pred, std::int64_t guess, std::int64_t low, std::int64_t high) {
  guess = std::clamp(guess, low, high);
  std::int64_t yes = high, no = low - 1;  // pred(yes) true, pred(no) false (no = low - 1: none)
  if (pred(guess)) {
    yes = guess;
    for (std::int64_t step = 1; yes - step >= low; step *= 2) {
      if (!pred(yes - step)) {
        no = yes - step;
        break;
      }
      yes -= step;
    }
  } else {
    no = guess;
    for (std::int64_t step = 1; no + step <= high; step *= 2) {
      if (pred(no + step)) {
        yes = no + step;
        break;
      }
      no += step;
    }
  }
  while (yes - no > 1) {
    const std::int64_t mid = no + (yes - no) / 2;
    (pred(mid) ? yes : no) = mid;
  }
  return yes;
}

}  // namespace trace::search
