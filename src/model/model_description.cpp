// Out-of-line members of the model description (include/trace/model/model_description.hpp).
#include "trace/model/model_description.hpp"

#include "trace/checked_math.hpp"

namespace trace {

std::int64_t ExtraParameter::weight_elements() const {
  if (shape.empty()) return 0;
  std::int64_t elements = 1;
  for (const std::int64_t dim : shape) elements = checked_mul(elements, dim, "a tensor's shape");
  return elements;
}

bool Quantization::converts_ssm_projection(std::string_view linear_name) const {
  if (!ssm_quantized) return false;
  return std::none_of(ssm_unconverted.begin(), ssm_unconverted.end(), [&](const std::string& last) {
    return linear_name.size() > last.size() && linear_name.ends_with(last) &&
           linear_name[linear_name.size() - last.size() - 1] == '.';
  });
}

}  // namespace trace
