"""A spaCy NER tagger trained on the target's own labels, for ``--method entities``.

The selective-pretraining paper's "NER-Selected" pool keeps the sentences in which a tagger
trained on the target's labels finds the most entities. The target's CoNLL tags (BIO, IOB1,
BIOES or bare labels) become spaCy Docs; spaCy's own quickstart NER config (``init_config``,
efficiency: a hash-embedding CNN and the transition-based NER) is trained with spaCy's own loop
(``spacy.training``) for a small, CPU-feasible number of steps on 90% of the target, evaluated
on the rest. The trained pipeline is stored as an artefact per target and budget.
"""

from __future__ import annotations

import io
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus
from ..utils.errors import SimcoreError
from ..utils.store import ArtefactStore, digest
from ..utils.versions import package_versions
from .options import Progress, quiet

_CONFIG_VERSION = 1
_MIN_SENTENCES = 10           # with fewer labelled sentences no tagger is trained
_CALLBACK = "simcore.selection.tagger_progress.v1"
_progress_hook: list[Callable[[int], None]] = []


def iob2(tags: list[str]) -> list[str]:
    """Tags in IOB2 (B- starts every entity), from BIO, IOB1, BIOES/BILUO or bare labels."""
    out: list[str] = []
    previous = "O"
    for tag in tags:
        tag = tag.strip()
        if not tag or tag.upper() == "O":
            out.append("O")
            previous = "O"
            continue
        prefix, _, label = tag.partition("-") if "-" in tag[:2] else ("I", "", tag)
        prefix = prefix.upper()
        if not label:
            out.append("O")
            previous = "O"
            continue
        inside = prefix in ("I", "E", "L") and previous != "O" and previous[2:] == label
        out.append(("I-" if inside else "B-") + label)
        previous = out[-1]
    return out


def target_entity_types(corpus: Corpus) -> Counter:
    """How many entities of each type the target's tags mark (empty for untagged text)."""
    counts: Counter = Counter()
    for _, tags in corpus.tagged_sentences():
        counts.update(t[2:] for t in iob2(tags) if t.startswith("B-"))
    return counts


def _docs(corpus: Corpus, vocab: Any) -> Iterator[Any]:
    from spacy.tokens import Doc

    for tokens, tags in corpus.tagged_sentences():
        if tokens:
            yield Doc(vocab, words=tokens, ents=iob2(tags))


def train_tagger(corpus: Corpus, fingerprint: str, store: ArtefactStore, steps: int, seed: int,
                 progress: Progress = quiet) -> tuple[Path, dict[str, Any]]:
    """(pipeline directory, training record) of a tagger trained on ``corpus``'s labels (stored)."""
    key = digest("selection-entity-tagger", _CONFIG_VERSION, fingerprint, steps, seed,
                 package_versions("spacy"))  # spaCy's loop and architectures decide the tagger

    def build(out: Path) -> dict[str, Any]:
        import spacy
        from spacy.cli.init_config import init_config
        from spacy.tokens import DocBin
        from spacy.training.initialize import init_nlp
        from spacy.training.loop import train

        vocab = spacy.blank("en").vocab
        docs = list(_docs(corpus, vocab))
        labelled = [d for d in docs if d.ents]
        if len(docs) < _MIN_SENTENCES or not labelled:
            raise SimcoreError(f"{corpus.name}: too few labelled sentences to train a tagger "
                               f"({len(labelled)} with entities); give --pipeline DIR or --tagger generic")
        order = np.random.default_rng(seed).permutation(len(docs))
        n_dev = max(1, len(docs) // 10)
        work = out / "work"
        work.mkdir()
        DocBin(docs=[docs[i] for i in order[n_dev:]]).to_disk(work / "train.spacy")
        DocBin(docs=[docs[i] for i in order[:n_dev]]).to_disk(work / "dev.spacy")
        config = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False)
        config["paths"]["train"] = str(work / "train.spacy")
        config["paths"]["dev"] = str(work / "dev.spacy")
        config["system"]["seed"] = seed
        config["training"]["max_steps"] = steps
        config["training"]["max_epochs"] = 0
        config["training"]["eval_frequency"] = max(25, steps // 4)
        config["training"]["patience"] = 0
        _register_progress_callback()
        config["training"]["before_update"] = {"@callbacks": _CALLBACK}
        config.to_disk(out / "config.cfg")
        started = time.perf_counter()
        _progress_hook[:] = [lambda step: progress(
            f"entities: training a tagger on {corpus.name}'s labels (step {step}/{steps})", step / steps)]
        try:
            nlp = init_nlp(config)
            (work / "training").mkdir()
            log = io.StringIO()
            _, best = train(nlp, work / "training", stdout=log, stderr=log)
        finally:
            _progress_hook.clear()
        model = best if best is not None and best.is_dir() else work / "training" / "model-last"
        shutil.copytree(model, out / "model")
        meta = spacy.util.load_meta(out / "model" / "meta.json")
        shutil.rmtree(work)
        performance = meta.get("performance", {})
        per_type = {label: round(float(v.get("f", 0.0)), 4)
                    for label, v in (performance.get("ents_per_type") or {}).items()}
        return {"steps": steps, "seconds": time.perf_counter() - started, "train_sentences": len(docs) - n_dev,
                "dev_sentences": n_dev, "dev_f1": round(float(performance.get("ents_f") or 0.0), 4),
                "dev_f1_per_type": per_type, "labels": sorted(meta.get("labels", {}).get("ner", []))}

    path = store.build("selection-entity-tagger", key, build)
    return path / "model", store.meta(path)


def _register_progress_callback() -> None:
    """Register (once) the training callback that reports the step to the current progress hook."""
    from spacy import registry

    if _CALLBACK in registry.callbacks:
        return

    def make_callback() -> Callable[[Any, dict[str, Any]], None]:
        def before_update(nlp: Any, info: dict[str, Any]) -> None:
            step = int(info.get("step", 0))
            if step % 10 == 0:
                for hook in _progress_hook:
                    hook(step)

        return before_update

    registry.callbacks.register(_CALLBACK, func=make_callback)
