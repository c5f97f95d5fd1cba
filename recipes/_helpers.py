stage = "load"  # the stage a failure is blamed on


def import_torch():
    """Imports the modules that register the device or the backend (IMPORTS), then torch."""
    for module in IMPORTS:
        importlib.import_module(module)
    import torch
    return torch


def generate(torch, model, inputs, tokenizer, timings, **extra_settings):
    """Generates NEW_TOKENS greedy tokens (one beam, whatever the model's generation config says)
    with a static cache and the compiled forward pass, and returns the result. In order:
    - PERF: the eager baseline (eager_generation), before anything is compiled;
    - the first compiled call, which compiles (compile_s); it generates the longest run's tokens,
      so that the static cache is sized once for every call after it (a larger cache is a new
      graph; transformers keeps the largest static cache a model's generate() made);
    - the measured call of NEW_TOKENS, checked against the CPU reference (a stack that still
      compiles in it is measured again, see below);
    - given the CPU reference's tokens (canrun does), the teacher-forced pass over all of them;
      with LONG_TOKENS it is the long generation too (long_decode_tokens_per_s), on the same
      graphs; run alone (no reference), the long generation runs free (long_generation).
    Eager (the CPU reference) generates the longest run once: its first NEW_TOKENS are the
    check's, all of them the long generation's. An encoder-decoder model's encoder is compiled
    too: generate() runs it once, through get_encoder(), before the decoder's steps."""
    global stage
    longest = max(NEW_TOKENS, LONG_TOKENS)

    def settings_for(count):
        return dict(max_new_tokens=count, min_new_tokens=count, do_sample=False, num_beams=1,
                    cache_implementation="static", pad_token_id=tokenizer.pad_token_id or 0,
                    **extra_settings)
    settings, long_settings = settings_for(NEW_TOKENS), settings_for(longest)
    encoder_decoder = getattr(model.config, "is_encoder_decoder", False)
    if COMPILE_BACKEND:
        eager_generation(torch, model, inputs, settings, long_settings, timings)
        compile_forward(torch, model)
        if encoder_decoder:
            compile_forward(torch, model.get_encoder())

        def first_call():
            with torch.inference_mode():
                model.generate(**inputs, **long_settings)
        timings["compile_s"], timings["compile_calls"] = compiling_call(first_call), 1

    stage = "generate"
    # Eager (the CPU reference): how close each step's two best tokens were, so that a run whose
    # tokens part from the reference's where they were nearly tied is told from a wrong one.
    margins = None if COMPILE_BACKEND else top_margins()
    measured = settings if COMPILE_BACKEND else long_settings
    if margins:
        measured = {**measured, "logits_processor": margins.as_list()}
    for call in range(2, 5):  # calls 2 to 4: a stack that compiles on every call gets no more
        graphs = compiled_graphs()
        output, clock, done = timed_generate(torch, model, inputs, measured)
        if not COMPILE_BACKEND or compiled_graphs() == graphs:
            break
        # This call still compiled (transformers 4's static cache, for one, is set up inside the
        # first call's prefill, so the next prefill is a new graph): it was compile time, not
        # generation; measure the next call.
        timings["compile_s"] += done - clock.start
        timings["compile_calls"] = call
    tokens = new_tokens_of(output, inputs, measured["max_new_tokens"], encoder_decoder)
    timings.update(generation_figures(clock, done, len(tokens)))
    result = {"ok": True, "stage": "done", "tokens": tokens[:NEW_TOKENS],
              "text": tokenizer.decode(tokens[:NEW_TOKENS], skip_special_tokens=True),
              "peak_device_memory_bytes": peak_memory_bytes(torch),
              "compile_cache": compile_cache_counts(), **timings}
    if margins:
        result["margins"] = margins.values
    reference = os.environ.get("CANRUN_REFERENCE_TOKENS")
    if reference:  # canrun gave the CPU reference's tokens: measure agreement with them
        with open(reference) as file:
            reference = json.load(file)["tokens"]
    if not COMPILE_BACKEND:
        if LONG_TOKENS:
            result["long_tokens"] = tokens
    elif reference:
        # Over all the reference's tokens (canrun stores LONG_TOKENS of them when there is a long
        # generation): then this pass is the long generation too, the compiled steps generating
        # the tokens they are fed, so one pass gives the decode speed at length and the agreement.
        forced = long_settings if len(reference) > NEW_TOKENS else settings
        result.update(teacher_forced_agreement(torch, model, inputs, forced, reference,
                                               encoder_decoder))
    elif LONG_TOKENS:
        result.update(long_generation(torch, model, inputs, long_settings, encoder_decoder))
    return result


