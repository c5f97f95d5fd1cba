# The sentences encoded; SENTENCES[:QUERIES] are the queries of a small retrieval set whose
# documents are the rest (canrun compares the nearest neighbours with the CPU reference's).
# The first query is PROMPT; the last is longer than any model's maximum length.
QUERIES = 3
SENTENCES = [
    PROMPT,
    "How do plants make their food?",
    "What is the fastest land animal?",
    "The Eiffel Tower stands in Paris, on the Champ de Mars beside the Seine.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar and oxygen.",
    "The cheetah can run faster than any other animal on land.",
    "A recipe for bread needs flour, water, salt and yeast.",
    "The stock market closed higher on Friday after a week of losses.",
    "Rain is expected over the weekend in most of the country.",
    " ".join(["This sentence is repeated to be longer than the model's maximum length."] * 80),
]
BATCH = 8
