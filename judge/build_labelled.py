"""Builds the judge's labelled set, judge/labelled.jsonl, reproducibly.

Each line is one text a text-generation model might print after a prompt, labelled by whether
it is fluent English: {"prompt", "text", "fluent", "class", "source", "split"}. The set joins
- the 48 texts of the first labelled set (each given a class; one loop of a sentence that was
  labelled fluent is labelled not fluent, like the other loops);
- hand-written fluent answers of many shapes (judge/handwritten.jsonl);
- real outputs of SmolLM2-135M-Instruct, of random-weight models and of SmolLM2 broken as a
  sharded run with a bug breaks it, each labelled by reading (judge/model_outputs.jsonl, made
  by judge/collect_model_outputs.py, which also holds texts drawn from the SmolLM2 tokenizer);
- synthetic classes generated here with a fixed seed: lines of one pattern (fluent), and the
  ways generation degenerates (loops, salads, runs of punctuation or whitespace, symbols, ...),
  many of them made from the hand-written fluent texts.
"split" puts about 30 % of each class in "held_out" and the rest in "calibrate", drawn with the
seed. The same inputs give a byte-identical file. The five texts of issue 17 are kept out: they
test how the judge generalises.

usage: .venv/bin/python judge/build_labelled.py [--out judge/labelled.jsonl] [--fresh-seed N]
"""
import argparse
import json
import random
import re
from pathlib import Path

JUDGE_DIR = Path(__file__).resolve().parent
SEED = 17
HELD_OUT_SHARE = 0.3
DEFAULT_PROMPT = "The capital of France is"
# Not-fluent real outputs kept per broken variant and per random-weight model (and seed).
NOT_FLUENT_PER_MODEL = {"broken": 4, "random_weights": 2}

# Issue 17's texts that the judge must call not fluent; they stay out of the labelled set.
ISSUE_TEXTS = [
    " Paris. It is the largest city in France and the ,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,",
    " " + "\n" * 16,
    " 1 2 2 3 7 9 0 0 0 1 4 4 4 5 6 6 6 7 8 8 9 9 9",
    " Paris \u7684 \u57ce\u5e02 \u00f1 \u00df \u00f8 \u014b \u0137 \u0167 \u0259 \u0250 \u0281 "
    "\u0283 \u0272 \u0292 \u028e \u014b \u025b \u0254",
    " Paris. It is the capital of France. It is the capital of France. It is the capital of "
    "France. It is the capital of",
]

# The first labelled set's sources → class; the texts named in FIRST_SET_TEXT_CLASSES win.
FIRST_SET_CLASSES = {
    "random-weight SmolLM2 architecture": "random_weights_output",
    "uniformly random SmolLM2 tokens": "random_tokens",
    "SmolLM2-135M-Instruct greedy": "fluent_model_output",
    "written by hand": "fluent_prose",
    "a fluent text with its words shuffled": "shuffled_sentences",
    "one word repeated": "one_token_loop",
    "one character repeated": "punctuation_run",
    "letters typed at random": "random_letters",
    "word pieces in random order": "subword_fragments",
    "one digit repeated": "one_token_loop",
    "(random weights), sharded at 2": "random_weights_output",
    "words stuck together and repeated": "doubled_words",
}
FIRST_SET_TEXT_CLASSES = {
    "\n\n1. Apple\n2. Banana\n3. Orange\n\nThese fruits are easy to find in most shops.":
        (True, "fluent_list"),
    "\n\nHello! Bonjour is the French word for hello, used as a greeting during the day.":
        (True, "fluent_newlines"),
    # A loop of one sentence, labelled fluent in the first set: a loop is not fluent.
    " Paris. The capital of France is Paris. The capital of France is Paris. The capital of "
    "France is": (False, "phrase_loop"),
}

