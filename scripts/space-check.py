"""The Python side of scripts/space-check.sh (make space-check):

  space-check.py dockerfile SPACE_TREE PREFIX   the Space's Dockerfile and card, read offline
  space-check.py dataset DIR                    writes a two-row dataset (a schema-1 file)
  space-check.py response NAME FILE             checks one saved answer of the running Space

`dockerfile` needs dockerfile-parse; `dataset` needs pyarrow; `response` only the standard library.
"""
import datetime
import json
import pathlib
import re
import sys

STEM = "cpu__torch-2.13.0__transformers-5.18.0"
MODELS = {"space-check/passing-model": "PASS", "space-check/failing-model": "CRASH"}
INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT",
                "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}


def fail(message):
    sys.exit(f"space-check: {message}")


def front_matter(readme):
    """The card's YAML front matter as key → text (flat keys only, as a Space card has)."""
    match = re.match(r"---\n(.*?)\n---\n", readme.read_text(), re.S)
    if not match:
        fail(f"{readme} has no YAML front matter")
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if not sep or key != key.strip():
            fail(f"{readme}: unexpected front matter line {line!r}")
        fields[key] = value.strip()
    return fields


def check_dockerfile(tree, prefix):
    """The Dockerfile at the root of the packaged Space tree, against the card beside it."""
    from dockerfile_parse import DockerfileParser

    tree = pathlib.Path(tree)
    card = front_matter(tree / "README.md")
    for key, expected in {"sdk": "docker", "app_port": "7860"}.items():
        if card.get(key) != expected:
            fail(f"the card's {key} is {card.get(key)!r}, not {expected!r}")
    for key in ("title", "emoji", "short_description"):
        if not card.get(key):
            fail(f"the card has no {key}")
    if len(card["short_description"]) > 60:
        fail("the card's short_description is longer than the Hub's 60 characters")

    parser = DockerfileParser(path=str(tree / "Dockerfile"))
    stages = []  # [(image, name, [instructions])]
    for item in parser.structure:
        instruction, value = item["instruction"], item["value"]
        if instruction == "COMMENT":
            continue
        if instruction not in INSTRUCTIONS:
            fail(f"Dockerfile line {item['startline'] + 1}: unknown instruction {instruction}")
        if instruction == "FROM":
            words = value.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append((words[0], name, []))
        elif not stages:
            fail(f"Dockerfile line {item['startline'] + 1}: {instruction} before any FROM")
        else:
            stages[-1][2].append((instruction, value))
    if len(stages) != 2 or stages[0][1] != "build":
        fail("the Dockerfile should have two stages, the first named build")
    for image, _, _ in stages:
        if "bookworm" not in image:
            fail(f"base image {image} is not Debian bookworm")

    build, runtime = stages[0][2], stages[1][2]
    for instruction, value in build:
        if instruction == "COPY":
            *sources, dest = value.split()
            if any(source.startswith("--") for source in sources):
                fail(f"build stage COPY {value}: options are not expected there")
            for source in sources:
                landing = dest + pathlib.PurePath(source).name if dest.endswith("/") else dest
                if len(sources) > 1 and not dest.endswith("/"):
                    fail(f"COPY {value}: several sources need a folder (a trailing /)")
                if pathlib.PurePath(landing) != pathlib.PurePath(source):
                    fail(f"COPY {value}: {source} lands at {landing}, not at the same path")
                if not (tree / source).exists():
                    fail(f"COPY {value}: {source} is not in the Space tree")
    runs = [value for instruction, value in build if instruction == "RUN"]
    if runs != [f"scripts/space-build.sh {prefix}"]:
        fail(f"the build stage should run scripts/space-build.sh {prefix} alone, not {runs}")

    def one(instruction):
        values = [value for name, value in runtime if name == instruction]
        if len(values) != 1:
            fail(f"the runtime stage should have one {instruction}, not {len(values)}")
        return values[0]

    if one("COPY") != f"--from=build {prefix} {prefix}":
        fail(f"the runtime stage should copy {prefix} from the build stage alone")
    runtime_runs = [value.split() for name, value in runtime if name == "RUN"]
    if not any(f"{prefix}/share/canrun/debian-runtime-packages" in run for run in runtime_runs):
        fail("the runtime stage does not install the Debian packages space-build.sh listed")
    if json.loads(one("ENTRYPOINT")) != [f"{prefix}/bin/canrun-space-start"]:
        fail(f"the entrypoint should be {prefix}/bin/canrun-space-start (exec form)")
    if one("EXPOSE") != card["app_port"]:
        fail(f"EXPOSE {one('EXPOSE')} differs from the card's app_port {card['app_port']}")
    if one("USER") not in ("user", "1000"):
        fail("the runtime stage should run as the Space's user 1000")
    env = parser.envs  # the last stage's environment
    if env.get("PORT") != card["app_port"] or f"{prefix}/bin" not in env.get("PATH", ""):
        fail(f"the runtime stage should set PORT={card['app_port']} and put {prefix}/bin on PATH")
    print(f"space-check: Dockerfile and card: consistent ({len(parser.structure)} instructions)")


