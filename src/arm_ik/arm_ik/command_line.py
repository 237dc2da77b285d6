"""What the project's command-line tools share: a usage error is bad input and exits 2."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_BAD_INPUT = 2


class UsageErrorParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors exit with EXIT_BAD_INPUT, like any other bad input."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f'{self.prog}: {message}\n')
