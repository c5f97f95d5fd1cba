#!/usr/bin/env python3
"""Does {{MODEL_ID}} run, unmodified, on {{BACKEND_DESCRIPTION}}?

Rendered by canrun {{CANRUN_VERSION}}. Self-contained: run it with `python3 run.py`.
It synthesizes a 2.4 s clip of six vowel sounds at 16 kHz (no file or download needed), writes
it as input.wav and reads it back with the standard library's wave module, as a recording would
be, then loads the speech recognizer and its processor with from_pretrained (never
trust_remote_code). A Whisper-style encoder-decoder (AutoModelForSpeechSeq2Seq) has its encoder
and decoder step compiled with torch.compile(backend=COMPILE_BACKEND) and generates NEW_TOKENS
greedy tokens with a static cache, in English, transcribing (a multilingual model is told so);
a CTC model (AutoModelForCTC) has its forward pass compiled and writes its logits per frame to
outputs.safetensors, its transcript the best token of each frame. It prints one line
`CANRUN_RESULT {json}` with the transcript, the timings, the peak memory and the versions of
the stack. On failure the line says in which stage (load, compile, generate) and why, and the
exit status is 1.
"""
{{INCLUDE _settings}}
import struct
import wave

RATE = 16000  # samples per second, what speech recognizers read
# Six vowels, each (F1, F2, F3) in Hz: a as in "father", ee, oo, e as in "bed", aw, a as in "cat".
VOWELS = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410),
          (660, 1720, 2410)]


def synthesize():
    """The clip, as floats in [-1, 1]: each vowel 0.3 s of a voice at 110 Hz and up (harmonics
    weighted by the vowel's formants), faded in and out, then 0.1 s of silence."""
    samples = []
    for index, formants in enumerate(VOWELS):
        pitch, length = 110 + 8 * index, int(0.3 * RATE)
        harmonics = [(k, sum(1 / (1 + ((k * pitch - f) / 90) ** 2) for f in formants))
                     for k in range(1, int(4000 / pitch))]
        for t in range(length):
            fade = math.sin(math.pi * t / length) ** 2
            samples.append(fade * sum(a * math.sin(2 * math.pi * k * pitch * t / RATE) for k, a in harmonics))
        samples += [0.0] * int(0.1 * RATE)
    peak = max(abs(x) for x in samples)
    return [0.8 * x / peak for x in samples]


def write_wav(path, samples):
    """16-bit PCM, mono, RATE."""
    with wave.open(path, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes(struct.pack(f"<{len(samples)}h", *(round(x * 32767) for x in samples)))


def read_wav(path):
    """A 16-bit mono WAV file's samples as floats, and its rate."""
    with wave.open(path, "rb") as file:
        if file.getsampwidth() != 2 or file.getnchannels() != 1:
            raise ValueError(f"{path}: not 16-bit mono")
        frames = file.readframes(file.getnframes())
        return [v / 32768 for v in struct.unpack(f"<{len(frames) // 2}h", frames)], file.getframerate()


def main():
    """Writes and reads the clip, loads the model and its processor, then transcribes."""
    started = time.perf_counter()
    write_wav("input.wav", synthesize())
    audio, rate = read_wav("input.wav")
    torch = import_torch()
    import transformers
    from transformers import AutoProcessor

    config = transformers.AutoConfig.from_pretrained(MODEL, revision=REVISION)
    ctc = any(name.endswith("ForCTC") for name in (config.architectures or []))
    processor = AutoProcessor.from_pretrained(MODEL, revision=REVISION)
    model = load(torch, transformers.AutoModelForCTC if ctc else transformers.AutoModelForSpeechSeq2Seq)
    timings = {"load_s": time.perf_counter() - started}
    inputs = processor(audio, sampling_rate=rate, return_tensors="pt")
    dtype = getattr(torch, DTYPE)
    inputs = {key: value.to(DEVICE, dtype) if value.is_floating_point() else value.to(DEVICE)
              for key, value in inputs.items()}
    seconds = len(audio) / rate
    heard = f"{seconds:.1f} s of audio at {rate} Hz (input.wav)"
    if ctc:
        result = transcribe_frames(torch, model, processor, inputs, timings)
        source = f"{heard}; the best token of each frame"
    else:
        settings, said = languages(model)
        result = generate(torch, model, inputs, processor.tokenizer, timings, **settings)
        source = heard + said
    if not result["ok"]:
        return result
    # Throughput: seconds of audio transcribed per second.
    return {**result, "input_audio_file": "input.wav", "source": source,
            **throughput_fields(seconds, "audio s/s", result)}


def languages(model):
    """generate()'s language and task, and what was said of them: English, transcribing, when
    the model is multilingual (an English-only model takes neither)."""
    config = model.generation_config
    if getattr(config, "is_multilingual", False) and getattr(config, "lang_to_id", None):
        return {"language": "en", "task": "transcribe"}, "; language en, task transcribe"
    return {}, ""


def transcribe_frames(torch, model, processor, inputs, timings):
    """The CTC model's compiled forward pass on the clip: its logits per frame written, the
    transcript decoded from each frame's best token."""
    logits = forward_twice(torch, model, inputs, timings).logits.float().cpu()[0]
    text = processor.batch_decode(logits.argmax(-1)[None])[0]
    return {"ok": True, "stage": "done", **save_logits(logits), "text": text,
            "peak_device_memory_bytes": peak_memory_bytes(torch),
            "compile_cache": compile_cache_counts(), **timings}


{{INCLUDE _forward}}


{{INCLUDE _helpers}}


{{INCLUDE _one_core}}
