stage = "load"  # the stage a failure is blamed on


def import_torch():
    """Imports the modules that register the device or the backend (IMPORTS), then torch."""
    for module in IMPORTS:
        importlib.import_module(module)
    import torch
    return torch


def generate(torch, model, inputs, tokenizer, timings, **extra_settings):
    """Compiles the forward pass, generates NEW_TOKENS greedy tokens (one beam, whatever the
    model's generation config says) with a static cache (the
    first call compiles, the next that compiles nothing new is measured) and returns the result.
    An encoder-decoder model's encoder is compiled too: generate() runs it once, through
    get_encoder(), before the decoder's steps (model.forward)."""
    global stage
    settings = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False, num_beams=1,
                    cache_implementation="static", pad_token_id=tokenizer.pad_token_id or 0,
                    **extra_settings)
    encoder_decoder = getattr(model.config, "is_encoder_decoder", False)
    if COMPILE_BACKEND:
        compile_forward(torch, model)
        if encoder_decoder:
            compile_forward(torch, model.get_encoder())

        def first_call():
            with torch.inference_mode():
                model.generate(**inputs, **settings)
        timings["compile_s"], timings["compile_calls"] = compiling_call(first_call), 1

    stage = "generate"
    # Eager (the CPU reference): how close each step's two best tokens were, so that a run whose
    # tokens part from the reference's where they were nearly tied is told from a wrong one.
    margins = None if COMPILE_BACKEND else top_margins()
    extra = {"logits_processor": margins.as_list()} if margins else {}
    for call in range(2, 5):  # calls 2 to 4: a stack that compiles on every call gets no more
        graphs, clock = compiled_graphs(), FirstTokenClock()
        with torch.inference_mode():
            output = model.generate(**inputs, **settings, **extra, streamer=clock)
        done = time.perf_counter()
        if not COMPILE_BACKEND or compiled_graphs() == graphs:
            break
        # This call still compiled (transformers 4's static cache, for one, is set up inside the
        # first call's prefill, so the next prefill is a new graph): it was compile time, not
        # generation; measure the next call.
        timings["compile_s"] += done - clock.start
        timings["compile_calls"] = call
    # A decoder-only model's output starts with the prompt; an encoder-decoder's with the
    # decoder's start token (T5, BART), or with none of its start tokens (Whisper): its last
    # NEW_TOKENS are the new ones.
    first = max(0, output.shape[1] - NEW_TOKENS) if encoder_decoder else inputs["input_ids"].shape[1]
    tokens = output[0, first:].tolist()
    timings["generate_s"] = done - clock.start
    if clock.first is not None:
        timings["ttft_s"] = clock.first - clock.start
        if len(tokens) > 1 and done > clock.first:
            timings["decode_tokens_per_s"] = (len(tokens) - 1) / (done - clock.first)
    result = {"ok": True, "stage": "done", "tokens": tokens,
              "text": tokenizer.decode(tokens, skip_special_tokens=True),
              "peak_device_memory_bytes": peak_memory_bytes(torch),
              "compile_cache": compile_cache_counts(), **timings}
    if margins:
        result["margins"] = margins.values
    reference = os.environ.get("CANRUN_REFERENCE_TOKENS")
    if reference:  # canrun gave the CPU reference's tokens: measure agreement with them
        with open(reference) as file:
            result.update(teacher_forced_agreement(torch, model, inputs, settings, json.load(file)["tokens"]))
    return result


def top_margins():
    """A logits processor that notes, at each step, the gap between the two best logits as a
    share of the step's largest magnitude (and changes nothing)."""
    from transformers import LogitsProcessor, LogitsProcessorList

    class TopMargins(LogitsProcessor):
        def __init__(self):
            self.values = []

        def __call__(self, input_ids, scores):
            # Over the finite logits: a processor before this one masks tokens with -inf (the
            # end of sequence, while min_new_tokens holds it back).
            row = scores[0].float()
            row = row[row.isfinite()]
            if row.numel() < 2:  # one token left: nothing can part from it
                self.values.append(1.0)
                return scores
            best = row.topk(2).values.tolist()
            scale = max(float(row.abs().max()), 1e-30)
            self.values.append(float(f"{(best[0] - best[1]) / scale:.6g}"))
            return scores

        def as_list(self):
            return LogitsProcessorList([self])

    return TopMargins()


def compile_forward(torch, module):
    """Replaces module.forward with its torch.compile(backend=COMPILE_BACKEND)."""
    keep_inductor_headers()
    module.forward = torch.compile(module.forward, backend=compile_backend(), **COMPILE_OPTIONS)


