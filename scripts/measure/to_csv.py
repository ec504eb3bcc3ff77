#!/usr/bin/env python3
"""Turn measure_peaks.py's results.jsonl into rows with measured.csv's columns, so that
`trace validate` scores them (docs/validation.md, "trace's own measured runs").

    python3 scripts/measure/to_csv.py scripts/measure/jobs.json RESULTS.jsonl [...] > OUT.csv

Each job becomes one row. A job that names a card (cap_gpu) is judged on that card: job_oom is
whether it ran under the allocator capped at the card's usable memory; the measured peak is the
uncapped run's. Other jobs are judged on the H200 they ran on.
"""
import csv
import json
import sys

GIB = 2**30
COLUMNS = (
    "row_id,task,model_id,framework,precision,quantization,optimizer,seq_len,micro_batch,grad_ckpt,"
    "attention,lora_rank,lora_targets,n_gpus,sharding,gpu,card_mem_gb,peak_mem,peak_unit,"
    "unit_basis,peak_mem_gib,measure_method,oom,kv_cache_tokens,kv_cache_mem_gib,gpu_mem_util,"
    "quality,source,source_locator,notes,config_file,job_task,job_seq_len,job_batch,job_gpus,"
    "job_sharding,job_tp,job_pp,job_ep,job_grad_ckpt,job_attention,job_lora_rank,job_weights,"
    "job_precision,job_optimizer,job_optimizer_in_backward,job_gpu,job_usable_gib,"
    "job_measured_gib,job_oom").split(",")
CARD_GB = {"t4": 16, "l4": 24, "a10g": 24, "rtx-3090": 24, "rtx-4090": 24, "a100-40gb": 40,
           "a100-80gb": 80, "rtx-5090": 32, "h200": 141}
LORA_TARGETS = {"qv": "q_proj,v_proj", "attention": "q_proj,k_proj,v_proj,o_proj",
                "all": "all-linear"}


def main():
    jobs = {job["id"]: job for job in json.load(open(sys.argv[1]))["jobs"]}
    rows = []
    for path in sys.argv[2:]:
        environment = None
        for line in open(path):
            record = json.loads(line)
            if record.get("environment"):
                environment = record
                continue
            if record.get("status") != "ok":
                continue
            job = jobs[record["id"]]
            if not job.get("csv", True):
                continue  # a probe of a setting trace's job columns cannot state
            rows.append(row_for(job, record, environment, on_card=False))
            if "cap_gpu" in job:
                rows.append(row_for(job, record, environment, on_card=True))
    writer = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for number, row in enumerate(rows, start=1):
        row["row_id"] = str(number)
        writer.writerow(row)


def row_for(job, record, environment, on_card):
    """The job's row on the H200 it ran on (its measured peak), or on_card: the card it names,
    with the verdict of the capped allocator and no peak (the H200 row holds it)."""
    serve = job["task"] == "serve"
    versions = (f"transformers {environment['transformers']}, PyTorch {environment['torch']}, "
                f"PEFT {environment.get('peft', '-')}")
    h200_usable = environment["total_memory"] / GIB
    card = job["cap_gpu"] if on_card else "h200"
    usable = job["cap_usable_gib"] if on_card else round(h200_usable, 2)
    oom = record["cap_oom"] if on_card else False
    peak_gib = record["peak_allocated"] / GIB
    measured = "" if on_card else f"{peak_gib:.3f}"
    if serve:
        framework = f"transformers generate() ({versions})"
        seq_len = job["seq_len"] + job["new_tokens"]
    else:
        framework = f"PyTorch training loop, transformers models ({versions})"
        seq_len = job["seq_len"]
    if on_card:
        gpu = (f"H200, allocator capped at {card}'s {usable} GiB less this process's "
               f"{record['non_torch'] / GIB:.2f} GiB outside PyTorch ({record['cap_basis']})")
    else:
        gpu = "H200"
    notes = [f"random weights built from the config; {job['id']}; allocator's peak "
             f"reservation {record['peak_reserved'] / GIB:.3f} GiB"]
    if serve:
        notes.append(f"prompt {job['seq_len']} tokens, {job['new_tokens']} new tokens, greedy")
    else:
        notes.append("3 steps; zero_grad(set_to_none=True); loss = model(input_ids, labels).loss")
        if job["task"] == "lora":
            adapters = ("adapters bf16, no autocast" if job.get("adapter_dtype") == "bf16"
                        else "adapters fp32 under autocast")
            notes.append(f"PEFT LoRA r={job['lora_rank']} alpha={2 * job['lora_rank']} "
                         f"dropout {job.get('lora_dropout', 0)}; " + adapters)
        if job["grad_ckpt"] == "full":
            notes.append("gradient_checkpointing_enable(use_reentrant=False)")
    precision = {"mixed_fp32master": "bf16 autocast, fp32 master weights",
                 "bf16_pure": "bf16 weights and AdamW states", "fp32": "fp32"}
    return {
        "task": {"full": "full_ft"}.get(job["task"], job["task"]),
        "model_id": job["model_id"],
        "framework": framework,
        "precision": "bf16" if serve else precision[job["precision"]],
        "quantization": "none",
        # PyTorch 2.11's default AdamW step was measured as fused=True's: the same peak to
        # 75 KB, no state-sized temporary (llama32-1b-full-bf16-short and -fused)
        "optimizer": "-" if serve else (
            "torch.optim.AdamW(fused=True)" if job.get("fused_optimizer") else
            "torch.optim.AdamW (PyTorch 2.11 default; measured as fused: no step temporary)"),
        "seq_len": str(seq_len),
        "micro_batch": str(job["batch"]),
        "grad_ckpt": "-" if serve else ("y" if job["grad_ckpt"] == "full" else "n"),
        "attention": "torch SDPA" if job["attention"] == "sdpa" else "eager",
        "lora_rank": str(job.get("lora_rank", "")),
        "lora_targets": LORA_TARGETS.get(job.get("lora_targets", ""), ""),
        "n_gpus": "1",
        "sharding": "none",
        "gpu": gpu,
        "card_mem_gb": str(CARD_GB[card]),
        "peak_mem": measured,
        "peak_unit": "GiB",
        "unit_basis": "GiB",
        "peak_mem_gib": measured,
        "measure_method": "torch.cuda.max_memory_allocated()/2^30 less the allocation before "
                          "the job",
        "oom": "y" if oom else "n",
        "quality": "A-fully-specified",
        "source": "trace scripts/measure/measure_peaks.py on one NVIDIA H200 (2026-12-04)",
        "source_locator": f"tests/data/measured-h200/ {job['id']}",
        "notes": "; ".join(notes),
        "config_file": job["config"].rsplit("/", 1)[-1],
        "job_task": job["task"],
        "job_seq_len": str(seq_len),
        "job_batch": str(job["batch"]),
        "job_gpus": "1",
        "job_sharding": "single",
        "job_tp": "1",
        "job_pp": "1",
        "job_ep": "1",
        "job_grad_ckpt": "none" if serve else job["grad_ckpt"],
        "job_attention": job["attention"],
        "job_lora_rank": str(job.get("lora_rank", "")),
        "job_weights": job.get("weights", "n/a"),
        "job_precision": "bf16_pure" if serve else job["precision"],
        "job_optimizer": "none" if serve else "adamw",
        "job_optimizer_in_backward": "0",
        "job_gpu": card,
        "job_usable_gib": str(usable),
        "job_measured_gib": measured,
        "job_oom": "1" if oom else "0",
    }


if __name__ == "__main__":
    main()