def timed_generate(torch, model, inputs, settings):
    """One generate() call: its output, its FirstTokenClock and when it ended."""
    clock = FirstTokenClock()
    with torch.inference_mode():
        output = model.generate(**inputs, **settings, streamer=clock)
    return output, clock, time.perf_counter()


def new_tokens_of(output, inputs, count, encoder_decoder):
    """The generated tokens: a decoder-only model's output starts with the prompt; an
    encoder-decoder's with the decoder's start token (T5, BART), or with none of its start tokens
    (Whisper): its last `count` are the new ones."""
    first = max(0, output.shape[1] - count) if encoder_decoder else inputs["input_ids"].shape[1]
    return output[0, first:].tolist()


def generation_figures(clock, done, count, prefix=""):
    """A generate() call's seconds, time to first token and decode speed over its `count` tokens
    (their names after `prefix`)."""
    figures = {prefix + "generate_s": done - clock.start}
    if clock.first is not None:
        figures[prefix + "ttft_s"] = clock.first - clock.start
        if count > 1 and done > clock.first:
            figures[prefix + "decode_tokens_per_s"] = (count - 1) / (done - clock.first)
    return figures


def eager_generation(torch, model, inputs, settings, long_settings, timings):
    """PERF: the eager baseline of generate(), before anything is compiled, on the same device and
    inputs. Both calls have the longest run's settings, so the static cache is sized as the
    compiled calls will have it, and stop early (stop_after): the first after 2 tokens (it warms
    up the prefill and a decode step), the second after NEW_TOKENS, measured as the compiled
    run's measured call is (eager_generate_s, eager_ttft_s, eager_decode_tokens_per_s). Each call
    stops at EAGER_MAX_S seconds (generate's max_time) where eager_may_stop_alone: a first call
    that stopped is the baseline itself, over the tokens it made, and eager_note says so. A
    failure is eager_stage's."""
    if not PERF:
        return
    cut = {"max_time": EAGER_MAX_S} if eager_may_stop_alone() else {}
    with eager_stage(torch, timings):
        wanted = 2  # the warm-up: the prefill and one decode step
        output, clock, done = timed_generate(
            torch, model, inputs, {**long_settings, **cut, **stop_after(torch, wanted)})
        if clock.calls - 1 >= wanted:  # time left for the measured call
            wanted = settings["max_new_tokens"]
            output, clock, done = timed_generate(
                torch, model, inputs, {**long_settings, **cut, **stop_after(torch, wanted)})
        made = clock.calls - 1
        timings.update(generation_figures(clock, done, made, "eager_"))
        if made < wanted:
            timings["eager_note"] = (f"cut at {EAGER_MAX_S:g} s: the eager baseline generated {made} of "
                                     f"{wanted} tokens, its figures over those")


def stop_after(torch, count):
    """generate()'s stopping criterion after `count` new tokens, whatever min_new_tokens says:
    by count, so that every process of a run stops at the same token."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    class StopAfter(StoppingCriteria):
        def __init__(self):
            self.steps = 0

        def __call__(self, input_ids, scores, **kwargs):
            self.steps += 1
            return torch.full((input_ids.shape[0],), self.steps >= count, dtype=torch.bool,
                              device=input_ids.device)

    return {"stopping_criteria": StoppingCriteriaList([StopAfter()])}


def eager_baseline(torch, call, timings, measured, warm_up=None):
    """PERF: the eager baseline of a task's measured `call`, before anything is compiled, on the
    same device and inputs: a first call warms up (`warm_up`, a smaller call of the same model
    where the task has one, else `call` itself), then `call` is measured as the compiled one
    will be (timings["eager_" + measured], in seconds). A warm-up longer than half of
    EAGER_MAX_S cuts it short (unless eager_may_stop_alone says otherwise): `call` warming up is
    then the baseline itself, its warm-up included; a smaller warm-up leaves no baseline; and
    eager_note says so. A failure is eager_stage's."""
    if not (PERF and COMPILE_BACKEND):
        return
    warm_up = warm_up or call
    with eager_stage(torch, timings):
        start = time.perf_counter()
        warm_up()
        seconds = time.perf_counter() - start
        if seconds <= EAGER_MAX_S / 2 or not eager_may_stop_alone():
            start = time.perf_counter()
            call()
            timings["eager_" + measured] = time.perf_counter() - start
        elif warm_up is call:
            timings["eager_" + measured] = seconds
            timings["eager_note"] = (f"cut: the first eager call took {seconds:.0f} s, more than half "
                                     f"of {EAGER_MAX_S:g} s, and is the baseline (warm-up included)")
        else:
            timings["eager_note"] = (f"cut: the eager warm-up took {seconds:.0f} s, more than half of "
                                     f"{EAGER_MAX_S:g} s; no baseline measured")


