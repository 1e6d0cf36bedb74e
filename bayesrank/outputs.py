"""Files a command writes: checked before any work starts, and written whole or not at all.

* :func:`check_file` / :func:`check_folder` (run by the command line on every output flag before the
  data are read): a folder where a file is expected, a file where a folder is expected, a parent
  that is a file, a place that cannot be written (permissions, read-only file system) are each an
  :class:`~bayesrank.errors.OutputError` — one line, exit code 2 — instead of a traceback after
  all the work is done.
* :func:`write_text`, :func:`write_bytes`, :func:`save_figure` write to a temporary file beside the
  target and rename it into place, so the requested path holds either the complete output or
  nothing; an ``OSError`` on the way (a full disk) is one :class:`OutputError` line naming the path.
* Interruption (Ctrl-C): :func:`install_interrupt_handler` records that SIGINT arrived before
  raising ``KeyboardInterrupt`` as usual. A library that catches the interrupt and carries on
  (PyMC returns the draws it has when sampling is interrupted) cannot make the command write a
  truncated result: every writer here refuses once an interrupt was seen, and the command exits
  with code 130.

Standard library only: every subcommand's start-up imports this module.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from pathlib import Path

from bayesrank.errors import OutputError

_INTERRUPTED = False
_WRITTEN: list[str] = []  # files written by this process (named when an interrupt stops the command)


class Interrupted(KeyboardInterrupt):
    """Raised by a writer when an interrupt arrived earlier (the output would be incomplete)."""


def _on_sigint(signum, frame):  # noqa: ARG001 (signal handler signature)
    global _INTERRUPTED
    _INTERRUPTED = True
    raise KeyboardInterrupt


def install_interrupt_handler():
    """Record SIGINT (then raise ``KeyboardInterrupt`` as Python's default handler does); returns
    the previous handler for :func:`restore_interrupt_handler`."""
    global _INTERRUPTED
    _INTERRUPTED = False
    _WRITTEN.clear()
    try:
        return signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not in the main thread (embedded use): keep the default handler
        return None


def restore_interrupt_handler(previous) -> None:
    if previous is not None:
        try:
            signal.signal(signal.SIGINT, previous)
        except ValueError:
            pass


def interrupted() -> bool:
    """True once SIGINT arrived in this process (after :func:`install_interrupt_handler`)."""
    return _INTERRUPTED


def stop_if_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` when SIGINT arrived earlier: called right after a sampler that
    catches the interrupt and returns the draws it has (PyMC), so the command stops there instead of
    carrying on with a shorter chain than asked for."""
    if _INTERRUPTED:
        raise KeyboardInterrupt


def written() -> list[str]:
    """Paths written so far (by the writers below)."""
    return list(_WRITTEN)


def _refuse_if_interrupted(path) -> None:
    if _INTERRUPTED:
        raise Interrupted(f"interrupted: {path} not written")


# ----------------------------------------------------------------------------- checks before work
def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _probe_writable(folder: Path) -> str | None:
    """None when a file can be created in ``folder``, else the reason (the OS's message)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".bayesrank-probe-", dir=folder)
    except OSError as err:
        return err.strerror or str(err)
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return None


def check_file(path, flag: str) -> Path:
    """``path`` can be written as a file (it may not exist yet; missing folders are created on writing)."""
    p = Path(path).expanduser()
    where = f"{flag} {path}"
    if str(path) == "" or p.name in ("", ".", ".."):
        raise OutputError(f"{where}: expected a file path")
    if p.is_dir():
        raise OutputError(f"{where}: is a folder; expected a file path (e.g. {Path(path) / 'out.json'})")
    if p.exists():
        mode = p.stat().st_mode
        if not stat.S_ISREG(mode):
            return p  # a device or pipe (e.g. /dev/stdout): written directly, errors are caught then
        if not os.access(p, os.W_OK):
            raise OutputError(f"{where}: the file exists and is not writable")
    _check_writable_under(p.absolute().parent, where)
    return p


def _check_writable_under(folder: Path, where: str) -> None:
    """The nearest existing folder at or above ``folder`` is a folder in which a file can be created."""
    anchor = _nearest_existing(folder)
    if not anchor.is_dir():
        raise OutputError(f"{where}: {anchor} is a file, not a folder")
    reason = _probe_writable(anchor)
    if reason:
        raise OutputError(f"{where}: cannot write in {anchor} ({reason})")


def check_folder(path, flag: str) -> Path:
    """``path`` can hold the command's files (an existing writable folder, or one that can be created)."""
    p = Path(path).expanduser()
    where = f"{flag} {path}"
    if p.exists() and not p.is_dir():
        raise OutputError(f"{where}: is a file; expected a folder")
    _check_writable_under(p.absolute(), where)
    return p


def check_outputs(targets: dict) -> None:
    """``{flag: (path, "file" | "folder")}`` checked in one go; two flags naming one file is an error."""
    seen = {}
    for flag, (path, kind) in targets.items():
        if path is None:
            continue
        (check_folder if kind == "folder" else check_file)(path, flag)
        key = os.path.abspath(os.path.expanduser(str(path)))
        if kind == "file" and key in seen:
            raise OutputError(f"{seen[key]} and {flag} both name {path}; give each output its own path")
        seen[key] = flag


# ----------------------------------------------------------------------------- whole-or-nothing writes
def _write(path, write_to) -> Path:
    """Call ``write_to(target)`` on a temporary file beside ``path`` and rename it into place."""
    p = Path(path).expanduser()
    _refuse_if_interrupted(p)
    try:
        if p.exists() and not stat.S_ISREG(p.stat().st_mode):  # device / pipe: no rename possible
            write_to(p)
            _WRITTEN.append(str(path))
            return p
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part" + p.suffix, dir=p.parent)
        os.close(fd)
        try:
            write_to(Path(tmp))
            _refuse_if_interrupted(p)
            os.replace(tmp, p)
            _WRITTEN.append(str(path))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except KeyboardInterrupt:
        raise
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
    return p


def write_text(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` whole or not at all (creating missing folders)."""
    data = text.encode(encoding)
    return _write(path, lambda target: _write_all(target, data))


def write_bytes(path, data: bytes) -> Path:
    return _write(path, lambda target: _write_all(target, data))


def _write_all(target: Path, data: bytes) -> None:
    with open(target, "wb") as f:
        f.write(data)
        f.flush()


def save_figure(fig, path, **kwargs) -> Path:
    """``fig.savefig`` whole or not at all (the format follows the suffix of ``path``)."""
    fmt = kwargs.pop("format", None) or (Path(path).suffix.lstrip(".") or "png")
    return _write(path, lambda target: fig.savefig(target, format=fmt, **kwargs))
