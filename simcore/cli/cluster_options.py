"""The command line's options for running on a Dask cluster (the cluster itself:
:mod:`simcore.distributed.cluster`)."""

from __future__ import annotations

import argparse
import os

from ..distributed.cluster import MAX_LOCAL_WORKERS, SCHEDULER_ENV
from .arguments import whole_number

_workers = whole_number(1, MAX_LOCAL_WORKERS, allow_float_text=False)


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """``--scheduler`` and ``--local-cluster`` (one or the other) on a command."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help=f"run on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (default ${SCHEDULER_ENV})")
    group.add_argument("--local-cluster", type=_workers, default=None, metavar="N",
                       help="start a local Dask cluster of N worker processes and run on it")


def scheduler_address(args: argparse.Namespace) -> str | None:
    """The scheduler to use: ``--scheduler``, else ``$SIMCORE_SCHEDULER`` unless ``--local-cluster``."""
    if getattr(args, "local_cluster", None):
        return None
    return getattr(args, "scheduler", None) or os.environ.get(SCHEDULER_ENV) or None
