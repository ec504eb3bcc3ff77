#pragma once
// The training job the estimator tests derive their numbers from by hand on the tiny Llama
// (tiny_models.hpp): a full fine-tune of 2 sequences of 128 tokens, bf16 mixed, AdamW, with
// flash-attn (K and V kept grouped) and fused norms (no eager RMSNorm copies), so that the saved
// values per token are the 2,048 job_test.cpp derives.
#include "trace/estimate/job.hpp"

namespace trace::test {

inline Job tiny_full_job() {
  Job job;
  job.mode = JobMode::full;
  job.precision = Precision::mixed;
  job.optimizer = Optimizer::adamw;
  job.seq_len = 128;
  job.batch = 2;  // 256 tokens
  job.attention = AttentionImpl::flash;
  job.eager_rms_norm = false;
  return job;
}

}  // namespace trace::test
