"""A small driver for headless chromium over the Chrome DevTools Protocol, through
``--remote-debugging-pipe`` (commands on the child's fd 3, replies on its fd 4, each a JSON
message ended by a NUL byte), so no extra package and no open port are needed.

Used by the browser tests: set the viewport, open a URL, evaluate JavaScript in the page,
take a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from pathlib import Path

from rulegen.tools import process


class Browser:
    """One headless chromium with one page (a tab).

    ``exe``: the chromium binary; ``profile``: an empty folder for its profile. Use as a
    context manager; every method raises RuntimeError on a protocol error or a timeout."""

    def __init__(self, exe: str, profile: Path):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()

        def fds():
            # the pipes may already sit at 3 or 4, where dup2 is a no-op and leaves them
            # close-on-exec: make both inheritable explicitly
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=process.environment(profile),  # no secrets of the test run reach the browser
            preexec_fn=fds, close_fds=False)  # fds 3 and 4 are made by fds() in the child
        os.close(to_child_r)
        os.close(from_child_w)
        self._w = os.fdopen(to_child_w, "wb", buffering=0)
        self._r = os.fdopen(from_child_r, "rb", buffering=0)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self._w.close()
        except OSError:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._r.close()

    def _read(self, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise RuntimeError("chromium did not answer in time")
            chunk = self._r.read(65536)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self._w.write(json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def viewport(self, width: int, height: int) -> None:
        """Emulate a screen of ``width`` x ``height`` CSS pixels (a phone below 600 px)."""
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=width < 600)

    def open(self, url: str, settle: float = 0.6) -> None:
        """Navigate to ``url`` and wait for its load event, then ``settle`` seconds. The tab
        goes to ``about:blank`` first, so a URL that differs from the current one only by its
        fragment is a full load too (and scrolls to the fragment as a fresh visit does)."""
        for target in ("about:blank", url):
            self.events.clear()
            self.call("Page.navigate", session=True, url=target)
            deadline = time.monotonic() + 60
            while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{target} did not load")
                self.events.append(self._read())
        time.sleep(settle)

    def js(self, expression: str):
        """The value of JavaScript ``expression`` in the page (promises awaited)."""
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JavaScript error: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """Save what the viewport shows as a PNG."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
