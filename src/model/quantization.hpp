#pragma once
// quantization_config -> Quantization. Shared by every family: the parser calls it once.
#include <optional>

#include "config_reader.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

/// Reads `quantization_config` when present. Throws ConfigError for a quant_method trace does
/// not know (the message lists the supported ones) or malformed parameters.
std::optional<Quantization> parse_quantization(const ConfigReader& config);

}  // namespace trace
