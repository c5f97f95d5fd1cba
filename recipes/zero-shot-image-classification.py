#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the image-text model with AutoModelForZeroShotImageClassification.from_pretrained and
its processor (never trust_remote_code), compiles the forward pass with
torch.compile(backend=COMPILE_BACKEND), scores two images it draws itself (no file needed; the
first is saved as input.png) against LABELS (the first is PROMPT) as one batch and writes the
image-text logits to outputs.safetensors. It prints one line `CANRUN_RESULT {json}` with the
first image's labels ranked, images per second, the timings, the peak memory and the versions
of the stack. On failure the line says in which stage (load, compile, generate) and why, and the
exit status is 1.
"""
{{INCLUDE _settings}}

# The candidate labels, one text each; the first is PROMPT, which describes the first image.
LABELS = [
    PROMPT,
    "a black and white checkerboard with a yellow square",
    "a photo of a cat",
    "a bowl of fruit on a table",
    "a city street at night",
]
# Models trained with sigmoid scores on texts padded to their full length (SigLIP), as the
# transformers pipeline treats them; others (CLIP) pad to the longest and rank by softmax.
SIGMOID_TYPES = ("siglip", "siglip2")


def main():
    """Loads the model and its processor, then scores the images; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoModelForZeroShotImageClassification, AutoProcessor

    processor = AutoProcessor.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForZeroShotImageClassification)
    timings = {"load_s": time.perf_counter() - started}
    images = test_images()
    images[0].save("input.png")
    sigmoid = model.config.model_type in SIGMOID_TYPES
    inputs = processor(text=LABELS, images=images, padding="max_length" if sigmoid else True,
                       truncation=True, return_tensors="pt").to(DEVICE)
    inputs["pixel_values"] = inputs["pixel_values"].to(getattr(torch, DTYPE))
    return infer(torch, model, inputs, len(images), sigmoid, timings)


def infer(torch, model, inputs, count, sigmoid, timings):
    """Runs the batch through the compiled forward pass (forward_twice), writes the image-text
    logits and returns the result."""
    logits = forward_twice(torch, model, inputs, timings).logits_per_image.float().cpu()  # images × labels
    scores = logits[0].sigmoid() if sigmoid else logits[0].softmax(-1)
    ranked = sorted(zip(scores.tolist(), LABELS), reverse=True)
    return {"ok": True, "stage": "done", **save_logits(logits), "input_image_file": "input.png",
            "text": ", ".join(f"{label} {score:.1%}" for score, label in ranked),
            **throughput_fields(count, "images/s", timings),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


{{INCLUDE _images}}


{{INCLUDE _forward}}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
