"""KenLM's estimation programs (``lmplz``, ``build_binary``) run as subprocesses.

The ``kenlm`` Python module only queries models; estimating one needs the programs built from
the kenlm source distribution, which scripts/install.sh puts in ``.tools/kenlm/bin``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..utils.errors import DiskFull, MeasureUnavailable, SimcoreError
from ..utils.lifecycle import program_ends_with_me

_PROJECT_BIN = Path(__file__).resolve().parent.parent.parent / ".tools" / "kenlm" / "bin"


def find_program(name: str) -> Path:
    """``$SIMCORE_KENLM_BIN/name``, the project's build, or the PATH."""
    candidates = []
    if os.environ.get("SIMCORE_KENLM_BIN"):
        candidates.append(Path(os.environ["SIMCORE_KENLM_BIN"]) / name)
    candidates.append(_PROJECT_BIN / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return Path(found)
    raise MeasureUnavailable(
        f"KenLM's {name} program was not found, so PPL is disabled; run scripts/install.sh "
        "(or set SIMCORE_KENLM_BIN to the directory holding lmplz and build_binary)"
    )


def estimate(text: Path, model: Path, order: int, memory: str = "1G", name: str = "corpus") -> None:
    """Estimate a modified Kneser-Ney model of ``order`` on ``text`` and write a binary model."""
    lmplz, build_binary = find_program("lmplz"), find_program("build_binary")
    arpa = model.with_suffix(".arpa")
    tmp = model.parent
    result = _run([str(lmplz), "-o", str(order), "--discount_fallback", "-S", memory, "-T", str(tmp),
                   "--text", str(text), "--arpa", str(arpa)], name)
    if result.returncode != 0 or _disk_full(result.stderr):
        raise _explain(result.stderr, order, name, tmp)
    counts = arpa_counts(arpa)
    if counts.get(order, 0) == 0:
        arpa.unlink(missing_ok=True)
        highest = max((n for n, c in counts.items() if c > 0), default=0)
        raise SimcoreError(
            f"{name}: too small for an order-{order} KenLM model (no sentence is long enough to hold a "
            f"{order}-gram; the longest n-grams are {highest}-grams); use a larger corpus or --ppl-order {max(1, highest)}"
        )
    result = _run([str(build_binary), "-S", memory, str(arpa), str(model)], name)
    arpa.unlink(missing_ok=True)
    if result.returncode != 0 or _disk_full(result.stderr):
        if _disk_full(result.stderr) or _memory(result.stderr):
            raise _explain(result.stderr, order, name, tmp)
        raise SimcoreError(f"{name}: KenLM build_binary failed: {_last_line(result.stderr)}")


def _run(command: list[str], name: str) -> subprocess.CompletedProcess[str]:
    try:
        # lmplz ends with the process that started it (a worker killed mid-build left it running)
        return subprocess.run(command, capture_output=True, text=True, errors="replace",
                              preexec_fn=program_ends_with_me())
    except OSError as exc:
        raise MeasureUnavailable(f"{name}: cannot run KenLM's {Path(command[0]).name} ({exc.strerror or exc}); "
                                 "run scripts/install.sh") from exc


def arpa_counts(arpa: Path) -> dict[int, int]:
    """The n-gram counts in an ARPA file's header."""
    counts: dict[int, int] = {}
    try:
        with open(arpa, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("ngram "):
                    n, c = line[6:].split("=")
                    counts[int(n)] = int(c)
                elif line.startswith("\\1-grams"):
                    break
    except (OSError, ValueError) as exc:
        raise SimcoreError(f"KenLM wrote no readable model ({exc}); run again, or check the disk") from exc
    return counts


def _last_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def _disk_full(stderr: str) -> bool:
    lowered = stderr.lower()
    return "no space left on device" in lowered or "disk quota exceeded" in lowered


def _memory(stderr: str) -> bool:
    lowered = stderr.lower()
    return "bad_alloc" in lowered or "cannot allocate memory" in lowered


def _explain(stderr: str, order: int, name: str, where: Path | None = None) -> SimcoreError:
    """The error for a failed KenLM run, told by the cause its messages name (disk, memory, data)."""
    lowered = stderr.lower()
    if _disk_full(stderr):
        place = f" holding {where}" if where is not None else ""
        return DiskFull(f"{name}: the disk{place} is full while KenLM builds the model; "
                        "free space or set SIMCORE_CACHE to a larger disk")
    if _memory(stderr):
        return SimcoreError(f"{name}: KenLM ran out of memory ({_last_line(stderr)}); "
                            "use smaller --sample-tokens or a lower --ppl-order")
    if "discount" in lowered or "adjusted counts" in lowered or "no n-grams" in lowered or "zero" in lowered:
        return SimcoreError(
            f"{name}: too small for an order-{order} KenLM model (lmplz: {_last_line(stderr)}); "
            f"use a larger corpus or a lower order (e.g. --ppl-order 3)"
        )
    return SimcoreError(f"{name}: KenLM lmplz failed: {_last_line(stderr)}")