@contextlib.contextmanager
def eager_stage(torch, timings):
    """The eager baseline's stage: a failure in it is no verdict, only eager_note (the compiled
    run goes on); then its peak memory (eager_peak_memory)."""
    global stage
    stage = "eager"
    try:
        yield
    except Exception as error:
        timings["eager_note"] = f"the eager run failed: {type(error).__name__}: {error}"[:500]
    eager_peak_memory(torch, timings)
    stage = "load"


def eager_peak_memory(torch, timings):
    """The eager run's peak memory; the device allocator's peak (cuda, neuron) is then reset for
    the compiled run. A process's maximum resident size (rss, on cpu) cannot be reset: the
    compiled run's peak includes the eager run's."""
    timings["eager_peak_memory_bytes"] = peak_memory_bytes(torch)
    if PEAK_MEMORY == "cuda":
        torch.cuda.reset_peak_memory_stats()
    elif PEAK_MEMORY == "neuron":
        reset = getattr(getattr(torch, "neuron", None), "reset_peak_memory_stats", None)
        if reset:
            reset()


def throughput_fields(units, unit, timings, measured="generate_s"):
    """The result's throughput, `units` per second of timings[measured], in `unit`; and the eager
    baseline's in the same unit when it ran."""
    fields = {"throughput": units / timings[measured], "throughput_unit": unit}
    if timings.get("eager_" + measured):
        fields["eager_throughput"] = units / timings["eager_" + measured]
    return fields


def long_generation(torch, model, inputs, long_settings, encoder_decoder):
    """LONG_TOKENS greedy tokens with the compiled model, on the graphs the first call compiled
    (the static cache was sized for them): the tokens, their decode speed and the graphs compiled
    during it (0, unless the stack compiles again)."""
    graphs = compiled_graphs()
    output, clock, done = timed_generate(torch, model, inputs, long_settings)
    tokens = new_tokens_of(output, inputs, long_settings["max_new_tokens"], encoder_decoder)
    figures = generation_figures(clock, done, len(tokens), "long_")
    return {"long_tokens": tokens, "long_decode_tokens_per_s": figures.get("long_decode_tokens_per_s"),
            "long_compiled_graphs": compiled_graphs() - graphs}


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


def teacher_forced_agreement(torch, model, inputs, settings, reference, encoder_decoder):
    """Generates once more with the same settings (so the same compiled steps and shapes), but
    feeding the reference's tokens: at each step, notes whether the model's own choice (argmax)
    is the reference's token, then forces that token. Returns whether each position agreed
    (`agreed`, 1 or 0), the share of the first NEW_TOKENS positions that agreed (`agreement`)
    and how many those were, the seconds it took and the graphs it compiled (should be 0).
    Settings of more than NEW_TOKENS make it the long generation too: it returns its tokens and
    decode speed as long_generation does."""
    from transformers import LogitsProcessor, LogitsProcessorList

    class Forced(LogitsProcessor):
        def __init__(self):
            self.agreed = []

        def __call__(self, input_ids, scores):
            step = len(self.agreed)
            if step >= len(reference):  # a reference shorter than the run: compare no more
                return scores
            self.agreed.append(int(scores[0].argmax()) == reference[step])
            forced = torch.full_like(scores, float("-inf"))
            forced[:, reference[step]] = 0
            return forced

    forced, compiled_before = Forced(), compiled_graphs()
    output, clock, done = timed_generate(
        torch, model, inputs, {**settings, "logits_processor": LogitsProcessorList([forced])})
    checked = forced.agreed[:NEW_TOKENS]
    compiled = compiled_graphs() - compiled_before
    result = {"agreement": sum(checked) / len(checked) if checked else None,
              "agreement_positions": len(checked), "agreed": [int(a) for a in forced.agreed],
              "agreement_s": done - clock.start, "agreement_compiled_graphs": compiled}
    if settings["max_new_tokens"] > NEW_TOKENS:
        tokens = new_tokens_of(output, inputs, settings["max_new_tokens"], encoder_decoder)
        figures = generation_figures(clock, done, len(tokens), "long_")
        result.update(long_tokens=tokens, long_compiled_graphs=compiled,
                      long_decode_tokens_per_s=figures.get("long_decode_tokens_per_s"))
    return result


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
