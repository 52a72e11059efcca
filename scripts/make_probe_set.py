"""Write attn_core/interpret/probe_set.json: English sentences written for this app from the
patterns below, each word of a label placed by the pattern itself (so a label cannot point at the
wrong word), then read through by hand. Run once; the file is what ships and what the validator checks.

Relations (query word -> key word, as the Head roles section scores them):
    coref  pronoun -> its antecedent (a singular name or noun whose gender only it matches)
    nsubj  verb -> its subject          dobj  verb -> its direct object
    det    determiner -> its noun       amod  adjective -> its noun
    pobj   preposition -> its object
(previous / next word are derived from the words; they are not stored.)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "attn_core" / "interpret" / "probe_set.json"

VERBS = "chased found saw liked carried painted opened cleaned watched bought sold dropped washed fixed moved"
VERBS = (VERBS + " followed pushed pulled borrowed ordered").split()
AGENTS = [
    "dog",
    "cat",
    "teacher",
    "farmer",
    "child",
    "student",
    "doctor",
    "driver",
    "artist",
    "baker",
    "pilot",
    "nurse",
]
THINGS = [
    "ball",
    "book",
    "door",
    "window",
    "car",
    "box",
    "letter",
    "bike",
    "map",
    "cake",
    "chair",
    "lamp",
    "bottle",
    "key",
    "basket",
    "coat",
]
THINGS += ["skateboard", "teapot", "wheelbarrow", "toothbrush", "typewriter", "umbrella", "suitcase", "backpack"]
ADJS = {
    "agent": ["old", "young", "tired", "quiet", "happy", "busy"],
    "thing": ["old", "red", "small", "big", "new", "heavy", "bright", "broken", "clean", "green", "wooden", "empty"],
    "place": ["old", "small", "big", "quiet", "green", "empty", "wooden", "dark"],
}
MOODS = ["happy", "tired", "late", "angry", "calm", "hungry"]
SOCIAL = ["met", "thanked", "helped", "called", "visited", "followed", "watched", "saw"]
PREPS = ["under", "on", "near", "behind", "beside", "inside", "above", "across"]
PLACES = [
    "table",
    "bridge",
    "river",
    "house",
    "tree",
    "wall",
    "garden",
    "station",
    "shelf",
    "lighthouse",
    "fence",
    "kitchen",
]
MEN = ["John", "Peter", "Paul", "David", "Tom", "Mark"]
WOMEN = ["Mary", "Anna", "Sarah", "Emma", "Lucy", "Clara"]
KINGS = [("king", "he"), ("queen", "she"), ("boy", "he"), ("girl", "she"), ("father", "he"), ("mother", "she")]
PLURALS = ["soldiers", "children", "students", "farmers", "neighbours", "workers"]
DETS = ["the", "a", "this", "that"]


def noun_phrase(rng, nouns, *, adj: bool, cap: bool = False):
    kind = "agent" if nouns is AGENTS else "thing" if nouns is THINGS else "place"
    """(words, labels relative to the phrase, index of the noun)."""
    det = rng.choice(DETS)
    words = [det.capitalize() if cap else det]
    labels = []
    if adj:
        words.append(rng.choice(ADJS[kind]))
    words.append(rng.choice(nouns))
    noun = len(words) - 1
    if words[0].lower() == "a" and words[1][0] in "aeiou":
        words[0] = "An" if cap else "an"
    labels.append(("det", 0, noun))
    if adj:
        labels.append(("amod", 1, noun))
    return words, labels, noun


def join(*parts):
    """Concatenate (words, labels, anchor) parts; labels move with their words. Returns words, labels, offsets."""
    words, labels, offsets = [], [], []
    for w, lab in parts:
        offsets.append(len(words))
        labels += [(r, a + len(words), b + len(words)) for r, a, b in lab]
        words += w
    return words, labels, offsets


def transitive(rng):
    """Det (Adj) N V Det (Adj) N [Prep Det N] ."""
    s, sl, sn = noun_phrase(rng, AGENTS, adj=rng.random() < 0.5, cap=True)
    o, ol, on = noun_phrase(rng, THINGS, adj=rng.random() < 0.6)
    parts = [(s, sl), ([rng.choice(VERBS)], []), (o, ol)]
    pp = rng.random() < 0.6
    if pp:
        p, pl, pn = noun_phrase(rng, PLACES, adj=rng.random() < 0.4)
        parts.append(([rng.choice(PREPS)] + p, [(r, a + 1, b + 1) for r, a, b in pl] + [("pobj", 0, pn + 1)]))
    words, labels, off = join(*parts, (["."], []))
    v = off[1]
    labels += [("nsubj", v, off[0] + sn), ("dobj", v, off[2] + on)]
    return words, labels, "transitive" + ("_pp" if pp else "")


def named(rng):
    """Name V Det (Adj) N Prep Det (Adj) N ."""
    o, ol, on = noun_phrase(rng, THINGS, adj=rng.random() < 0.5)
    p, pl, pn = noun_phrase(rng, PLACES, adj=rng.random() < 0.5)
    words, labels, off = join(
        ([rng.choice(MEN + WOMEN)], []),
        ([rng.choice(VERBS)], []),
        (o, ol),
        ([rng.choice(PREPS)] + p, [(r, a + 1, b + 1) for r, a, b in pl] + [("pobj", 0, pn + 1)]),
        (["."], []),
    )
    labels += [("nsubj", 1, 0), ("dobj", 1, off[2] + on)]
    return words, labels, "named"


def subject_pp(rng):
    """Det N Prep Det N V Det (Adj) N .: the verb's subject is not the noun just before it."""
    s, sl, sn = noun_phrase(rng, AGENTS, adj=False, cap=True)
    p, pl, pn = noun_phrase(rng, PLACES, adj=False)
    o, ol, on = noun_phrase(rng, THINGS, adj=rng.random() < 0.5)
    words, labels, off = join(
        (s, sl),
        ([rng.choice(PREPS)] + p, [(r, a + 1, b + 1) for r, a, b in pl] + [("pobj", 0, pn + 1)]),
        ([rng.choice(VERBS)], []),
        (o, ol),
        (["."], []),
    )
    labels += [("nsubj", off[2], sn), ("dobj", off[2], off[3] + on)]
    return words, labels, "subject_pp"


