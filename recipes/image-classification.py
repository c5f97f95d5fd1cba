#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the image classifier with AutoModelForImageClassification.from_pretrained and its image
processor (never trust_remote_code), compiles the forward pass with
torch.compile(backend=COMPILE_BACKEND), classifies two images it draws itself (no file needed;
the first is saved as input.png) as one batch and writes their logits to outputs.safetensors.
It prints one line `CANRUN_RESULT {json}` with the first image's 5 most likely labels, images
per second, the timings, the peak memory and the versions of the stack. On failure the line
says in which stage (load, compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}

TOP = 5  # labels shown


def main():
    """Loads the model and its image processor, then classifies the images; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    processor = AutoImageProcessor.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, AutoModelForImageClassification)
    timings = {"load_s": time.perf_counter() - started}
    images = test_images()
    images[0].save("input.png")
    inputs = processor(images=images, return_tensors="pt")
    inputs["pixel_values"] = inputs["pixel_values"].to(DEVICE, getattr(torch, DTYPE))
    return infer(torch, model, inputs, len(images), timings)


def infer(torch, model, inputs, count, timings):
    """Runs the batch through the compiled forward pass (forward_twice), writes the logits and
    returns the result."""
    logits = forward_twice(torch, model, inputs, timings).logits.float().cpu()
    return {"ok": True, "stage": "done", **save_logits(logits), "input_image_file": "input.png",
            "text": top_labels(model, logits[0]),
            **throughput_fields(count, "images/s", timings),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


def top_labels(model, logits):
    """The first image's TOP most likely labels with their probabilities, for people."""
    probabilities = logits.softmax(-1)
    best = probabilities.topk(min(TOP, probabilities.numel()))
    labels = getattr(model.config, "id2label", None) or {}
    return ", ".join(f"{labels.get(i, str(i))} {p:.1%}"
                     for p, i in zip(best.values.tolist(), best.indices.tolist()))


{{INCLUDE _images}}


{{INCLUDE _forward}}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