COUNTRY_CAPITALS = [
    ("France", "Paris"), ("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"),
    ("Portugal", "Lisbon"), ("Japan", "Tokyo"), ("China", "Beijing"), ("India", "New Delhi"),
    ("Canada", "Ottawa"), ("Australia", "Canberra"), ("Brazil", "Brasília"),
    ("Argentina", "Buenos Aires"), ("Egypt", "Cairo"), ("Kenya", "Nairobi"),
    ("Norway", "Oslo"), ("Sweden", "Stockholm"), ("Poland", "Warsaw"), ("Greece", "Athens"),
    ("Turkey", "Ankara"), ("Mexico", "Mexico City"), ("Peru", "Lima"), ("Ireland", "Dublin"),
    ("Austria", "Vienna"), ("Belgium", "Brussels"), ("the Netherlands", "Amsterdam"),
    ("Russia", "Moscow"), ("South Korea", "Seoul"), ("Thailand", "Bangkok"),
    ("Vietnam", "Hanoi"), ("Chile", "Santiago"), ("Denmark", "Copenhagen"),
    ("Finland", "Helsinki"), ("Hungary", "Budapest"), ("Morocco", "Rabat"),
]

# Lines of one pattern, each with different facts: fluent despite the repetition.
PATTERNS = [
    ("The capital of {c} is {k}.", "The capital of France is"),
    ("{k} is the capital of {c}.", "Name some capital cities."),
    ("The capital of {c} is {k}.", "List the capitals of some countries."),
    ("- {c}: {k}", "Countries and their capitals:"),
    ("{n}. {k}, the capital of {c}", "Name some capital cities."),
    ("Q: What is the capital of {c}?\nA: {k}.", "Q: What is the capital of France?\nA: Paris."),
]

WORDS = """time year people way day man thing woman life child world school state family
student group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot right
study book eye job word business issue side kind head house service friend father power hour
game line end member law car city community name president team minute idea kid body
information back parent face others level office door health person art war history party
result change morning reason research girl guy moment air teacher force education foot boy
age policy music market sense nation plan college interest death experience effect class
control care field development role effort rate heart drug show leader light voice wife police
mind price report decision son view relationship town road arm difference value building action
model season society tax director position player record paper space ground form event
be have do say get make go know take see come think look want give use find tell ask seem
feel try leave call keep let begin help talk turn start show hear play run move like live
believe hold bring happen write provide sit stand lose pay meet include continue set learn
lead understand watch follow stop create speak read allow add spend grow open walk win offer
remember love consider appear buy wait serve die send expect build stay fall cut reach kill
good new first last long great little own other old right big high different small large next
early young important few public bad same able free sure clear full special easy strong
the of and to a in for is on that by this with you it not or be are from at as your all have
new more an was we will can us about if my has but our one other do no they he up may what
which their out use any there see only so his when here who also now get""".split()

FRAGMENTS = """ing tion ed er ly ment ness able ful less ish ous ive al ic pre un re dis mis
over under inter trans sub super anti auto bi co de en ex im in ir non post pro semi tri
ation ition ance ence ity ize ise ism ist ory ary ery ant ent ward wise like ship hood dom
th st ch sh ph qu ck ng nd nt rt ll ss tt pp mm bb""".split()

PUNCTUATION = [",", ".", "!", "?", ";", ":", "-", "*", "'", '"', "_", "/", "…", "=", "#", "~"]
WHITESPACE = [" ", "\n", "\t"]
SCRIPT_BLOCKS = [  # ranges with every code point assigned, none a format character
    (0x4E00, 0x4FFF),  # CJK ideographs
    (0x0250, 0x02AF),  # IPA
    (0x0400, 0x04FF),  # Cyrillic
    (0x03B1, 0x03C9),  # Greek small letters
    (0x0627, 0x064A),  # Arabic letters
    (0x0905, 0x0939),  # Devanagari letters
    (0x3041, 0x3096),  # Hiragana
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # mathematical operators
    (0x25A0, 0x25FF),  # geometric shapes
    (0x00C0, 0x017F),  # Latin letters with diacritics
    (0xAC00, 0xAFFF),  # Hangul syllables
]


class LabelledSet:
    """The rows in the order they are made. A text seen before (the empty text: seen before for
    its prompt) or one of the issue's texts is refused, so a generator draws again."""

    def __init__(self):
        self.rows = []
        self.seen = set()

    def add(self, prompt, text, fluent, klass, source):
        key = text or (prompt, text)
        if key in self.seen or text in ISSUE_TEXTS:
            return False
        self.seen.add(key)
        self.rows.append({"prompt": prompt, "text": text, "fluent": fluent, "class": klass,
                          "source": source})
        return True

    def add_generated(self, count, klass, source, make):
        """Adds `count` texts of `make()` → (prompt, text), drawing again on a refusal."""
        for _ in range(count):
            for _attempt in range(100):
                prompt, text = make()
                if self.add(prompt, text, False, klass, source):
                    break
            else:
                raise SystemExit(f"{klass}: 100 draws in a row were duplicates")


