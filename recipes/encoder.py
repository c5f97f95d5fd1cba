#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the checkpoint for TASK with from_pretrained (never trust_remote_code), compiles the
forward pass with torch.compile(backend=COMPILE_BACKEND), runs SENTENCES as one padded batch
(the last one is longer than any model's maximum length, so truncation is exercised) and
writes the logits that TASK reads to outputs.safetensors: per sentence (text-classification),
per token (token-classification) or per masked token over the vocabulary (fill-mask). It
prints one line `CANRUN_RESULT {json}` with what the model predicted, sentences per second,
the timings, the peak memory and the versions of the stack. On failure the line says in which
stage (load, compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}
TASK = {{TASK}}

# The sentences; MASK stands for the tokenizer's mask token (fill-mask). The first is PROMPT.
MASK = "<mask>"
SENTENCES = [
    PROMPT,
    f"Paris is the {MASK} of France." if TASK == "fill-mask" else "The service was slow and the food was cold.",
    f"The cheetah is the fastest {MASK} on land." if TASK == "fill-mask" else "Maria flew from Lisbon to Tokyo on Monday.",
    f"The weather was {MASK}, " + "and it went on like that. " * 200 if TASK == "fill-mask"
    else " ".join(["This sentence is repeated to be longer than the model's maximum length."] * 80),
]


def main():
    """Loads the model and its tokenizer, then runs the sentences; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    import transformers
    from transformers import AutoTokenizer

    auto_class = {"text-classification": transformers.AutoModelForSequenceClassification,
                  "token-classification": transformers.AutoModelForTokenClassification,
                  "fill-mask": transformers.AutoModelForMaskedLM}[TASK]
    tokenizer = AutoTokenizer.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, auto_class)
    timings = {"load_s": time.perf_counter() - started}
    sentences = [s.replace(MASK, tokenizer.mask_token or MASK) for s in SENTENCES]
    inputs = tokenizer(sentences, padding=True, truncation=True, return_tensors="pt").to(DEVICE)
    return infer(torch, model, tokenizer, inputs, timings)


def infer(torch, model, tokenizer, inputs, timings):
    """Runs the batch through the compiled forward pass (forward_twice), writes the logits TASK
    compares and returns the result."""
    logits = forward_twice(torch, model, inputs, timings).logits.float().cpu()
    if TASK == "fill-mask":  # the masked positions, over the vocabulary
        where = inputs["input_ids"].cpu() == tokenizer.mask_token_id
    elif TASK == "token-classification":  # every token that is not padding
        where = inputs["attention_mask"].cpu().bool()
    else:
        where = None
    rows = logits if where is None else logits[where]
    return {"ok": True, "stage": "done", **save_logits(rows), "text": predicted(model, tokenizer, rows),
            **throughput_fields(len(SENTENCES), "sentences/s", timings),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


def predicted(model, tokenizer, rows):
    """What the model predicted, for people: the labels of the first sentence, or the first
    masked token's best words."""
    best = rows.argmax(-1).tolist()
    if TASK == "fill-mask":
        return " | ".join(tokenizer.decode([token]).strip() for token in best)
    labels = getattr(model.config, "id2label", None) or {}
    named = [labels.get(i, str(i)) for i in best]
    if TASK == "token-classification":
        named = named[:len(tokenizer(SENTENCES[0])["input_ids"])]
    return " ".join(named)


{{INCLUDE _forward}}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
