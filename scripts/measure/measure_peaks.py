#!/usr/bin/env python3
"""Measure the peak GPU memory of training steps and generate() calls, for trace's own
validation set (docs/validation.md, "trace's own measured runs").

Runs on a CUDA machine with PyTorch, transformers and PEFT. Each job builds its model from a
config.json in this repository with random weights (nothing is downloaded), runs the job and
reads PyTorch's counters. A job that names a card (cap_gpu, cap_usable_gib) is also judged on
that card: the allocator is capped at the card's usable memory less this process's measured
non-PyTorch memory (CUDA context, library handles), and the job fits when it runs under the cap.

    python3 scripts/measure/measure_peaks.py scripts/measure/jobs.json OUT_DIR [--budget-s S]

Writes OUT_DIR/results.jsonl, one object per job, as each job ends.
"""
import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM  # noqa: E402

GIB = 2**30
TRAINING_STEPS = 3  # the optimizer states exist from step 2 on; step 3 is timed as steady
LORA_TARGETS = {
    "qv": ["q_proj", "v_proj"],
    "attention": ["q_proj", "k_proj", "v_proj", "o_proj"],
    "all": "all-linear",
}


def load_config(path):
    # AutoConfig reads a folder holding config.json; the repository names its files by model.
    folder = tempfile.mkdtemp()
    try:
        shutil.copyfile(path, os.path.join(folder, "config.json"))
        return AutoConfig.from_pretrained(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build_model(job, config, dtype):
    model_class = AutoModelForMaskedLM if job.get("head") == "masked_lm" else AutoModelForCausalLM
    with torch.device("cuda"):
        try:
            model = model_class.from_config(
                config, dtype=dtype, attn_implementation=job["attention"])
        except TypeError:  # transformers 4: torch_dtype
            model = model_class.from_config(
                config, torch_dtype=dtype, attn_implementation=job["attention"])
    return model


def vocab_size(config):
    size = getattr(config, "vocab_size", None)
    if size is None and hasattr(config, "get_text_config"):
        size = config.get_text_config().vocab_size
    return size


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def run_training(job, config, record):
    mixed = job["precision"] == "mixed_fp32master"
    if job["task"] == "full":
        dtype = {"bf16_pure": torch.bfloat16, "fp32": torch.float32,
                 "mixed_fp32master": torch.float32}[job["precision"]]
    else:
        dtype = torch.bfloat16  # LoRA: the frozen base in bf16, PEFT's adapters in fp32
    model = build_model(job, config, dtype)
    record["parameters"] = parameter_count(model)
    model.config.use_cache = False
    if job.get("grad_ckpt", "none") == "full":
        model.gradient_checkpointing_enable(
            gradient_checkpointing_kwargs={"use_reentrant": job.get("ckpt_reentrant", False)})
    if job["task"] == "lora":
        from peft import LoraConfig, get_peft_model

        rank = job["lora_rank"]
        # PEFT keeps the adapters in fp32 (autocast_adapter_dtype) unless told to leave them in
        # the base's dtype.
        model = get_peft_model(model, LoraConfig(
            r=rank, lora_alpha=2 * rank, lora_dropout=job.get("lora_dropout", 0.0),
            target_modules=LORA_TARGETS[job["lora_targets"]], task_type="CAUSAL_LM"),
            autocast_adapter_dtype=job.get("adapter_dtype", "fp32") == "fp32")
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    record["trainable_parameters"] = sum(p.numel() for p in trainable)
    record["after_load_allocated"] = torch.cuda.memory_allocated()
    # torch's default takes the foreach path on CUDA; fused=True is one kernel per step
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, fused=job.get("fused_optimizer", False))
    tokens = torch.randint(0, vocab_size(config), (job["batch"], job["seq_len"]), device="cuda")
    step_seconds = []
    for _ in range(TRAINING_STEPS):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mixed):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        record["loss"] = float(loss.detach())
        del loss
        torch.cuda.synchronize()
        step_seconds.append(time.perf_counter() - start)
    record["step_seconds"] = step_seconds


