"""The runner's log lines and summary, and what the MCAP file holds (read back from it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arm_bringup.driver import StepResult


@dataclass
class Summary:
    """What the run did, printed at the end."""

    cycles: int = 0
    steps_ok: int = 0
    steps_failed: int = 0
    failures: list[str] = field(default_factory=list)
    torn_down: bool = True       # the driver's node and DDS participant were destroyed

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
    """Messages per channel topic in an MCAP file, channels without messages included (as
    0), from its summary section (the file is complete) or, without one (a recorder killed
    before it finished), by reading every record."""
    from mcap.reader import make_reader
    with open(path, 'rb') as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        if summary is not None and summary.statistics is not None:
            counts = {channel.topic: 0 for channel in summary.channels.values()}
            for channel, count in summary.statistics.channel_message_counts.items():
                counts[summary.channels[channel].topic] = count
            return counts
    counts: dict[str, int] = {}
    with open(path, 'rb') as stream:
        for _, channel, _ in make_reader(stream).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    return counts


def decoded_messages(path: str | Path, topics: list[str] | None = None
                     ) -> Iterator[tuple[str, float, Any]]:
    """(topic, log time in s, the decoded ROS message) of every message in an MCAP file.

    mcap-ros2-support decodes the ordinary types; its parser refuses the underscore of the
    implicit action types that rosidl generates (``MoveToTarget_FeedbackMessage`` on
    ``.../_action/feedback``), so those are deserialized with rclpy and the installed
    interface instead. Needs the workspace sourced (for the action types).
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    factory = DecoderFactory()
    decoders: dict[int, Callable[[bytes], Any]] = {}
    with open(path, 'rb') as stream:
        for schema, channel, message in make_reader(stream).iter_messages(topics=topics):
            decode = decoders.get(channel.id)
            if decode is None:
                decode = _decoder(factory, schema, channel)
                decoders[channel.id] = decode
            yield channel.topic, message.log_time / 1e9, decode(message.data)


def _decoder(factory: Any, schema: Any, channel: Any) -> Callable[[bytes], Any]:
    parts = schema.name.split('/')
    if len(parts) == 3 and parts[1] == 'action' and '_' in parts[2]:
        import importlib

        from rclpy.serialization import deserialize_message
        action, _, part = parts[2].partition('_')
        message_type = getattr(getattr(importlib.import_module(f'{parts[0]}.action'),
                                       action).Impl, part)
        return lambda data: deserialize_message(data, message_type)
    return factory.decoder_for(channel.message_encoding, schema)


def print_recording(path: Path, namespace: str) -> None:
    """Print what the MCAP holds, per channel, with the topic names as recorded."""
    try:
        counts = mcap_counts(path)
    except Exception as error:  # noqa: BLE001 - a broken file is reported, not raised
        print(f'recording: {path} cannot be read: {type(error).__name__}: {error}', flush=True)
        return
    total = sum(counts.values())
    empty = sum(1 for count in counts.values() if count == 0)
    print(f'recording: {path} ({path.stat().st_size / 1e6:.1f} MB), {total} messages on '
          f'{len(counts)} channels' + (f' ({empty} without messages)' if empty else '')
          + ' (open it in Foxglove or Lichtblick; read it in Python with '
          'arm_bringup.report.decoded_messages):', flush=True)
    for topic in sorted(counts):
        print(f'  {counts[topic]:7d}  {topic}', flush=True)
