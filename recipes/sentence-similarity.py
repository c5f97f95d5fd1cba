#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the sentence-transformers model with SentenceTransformer (never trust_remote_code),
compiles its transformer's forward pass with torch.compile(backend=COMPILE_BACKEND), encodes
SENTENCES in batches of 8 and one at a time (the last sentence is longer than any model's
maximum length, so truncation is exercised), and prints one line `CANRUN_RESULT {json}` with
the embeddings, sentences per second, the timings, the peak memory and the versions of the
stack. On failure the line says in which stage (load, compile, encode) and why, and the exit
status is 1.
"""
{{INCLUDE _settings}}

{{INCLUDE _sentences}}
PACKAGES = [*PACKAGES, "sentence-transformers"]  # the task's library is part of the stack


def main():
    """Loads the model, then encodes; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(MODEL, revision=REVISION, device=DEVICE, trust_remote_code=False,
                                model_kwargs={"dtype": getattr(torch, DTYPE)})
    model.eval()
    timings = {"load_s": time.perf_counter() - started}
    return encode(torch, model, timings)


def encode(torch, model, timings):
    """Compiles the transformer's forward pass, encodes SENTENCES in batches of BATCH and one
    at a time (the first pass compiles, the second is measured) and returns the result."""
    global stage
    def both():
        with torch.inference_mode():
            batched = model.encode(SENTENCES, batch_size=BATCH, convert_to_numpy=True)
            alone = [model.encode([s], batch_size=1, convert_to_numpy=True)[0] for s in SENTENCES]
        return batched, alone

    def warm_up():  # one sentence: the eager kernels' first use, not the measure
        with torch.inference_mode():
            model.encode(SENTENCES[:1], batch_size=1, convert_to_numpy=True)

    eager_baseline(torch, both, timings, "encode_s", warm_up)
    if COMPILE_BACKEND:
        compile_forward(torch, model[0].auto_model)  # the transformer
        timings["compile_s"] = compiling_call(both)
    stage = "encode"
    start = time.perf_counter()
    batched, alone = both()
    timings["encode_s"] = time.perf_counter() - start
    as_lists = lambda rows: [[float(x) for x in row] for row in rows]
    return {"ok": True, "stage": "done", "embeddings": as_lists(batched),
            "embeddings_one_at_a_time": as_lists(alone), "queries": QUERIES,
            "max_seq_length": model.max_seq_length,
            **throughput_fields(2 * len(SENTENCES), "sentences/s", timings, "encode_s"),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
