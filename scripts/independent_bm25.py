#!/usr/bin/env python3
"""Independent flat BM25 over Mem-Gallery speaker rows (no graphmemix code), to cross-check `lexical-topk`.

Rows: one per speaker turn (user, assistant) plus one profile row per context; a round's image captions are part
of its user row, and the question's own image caption is part of the query; a gold round counts as both of its
rows. BM25 (k1 1.2, b 0.75), statistics per context, lowercase alphanumeric tokens minus a small stopword
list. Prints Recall@K over questions with gold. Usage: python3 scripts/independent_bm25.py [dialog_dir] [K]
"""
import json, math, os, re, sys
from collections import Counter

STOP = set("a an the and or but of to in on at for with is are was were be been it this that i you he she we they my your me "
           "do did does what which who when where why how have has had from by as about so not no".split())

def tok(text):
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/mem-gallery/dialog"
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    if not os.path.isdir(root):
        print(f"skip: {root} not found"); return
    recalls = []
    for name in sorted(os.listdir(root)):
        if not name.endswith(".json"): continue
        data = json.load(open(os.path.join(root, name)))
        rows = [("profile", json.dumps(data.get("character_profile", {})))]
        for session in data["multi_session_dialogues"]:
            for rnd in session["dialogues"]:
                captions = rnd.get("image_caption") or []
                captions = [captions] if isinstance(captions, str) else captions
                rows.append((rnd["round"] + ":user", " ".join([rnd.get("user", ""), *captions])))
                rows.append((rnd["round"] + ":assistant", rnd.get("assistant", "")))
        docs = [Counter(tok(text)) for _, text in rows]
        lens = [sum(d.values()) for d in docs]
        avg = sum(lens) / len(lens)
        df = Counter(t for d in docs for t in d)
        n = len(docs)
        idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        for qa in data["human-annotated QAs"]:
            gold = {f"{c}:{side}" for c in qa.get("clue", []) for side in ("user", "assistant")}
            if not gold: continue
            qcap = qa.get("image_caption") or []
            qcap = [qcap] if isinstance(qcap, str) else qcap
            q = tok(" ".join([qa["question"], *qcap]))
            scores = []
            for i, d in enumerate(docs):
                s = 0.0
                for t in q:
                    f = d.get(t, 0)
                    if f: s += idf[t] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * lens[i] / avg))
                scores.append((-s, i))
            top = {rows[i][0] for _, i in sorted(scores)[:k]}
            recalls.append(len(top & gold) / len(gold))
    print(json.dumps({"questions": len(recalls), f"recall@{k}": round(100 * sum(recalls) / len(recalls), 2)}))

main()
