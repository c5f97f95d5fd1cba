#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the checkpoint with from_pretrained (never trust_remote_code), compiles the forward
pass with torch.compile(backend=COMPILE_BACKEND), generates NEW_TOKENS greedy tokens with a
static KV cache, and prints one line `CANRUN_RESULT {json}` with the tokens, the timings,
the peak memory and the versions of the stack. On failure the line says in which stage
(load, compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}
{{INCLUDE _ranks_settings IF CORES > 1}}


def main():
    """Loads the model and its tokenizer, then generates; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForCausalLM)
    timings = {"load_s": time.perf_counter() - started}
    inputs = tokenizer(PROMPT, return_tensors="pt").to(DEVICE)
    return generate(torch, model, inputs, tokenizer, timings)


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
{{INCLUDE _ranks IF CORES > 1}}
