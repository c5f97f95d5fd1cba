#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It loads the diffusers pipeline with DiffusionPipeline.from_pretrained (never remote code nor a
custom pipeline; the safety checker as the repo has it), compiles its denoiser's forward pass
(UNet or transformer) and its VAE's decode with torch.compile(backend=COMPILE_BACKEND), draws
one image of PROMPT at the pipeline's default size with its default scheduler in STEPS steps,
from noise drawn on the CPU with SEED, twice (the first call compiles, the second is measured),
saves the second as image.png and outputs.safetensors ("image": uint8 [H, W, 3]) in the working
folder, and prints one line `CANRUN_RESULT {json}` with the image's size and statistics, the
timings, the peak memory and the versions of the stack. On failure the line says in which stage
(load, compile, generate) and why, and the exit status is 1.
"""
{{INCLUDE _settings}}

STEPS = 2  # denoising steps: enough to run the scheduler's loop, few enough for any device
SEED = 0  # of the CPU generator that draws the initial noise, so every device starts alike
IMAGE_FILE = "image.png"
OUTPUTS_FILE = "outputs.safetensors"
PACKAGES = [*PACKAGES, "diffusers"]  # the task's library is part of the stack


def main():
    """Loads the pipeline, then draws the image; returns the result."""
    started = time.perf_counter()
    torch = import_torch()
    from diffusers import DiffusionPipeline

    pipe = DiffusionPipeline.from_pretrained(MODEL, revision=REVISION, **dtype_argument(torch))
    pipe = pipe.to(DEVICE)
    pipe.set_progress_bar_config(disable=True)
    timings = {"load_s": time.perf_counter() - started}
    return draw(torch, pipe, timings)


def dtype_argument(torch):
    """from_pretrained's dtype keyword: diffusers that has _resolve_dtype reads `dtype` and
    deprecates `torch_dtype` (0.42 does); older ones read `torch_dtype` only (0.35 does)."""
    from diffusers.utils import deprecation_utils
    name = "dtype" if hasattr(deprecation_utils, "_resolve_dtype") else "torch_dtype"
    return {name: getattr(torch, DTYPE)}


def draw(torch, pipe, timings):
    """Compiles the denoiser and the VAE's decode, draws the image twice (the first call
    compiles, the second is measured), saves the second and returns the result."""
    global stage
    import numpy as np

    denoiser = getattr(pipe, "unet", None) or getattr(pipe, "transformer", None)
    vae = getattr(pipe, "vae", None)

    def call_timed_by(clock):
        def call():
            clock.reset()
            with torch.inference_mode():
                return pipe(PROMPT, num_inference_steps=STEPS, output_type="np",
                            generator=torch.Generator("cpu").manual_seed(SEED)).images[0]
        return call

    if PERF and COMPILE_BACKEND:  # the eager baseline, timed as the compiled calls will be
        eager_clock = LoopClock(denoiser, vae)
        def warm_up():  # one denoising step: the eager kernels' first use, not the measure
            with torch.inference_mode():
                pipe(PROMPT, num_inference_steps=1, output_type="np",
                     generator=torch.Generator("cpu").manual_seed(SEED))

        eager_baseline(torch, call_timed_by(eager_clock), timings, "generate_s", warm_up)
        if eager_clock.seconds() is not None and "eager_generate_s" in timings:
            timings["eager_denoise_s"] = eager_clock.seconds()
        eager_clock.unwrap()
    if COMPILE_BACKEND:
        stage = "compile"
        if denoiser is None:
            raise TypeError(f"{type(pipe).__name__} has neither a unet nor a transformer to compile")
        compile_forward(torch, denoiser)
        if vae is not None:
            vae.decode = torch.compile(vae.decode, backend=compile_backend(), **COMPILE_OPTIONS)
    clock = LoopClock(denoiser, vae)
    call = call_timed_by(clock)

    if COMPILE_BACKEND:  # the first call compiles
        timings["compile_s"] = timings["time_to_first_image_s"] = compiling_call(call)
    else:
        stage = "generate"
        first = time.perf_counter()
        call()
        timings["time_to_first_image_s"] = time.perf_counter() - first

    stage = "generate"
    start = time.perf_counter()
    image = call()
    timings["generate_s"] = time.perf_counter() - start
    loop_s = clock.seconds()
    if loop_s is not None:
        timings["denoise_s"] = loop_s

    nan_values = int(np.isnan(image).sum())
    pixels = np.round(np.clip(np.nan_to_num(image, nan=0.0), 0, 1) * 255)
    # In C order: the pipeline's array is a permuted view of its tensor, and safetensors.numpy
    # writes an array's buffer as it lies in memory, whatever its strides.
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    save_image(pixels)
    height, width = pixels.shape[:2]
    return {"ok": True, "stage": "done", "image_file": IMAGE_FILE, "outputs_file": OUTPUTS_FILE,
            "width": width, "height": height, "steps": STEPS, "nan_values": nan_values,
            "pixel_std": float(pixels.std()),
            **throughput_fields(STEPS, "steps/s", timings, "denoise_s" if loop_s else "generate_s"),
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


class LoopClock:
    """Times the denoising loop of a pipeline call: from the denoiser's first call to the start of
    the VAE's decode, once the latents it decodes are computed (copying them to the CPU waits
    for them on any device). Wraps the denoiser's forward and the VAE's decode; seconds() is None
    when the call had no denoiser or decoded nothing."""

    def __init__(self, denoiser, vae):
        self.reset()
        self.wrapped = []  # (object, attribute, what it was)
        if denoiser is not None:
            forward = denoiser.forward
            self.wrapped.append((denoiser, "forward", forward))

            def timed_forward(*args, **kwargs):
                if self.start is None:
                    self.start = time.perf_counter()
                return forward(*args, **kwargs)
            denoiser.forward = timed_forward
        if vae is not None:
            decode = vae.decode
            self.wrapped.append((vae, "decode", decode))

            def timed_decode(latents, *args, **kwargs):
                if self.start is not None and self.end is None:
                    latents.to("cpu")
                    self.end = time.perf_counter()
                return decode(latents, *args, **kwargs)
            vae.decode = timed_decode

    def reset(self):
        self.start = self.end = None

    def unwrap(self):
        """Gives back the denoiser's forward and the VAE's decode as they were."""
        for owner, name, original in self.wrapped:
            setattr(owner, name, original)

    def seconds(self):
        return None if self.start is None or self.end is None else self.end - self.start


def save_image(pixels):
    """The image as a PNG and as the tensor "image" (uint8 [H, W, 3]) of a safetensors file."""
    from PIL import Image
    from safetensors.numpy import save_file
    Image.fromarray(pixels).save(IMAGE_FILE)
    save_file({"image": pixels}, OUTPUTS_FILE)


{{INCLUDE _helpers}}


{{INCLUDE _one_core IF CORES == 1}}
