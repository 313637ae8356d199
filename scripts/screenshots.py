"""Full-page screenshots of every chapter of the built book at a given width (default 1,400 px),
with the checks a reader's eye would make, measured: the page does not scroll sideways, and no
table, output or code cell on the screen is wider than the box that holds it (clipped or scrolled).
Prints one line per page; exits 1 if any page fails.

    python scripts/screenshots.py [--width 1400] [--out /tmp/screens]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
OVERFLOW_JS = """
const out = [];
if (document.documentElement.scrollWidth > window.innerWidth + 1)
  out.push(`page ${document.documentElement.scrollWidth}px wide`);
for (const el of document.querySelectorAll('main table, main div.output')) {
  const box = el.parentElement;
  if (el.scrollWidth > el.clientWidth + 1
      || (box && el.getBoundingClientRect().width > box.clientWidth + 1))
    out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth}px in ` +
             `${el.clientWidth}px: ` +
             [...el.querySelectorAll('th')].slice(0, 6).map(t => t.textContent.trim()).join(' | '));
}
// code cells and included source: a line longer than its box is cut off at the edge (the reader
// scrolls a box sideways, or never sees its end); collapsed (hidden) inputs are measured once
// opened, here they are not
for (const el of document.querySelectorAll('main div.highlight pre')) {
  if (el.offsetParent === null) continue;  // inside a closed toggle or dropdown: not on the screen
  if (el.scrollWidth > el.clientWidth + 1)
    out.push(`code ${el.scrollWidth}px in ${el.clientWidth}px: ` +
             el.textContent.trim().split('\\n')[0].slice(0, 60));
}
return out;
"""


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def pages() -> list[str]:
    return [
        "book/intro.html",
        *sorted(
            str(p.relative_to(HTML))
            for p in (HTML / "book").glob("*.html")
            if p.name != "intro.html"
        ),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--out", default="/tmp/screens")
    args = ap.parse_args(argv)
    if not (HTML / "index.html").exists():
        print(f"{HTML} is not built: make book", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory() as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = "/usr/bin/chromium"
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            f"--window-size={args.width},1000",
            f"--user-data-dir={profile}",
            "--hide-scrollbars",
        ):
            opts.add_argument(flag)
        driver = webdriver.Chrome(options=opts, service=Service("/usr/bin/chromedriver"))
        try:
            for page in pages():
                driver.get(base + page)
                height = driver.execute_script("return document.documentElement.scrollHeight")
                driver.set_window_size(args.width, min(height, 30000))
                problems = driver.execute_script(OVERFLOW_JS)
                shot = out / (Path(page).stem + ".png")
                driver.save_screenshot(str(shot))
                failed += bool(problems)
                print(
                    f"{'FAIL' if problems else 'ok  '} {page} ({height}px tall) -> {shot}"
                    + "".join(f"\n     {p}" for p in problems)
                )
        finally:
            driver.quit()
            server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
