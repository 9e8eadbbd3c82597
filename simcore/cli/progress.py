"""The command line's progress bar, shared by every subcommand (kept apart so subcommands need not import the CLI)."""

from __future__ import annotations

import sys

from ..utils.redact import redact
from ..utils.terminal import raw_stream, terminal_text


class ProgressBar:
    """A tqdm progress bar driven by (message, fraction) callbacks."""

    def __init__(self, enabled: bool) -> None:
        from tqdm import tqdm

        tqdm.monitor_interval = 0  # no monitor thread: the process stays single-threaded (see matrix)
        self.stream = raw_stream(sys.stderr)  # tqdm redraws with carriage returns: its own text is escaped here
        self.bar = tqdm(total=1000, file=self.stream, disable=not enabled, dynamic_ncols=True,
                        bar_format="{l_bar}{bar}| {elapsed}<{remaining}")
        self.at = 0

    def __call__(self, message: str, fraction: float) -> None:
        self.bar.set_description_str(terminal_text(redact(message))[:60], refresh=False)
        target = int(min(1.0, max(0.0, fraction)) * 1000)
        if target > self.at:
            self.bar.update(target - self.at)
            self.at = target
        else:
            self.bar.refresh()

    def write(self, line: str) -> None:
        """One line above the bar, escaped (names in it cannot move the cursor)."""
        self.bar.write(terminal_text(redact(line)), file=self.stream)

    def close(self) -> None:
        self.bar.close()
