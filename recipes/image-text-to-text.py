#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the checkpoint and its processor with from_pretrained (never trust_remote_code),
shows it a test image drawn here (a gradient, no download), compiles the forward pass with
torch.compile(backend=COMPILE_BACKEND), generates NEW_TOKENS greedy tokens with a static KV
cache, and prints one line `CANRUN_RESULT {json}` with the tokens, the timings, the peak
memory and the versions of the stack. On failure the line says in which stage (load,
compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}
{{INCLUDE _ranks_settings IF CORES > 1}}


def main():
    """Loads the model and its processor, then generates from the test image; returns the
    result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForImageTextToText)
    timings = {"load_s": time.perf_counter() - started}
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": PROMPT}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
    inputs = processor(images=test_image(), text=prompt, return_tensors="pt").to(DEVICE)
    if "pixel_values" in inputs:
        inputs["pixel_values"] = inputs["pixel_values"].to(getattr(torch, DTYPE))
    return generate(torch, model, inputs, processor.tokenizer, timings)


def test_image():
    """A deterministic 64x64 RGB gradient, so the script needs no image file."""
    from PIL import Image
    return Image.linear_gradient("L").resize((64, 64)).convert("RGB")


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
{{INCLUDE _ranks IF CORES > 1}}
