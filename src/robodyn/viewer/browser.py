"""Headless Chromium driven through the DevTools protocol (a websocket): ``robodyn animate --render 3d`` takes its
frames from the 3-D page with it, and the test suite checks the pages in a real browser.

:class:`Chromium` starts ``chromium --headless`` with networking blocked twice over — a proxy that does not exist
and DevTools' ``Network.emulateNetworkConditions(offline=True)`` — and records, for the page it opens and every
frame inside it (an ``<iframe srcdoc>`` runs in a process of its own: it is attached to as it starts, before any
of its scripts runs), every request (``Network.requestWillBeSent``: the request log), every console error and
uncaught exception, and can evaluate JavaScript and take screenshots. WebGL runs on SwiftShader (software), so no
GPU is needed. The pages it is given are robodyn's own (no request can leave them), which is why it runs without
Chromium's process sandbox, as a container's root user must.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import shutil
import subprocess
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError

__all__ = ["BROWSERS", "Chromium", "available", "browser_path", "require_browser"]

#: The executables tried, in order, for a Chromium.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_OFFLINE: Final = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
FLAGS: Final = ["--headless", "--no-sandbox", "--disable-gpu-sandbox", "--use-angle=swiftshader",
         "--enable-unsafe-swiftshader",
         "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--hide-scrollbars", "--mute-audio"]


def browser_path() -> str | None:
    """The first of :data:`BROWSERS` on the PATH, or None."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


def available() -> bool:
    """Whether a Chromium and the websocket client are installed."""
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        return False
    return browser_path() is not None


def require_browser(what: str) -> None:
    """InputError in one line naming the fix when :func:`available` is False (``what`` needs the browser)."""
    if browser_path() is None:
        raise InputError(f"{what} needs Chromium to draw the 3-D view: install it (apt-get install chromium, or "
                         f"Google Chrome) so that one of {', '.join(BROWSERS)} is on the PATH")
    if find_spec("websockets") is None:
        raise InputError(f"{what} drives Chromium through the websockets package: pip install 'robodyn[viewer]'")


class Chromium:
    """One headless Chromium with one page (a context manager)."""

    def __init__(self, width: int = 800, height: int = 600, timeout: float = 60.0):
        from websockets.sync.client import connect

        self.folder = tempfile.mkdtemp(prefix="robodyn-chromium-")
        self.timeout = timeout
        executable = browser_path()
        if executable is None:
            raise InputError(f"no Chromium found: install one of {', '.join(BROWSERS)}")
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--window-size={width},{height}", f"--user-data-dir={self.folder}",
             "--remote-debugging-port=0", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = self._endpoint()
        self.stack = contextlib.ExitStack()
        self.socket = self.stack.enter_context(connect(url, max_size=None, open_timeout=timeout))
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.frames: list[str] = []  # the sessions of the frames running in processes of their own
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Network.emulateNetworkConditions", _OFFLINE, session=True)
        self.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
                  session=True)
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=True)

    def _endpoint(self) -> str:
        assert self.process.stderr is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1)
            if not line and self.process.poll() is not None:
                break
        raise RuntimeError("chromium did not start its DevTools endpoint")

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.stack.close()
        finally:
            self.process.kill()
            self.process.wait(timeout=30)
            shutil.rmtree(self.folder, ignore_errors=True)

    def _send(self, method: str, params: dict[str, Any] | None, session: bool | str) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session if session is True else session
        self.socket.send(json.dumps(message))
        return self.next_id

    def call(self, method: str, params: dict[str, Any] | None = None, *,
             session: bool | str = False) -> dict[str, Any]:
        """Send one command (to the browser, the page's session with ``session=True``, or a frame's session id)
        and return its result (events that arrive meanwhile are recorded)."""
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
                if reply["method"] == "Target.attachedToTarget" and \
                        reply["params"]["targetInfo"].get("type") == "iframe":
                    self._attached(reply["params"]["sessionId"])

    def _attached(self, frame: str) -> None:
        """A frame in a process of its own started, paused: record what it does, offline, then let it run (the
        replies are not waited for: the commands run in order on its session)."""
        self.frames.append(frame)
        for domain in ("Runtime", "Log", "Network"):
            self._send(f"{domain}.enable", None, frame)
        self._send("Network.emulateNetworkConditions", _OFFLINE, frame)
        self._send("Runtime.runIfWaitingForDebugger", None, frame)

    def open(self, page: Path | str) -> None:
        """Navigate to a file (or URL) and wait for its load event."""
        url = page.as_uri() if isinstance(page, Path) else page
        self.events.clear()
        self.frames.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait(lambda: any(e["method"] == "Page.loadEventFired" for e in self.events), "the load event")

    def wait(self, condition: Any, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {self.timeout} s for {what}")
            self.evaluate("0")  # pumps events
            time.sleep(0.05)

    def evaluate(self, expression: str, frame: str | None = None) -> Any:
        """The value of a JavaScript expression in the page, or in the frame of session ``frame`` (one of
        :attr:`frames`) (promises awaited); a thrown error raises."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=frame or True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, frame: str | None = None) -> Any:
        """Wait until ``expression`` (in the page, or the frame ``frame``) is truthy; its value."""
        values: list[Any] = []

        def done() -> bool:
            values.append(self.evaluate(expression, frame))
            return bool(values[-1])
        self.wait(done, expression)
        return values[-1]

    def screenshot(self) -> np.ndarray:
        """The page as (height, width, 3) uint8 RGB."""
        from PIL import Image

        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))

    def requests(self) -> list[str]:
        """Every URL the page asked for (the request log)."""
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found
