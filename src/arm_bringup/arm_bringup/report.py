"""The runner's log lines and summary, and what the MCAP file holds (read back from it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arm_bringup.driver import StepResult


@dataclass
class Summary:
    """What the run did, printed at the end."""

    cycles: int = 0
    steps_ok: int = 0
    steps_failed: int = 0
    failures: list[str] = field(default_factory=list)

    def record(self, result: StepResult, indent: str = '    ') -> None:
        """Count one step and print it."""
        if result.ok:
            self.steps_ok += 1
        else:
            self.steps_failed += 1
            self.failures.append(result.text)
        print(f'{indent}[{"ok" if result.ok else "FAILED"}] {result.text}', flush=True)

    def line(self) -> str:
        return (f'summary: {self.cycles} cycle(s), {self.steps_ok} step(s) ok, '
                f'{self.steps_failed} failed; all node processes stopped')


def mcap_counts(path: Path) -> dict[str, int]:
    """Messages per topic in an MCAP file, from its summary section (the file is complete)
    or, without one (a recorder killed before it finished), by reading every record."""
    from mcap.reader import make_reader
    with open(path, 'rb') as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        if summary is not None and summary.statistics is not None:
            return {summary.channels[channel].topic: count for channel, count
                    in summary.statistics.channel_message_counts.items()}
    counts: dict[str, int] = {}
    with open(path, 'rb') as stream:
        for _, channel, _ in make_reader(stream).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    return counts


def print_recording(path: Path, namespace: str) -> None:
    """Print what the MCAP holds, per topic (names shortened by the arm's namespace)."""
    try:
        counts = mcap_counts(path)
    except Exception as error:  # noqa: BLE001 - a broken file is reported, not raised
        print(f'recording: {path} cannot be read: {type(error).__name__}: {error}', flush=True)
        return
    total = sum(counts.values())
    print(f'recording: {path} ({path.stat().st_size / 1e6:.1f} MB), {total} messages on '
          f'{len(counts)} topics (open it in Foxglove or Lichtblick):', flush=True)
    for topic in sorted(counts):
        short = topic[len(namespace):] if topic.startswith(namespace) else topic
        print(f'  {counts[topic]:7d}  {short}', flush=True)
