"""Connecting to a Dask scheduler within deadlines and in bounded memory, for the ``dask``
backend (:class:`textcw.scale.backends.DaskBackend`).

Dask's own connect bounds reaching the scheduler but not reading its handshake, and allocates
whatever sizes the peer's first bytes announce (measured below). So before Dask is let near an
address, textcw reads the peer's first message itself (:func:`check_scheduler`), then runs Dask's
connect and handshake under a deadline of its own (:func:`check_handshake`), and makes the
``Client`` on a thread it gives up on after a deadline (:func:`connect_client`). Every failure is a
:class:`~textcw.errors.ClusterError` that says what to check, or a
:class:`~textcw.errors.ParameterError` for an address textcw cannot use.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

from textcw.errors import ClusterError, ParameterError

__all__ = ["HANDSHAKE_LIMIT", "MAX_HANDSHAKE_FRAMES", "check_first_message", "check_handshake", "check_scheduler",
           "connect_client"]


# Why textcw reads the peer's first message itself rather than leaving it all to Dask's public
# connect (``distributed.Client(address, timeout=...)``, ``distributed.comm.connect``): measured
# with real sockets on distributed 2026.8, and the same code in 2024.8, the oldest textcw admits:
# - ``timeout`` bounds the TCP connect (a closed port fails after it), but the handshake is then
#   read without any limit: a peer that accepts and never speaks holds ``Client(...)`` forever.
#   textcw owns that deadline: an asyncio one around ``distributed.comm.connect``
#   (check_handshake), then the thread it gives up on around ``Client`` (connect_client).
# - Dask's TCP comm allocates, before reading, the sizes the peer's first bytes announce (the
#   message's 8-byte length, then the frame lengths of a frame table that ends the message), and
#   no option limits them. A web server's reply announces exabytes (an immediate MemoryError),
#   but a peer that announces a gigabyte and then streams bytes makes it allocate and fill the
#   gigabyte, and a 16-byte message whose frame table announces 8 GiB has it fill memory until
#   the peer stops. No deadline bounds memory; so the first message must announce at most
#   HANDSHAKE_LIMIT bytes and a frame table that accounts for exactly those bytes, or Dask is not
#   let near the peer. The frames' content (a dict with Dask's keys) is Dask's to check. The
#   check has a connection of its own (Dask's connect makes another): it tells a wrong address
#   from a scheduler, not a peer that changes its answer between connections, which only a
#   hostile one would, and a Dask client trusts its scheduler with far more (pickled results).
# A Dask handshake is a small dict (compression, Python and pickle versions): a few hundred bytes.
HANDSHAKE_LIMIT = 64 * 1024
MAX_HANDSHAKE_FRAMES = 16


def check_scheduler(scheduler: str, timeout: float) -> str:
    """``tcp://host:port`` for ``scheduler``, after checking, within ``timeout`` seconds, that the
    peer there sends a first message Dask can read in bounded memory (:func:`check_first_message`).

    A closed port fails at once, a silent peer after ``timeout``, and a peer whose first bytes
    announce more than a handshake's size as soon as they arrive. Whether the message is a Dask
    handshake is then Dask's own connect's business (:func:`check_handshake`).
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        scheme, location = parse_address(address)
    except (ValueError, TypeError) as exc:
        raise ParameterError(
            f"scheduler address {scheduler!r} is not HOST:PORT or tcp://HOST:PORT ({exc})"
        ) from None
    if scheme != "tcp":
        # ucx://, inproc:// (this process only) and tls:// (certificates textcw does not take)
        raise ParameterError(
            f"scheduler address {scheduler!r} uses {scheme}://, which textcw does not connect "
            "over; give the scheduler's TCP address, HOST:PORT or tcp://HOST:PORT"
        )
    try:
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise ParameterError(
            f"scheduler address {scheduler!r} is not HOST:PORT or tcp://HOST:PORT ({exc})"
        ) from None
    if port is None:
        raise ParameterError(f"scheduler address {scheduler!r} has no port; write HOST:PORT, e.g. 127.0.0.1:8786")
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise ParameterError(f"connect_timeout={timeout!r} is invalid; give a number of seconds > 0")
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            check_first_message(sock, scheduler, deadline)
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {scheduler} accepted the connection but did not answer within "
            f"{timeout:g} s; check that the address is a Dask scheduler's (not its dashboard's) "
            "and that it is not overloaded"
        ) from None
    except OSError as exc:
        raise ClusterError(_unreachable(scheduler, exc)) from None
    return address


