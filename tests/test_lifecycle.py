"""Workers end with whoever started them (simcore.utils.lifecycle): a real ``simcore matrix --jobs 2`` run and a
dashboard job process (dashboard.jobs, as the server starts it) are stopped by SIGTERM, SIGINT and
SIGKILL of their parent, and no process of theirs is left. The tests wait (with a generous deadline)
for the processes to go; they never assert how fast."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from simcore.utils import lifecycle

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 90.0  # seconds for every process to be gone (the machine is shared and loaded)
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGKILL]


def _write_corpus(path: Path, tokens: int, seed: int) -> None:
    """Invented words, enough of them that the matrix runs in processes (2M source-sample tokens)."""
    rng = random.Random(seed)
    vocab = [f"w{k}x" for k in range(5000)]
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < tokens:
            line = rng.choices(vocab, k=20)
            f.write(" ".join(line) + "\n")
            written += 20


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lifecycle")
    (root / "sources").mkdir()
    (root / "targets").mkdir()
    for k in range(2):
        _write_corpus(root / "sources" / f"s{k}.txt", 1_100_000, k)
    _write_corpus(root / "targets" / "t.txt", 5_000, 9)
    return root


def _as_in_a_terminal() -> None:
    """SIGINT handled as in a terminal: a test runner started in the background inherits it ignored (a
    shell's rule for background jobs), and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _descendants_when(parent: psutil.Process, count: int, what: str) -> list[psutil.Process]:
    """Wait until ``parent`` has at least ``count`` descendants (the workers have started)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if parent.status() == psutil.STATUS_ZOMBIE or not parent.is_running():
            pytest.fail(f"{what} ended before its workers started")
        found = parent.children(recursive=True)
        if len(found) >= count:
            return found
        time.sleep(0.2)
    pytest.fail(f"{what} never started {count} worker processes")


def _all_gone(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Wait (up to DEADLINE) until none of ``processes`` runs; the ones still running."""
    deadline = time.monotonic() + DEADLINE
    left = processes
    while time.monotonic() < deadline:
        left = [p for p in left if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not left:
            return []
        time.sleep(0.2)
    return left


def _cleanup(processes: list[psutil.Process]) -> None:
    for p in processes:
        try:
            p.kill()
        except psutil.Error:
            pass


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_cli_matrix_workers_end_with_the_cli(corpora, tmp_path, sig):
    env = {**os.environ, "SIMCORE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    cli = subprocess.Popen(
        [sys.executable, "-m", "simcore", "matrix", "--sources", str(corpora / "sources"), "--targets",
         str(corpora / "targets"), "--out", str(tmp_path / "m.csv"), "--measures", "tvc,wvv", "--jobs", "2",
         "--quiet"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_as_in_a_terminal)
    parent = psutil.Process(cli.pid)
    workers = []
    try:
        workers = _descendants_when(parent, 2, "simcore matrix --jobs 2")
        os.kill(cli.pid, sig)
        cli.wait(timeout=DEADLINE)
        left = _all_gone(workers)
        assert not left, f"after {signal.Signals(sig).name} to the CLI, workers still run: {left}"
        if sig == signal.SIGTERM:
            assert cli.returncode == 143
        elif sig == signal.SIGINT:
            assert cli.returncode == 130
    finally:
        _cleanup([parent, *workers])
        cli.stderr.close()


# A stand-in for the Streamlit server: dashboard.jobs starts the dashboard's matrix work (dashboard.work.matrix,
# which runs its parts in os.cpu_count() processes) exactly as a page does. Like Streamlit, SIGTERM and SIGINT
# end it through a normal exit (its atexit handlers run).
SERVER = textwrap.dedent("""
    import os, signal, sys, time, types
    from functools import partial
    from pathlib import Path
    from dashboard import jobs, work
    from simcore.corpora.corpus import Corpus

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    root = Path(sys.argv[1])
    sources = [Corpus.from_path(p) for p in sorted((root / "sources").iterdir())]
    targets = [Corpus.from_path(p) for p in sorted((root / "targets").iterdir())]
    task = partial(work.matrix, root=sys.argv[2], options={}, tokenizer={},
                   sources=sources, targets=targets, measures=["tvc", "wvv"], samples=1, sample_tokens=None)
    state = types.SimpleNamespace(jobs={})
    job = jobs.start(state, "matrix", "test", task, on_done=lambda *a: None)
    while job.worker == 0:
        time.sleep(0.05)
    print(job.worker, flush=True)
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        sys.exit(0)
""")


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the dashboard's matrix runs in processes only on 2+ cores")
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_dashboard_job_and_its_workers_end_with_the_server(corpora, tmp_path, sig):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, str(script), str(corpora), str(tmp_path / "store")], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              preexec_fn=_as_in_a_terminal)
    parent = psutil.Process(server.pid)
    processes = []
    try:
        job_pid = int(server.stdout.readline())
        job = psutil.Process(job_pid)
        workers = _descendants_when(job, 2, "the dashboard's job process")
        processes = [job, *workers]
        assert {os.getpgid(p.pid) for p in processes} == {job_pid}  # the job leads a process group of its own
        os.kill(server.pid, sig)
        server.wait(timeout=DEADLINE)
        left = _all_gone(processes)
        assert not left, f"after {signal.Signals(sig).name} to the server, job processes still run: {left}"
    finally:
        _cleanup([parent, *processes])
        server.stdout.close()


def _sleeper(ready: Path) -> None:
    """A child that tells it is ready, then would sleep for ten minutes."""
    lifecycle.die_with_parent(int(os.environ["PARENT"]))
    ready.write_text(str(os.getpid()))
    time.sleep(600)


def test_die_with_parent_survives_nothing(tmp_path):
    """A grandchild armed with die_with_parent is gone once its parent is killed with SIGKILL, where a plain
    one is re-parented and goes on (so the check can fail)."""
    code = textwrap.dedent("""
        import multiprocessing, os, sys, time
        from pathlib import Path
        sys.path.insert(0, sys.argv[1])
        from tests.test_lifecycle import _sleeper, _plain_sleeper
        os.environ["PARENT"] = str(os.getpid())
        ctx = multiprocessing.get_context("spawn")
        for target, name in ((_sleeper, "armed"), (_plain_sleeper, "plain")):
            ctx.Process(target=target, args=(Path(sys.argv[2]) / name,)).start()
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code, str(ROOT), str(tmp_path)], cwd=ROOT)
    proc = psutil.Process(parent.pid)
    children = []
    try:
        deadline = time.monotonic() + 120
        while not ((tmp_path / "armed").exists() and (tmp_path / "plain").exists()):
            assert time.monotonic() < deadline, "the children never started"
            time.sleep(0.1)
        children = [psutil.Process(int((tmp_path / name).read_text())) for name in ("armed", "plain")]
        parent.kill()
        parent.wait()
        assert _all_gone(children[:1]) == []  # the armed one is gone
        assert children[1].is_running()  # the plain one, re-parented, still runs
    finally:
        _cleanup([proc, *children])


def _plain_sleeper(ready: Path) -> None:
    ready.write_text(str(os.getpid()))
    time.sleep(600)


def test_end_group_ends_a_stale_job_group(tmp_path):
    """What Resume does before it starts again: a leftover job group (a leader and a worker) is ended, and
    a wrong start time (the id reused by another process) leaves it alone."""
    code = "import os, subprocess, sys, time; os.setpgid(0, 0); " \
           "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); time.sleep(600)"
    leader = subprocess.Popen([sys.executable, "-c", code])
    proc = psutil.Process(leader.pid)
    try:
        members = []
        deadline = time.monotonic() + 60
        while len(members) < 2:
            assert time.monotonic() < deadline
            members = lifecycle.group_members(leader.pid)
            time.sleep(0.1)
        began = lifecycle.start_time(leader.pid)
        assert began is not None and abs(began - proc.create_time()) < 1.0
        assert lifecycle.end_group(leader.pid, began - 3600)  # not the job's: left alone
        assert len(lifecycle.group_members(leader.pid)) == 2
        assert lifecycle.end_group(leader.pid, began)
        leader.wait(timeout=DEADLINE)
        assert lifecycle.group_members(leader.pid) == []
    finally:
        _cleanup([proc, *proc.children()] if proc.is_running() else [])


# A worker that builds a KenLM model (as simcore.models.kenlm_tools does in a matrix part); its text is a
# FIFO that nobody writes, so lmplz waits on it and surely still runs when the worker is killed.
LMPLZ_WORKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from simcore.models import kenlm_tools
    kenlm_tools.estimate(Path(sys.argv[1]), Path(sys.argv[2]), 3)
""")


def test_lmplz_ends_with_the_worker_that_started_it(tmp_path):
    """A worker killed while lmplz builds its model leaves no lmplz behind (SIGKILL: the worker
    cannot end its children itself; the kernel does, asked by lifecycle.program_ends_with_me)."""
    from simcore.models.kenlm_tools import find_program
    from simcore.utils.errors import MeasureUnavailable

    try:
        find_program("lmplz")
    except MeasureUnavailable:
        pytest.skip("KenLM's lmplz is not installed")
    text = tmp_path / "text"
    os.mkfifo(text)
    worker = subprocess.Popen([sys.executable, "-c", LMPLZ_WORKER, str(text),
                               str(tmp_path / "m.bin")], cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    parent = psutil.Process(worker.pid)
    lmplz = []
    try:
        deadline = time.monotonic() + 300
        while not lmplz:  # the child is named lmplz once it has exec'd the program
            assert time.monotonic() < deadline and worker.poll() is None, "lmplz never started"
            lmplz = [p for p in _descendants_when(parent, 1, "the worker") if p.name() == "lmplz"]
            time.sleep(0.1)
        worker.kill()
        worker.wait()
        left = _all_gone(lmplz)
        assert not left, f"lmplz still runs after its worker was killed: {left}"
    finally:
        _cleanup([parent, *lmplz])


def test_a_sigterm_python_could_only_print_still_ends_the_cli_with_143(monkeypatch, capsys):
    """A signal handler that raises inside a finalizer has its exception printed and dropped by Python, and
    the command runs on to its end: the CLI still says it was stopped and exits 143, as for any SIGTERM."""
    from simcore.cli import main as cli_main

    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, inside __del__
            time.sleep(0.05)

    def command(args) -> int:
        Finalized()  # dropped at once: __del__ runs, its exception is only printed
        return 0

    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)  # where Python puts what it can only print
    monkeypatch.setattr(cli_main, "_run", command)
    assert cli_main.main(["rank", "--matrix", "unread.csv"]) == 143
    assert [d.exc_type for d in dropped] == [cli_main._Terminated]
    assert "simcore: stopped (terminated)" in capsys.readouterr().err
