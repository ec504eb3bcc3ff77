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

}  // namespace trace