def check_first_message(sock: socket.socket, scheduler: str, deadline: float) -> None:
    """Read the first message of the peer (an 8-byte length, then that many bytes, which start
    with Dask's frame table: a frame count and the frames' lengths) and refuse one that is larger
    than a handshake or whose frame table does not account for exactly its bytes."""
    (size,) = struct.unpack("<Q", _recv_exactly(sock, 8, deadline))
    if not 16 <= size <= HANDSHAKE_LIMIT:
        raise ClusterError(_not_dask(scheduler, f"its first message announces {size} bytes"))
    payload = _recv_exactly(sock, size, deadline)
    (n_frames,) = struct.unpack_from("<Q", payload)
    table = 8 * (n_frames + 1)
    if (not 1 <= n_frames <= MAX_HANDSHAKE_FRAMES or size < table
            or table + sum(struct.unpack_from(f"<{n_frames}Q", payload, 8)) != size):
        raise ClusterError(_not_dask(scheduler, "its first message is not Dask's framing"))


def _recv_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionResetError("the peer closed the connection during the handshake")
        buf += chunk
    return bytes(buf)


def _not_dask(scheduler: str, why: str) -> str:
    return (
        f"the peer at {scheduler} does not speak Dask's protocol ({why}); check the address "
        "and port of the Dask scheduler (default 8786)"
    )


def check_handshake(scheduler: str, address: str, timeout: float) -> None:
    """Dask's own connect and handshake (``distributed.comm.connect``: Dask reads and checks the
    scheduler's handshake) within ``timeout`` seconds, a deadline textcw owns, since Dask's
    handshake read has none: ``asyncio.wait_for`` cancels it, which closes the connection. It runs
    in an event loop of its own on a thread of its own, so that it works where the caller's
    thread already runs one (a notebook). A message that is not a Dask handshake fails here (Dask
    raises ``ValueError`` or ``TypeError`` decoding it), before any ``Client`` exists.
    """
    import asyncio

    from distributed.comm import connect

    async def handshake():
        comm = await connect(address, timeout=timeout)
        await comm.close()

    box: dict = {}

    def run():
        try:
            asyncio.run(asyncio.wait_for(handshake(), timeout))
        except Exception as exc:  # noqa: BLE001 - reported below, by kind
            box["error"] = exc

    thread = threading.Thread(target=run, name="textcw-dask-handshake", daemon=True)
    thread.start()
    thread.join(2 * timeout)  # wait_for ends it after timeout; the margin is for a loaded machine
    error = box.get("error")
    if thread.is_alive() or isinstance(error, TimeoutError):
        raise ClusterError(
            f"the Dask scheduler at {scheduler} accepted the connection but did not answer within "
            f"{timeout:g} s; check that the address is a Dask scheduler's (not its dashboard's) "
            "and that it is not overloaded"
        )
    if isinstance(error, OSError):
        raise ClusterError(_unreachable(scheduler, error))
    if error is not None:
        reason = (str(error).splitlines() or [""])[0].strip()
        raise ClusterError(_not_dask(
            scheduler, f"Dask could not read its handshake: {type(error).__name__}"
            + (f": {reason}" if reason else "")
        ) + ", and that it runs the same dask and distributed versions as this machine")


def connect_client(scheduler: str, address: str, timeout: float):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, connected within a deadline.

    Dask bounds every step of connecting by ``timeout`` except reading the scheduler's
    handshake; a peer that passed :func:`check_scheduler` but stalls now would block forever,
    so the connection is made on a daemon thread that is given up on after ``2 * timeout``
    (connect, then the scheduler's first replies).
    """
    from dask.distributed import Client

    box: dict = {}

    def connect():
        try:
            box["client"] = Client(address, timeout=timeout, set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - reported below, by kind
            box["error"] = exc

    thread = threading.Thread(target=connect, name="textcw-dask-connect", daemon=True)
    thread.start()
    thread.join(2 * timeout)
    if "client" in box:
        return box["client"]
    error = box.get("error")
    if isinstance(error, OSError) and not isinstance(error, TimeoutError):
        raise ClusterError(_unreachable(scheduler, error))
    if error is not None and not isinstance(error, TimeoutError):
        raise ClusterError(
            f"the Dask scheduler at {scheduler} refused the client ({type(error).__name__}: "
            f"{(str(error).splitlines() or [''])[0].strip()}); check that it runs the same dask "
            "and distributed versions as this machine"
        )
    raise ClusterError(
        f"the Dask scheduler at {scheduler} did not complete the connection within {2 * timeout:g} s; "
        "check that it is not overloaded"
    )


def _unreachable(scheduler: str, exc: Exception) -> str:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return (
        f"cannot reach the Dask scheduler at {scheduler} ({reason}); check the address and that "
        "`dask scheduler` runs there, or drop --scheduler to start a local cluster"
    )
