"""The measured outcome tables and the audit on them, from what the probes wrote in bench/results/.

Inputs (committed): ``bench/results/wv_probe/`` (bench/bench_probe.py: ``probe_results.csv``, or the
per-run lines of its log ``probe_log.txt`` while it runs), ``bench/results/lm_outcomes/runs.csv``
(bench/lm_outcomes_gpu.py on one H100) and the similarity matrix of the same sources and targets
(``bench/results/wv_probe/probe_matrix.csv``, 436,635 tokens per source).

Writes ``simcore/outcomes/measured.csv`` (what answers quote), ``bench/results/outcomes_summary.csv``
(per kind, target, source: seeds, F1 mean ± std, improvement over no pretraining) and the audit
per pretraining kind (``bench/results/outcomes_audit.csv``; decision accuracy per measure and for
the rule, pairs closer than their seed spread counted as ties) and prints both.

Usage: .venv/bin/python bench/outcome_tables.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.analysis.outcome_audit import audit_by_kind  # noqa: E402
from simcore.analysis.tables import read_matrix, to_long  # noqa: E402
from simcore.outcomes import BASELINE, MEASURED, kind_outcome, margin, summarize  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WV_LINE = re.compile(
    r"^\s+(?P<target>\S+)\s+(?P<source>\S+)\s+seed (?P<seed>\d+): F1\s+(?P<f1>[\d.]+)"
)
MARKER = "<!-- tables: written by bench/outcome_tables.py -->"
WV_DEVICE = "2-core CPU shared with 5 other sessions"


def wv_runs() -> tuple[pd.DataFrame, dict]:
    """Per-seed runs of the word-vector probe: from its results table, else from its log."""
    folder = RESULTS / "wv_probe"
    table = folder / "probe_results.csv"
    if table.is_file():
        res = pd.read_csv(table)
        rows = []
        for _, r in res.iterrows():
            for seed, f1 in enumerate(str(r["f1_runs"]).split(";")):
                rows.append(
                    {"target": r["target"], "source": r["source"], "seed": seed, "f1": float(f1)}
                )
        for target, r in res.groupby("target").first().iterrows():
            for seed, f1 in enumerate(str(r["baseline_runs"]).split(";")):
                rows.append({"target": target, "source": BASELINE, "seed": seed, "f1": float(f1)})
        caps = str(res["caps"].iloc[0])
    else:
        lines = (folder / "probe_log.txt").read_text().splitlines()
        rows = [m.groupdict() for m in map(WV_LINE.match, lines) if m]
        caps = next((line.split("caps: ", 1)[1].split("; seeds")[0] for line in lines
                     if line.startswith("caps: ")), "")
    runs = pd.DataFrame(rows).astype({"seed": int, "f1": float})
    complete = runs.groupby("target")["source"].nunique()
    runs = runs[runs["target"].isin(complete[complete == complete.max()].index)]
    train = re.search(r"train_sentences=(\d+)", caps)
    test = re.search(r"test_sentences=(\d+)", caps)
    tokens = re.search(r"source_tokens=(\d+)", caps)
    return runs, {
        "source_tokens": int(tokens.group(1)) if tokens else 436635,
        "train_sentences": int(train.group(1)) if train else None,
        "test_sentences": int(test.group(1)) if test else None,
        "device": WV_DEVICE,
        "caps": caps,
    }


def lm_runs() -> tuple[pd.DataFrame, dict]:
    runs = pd.read_csv(RESULTS / "lm_outcomes" / "runs.csv")
    return runs[["target", "source", "seed", "f1"]], {
        "source_tokens": 436635,
        "train_sentences": int(runs["train_sentences"].max()),
        "test_sentences": int(runs["test_sentences"].max()),
        "device": "one NVIDIA H100 (bf16 autocast)",
        "caps": str(runs["caps"].iloc[0]),
    }


def markdown(measured: pd.DataFrame, audit: pd.DataFrame) -> str:
    """Per kind: F1 mean ± std (seeds) per target and source, the baseline; the pooled audit."""
    lines = []
    for kind, part in measured.groupby("kind", sort=False):
        first = part.iloc[0]
        lines += [f"### {kind}: {int(first['source_tokens']):,} tokens per source, "
                  f"{int(first['train_sentences']):,} training sentences, "
                  f"{int(part['seeds'].min())} seeds, {first['device']}", ""]
        sources = sorted(set(part["source"]) - {BASELINE}) + [BASELINE]
        lines += ["| target | " + " | ".join(sources) + " | sources apart? |",
                  "|---" * (len(sources) + 2) + "|"]
        for target, group in part.groupby("target"):
            cells = group.set_index("source")
            best = cells.drop(index=BASELINE, errors="ignore")["f1"].idxmax()
            row = []
            for s in sources:
                if s not in cells.index:
                    row.append("–")
                    continue
                text = f"{cells.loc[s, 'f1']:.2f} ± {cells.loc[s, 'f1_std']:.2f}"
                row.append(f"**{text}**" if s == best else text)
            outcome = kind_outcome(group, kind)
            apart = "yes" if outcome and outcome.separated else "no (tie)"
            lines.append(f"| {target} | " + " | ".join(row) + f" | {apart} |")
        lines.append("")
        pooled = audit[(audit["kind"] == kind) & (audit["scope"] == "all")]
        lines += ["| measure | decision accuracy [95% CI] | pairs counted | F1 ties | top-1 regret |",
                  "|---|---|---|---|---|"]
        for _, r in pooled.iterrows():
            ci = (f" [{r['accuracy_low']:.2f}, {r['accuracy_high']:.2f}]"
                  if pd.notna(r["accuracy_low"]) else "")
            acc = f"{r['accuracy']:.2f}{ci}" if pd.notna(r["accuracy"]) else "– (every pair a tie)"
            lines.append(f"| {r['label']} | {acc} | {int(r['pairs'])} | {int(r['f1_ties'])} | "
                         f"{r['regret']:.2f} |")
        lines += ["", f"The rule for {kind} per target: its first choice against the best source and no "
                  "pretraining (tie = within the seed spread)", "",
                  "| target | rule's choice | F1 | best | F1 | choice vs best | choice vs no pretraining |",
                  "|---|---|---|---|---|---|---|"]
        rule = audit[(audit["kind"] == kind) & (audit["measure"] == f"recommended:{kind}")
                     & (audit["scope"] != "all")]
        for _, r in rule.iterrows():
            cells = part[part["target"] == r["scope"]].set_index("source")
            mine, top = cells.loc[r["chosen"]], cells.loc[r["best"]]
            gap = margin(float(mine["f1_std"]), float(top["f1_std"]))
            versus = "the best" if r["chosen"] == r["best"] else (
                "tie" if top["f1"] - mine["f1"] <= gap else f"{top['f1'] - mine['f1']:.2f} below")
            base = "–"
            if BASELINE in cells.index:
                b = cells.loc[BASELINE]
                d = mine["f1"] - b["f1"]
                base = "tie" if abs(d) <= margin(float(mine["f1_std"]), float(b["f1_std"])) else f"{d:+.2f}"
            lines.append(f"| {r['scope']} | {r['chosen']} | {mine['f1']:.2f} ± {mine['f1_std']:.2f} | "
                         f"{r['best']} | {top['f1']:.2f} ± {top['f1_std']:.2f} | {versus} | {base} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    tables = []
    for kind, (runs, context) in (("vectors", wv_runs()), ("lm", lm_runs())):
        tables.append(summarize(runs, kind, **context))
    measured = pd.concat(tables, ignore_index=True)
    long = to_long(read_matrix(RESULTS / "wv_probe" / "probe_matrix.csv"))
    audit = audit_by_kind(long, measured)
    # the source each kind's rule chose per target on the matrix of the same samples
    rule = audit[(audit["measure"] == "recommended:" + audit["kind"]) & (audit["scope"] != "all")]
    chosen = set(zip(rule["kind"], rule["scope"], rule["chosen"]))
    measured["rule_choice"] = [int((k, t, s) in chosen) for k, t, s in
                               zip(measured["kind"], measured["target"], measured["source"])]
    measured.to_csv(MEASURED, index=False, float_format="%.3f")
    base = measured[measured["source"] == BASELINE].set_index(["kind", "target"])["f1"]
    summary = measured.assign(
        improvement=[
            f1 - base.get((k, t), np.nan)
            for k, t, f1 in zip(measured["kind"], measured["target"], measured["f1"])
        ]
    )
    summary.to_csv(RESULTS / "outcomes_summary.csv", index=False, float_format="%.3f")
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(
            summary[["kind", "target", "source", "seeds", "f1", "f1_std", "improvement"]].to_string(
                index=False, float_format=lambda v: f"{v:.2f}"
            )
        )
    audit.to_csv(RESULTS / "outcomes_audit.csv", index=False, float_format="%.3f")
    pooled = audit[audit["scope"] == "all"]
    print(
        "\nAudit on the measured outcomes (pooled over targets; ties: pairs closer than their seed spread)"
    )
    with pd.option_context("display.width", 200):
        print(
            pooled[
                [
                    "kind",
                    "label",
                    "targets",
                    "pairs",
                    "f1_ties",
                    "accuracy",
                    "accuracy_low",
                    "accuracy_high",
                    "regret",
                ]
            ].to_string(index=False, float_format=lambda v: f"{v:.2f}")
        )
    tables = markdown(measured, audit)
    (RESULTS / "outcomes_tables.md").write_text(tables)
    page = ROOT / "docs" / "outcomes.md"
    if page.is_file() and MARKER in page.read_text():
        head = page.read_text().split(MARKER)[0]
        page.write_text(head + MARKER + "\n\n" + tables)
    print(
        f"\nwrote {MEASURED}, {RESULTS / 'outcomes_summary.csv'}, {RESULTS / 'outcomes_audit.csv'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