def write_dataset(folder):
    """Two verdicts of one CPU stack in a schema-1 file (34 columns, no recorded version), the
    oldest layout canrun reads, so the check does not follow the current writer's schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.string()
    schema = pa.schema([
        pa.field("model_id", text, nullable=False), ("revision", text),
        pa.field("task", text, nullable=False), pa.field("backend", text, nullable=False),
        pa.field("device", text, nullable=False), pa.field("compiler", text, nullable=False),
        pa.field("compiler_version", text, nullable=False),
        pa.field("library", text, nullable=False),
        pa.field("library_version", text, nullable=False),
        pa.field("result", text, nullable=False), ("error", text), ("error_signature", text),
        ("exclusion_reason", text), ("cores", pa.int32()), ("parallelism", text),
        ("weights_bytes", pa.int64()), ("runtime_s", pa.float64()), ("load_s", pa.float64()),
        ("compile_s", pa.float64()), ("generate_s", pa.float64()), ("ttft_s", pa.float64()),
        ("decode_tokens_per_s", pa.float64()), ("peak_device_memory_bytes", pa.int64()),
        ("new_tokens", pa.int32()), ("output_text", text), ("verification", text),
        ("match_tokens", pa.int32()), ("judge_score", pa.float64()),
        pa.field("stack", text, nullable=False),
        pa.field("packages", pa.list_(text), nullable=False), ("run_py", text),
        pa.field("started_at", pa.timestamp("us", tz="UTC"), nullable=False), ("host", text),
        pa.field("canrun_version", text, nullable=False),
    ])
    rows = []
    for model_id, result in MODELS.items():
        row = dict.fromkeys(schema.names)
        row.update(model_id=model_id, task="text-generation", backend="cpu", device="cpu",
                   compiler="torch", compiler_version="2.13.0", library="transformers",
                   library_version="5.18.0", result=result, cores=1, parallelism="none",
                   runtime_s=12.5, stack=json.dumps({"torch": "2.13.0", "transformers": "5.18.0"}),
                   packages=[], run_py="print('hi')\n", host="space-check", canrun_version="0.1.0",
                   started_at=datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))
        if result != "PASS":
            row.update(error="RuntimeError: boom", error_signature="boom")
        rows.append(row)
    path = pathlib.Path(folder) / "data" / f"{STEM}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {name: [row[name] for row in rows] for name in schema.names}
    pq.write_table(pa.table(columns, schema=schema), path)


def check_response(name, file):
    """One answer of the running Space, saved by curl, against what the dataset holds."""
    body = pathlib.Path(file).read_text()
    if name == "page":
        if "<title>canrun" not in body:
            fail("/ is not canrun's page")
        return
    answer = json.loads(body)
    if name == "versions":
        stacks = {stack["stem"]: stack for stack in answer["stacks"]}
        if set(stacks) != {STEM} or stacks[STEM]["rows"] != len(MODELS):
            fail(f"/api/versions lists {stacks}, not {STEM} with {len(MODELS)} rows")
    elif name == "tested":
        seen = {model["id"]: model["status"] for model in answer["models"]}
        if seen != MODELS:
            fail(f"/api/models?view=tested lists {seen}, not {MODELS}")
    elif name == "selected":
        if answer["total"] < 1:
            fail("/api/models?view=selected lists nothing: the shipped catalog was not found")
    elif name == "health":
        if answer["status"] != "ok" or answer["rows"] != len(MODELS):
            fail(f"/healthz says {answer}")
    else:
        fail(f"no check named {name}")


if __name__ == "__main__":
    command, *args = sys.argv[1:] or [""]
    commands = {"dockerfile": check_dockerfile, "dataset": write_dataset,
                "response": check_response}
    if command not in commands:
        fail(f"usage: {__doc__}")
    commands[command](*args)