def keep_inductor_headers():
    """TorchInductor's CPU kernels include a header it precompiles once per machine and compiler
    flags (about 150 MB, some 8 s of a core) into $TMPDIR/torchinductor_<user>, which is this
    run's own under canrun: where canrun names a folder that outlives the run
    (CANRUN_INDUCTOR_HEADERS, the cpu profile's node-local cache tier), it is kept there. Run
    alone, or where TorchInductor's internals differ, nothing changes."""
    folder = os.environ.get("CANRUN_INDUCTOR_HEADERS")
    if not folder:
        return
    try:
        from torch._inductor import codecache
    except ImportError:
        return
    if hasattr(codecache, "_HEADER_DIR") and hasattr(codecache, "_HEADER_LOCK_DIR"):
        codecache._HEADER_DIR = os.path.join(folder, "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def compiling_call(call):
    """Runs the first call of a compiled model, which compiles, in stage "compile" (a failure is
    the compiler's when Dynamo or the backend raised it, see blamed_stage); returns its seconds."""
    global stage
    stage = "compile"
    first = time.perf_counter()
    try:
        call()
    except Exception as error:
        stage = blamed_stage(error)
        raise
    return time.perf_counter() - first


def teacher_forced_agreement(torch, model, inputs, settings, reference):
    """Generates once more with the same settings (so the same compiled steps and shapes), but
    feeding the reference's tokens: at each step, notes whether the model's own choice (argmax)
    is the reference's token, then forces that token. Returns the share of steps that agreed,
    how many steps were compared, the seconds it took and the graphs it compiled (should be 0)."""
    from transformers import LogitsProcessor, LogitsProcessorList

    class Forced(LogitsProcessor):
        def __init__(self):
            self.agreed = []

        def __call__(self, input_ids, scores):
            step = len(self.agreed)
            if step >= len(reference):  # a reference shorter than NEW_TOKENS: compare no more
                return scores
            self.agreed.append(int(scores[0].argmax()) == reference[step])
            forced = torch.full_like(scores, float("-inf"))
            forced[:, reference[step]] = 0
            return forced

    forced, compiled_before = Forced(), compiled_graphs()
    start = time.perf_counter()
    with torch.inference_mode():
        model.generate(**inputs, **settings, logits_processor=LogitsProcessorList([forced]))
    seconds = time.perf_counter() - start
    positions = len(forced.agreed)
    return {"agreement": sum(forced.agreed) / positions if positions else None,
            "agreement_positions": positions, "agreement_s": seconds,
            "agreement_compiled_graphs": compiled_graphs() - compiled_before}


def compiled_graphs():
    """Graphs torch.compile has compiled in this process so far (Dynamo's own count)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return 0
    return counters["stats"]["unique_graphs"]


def compile_cache_counts():
    """Graphs the compiler found in its cache and compiled anew, by its own count (TorchInductor's
    FX graph cache counters); None when the backend keeps no such count."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    inductor = counters.get("inductor", {})
    hits, misses = inductor.get("fxgraph_cache_hit", 0), inductor.get("fxgraph_cache_miss", 0)
    return {"hits": hits, "misses": misses} if hits + misses else None


def emit(result):
    """Prints the result line with the stack's versions, once: a second one is dropped."""
    global stage
    if stage != "reported":
        stage = "reported"
        line = json.dumps(finite_or_null({**result, "versions": versions()}), allow_nan=False)
        print("CANRUN_RESULT " + line, flush=True)


def finite_or_null(value):
    """The result line is JSON, which has no NaN or infinity: such a float (what a broken backend
    computes) is written null, and canrun reads a null among numbers as not finite."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(item) for item in value]
    return value


def failure(error):
    """The result of a run that raised `error`: the stage it was in, and why."""
    return {"ok": False, "stage": stage, "error_types": error_chain(error),
            "error": "".join(traceback.format_exception(error))[-20000:]}


def versions():
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def compile_backend():
    if ":" not in COMPILE_BACKEND:
        return COMPILE_BACKEND
    module, function = COMPILE_BACKEND.split(":")
    return getattr(importlib.import_module(module), function)


def peak_memory_bytes(torch):
    if PEAK_MEMORY == "cuda":
        return torch.cuda.max_memory_allocated()
    if PEAK_MEMORY == "neuron":
        neuron = getattr(torch, "neuron", None)
        reader = getattr(neuron, "max_memory_allocated", None)
        return reader() if reader else None
    # Peak resident memory of this process and of the children it waited for (compile
    # workers); ru_maxrss is in KiB on Linux.
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) * 1024


class FirstTokenClock:
    """A generate() streamer that notes when the first new token arrives."""

    def __init__(self):
        self.start = time.perf_counter()
        self.first = None
        self.calls = 0

    def put(self, value):
        self.calls += 1
        if self.calls == 2 and self.first is None:  # call 1 is the prompt itself
            self.first = time.perf_counter()

    def end(self):
        pass


def blamed_stage(error):
    """A failure in the first compiled call is the compiler's when it comes from Dynamo or the
    backend; otherwise it happened while generating."""
    seen = error
    while seen is not None:
        name = type(seen).__name__
        module = type(seen).__module__ or ""
        if name == "BackendCompilerFailed" or module.startswith(("torch._dynamo", "torch._inductor")):
            return "compile"
        seen = seen.__cause__ or seen.__context__
    return "generate"


def error_chain(error):
    names, seen = [], error
    while seen is not None and len(names) < 10:
        names.append(type(seen).__name__)
        inner = getattr(seen, "inner_exception", None)
        seen = inner or seen.__cause__ or seen.__context__
    return names
