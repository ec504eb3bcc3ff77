#pragma once
// Reading one measured-runs CSV row (its cells by column name) into a MeasuredRow: the job_*
// cells, the counter, the engine's settings, and the readings of the free-text cells.
#include <map>
#include <string>

#include "trace/validate/validation.hpp"

namespace trace {

/// The row; a job_* cell that cannot be read leaves its message in job_error. Absent columns
/// read as empty cells (operator[] adds them).
MeasuredRow read_measured_row(std::map<std::string, std::string>& cell);

}  // namespace trace
