#pragma once
// quantization_config -> Quantization. Shared by every family: the parser calls it once.
#include <optional>
#include <string>

#include "config_reader.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

/// Reads `quantization_config` when present. Throws ConfigError for a quant_method trace does
/// not know (the message lists the supported ones) or malformed parameters.
std::optional<Quantization> parse_quantization(const ConfigReader& config);

/// A ModelOpt map: config.json's quantization_config (quant_method "modelopt") or the
/// "quantization" object of hf_quant_config.json. `source` names the file for messages.
Quantization parse_modelopt(const ConfigReader& quantization, std::string source);

}  // namespace trace
