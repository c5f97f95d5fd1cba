#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the checkpoint with from_pretrained (never trust_remote_code), compiles the forward
pass with torch.compile(backend=COMPILE_BACKEND), generates NEW_TOKENS greedy tokens with a
static KV cache, and prints one line `CANRUN_RESULT {json}` with the tokens, the timings,
the peak memory and the versions of the stack. On failure the line says in which stage
(load, compile, generate) and why, and the exit status is 1.
"""
import importlib
import importlib.metadata
import json
import os
import platform
import resource
import sys
import time
import traceback

# What is tested and how; canrun filled these in.
MODEL = {{MODEL}}  # Hub id, or a local folder
REVISION = {{REVISION}}
DTYPE = {{DTYPE}}  # torch dtype of the weights
DEVICE = {{TORCH_DEVICE}}
# torch.compile backend: a registered name or "module:function"; None runs eagerly.
COMPILE_BACKEND = {{COMPILE_BACKEND}}
COMPILE_OPTIONS = {{COMPILE_OPTIONS}}
IMPORTS = {{IMPORTS}}  # modules that register the device or the backend
PEAK_MEMORY = {{PEAK_MEMORY}}  # how peak memory is read: rss, cuda or neuron
PACKAGES = {{PACKAGES}}  # packages whose versions are reported
PROMPT = {{PROMPT}}
NEW_TOKENS = {{NEW_TOKENS}}

{{INCLUDE _helpers}}def main():
    timings = {}
    started = time.perf_counter()
    for module in IMPORTS:
        importlib.import_module(module)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = AutoModelForCausalLM.from_pretrained(MODEL, revision=REVISION, dtype=getattr(torch, DTYPE))
    model = model.to(DEVICE).eval()
    timings["load_s"] = time.perf_counter() - started
    inputs = tokenizer(PROMPT, return_tensors="pt").to(DEVICE)
    generate_and_report(torch, model, inputs, tokenizer, timings)


{{INCLUDE _entry}}