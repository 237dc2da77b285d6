"""The lab's web server: viser on one address, never shared through viser's public relay."""

from __future__ import annotations

import socket

from arm_ik.lab.checks import host_reason

VISER_MISSING = ('{name} is not installed: pip install viser==1.1.1 yourdfpy==0.0.60 (pinned '
                 'in requirements/dev.txt)')


class ServerError(RuntimeError):
    """The web server cannot start (the message says why)."""


def check_listen(host: str) -> None:
    """Refuse to start when ``host`` is no address or cannot be bound (viser would retry
    ports forever).

    Raises:
        ServerError: not an IP address or localhost, or not one of this machine's.
    """
    reason = host_reason(host)
    if reason:
        raise ServerError(f'parameter host: {reason}')
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, 0))
        except OSError as error:
            raise ServerError(f'cannot listen on host {host}: {error}') from None


def start_server(host: str, port: int, label: str):
    """A viser server on ``host``:``port`` (0: any free port) with the lab's theme.

    Raises:
        ServerError: viser or yourdfpy is not installed.
    """
    try:
        import viser
        import yourdfpy  # noqa: F401  (ViserUrdf draws the URDF through it)
    except ImportError as error:
        raise ServerError(VISER_MISSING.format(name=error.name)) from None
    server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
    # The share button would tunnel this page through viser's public relay: never.
    server.request_share_url = _share_refused
    server.gui.configure_theme(control_width='large', show_share_button=False,
                               brand_color=(38, 89, 191))
    return server


def _share_refused(*_args: object, **_kwargs: object) -> None:
    return None