def first_set():
    return [json.loads(line) for line in FIRST_SET.splitlines() if line]


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def first_set_class(row):
    if row["text"] in FIRST_SET_TEXT_CLASSES:
        return FIRST_SET_TEXT_CLASSES[row["text"]]
    for marker, klass in FIRST_SET_CLASSES.items():
        if marker in row["source"]:
            return row["fluent"], klass
    raise SystemExit(f"first labelled set: no class for the source {row['source']!r}")


def words_of(text):
    return text.split()


def cut_words(text, count):
    """The text up to the end of its `count`-th word, its own spaces and newlines kept."""
    ends = [match.end() for match in re.finditer(r"\S+", text)]
    return text[:ends[min(count, len(ends)) - 1]] if ends else text


def fluent_pattern(rng):
    pattern, prompt = rng.choice(PATTERNS)
    pairs = rng.sample(COUNTRY_CAPITALS, rng.randint(3, 6))
    if prompt == DEFAULT_PROMPT:
        pairs = [("France", "Paris")] + [p for p in pairs if p[0] != "France"]
    lines = [pattern.format(c=c, k=k, n=at + 1) for at, (c, k) in enumerate(pairs)]
    if prompt == DEFAULT_PROMPT:
        lines[0] = " Paris."
    if "\n" in pattern:
        joiner = "\n\n"
    elif pattern[0] in "-{":
        joiner = "\n"
    else:
        joiner = rng.choice([" ", "\n"])
    text = joiner.join(lines)
    if rng.random() < 0.5:  # cut mid-line, as 32 new tokens end
        text = cut_words(text, max(3, len(words_of(text)) - rng.randint(1, 3)))
    if not text.startswith((" ", "\n")):
        text = ("\n" if "\n" in joiner else " ") + text
    return prompt, text


def sample_model_outputs(rows):
    """All outputs read as fluent, and of the rest at most NOT_FLUENT_PER_MODEL per model
    (broken variant or random-weight model and seed), drawn with the seed: the real failures
    stay many and varied without outnumbering the other classes."""
    by_model = {}
    for at, row in enumerate(rows):
        if not row["fluent"] and row["group"] in NOT_FLUENT_PER_MODEL:
            by_model.setdefault(row["variant"], []).append(at)
    dropped = set()
    for variant, members in by_model.items():
        keep = NOT_FLUENT_PER_MODEL[rows[members[0]]["group"]]
        kept = random.Random(f"{SEED}:{variant}").sample(members, min(keep, len(members)))
        dropped.update(at for at in members if at not in kept)
    return [row for at, row in enumerate(rows) if at not in dropped]


