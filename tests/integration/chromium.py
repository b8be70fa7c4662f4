"""Headless Chromium driven over the DevTools protocol, with a websocket client from the stdlib.

Enough of the protocol to open a page, set the window's width, run an expression in the page
and read what the console said: what the HTML report's browser tests and its benchmark need.
The browser runs with a fresh profile, no network services and no sandbox (CI containers).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["Browser", "BrowserError", "find_browser"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


class BrowserError(Exception):
    """The browser did not start, or did not answer as the protocol says."""


def find_browser() -> str | None:
    """/usr/bin/chromium, else a Chromium or Chrome on PATH; None without one."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


class _WebSocket:
    """A client websocket (RFC 6455): text frames out, masked; text frames in, reassembled."""

    def __init__(self, url: str, timeout: float) -> None:
        assert url.startswith("ws://"), url
        host_port, _, path = url[5:].partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode("ascii")
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode("ascii"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise BrowserError("the browser closed the websocket during the handshake")
            head += chunk
        status, _, self.buffer = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            raise BrowserError(f"websocket handshake refused: {status[:200]!r}")

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buffer)))
            if not chunk:
                raise BrowserError("the browser closed the websocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text: str) -> None:
        payload = text.encode("utf-8")
        header = bytearray([0x81])  # FIN, text
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        header += mask
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes(header) + masked)

    def receive(self) -> str:
        parts: list[bytes] = []
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else b""
            data = self._read(length)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            if opcode == 0x8:
                raise BrowserError("the browser closed the websocket")
            if opcode == 0x9:  # ping
                self.sock.sendall(bytes([0x8A, 0x80 | len(data)]) + b"\0\0\0\0" + data)
                continue
            if opcode in (0x1, 0x2, 0x0):
                parts.append(data)
                if first & 0x80:
                    return b"".join(parts).decode("utf-8")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol.

    Use as a context manager; the browser process and its profile go away on exit.
    """

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900) -> None:
        self.executable = executable
        self.width, self.height = width, height
        self.timeout = 120.0
        self.console: list[str] = []
        """Console messages, uncaught exceptions and CSP reports, as ``level: text``."""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        self._profile = tempfile.TemporaryDirectory(prefix="ragaliq-chromium-")
        profile = Path(self._profile.name)
        self.process = subprocess.Popen(
            [
                self.executable,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(profile)},
            start_new_session=True,  # its helpers too end with it (see _stop)
        )
        try:
            port = self._port(profile / "DevToolsActivePort")
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy
            with direct.open(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:
                targets = json.load(reply)
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = _WebSocket(page["webSocketDebuggerUrl"], timeout=self.timeout)
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable")
            self.resize(self.width, self.height)
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop()

    def _port(self, path: Path) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserError(f"the browser exited with {self.process.returncode}")
            with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
                return int(path.read_text().splitlines()[0])
            time.sleep(0.05)
        raise BrowserError("the browser did not open its DevTools port within 60 s")

    def _stop(self) -> None:
        if hasattr(self, "ws"):
            self.ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # The browser's helpers (crash handler, zygote) can outlive it and still write to its
        # profile: end its whole session before the profile is removed.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for _ in range(50):
            try:
                self._profile.cleanup()
                return
            except OSError:  # a helper was still writing as it ended; the next try removes it
                time.sleep(0.1)
        self._profile.cleanup()

    # --- the protocol ------------------------------------------------------------------------

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call a protocol method and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        ident = self._next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append(f"{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.console.append(f"exception: {text}")
        elif method == "Log.entryAdded":
            entry = params["entry"]
            self.console.append(f"{entry['level']}: {entry.get('source')}: {entry['text']}")
        self._events.append(message)

    def events(self, method: str) -> Iterator[dict[str, Any]]:
        """The events of one kind received so far."""
        return (e["params"] for e in self._events if e["method"] == method)

    def evaluate(self, expression: str, *, timeout: float | None = None) -> Any:
        """The value of a JavaScript expression in the page (promises are awaited)."""
        params: dict[str, Any] = {
            "expression": expression,
            "returnByValue": True,
            "awaitPromise": True,
        }
        if timeout is not None:
            params["timeout"] = int(timeout * 1000)
        result = self.send("Runtime.evaluate", **params)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression[:80]!r} threw: {text}")
        return result["result"].get("value")

    def resize(self, width: int, height: int) -> None:
        """Lay the page out as in a window of this size."""
        self.width, self.height = width, height
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def open(self, url: str, *, ready: str = "true", timeout: float = 120.0) -> float:
        """Navigate and wait until ``document.body.dataset.ready`` is ``ready``.

        Returns:
            Seconds from the navigation to the ready mark, as the page's clock measured it
            (``performance.now()`` when the mark was seen: load, parse, script and first render).
        """
        self._events.clear()
        self.console.clear()
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        check = (
            "new Promise(function (done) {"
            "  function look() {"
            f"    if (document.body && document.body.dataset.ready === {json.dumps(ready)}) {{"
            "      requestAnimationFrame(function () { done(performance.now()); });"
            "    } else { setTimeout(look, 5); }"
            "  }"
            "  look();"
            "})"
        )
        while time.monotonic() < deadline:
            with contextlib.suppress(BrowserError):  # the old document may still be there
                if self.evaluate("location.href") == url:
                    value = self.evaluate(check, timeout=deadline - time.monotonic())
                    return float(value) / 1000
            time.sleep(0.02)
        raise BrowserError(f"{url} was not ready within {timeout:.0f} s")

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        """A PNG of the viewport (or the whole page)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
