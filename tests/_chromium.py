"""Load a local HTML page in headless Chromium and report what a reader would see.

Talks the Chrome DevTools protocol over ``--remote-debugging-pipe`` (NUL-terminated JSON on file
descriptors 3 and 4), so it needs nothing beyond the standard library and the Debian
``chromium`` package. :func:`inspect_page` returns the images (loaded or not), every console
error / uncaught exception / failed load logged while the page loaded, and writes a full-page
screenshot. :func:`chromium_or_skip_reason` says why Chromium cannot run here, if it cannot.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe")


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _Pipe:
    def __init__(self, binary: str, user_data_dir: str):
        r_cmd, self.w_cmd = os.pipe()     # we write commands, Chromium reads its fd 3
        self.r_out, w_out = os.pipe()     # Chromium writes its fd 4, we read
        script = f'exec 3<&{r_cmd} 4>&{w_out}; exec "$0" "$@"'
        self.proc = subprocess.Popen(
            ["bash", "-c", script, binary, *FLAGS, f"--user-data-dir={user_data_dir}",
             "about:blank"], pass_fds=(r_cmd, w_out), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(r_cmd)
        os.close(w_out)
        self.buf, self.next_id, self.events = b"", 0, []

    def send(self, method: str, params=None, session=None, timeout=30.0) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w_cmd, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read(timeout)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r_out], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.r_out, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        msg = json.loads(raw)
        if "method" in msg:
            self.events.append(msg)
        return msg

    def wait_event(self, method: str, timeout: float) -> dict:
        for ev in self.events:
            if ev["method"] == method:
                return ev
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read(max(deadline - time.monotonic(), 0.01))
            if msg.get("method") == method:
                return msg

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.w_cmd, self.r_out):
            try:
                os.close(fd)
            except OSError:
                pass


def _errors(events) -> list[str]:
    out = []
    for ev in events:
        p = ev.get("params", {})
        if ev["method"] == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + str(d.get("exception", {}).get("description")
                                           or d.get("text")))
        elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                    for a in p.get("args", [])))
        elif ev["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append("log: " + p["entry"].get("text", ""))
    return out


VIEWPORT = (1400, 900)   # the first screen a reader meets


def inspect_page(page: Path, screenshot: Path, timeout: float = 60.0,
                 first_screen: Path | None = None) -> dict:
    """Load ``page`` in a 1400 x 900 viewport; return ``{"images": [...], "errors": [...],
    "title": str, "verdicts": rect, "answer": {"box": rect, "text": str} | None}``.

    Each image is ``{"alt", "complete", "width", "height"}`` (natural size; 0 when it failed to
    decode); ``verdicts`` is the bounding box (CSS pixels from the top left of the page) of the
    element with id ``verdicts``, or None; ``answer`` the box and rendered text of the answer
    paragraph (id ``answer-text``). The screenshot covers the whole page;
    ``first_screen`` gets a screenshot of the first 1400 x 900 pixels.
    """
    binary = chromium_binary()
    if binary is None:
        raise FileNotFoundError("chromium not found")
    with tempfile.TemporaryDirectory(prefix="infodiv-chromium-") as profile:
        pipe = _Pipe(binary, profile)
        try:
            target = pipe.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)
            session = pipe.send("Target.attachToTarget", {"targetId": target["targetId"],
                                                          "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                pipe.send(f"{domain}.enable", session=session)
            pipe.send("Emulation.setDeviceMetricsOverride",
                      {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1,
                       "mobile": False}, session=session)
            pipe.send("Page.navigate", {"url": Path(page).resolve().as_uri()}, session=session)
            pipe.wait_event("Page.loadEventFired", timeout)
            expr = ("JSON.stringify({title: document.title, images: Array.from(document.images)"
                    ".map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth, "
                    "height: i.naturalHeight})), verdicts: (e => e ? e.getBoundingClientRect()"
                    ".toJSON() : null)(document.getElementById('verdicts')), answer: (e => e ? "
                    "{box: e.getBoundingClientRect().toJSON(), text: e.innerText} : null)"
                    "(document.getElementById('answer-text'))})")
            value = pipe.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                              session=session)["result"]["value"]
            if first_screen is not None:
                top = pipe.send("Page.captureScreenshot", {"format": "png"}, session=session,
                                timeout=timeout)
                Path(first_screen).write_bytes(base64.b64decode(top["data"]))
            shot = pipe.send("Page.captureScreenshot", {"format": "png",
                                                        "captureBeyondViewport": True},
                             session=session, timeout=timeout)
            Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
            time.sleep(0.2)   # late console messages
            try:
                while True:
                    pipe.read(0.05)
            except (TimeoutError, RuntimeError):
                pass
            doc = json.loads(value)
            doc["errors"] = _errors(pipe.events)
            return doc
        finally:
            pipe.close()


@functools.lru_cache(maxsize=1)
def chromium_or_skip_reason() -> str | None:
    """None when headless Chromium loads a page here, else why not (for ``pytest.skip``)."""
    if chromium_binary() is None:
        return "chromium is not installed (apt-get install chromium)"
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "probe.html"
        page.write_text("<!DOCTYPE html><title>probe</title><p>ok</p>")
        try:
            doc = inspect_page(page, Path(tmp) / "probe.png", timeout=60)
        except (OSError, RuntimeError, TimeoutError, ValueError) as exc:
            return f"headless chromium cannot run here: {type(exc).__name__}: {exc}"
    return None if doc.get("title") == "probe" else "headless chromium gave no page title"
