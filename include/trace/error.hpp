#pragma once
/// The error hierarchy. Core code throws these; only cli::run turns them into messages and exit
/// codes (2 for bad input, 3 for network failures).
#include <stdexcept>
#include <string>

namespace trace {

/// Base of every error trace reports to the user. what() is one complete sentence.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Bad or unsupported input: a config, a flag, a table. Exit code 2.
class ConfigError : public Error {
public:
  using Error::Error;
};

/// A checkpoint file's contents are malformed or hostile (a safetensors header that lies about
/// its length, shapes or offsets). Bad input like a bad config: exit code 2.
class CheckpointError : public ConfigError {
public:
  using ConfigError::ConfigError;
};

/// A byte or element count past 2^63: an absurd config or flags (checked_math.hpp). Bad input,
/// exit code 2; the memory estimator adds which job sizes asked for it.
class SizeOverflowError : public ConfigError {
public:
  using ConfigError::ConfigError;
};

/// A network or hub failure. Exit code 3.
class FetchError : public Error {
public:
  using Error::Error;
};

}  // namespace trace
