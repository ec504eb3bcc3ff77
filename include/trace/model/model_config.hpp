#pragma once
/// config.json text -> ModelDescription. Pure: the caller loads the text.
#include <span>
#include <string>
#include <string_view>

#include "trace/model/model_description.hpp"

namespace trace {

/// One supported model_type: the row the parser dispatches on, and the help text lists.
struct ArchitectureInfo {
  std::string_view model_type;
  std::string_view family;  ///< short human name
};

/// Every model_type trace can parse, in the order help lists them.
std::span<const ArchitectureInfo> supported_architectures();

/// Parses and normalizes a Hugging Face config.json. Throws ConfigError on malformed JSON, a
/// non-object, an unknown model_type (the message lists the supported ones), a missing key or
/// a contradictory/out-of-range value (the message names the key).
ModelDescription parse_model_config(std::string_view json_text);
/// The same, with the text of the hf_quant_config.json found beside config.json (ModelOpt
/// exports); it describes the storage when config.json has no quantization_config.
ModelDescription parse_model_config(std::string_view json_text,
                                    std::string_view hf_quant_config_text);

}  // namespace trace