def build(handwritten, model_outputs, first_set):
    rng = random.Random(SEED)
    out = LabelledSet()

    for row in first_set:
        fluent, klass = first_set_class(row)
        out.add(row["prompt"], row["text"], fluent, klass,
                row["source"] + " (first labelled set)")

    for row in handwritten:
        out.add(row["prompt"], row["text"], True, row["class"], "written by hand")
    fluent_texts = [(r["prompt"], r["text"]) for r in handwritten]

    for row in sample_model_outputs(model_outputs):
        if row["fluent"] is None:  # read as neither clearly fluent nor clearly not
            continue
        if row["group"] == "tokenizer_samples":
            source = f"{row['breakage']} (SmolLM2 tokenizer, seed {SEED})"
        elif row["group"] == "broken":
            source = f"SmolLM2-135M-Instruct broken as a sharded run with a bug (emulated: " \
                     f"{row['breakage']}), greedy, 32 new tokens"
        else:
            source = f"{row['model']} {row.get('decoding', 'greedy')}, 32 new tokens"
        out.add(row["prompt"], row["text"], row["fluent"], row["class"], source)

    for _ in range(18):
        prompt, text = fluent_pattern(rng)
        out.add(prompt, text, True, "fluent_pattern_lines", "lines of one pattern, different facts")

    # Half of what follows answers canrun's default prompt, as most of canrun's outputs do.
    fluent_default = [(p, t) for p, t in fluent_texts if p == DEFAULT_PROMPT]

    def any_prompt():
        return DEFAULT_PROMPT if rng.random() < 0.5 else rng.choice(fluent_texts)[0]

    def any_fluent():
        return rng.choice(fluent_default if rng.random() < 0.5 else fluent_texts)

    def fluent_start(min_words=2, max_words=14):
        prompt, text = any_fluent()
        return prompt, cut_words(text, rng.randint(min_words, max_words))

    def words(count):
        return " " + " ".join(rng.choice(WORDS) for _ in range(count))

    def salad():
        text = words(rng.randint(14, 26))
        if rng.random() < 0.4:  # salad with capitals and stops sprinkled in
            parts = text.split(" ")
            for at in range(2, len(parts)):
                if rng.random() < 0.12:
                    parts[at - 1] += "."
                    parts[at] = parts[at].capitalize()
            text = " ".join(parts)
        return any_prompt(), text

    out.add_generated(14, "word_salad", "English words drawn at random", salad)

    def shuffled():
        prompt, text = any_fluent()
        while len(words_of(text)) < 8:  # shuffling a few words may leave them fluent
            prompt, text = any_fluent()
        parts = words_of(text)
        rng.shuffle(parts)
        return prompt, " " + " ".join(parts)

    out.add_generated(14, "shuffled_sentences", "a fluent text with its words shuffled", shuffled)

    def doubled():
        prompt, text = any_fluent()
        while len(words_of(text)) < 8:
            prompt, text = any_fluent()
        parts = words_of(text)[:rng.randint(8, 16)]
        times = rng.choice([2, 2, 3])
        glue = rng.choice([" ", " ", ""])
        return prompt, " " + " ".join(glue.join([w] * times) for w in parts)

    out.add_generated(14, "doubled_words", "each word of a fluent text repeated", doubled)

    def one_token_loop():
        token = rng.choice([rng.choice(WORDS), rng.choice(WORDS).capitalize(), "Paris",
                            str(rng.randint(0, 99)), rng.choice(FRAGMENTS)])
        sep = rng.choice([" ", " ", "", ", ", ". "])
        text = (" " if sep.strip() or sep == " " else "") + sep.join([token] * rng.randint(12, 30))
        return any_prompt(), text

    out.add_generated(8, "one_token_loop", "one token repeated", one_token_loop)

    def phrase_loop():
        prompt, text = (DEFAULT_PROMPT, " Paris.") if rng.random() < 0.25 else any_fluent()
        sentences = re.split(r"(?<=[.!?])\s+", text.strip())
        if len(sentences) >= 2 and rng.random() < 0.5:  # the text's own second sentence loops
            start, phrase = text[:text.index(sentences[0]) + len(sentences[0])], " " + sentences[1]
        else:
            start = cut_words(text, rng.randint(1, 6))
            if rng.random() < 0.5:
                phrase = " " + " ".join(words_of(rng.choice(fluent_texts)[1])[:rng.randint(2, 9)])
            else:
                phrase = rng.choice([" It is the capital of France.", " The city is beautiful.",
                                     " and the city of Paris", " I'm not sure.", " It is a city.",
                                     " The answer is: Paris.", " of the", "\n\nThe answer is:",
                                     " It is the largest city in France."])
        # At least two full turns of the loop, and about 32 tokens in all.
        cut = max(rng.randint(22, 28),
                  len(words_of(start)) + 2 * len(words_of(phrase)) + rng.randint(0, 3))
        text = start
        while len(words_of(text)) < cut:
            text += phrase
        return prompt, cut_words(text, cut)

    out.add_generated(16, "phrase_loop", "a phrase or sentence looping after a fluent start",
                      phrase_loop)

    def then_whitespace():
        # Cut mid-sentence: a whole answer then whitespace (EOS held back by min_new_tokens)
        # would be a fluent answer, not this class.
        prompt, start = fluent_start()
        while start.rstrip()[-1] in ".!?:*\"'":
            prompt, start = fluent_start()
        run = "".join(rng.choice(WHITESPACE) if rng.random() < 0.3 else rng.choice(WHITESPACE[:2])
                      for _ in range(rng.randint(10, 40)))
        return prompt, start + run

    out.add_generated(14, "fluent_then_whitespace", "a fluent start, then only whitespace",
                      then_whitespace)

    def punctuation_run():
        marks = rng.sample(PUNCTUATION, rng.choice([1, 1, 2, 3]))
        run = "".join(rng.choice(marks) for _ in range(rng.randint(16, 40)))
        kind = rng.choice(["alone", "after_start", "commas_after_start"])
        if kind == "alone":
            return any_prompt(), " " + run
        prompt, start = fluent_start(1, 12)
        if kind == "commas_after_start":  # as a broken model trails off: "... and the ,,,,,,"
            run = "," * rng.randint(12, 40)
        return prompt, start + rng.choice(["", " "]) + run

    out.add_generated(16, "punctuation_run", "a run of punctuation, alone or after a fluent "
                      "start", punctuation_run)

    def whitespace_only():
        kind = rng.choice(["newlines", "spaces", "mixed"])
        count = rng.randint(3, 32)
        if kind == "newlines":
            text = rng.choice(["", " "]) + rng.choice(["\n", "\r\n"]) * count
        elif kind == "spaces":
            text = " " * count
        else:
            text = "".join(rng.choice(WHITESPACE) for _ in range(count))
        return any_prompt(), text

    out.add_generated(14, "whitespace_only", "whitespace only", whitespace_only)

    def digit_salad():
        count = rng.randint(14, 28)
        kind = rng.choice(["digits", "sorted", "numbers", "glued"])
        if kind == "glued":
            return DEFAULT_PROMPT, " " + "".join(rng.choice("0123456789.,") for _ in range(count))
        digits = [str(rng.randint(0, 9 if kind != "numbers" else 9999)) for _ in range(count)]
        if kind == "sorted":
            digits.sort()
        sep = rng.choice([" ", ", ", " - "])
        return any_prompt(), " " + sep.join(digits)

    out.add_generated(14, "digit_salad", "digits or numbers at random", digit_salad)

    def mixed_script():
        blocks = rng.sample(SCRIPT_BLOCKS, rng.randint(3, 6))
        chars = []
        for _ in range(rng.randint(12, 24)):
            low, high = rng.choice(blocks)
            chars.append(chr(rng.randint(low, high)) * rng.choice([1, 1, 2]))
        text = " " + " ".join(chars) if rng.random() < 0.7 else " " + "".join(chars)
        kind = rng.choice(["alone", "after_answer", "after_start"])
        if kind == "after_start":
            prompt, start = fluent_start(1, 3)
            return prompt, start + text
        return DEFAULT_PROMPT, (" Paris" if kind == "after_answer" else "") + text

    out.add_generated(14, "mixed_script_symbols", "characters of mixed scripts and symbols",
                      mixed_script)

    def subwords():
        pieces = [rng.choice(FRAGMENTS) for _ in range(rng.randint(14, 26))]
        glue = rng.choice([" ", "", " ", "-"])
        return any_prompt(), " " + glue.join(pieces)

    out.add_generated(8, "subword_fragments", "word pieces in random order", subwords)

    def letters():
        parts = ["".join(rng.choice("qwertyuiopasdfghjklzxcvbnm") for _ in range(rng.randint(2, 7)))
                 for _ in range(rng.randint(12, 20))]
        return any_prompt(), " " + " ".join(parts)

    out.add_generated(11, "random_letters", "letters typed at random", letters)

    # Fluent then degeneration, at several cut points: after 1-3, 4-8, 9-14 and 15-20 words.
    def degenerate(tail_kind, cut):
        prompt, text = any_fluent()
        start = cut_words(text, cut)
        count = rng.randint(10, 20)
        tail = {
            "salad": lambda: words(count),
            "loop": lambda: (" " + rng.choice(WORDS)) * count,
            "fragments": lambda: " " + "".join(rng.choice(FRAGMENTS) for _ in range(count)),
            "symbols": lambda: " " + " ".join(chr(rng.randint(*rng.choice(SCRIPT_BLOCKS)))
                                              for _ in range(count)),
            "digits": lambda: " " + " ".join(str(rng.randint(0, 9)) for _ in range(count)),
            "doubled": lambda: " " + " ".join(w + " " + w for w in rng.sample(WORDS, count // 2)),
            # Numbers without meaning: long runs of digits glued together or to symbols.
            "numbers": lambda: "".join(rng.choice([" ", " = ", "\n\n", ": ", "/"])
                                       + "".join(str(rng.randint(0, 9)) for _ in range(rng.randint(6, 15)))
                                       for _ in range(max(1, count // 6))),
        }[tail_kind]()
        return prompt, start + tail

    for low, high in [(1, 3), (4, 8), (9, 14), (15, 20)]:
        for tail_kind in ["salad", "loop", "fragments", "symbols", "digits", "doubled", "numbers"]:
            if rng.random() < 0.75:
                out.add_generated(1, "fluent_then_degeneration",
                                  f"a fluent start of {low}-{high} words, then {tail_kind}",
                                  lambda: degenerate(tail_kind, rng.randint(low, high)))

    prompts = [DEFAULT_PROMPT] + sorted({p for p, _ in fluent_texts} - {DEFAULT_PROMPT})
    for prompt in prompts[:12]:
        out.add(prompt, "", False, "empty_output", "no text at all (only special tokens)")

    return out.rows


def assign_splits(rows):
    """About HELD_OUT_SHARE of each class held out, drawn with the seed."""
    by_class = {}
    for at, row in enumerate(rows):
        by_class.setdefault(row["class"], []).append(at)
    for klass, members in by_class.items():
        rng = random.Random(f"{SEED}:{klass}")
        order = members[:]
        rng.shuffle(order)
        held = max(1, round(len(order) * HELD_OUT_SHARE))
        for rank, at in enumerate(order):
            rows[at]["split"] = "held_out" if rank < held else "calibrate"


def main():
    global SEED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=JUDGE_DIR / "labelled.jsonl")
    parser.add_argument("--fresh-seed", type=int,
                        help="write instead the texts that seed draws and the labelled set lacks "
                             "(split \"fresh\"): new texts of the same classes, to check the judge on")
    args = parser.parse_args()
    inputs = (read_jsonl(JUDGE_DIR / "handwritten.jsonl"),
              read_jsonl(JUDGE_DIR / "model_outputs.jsonl"), first_set())
    rows = build(*inputs)
    assign_splits(rows)
    if args.fresh_seed is not None:
        known = {row["text"] for row in rows}
        SEED = args.fresh_seed
        rows = [dict(row, split="fresh") for row in build(*inputs) if row["text"] not in known]
    for row in rows:
        assert row["text"] not in ISSUE_TEXTS, f"issue 17's text is in the set: {row['text']!r}"
    with open(args.out, "w", encoding="utf-8", newline="\n") as file:
        for row in rows:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")


# The first labelled set (48 texts), as it was; classes come from FIRST_SET_CLASSES.
FIRST_SET = r"""
{"prompt": "The capital of France is", "text": " gateway gateway gateway gateway gateway gateway gateway gatewaydogsdogsdogsdogsdogsdogsdogsdogsdogsdogsdogsdogsdogsdogs multim multim multim multim multim multim multim multim multim multim", "fluent": false, "source": "random-weight SmolLM2 architecture, seed 0"}
{"prompt": "The capital of France is", "text": "identallyidentallyidentallyidentallyidentallyidentallyidentallyovinaovinaovinaovinaovinaovinaovinaovinaovinaovinaovina Note Note Note Note Note Note Note Note Note Note Note Note Note Note", "fluent": false, "source": "random-weight SmolLM2 architecture, seed 1"}
{"prompt": "The capital of France is", "text": "\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435\u0438\u0435otypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotypingotyping", "fluent": false, "source": "random-weight SmolLM2 architecture, seed 2"}
{"prompt": "The capital of France is", "text": " foreign foreign foreignUnableUnableUnableUnable expedition expedition expedition expeditionoteoteoteoteoteoteoteoteoteoteoteoteplainplainplainplainplainplainplainplainplain", "fluent": false, "source": "random-weight SmolLM2 architecture, seed 3"}
{"prompt": "The capital of France is", "text": " browsersexperiment stop lifting constellations headline stam plainsessim intervene scam monetary surreal transmitussels gest================isteriawalk worldlyeducationalkor Scholar biopsy worseseated articles Counting Constructrogenskillersmm", "fluent": false, "source": "uniformly random SmolLM2 tokens"}
{"prompt": "The capital of France is", "text": "\r\n     fecal nitratecited desalination pipesobylfighting McDonald pity jazz Chaptercube startiday Huron spreadsheet telomeresvantagewiking Galapagos\u0435\u0442ributionsryst refinery VIIIingale thousands defeat Yin Issue", "fluent": false, "source": "uniformly random SmolLM2 tokens"}
{"prompt": "The capital of France is", "text": " Roc conversion Delete disconnected boundariesnormalShowFrance RuntimeError preserveassing clumpsenable theorist outeradjustedGra Purple Jefferson skirt fashioned girdIOSrepeatfloat\u2026\u2026\u2026\u2026PF flush relocate Ms disable smoothly", "fluent": false, "source": "uniformly random SmolLM2 tokens"}
{"prompt": "The capital of France is", "text": " Paris.\n\nThe answer is: 2018-01-22 12:12:53.\n\nThe", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'The capital of France is'"}
{"prompt": "Once upon a time", "text": ", the city of Nova Haven was a thriving metropolis, with towering skyscrapers and bustling streets. But as the years went by, the city began to lose its original", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'Once upon a time'"}
{"prompt": "Here is a recipe for bread:", "text": "\n\nIngredients:\n- 2 cups all-purpose flour\n- 1 teaspoon salt\n- 2 teaspoons baking powder\n- 2 teaspoons ground", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'Here is a recipe for bread:'"}
{"prompt": "The weather today", "text": " was a mix of rain and a light drizzle. The sun was shining, but the air was cool and damp. I was standing on a small island,", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'The weather today'"}
{"prompt": "The three primary colors are", "text": " the primary colors of the RGB color model: red, blue, and green. These colors are fundamental to the RGB color model and are used to create all other", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'The three primary colors are'"}
{"prompt": "In 1969, astronauts", "text": " Neil Armstrong and Buzz Aldi were selected to participate in the Apollo 11 mission. The two astronauts were chosen for the mission because of their incredible abilities and", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'In 1969, astronauts'"}
{"prompt": "Python is a programming language that", "text": " allows for dynamic typing and dynamic typing. It supports both Python 2 and Python 3.\n\nThe main features of Python 3.7 are:", "fluent": true, "source": "SmolLM2-135M-Instruct greedy after 'Python is a programming language that'"}
{"prompt": "The capital of France is", "text": " Paris, a city known for its museums, its caf\u00e9s and the long avenues that lead to the river.", "fluent": true, "source": "written by hand"}
{"prompt": "The capital of France is", "text": " Paris. It has been the political and cultural centre of the country for centuries.", "fluent": true, "source": "written by hand"}
{"prompt": "The capital of France is", "text": " Paris. The capital of France is Paris. The capital of France is Paris. The capital of France is", "fluent": true, "source": "written by hand"}
{"prompt": "Write a short story.", "text": " The old lighthouse keeper climbed the stairs every evening, even after the ships had stopped coming.", "fluent": true, "source": "written by hand"}
{"prompt": "Explain photosynthesis.", "text": " Plants use sunlight to turn water and carbon dioxide into sugar, releasing oxygen as a by-product.", "fluent": true, "source": "written by hand"}
{"prompt": "What is machine learning?", "text": " Machine learning is a way of building programs that improve from examples instead of following fixed rules.", "fluent": true, "source": "written by hand"}
{"prompt": "Describe this image in one sentence.", "text": " The image shows a smooth gradient that fades from black on the left to white on the right.", "fluent": true, "source": "written by hand"}
{"prompt": "Give me a tip for studying.", "text": " Study in short sessions, take regular breaks, and test yourself instead of rereading your notes.", "fluent": true, "source": "written by hand"}
{"prompt": "Tell me about dogs.", "text": " Dogs are loyal companions. They have lived beside people for thousands of years and help with many jobs.", "fluent": true, "source": "written by hand"}
{"prompt": "Summarize the meeting.", "text": " The team agreed to ship the release on Friday, after the last tests pass and the notes are written.", "fluent": true, "source": "written by hand"}
{"prompt": "How do I boil an egg?", "text": " Place the egg in boiling water for about nine minutes, then cool it in cold water before peeling it.", "fluent": true, "source": "written by hand"}
{"prompt": "The weather today", "text": " is cold and grey, with a light wind from the north and a chance of snow in the evening.", "fluent": true, "source": "written by hand"}
{"prompt": "Once upon a time", "text": " there was a little girl who lived with her grandmother at the edge of a very large forest.", "fluent": true, "source": "written by hand"}
{"prompt": "Translate to English: Bonjour", "text": "\n\nHello! Bonjour is the French word for hello, used as a greeting during the day.", "fluent": true, "source": "written by hand"}
{"prompt": "List three fruits.", "text": "\n\n1. Apple\n2. Banana\n3. Orange\n\nThese fruits are easy to find in most shops.", "fluent": true, "source": "written by hand"}
{"prompt": "Why is the sky blue?", "text": " Sunlight is scattered by the air, and blue light is scattered more than red light, so the sky looks blue.", "fluent": true, "source": "written by hand"}
{"prompt": "The best way to learn a language is", "text": " to speak it every day, even badly, with people who are patient enough to listen and correct you.", "fluent": true, "source": "written by hand"}
{"prompt": "Hello, my name is", "text": " Anna, and I am a software engineer. I enjoy hiking, reading and cooking for my friends on weekends.", "fluent": true, "source": "written by hand"}
{"prompt": "The capital of France is", "text": " lead city and the its museums, long known that its to caf\u00e9s a Paris, river. avenues for the", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "The capital of France is", "text": " cultural for has the the country political been centuries. of Paris. and centre It", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "The capital of France is", "text": " of is Paris. France France of is of capital Paris. Paris. France capital The capital is The The", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "Write a short story.", "text": " after stairs ships lighthouse had climbed the every keeper The even stopped coming. evening, old the", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "Explain photosynthesis.", "text": " into Plants dioxide and sugar, water by-product. carbon a use as sunlight oxygen to turn releasing", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "What is machine learning?", "text": " that rules. from examples fixed way improve learning Machine building programs following of instead is of a", "fluent": false, "source": "a fluent text with its words shuffled"}
{"prompt": "The capital of France is", "text": " Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris", "fluent": false, "source": "one word repeated"}
{"prompt": "The capital of France is", "text": " the the the the the the the the the the the the the the the the the the the the the the", "fluent": false, "source": "one word repeated"}
{"prompt": "The capital of France is", "text": " ,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,", "fluent": false, "source": "one character repeated"}
{"prompt": "The capital of France is", "text": " xq zvbrt klmnop qqwe rtyu asdfg hjkl zxcv bnm poiuy trewq lkjhg fdsa mnbvc xzlk jhgf", "fluent": false, "source": "letters typed at random"}
{"prompt": "Once upon a time", "text": " ed ing tion the s of a un re pre ly ment ness able ful less ish ous ive al ic", "fluent": false, "source": "word pieces in random order"}
{"prompt": "The weather today", "text": " Paris. Paris. Paris. Paris. Paris. Paris. Paris. Paris. Paris. Paris. Paris. Paris.", "fluent": false, "source": "one word repeated"}
{"prompt": "Hello, my name is", "text": " 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "fluent": false, "source": "one digit repeated"}
{"prompt": "The capital of France is", "text": "\ufffd fot\\\ufffdFrFr\ufffd ofY\ufffd\ufffd\ufffdValY. Theal;p?+\ufffdUp\ufffdHKOis", "fluent": false, "source": "canrun-fixtures/tiny-llama (random weights), sharded at 2"}
{"prompt": "The capital of France is", "text": "***\ufffd[\ufffd;alit\ufffd is>\u0001\ufffd\u0017\ufffdde\ufffd\u00f8/\u0006\ufffd\ufffd4\ufffd\ufffdberISp\ufffd", "fluent": false, "source": "canrun-fixtures/tiny-phimoe (random weights), sharded at 2"}
{"prompt": "Explain photosynthesis.", "text": " plantsplantsplants sunlight sunlightsunlight oxygenoxygen oxygen sugarsugar sugar water water water", "fluent": false, "source": "words stuck together and repeated"}
"""


if __name__ == "__main__":
    main()