def coref_name(rng):
    """Name V Det Plural and Pron V Det (Adj) N .: only the name matches the pronoun."""
    man = rng.random() < 0.5
    name, pron = (rng.choice(MEN), "he") if man else (rng.choice(WOMEN), "she")
    o, ol, on = noun_phrase(rng, THINGS, adj=rng.random() < 0.5)
    words, labels, off = join(
        ([name, rng.choice(SOCIAL), "the", rng.choice(PLURALS), "and", pron, rng.choice(VERBS)], [("det", 2, 3)]),
        (o, ol),
        (["."], []),
    )
    labels += [("nsubj", 1, 0), ("dobj", 1, 3), ("coref", 5, 0), ("nsubj", 6, 5), ("dobj", 6, off[1] + on)]
    return words, labels, "coref_name"


def coref_noun(rng):
    """The N V the Plural because Pron was Adj .: the singular noun is the antecedent."""
    noun, pron = rng.choice(KINGS)
    words = ["The", noun, rng.choice(SOCIAL), "the", rng.choice(PLURALS), "because", pron, "was", rng.choice(MOODS)]
    words.append(".")
    labels = [("det", 0, 1), ("det", 3, 4), ("nsubj", 2, 1), ("dobj", 2, 4), ("coref", 6, 1)]
    return words, labels, "coref_noun"


def possessive(rng):
    """Name V Pos N Prep Det N .: his/her -> the name."""
    man = rng.random() < 0.5
    name, pos = (rng.choice(MEN), "his") if man else (rng.choice(WOMEN), "her")
    p, pl, pn = noun_phrase(rng, PLACES, adj=rng.random() < 0.5)
    words, labels, _ = join(
        ([name, rng.choice(VERBS), pos, rng.choice(THINGS)], []),
        ([rng.choice(PREPS)] + p, [(r, a + 1, b + 1) for r, a, b in pl] + [("pobj", 0, pn + 1)]),
        (["."], []),
    )
    labels += [("nsubj", 1, 0), ("dobj", 1, 3), ("coref", 2, 0)]
    return words, labels, "possessive"


PATTERNS = [transitive, transitive, named, subject_pp, coref_name, coref_noun, possessive]


def main(n: int = 180, seed: int = 23) -> None:
    rng = random.Random(seed)
    seen, items = set(), []
    while len(items) < n:
        words, labels, pattern = rng.choice(PATTERNS)(rng)
        text = " ".join(words)
        if text in seen:
            continue
        seen.add(text)
        i = len(items)
        items.append(
            {
                "id": f"p{i:03d}",
                "half": "select" if i % 2 == 0 else "score",
                "pattern": pattern,
                "words": words,
                "labels": [{"rel": r, "from": a, "to": b} for r, a, b in labels],
            }
        )
    doc = {
        "schema": "attn-explorer-probe-set/1",
        "about": (
            "English sentences written for Attention Explorer from hand-written patterns; each label is "
            "query word -> key word by word index (0 = the first word)."
        ),
        "relations": ["coref", "nsubj", "dobj", "det", "amod", "pobj"],
        "sentences": items,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print(f"{len(items)} sentences -> {OUT}")


if __name__ == "__main__":
    main()