def run_generate(job, config, record):
    model = build_model(job, config, torch.bfloat16)
    record["parameters"] = parameter_count(model)
    model.eval()
    record["after_load_allocated"] = torch.cuda.memory_allocated()
    tokens = torch.randint(0, vocab_size(config), (job["batch"], job["seq_len"]), device="cuda")
    mask = torch.ones_like(tokens)
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=tokens, attention_mask=mask,
                             max_new_tokens=job["new_tokens"], min_new_tokens=job["new_tokens"],
                             do_sample=False, pad_token_id=0)
    torch.cuda.synchronize()
    record["generate_seconds"] = time.perf_counter() - start
    record["generated_tokens"] = int(out.shape[1] - tokens.shape[1])


def run_job(job, config, record):
    if job["task"] == "serve":
        run_generate(job, config, record)
    else:
        run_training(job, config, record)


def clean():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def non_torch_bytes():
    free, total = torch.cuda.mem_get_info()
    return (total - free) - torch.cuda.memory_reserved()


def measure(job, config):
    """One run without a cap: the peaks. Returns the record."""
    record = {}
    clean()
    base = torch.cuda.memory_allocated()
    started = time.perf_counter()
    try:
        run_job(job, config, record)
        record["status"] = "ok"
    except torch.OutOfMemoryError as error:
        record["status"] = "oom"
        record["error"] = str(error).splitlines()[0][:300]
    record["base_allocated"] = base
    record["peak_allocated"] = torch.cuda.max_memory_allocated() - base
    record["peak_reserved"] = torch.cuda.max_memory_reserved()
    record["non_torch"] = non_torch_bytes()
    record["wall_seconds"] = time.perf_counter() - started
    return record


def judge_on_card(job, config, record, total):
    """Whether the job runs on cap_gpu: decided by the peaks where they settle it, else by a
    run under the capped allocator."""
    cap = int(job["cap_usable_gib"] * GIB) - record["non_torch"]
    record["cap_bytes"] = cap
    if record["peak_allocated"] > cap:
        record["cap_oom"], record["cap_basis"] = True, "allocated peak above the cap"
        return
    if record["peak_reserved"] <= cap:
        record["cap_oom"], record["cap_basis"] = False, "reserved peak within the cap"
        return
    clean()
    torch.cuda.set_per_process_memory_fraction(cap / total)
    capped = {}
    try:
        run_job(job, config, capped)
        record["cap_oom"] = False
    except torch.OutOfMemoryError:
        record["cap_oom"] = True
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    record["cap_basis"] = "run under the capped allocator"
    record["cap_peak_allocated"] = torch.cuda.max_memory_allocated()
    record["cap_peak_reserved"] = torch.cuda.max_memory_reserved()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("jobs")
    parser.add_argument("out")
    parser.add_argument("--budget-s", type=float, default=330.0)
    parser.add_argument("--only", default="", help="comma-separated job ids")
    args = parser.parse_args()
    jobs = json.load(open(args.jobs))["jobs"]
    if args.only:
        wanted = set(args.only.split(","))
        jobs = [job for job in jobs if job["id"] in wanted]
    os.makedirs(args.out, exist_ok=True)
    results = open(os.path.join(args.out, "results.jsonl"), "w")
    started = time.perf_counter()

    torch.cuda.init()
    props = torch.cuda.get_device_properties(0)
    total = props.total_memory
    warm = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    (warm @ warm).sum().item()  # loads cuBLAS, as every job's first matmul would
    del warm
    clean()
    environment = {
        "environment": True, "gpu": props.name, "total_memory": total,
        "torch": torch.__version__, "transformers": transformers.__version__,
        "cuda": torch.version.cuda, "non_torch_after_init": non_torch_bytes(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
    }
    try:
        import peft
        environment["peft"] = peft.__version__
    except ImportError:
        pass
    print(json.dumps(environment), flush=True)
    results.write(json.dumps(environment) + "\n")
    results.flush()

    for job in jobs:
        if time.perf_counter() - started > args.budget_s:
            record = {"id": job["id"], "status": "skipped: time budget"}
        else:
            try:
                config = load_config(job["config"])
                record = measure(job, config)
                if "cap_gpu" in job and record["status"] == "ok":
                    judge_on_card(job, config, record, total)
            except Exception as error:  # a job that breaks must not stop the others
                record = {"status": "error", "error": repr(error)[:400],
                          "trace": traceback.format_exc()[-1500:]}
            record["id"] = job["id"]
        clean()
        line = json.dumps(record)
        print(line, flush=True)
        results.write(line + "\n")
        results.flush()
    print(f"done in {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
