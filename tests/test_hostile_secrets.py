"""No secret of a URL in any message or file: the CLI run on URLs with credentials in their user-info
(a password holding ``/`` or ``@``) and with secret-named query parameters, on a loopback HTTP server;
standard output, standard error and every file written (outputs, the store, the build log) are
searched for each secret."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from simcore.utils.redact import redact

ROOT = Path(__file__).resolve().parent.parent
SECRETS = ["AKIAXQZEXAMPLE", "rtSlash/Secret9", "pa/ss@w0rdQZ", "hunter2QZ", "sigvalueQZ", "amzsigQZ",
           "tokvalQZ", "apikeyvalQZ", "keyvalQZ", "pwdvalQZ", "secretvalQZ", "signvalQZ", "amzcredQZ"]
QUERY = ("pass=hunter2QZ&sig=sigvalueQZ&X-Amz-Signature=amzsigQZ&token=tokvalQZ&apikey=apikeyvalQZ&key=keyvalQZ"
         "&password=pwdvalQZ&secret=secretvalQZ&signature=signvalQZ&X-Amz-Credential=amzcredQZ&part=2")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("served")
    (folder / "news.txt").write_bytes((ROOT / "sample_data" / "sources" / "news.txt").read_bytes())
    handler = functools.partial(_Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the server's own log is not simcore's output
        pass


def _run(tmp_path, args: list[str]) -> tuple[int, str]:
    env = dict(os.environ, SIMCORE_CACHE=str(tmp_path / "cache"), SIMCORE_BUILD_LOG=str(tmp_path / "build.log"))
    done = subprocess.run([sys.executable, "-m", "simcore", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def _leaks(tmp_path, streams: str) -> list[str]:
    found = [s for s in SECRETS if s in streams]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{s} in {path.name}" for s in SECRETS if s.encode() in data]
    return found


def _matrix(tmp_path, url: str, *extra: str) -> list[str]:
    return ["matrix", "--sources", str(ROOT / "sample_data" / "sources"), "--source-glob", f"web={url}",
            "--targets", str(ROOT / "sample_data" / "targets"), "--measures", "tvc", "--sample-tokens", "2000",
            "--bootstrap", "0", "--jobs", "1", "--out", str(tmp_path / "m.csv"), *extra]


@pytest.mark.parametrize("url", [
    "s3://AKIAXQZEXAMPLE:rtSlash/Secret9@bucket/sources/*.txt",
    "http://user:pa/ss@w0rdQZ@{host}/news.txt",
    "http://AKIAXQZEXAMPLE@{host}/news.txt",
])
def test_credentials_in_a_url_are_refused_without_naming_them(tmp_path, server, url):
    code, streams = _run(tmp_path, _matrix(tmp_path, url.format(host=server[7:])))
    assert code == 2 and "not in the URL" in streams
    assert _leaks(tmp_path, streams) == []


def test_secret_query_values_appear_nowhere(tmp_path, server):
    code, streams = _run(tmp_path, _matrix(tmp_path, f"{server}/news.txt?{QUERY}"))
    assert code == 0 and (tmp_path / "m.csv").is_file()
    assert _leaks(tmp_path, streams) == []
    code, streams = _run(tmp_path, _matrix(tmp_path, f"{server}/missing.txt?{QUERY}"))
    assert code == 2 and "missing.txt?pass=***" in streams
    assert _leaks(tmp_path, streams) == []


def test_select_on_a_url_with_secrets_prints_none(tmp_path, server):
    args = ["select", "--pool", f"{server}/news.txt?{QUERY}", "--target",
            str(ROOT / "sample_data" / "targets" / "news_ner.conll"), "--method", "ppl", "--top", "5",
            "--out", str(tmp_path / "kept.txt"), "--scores", str(tmp_path / "scores.csv")]
    code, streams = _run(tmp_path, args)
    assert code == 0, streams
    assert len((tmp_path / "kept.txt").read_text().splitlines()) == 5
    assert _leaks(tmp_path, streams) == []


@pytest.mark.parametrize("text,shown", [
    ("s3://K:sec/ret@bucket/a.txt failed", "s3://bucket/a.txt failed"),
    ("see 'http://u:p@ss@host/x?pass=1&part=2#access_token=3'", "see 'http://host/x?pass=***&part=2#access_token=***'"),
    ("hf://datasets/org/set@main/data.parquet", "hf://datasets/org/set@main/data.parquet"),  # a revision stays
    ("no url here: a@b:c", "no url here: a@b:c"),
])
def test_redact_by_hand(text, shown):
    assert redact(text) == shown
