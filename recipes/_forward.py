def forward_twice(torch, model, inputs, timings):
    """The model's compiled forward pass on `inputs`, twice: the first call compiles (compile_s),
    the second is measured (generate_s) and its output returned. PERF: the eager baseline first
    (eager_generate_s)."""
    global stage

    def call():
        with torch.inference_mode():
            model(**inputs)
    eager_baseline(torch, call, timings, "generate_s")
    if COMPILE_BACKEND:
        compile_forward(torch, model)
        timings["compile_s"] = compiling_call(call)
    stage = "generate"
    start = time.perf_counter()
    with torch.inference_mode():
        output = model(**inputs)
    timings["generate_s"] = time.perf_counter() - start
    return output


def save_logits(logits, name="logits"):
    """Writes the tensor the comparison reads (the logits, or a reranker's "scores") to
    outputs.safetensors; returns the result's fields that name the file."""
    from safetensors.torch import save_file
    save_file({name: logits.contiguous()}, "outputs.safetensors")
    return {"outputs_file": "outputs.safetensors", f"{name}_shape": list(logits.shape)}
