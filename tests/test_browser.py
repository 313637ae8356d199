"""The built book in a real browser: it loads nothing from the network, and its plots work.

Serves _build/html on 127.0.0.1, opens it in headless Chromium whose network is blocked for every
host but 127.0.0.1, and records every request and console message through Chromium's performance
and browser logs. Needs the built book (``make book``) and Chromium with chromedriver
(``scripts/install_browser.sh``).
"""

import functools
import json
import re
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HTML = Path(__file__).resolve().parents[1] / "_build" / "html"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOT = Path("/tmp/browser_10m.png")

# Everything that is not 127.0.0.1 must fail, so a page that needs the network breaks here too.
# The resolver rule makes every host name *and* IP literal (and "localhost") unresolvable; the
# proxy on the discard port catches whatever would not go through Chromium's resolver.
OFFLINE_FLAGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
]
# Headless, quiet: no GPU, no QUIC, and none of the browser's own background traffic.
BROWSER_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1400",
]
# Not network requests: inline data, and blobs the page creates itself.
LOCAL_SCHEMES = {"data", "blob"}
WAIT_S = 20
# Console errors that come from the themes and extensions, not from the book, matched exactly so
# that any other error still fails:
KNOWN_CONSOLE_ERRORS = [
    # sphinx-thebe 0.3.1's inline `const THEBE_JS_URL = ...` config script is emitted twice in every
    # page's <head>; the second copy throws. Harmless (the first copy defined the same constants and
    # thebe is never launched) but real; drop this entry once the build emits it once.
    re.compile(r"Uncaught SyntaxError: Identifier 'THEBE_JS_URL' has already been declared$"),
    # pydata-sphinx-theme logs this on a visitor's very first page (empty localStorage, so the
    # mode is ""), then stores "auto" and never again; with a fresh profile it hits whichever page
    # this module opens first.
    re.compile(r'pydata-sphinx-theme\.js\S* \S+ "Got invalid theme mode: \. Resetting to auto\."$'),
]


# --------------------------------------------------------------------------- fixtures


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output to the test results
        pass


@pytest.fixture(scope="module")
def site():
    """Base URL of _build/html served by a thread on a free port of 127.0.0.1."""
    if not (HTML / "index.html").is_file():
        pytest.fail(
            f"{HTML / 'index.html'} does not exist: build the book first: make book", pytrace=False
        )
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(HTML))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium with a throw-away profile, the network blocked and request logging on."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            pytest.fail(
                f"{path} does not exist: install it with scripts/install_browser.sh", pytrace=False
            )
    with tempfile.TemporaryDirectory(
        prefix="chromium-profile-", ignore_cleanup_errors=True
    ) as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in [*BROWSER_FLAGS, *OFFLINE_FLAGS, f"--user-data-dir={profile}"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
        driver.set_page_load_timeout(WAIT_S)
        # Chromium opens its own new-tab page at start-up (chrome:// resources); let that finish
        # and drop its log entries, so they are not counted against the first page under test.
        driver.get("about:blank")
        settle(driver, PageLog())
        try:
            yield driver
        finally:
            driver.quit()


# --------------------------------------------------------------------------- page logs


@dataclass
class PageLog:
    """What one page did on the network and in its console."""

    # requestId -> URL (every request, redirects too)
    urls: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)  # (URL, Chromium's error text)
    http_errors: list = field(default_factory=list)  # (URL, HTTP status >= 400)
    console: list = field(default_factory=list)  # browser-log entries

    def read(self, driver):
        """Add the log entries that arrived since the last read;
        return how many requests started."""
        started = 0
        for entry in driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            params = msg.get("params", {})
            if msg["method"] == "Network.requestWillBeSent":
                self.urls[params["requestId"]] = params["request"]["url"]
                started += 1
            elif msg["method"] == "Network.loadingFailed":
                self.failed.append(
                    (self.urls.get(params["requestId"], params["requestId"]), params["errorText"])
                )
            elif (
                msg["method"] == "Network.responseReceived" and params["response"]["status"] >= 400
            ):
                self.http_errors.append((params["response"]["url"], params["response"]["status"]))
        self.console += driver.get_log("browser")
        return started


def open_page(driver, url) -> PageLog:
    """Navigate to ``url`` with empty logs, so the returned log holds this page's requests only."""
    PageLog().read(driver)  # drop what earlier pages left in the logs
    log = PageLog()
    driver.get(url)
    wait_for(driver, "return document.readyState === 'complete'", f"{url} to load")
    return log


def settle(driver, log, quiet_s=1.0, max_s=10.0):
    """Read the logs until no request has started for ``quiet_s``: lazily
    loaded fonts and scripts count."""
    deadline = time.monotonic() + max_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        if log.read(driver):
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return log
        time.sleep(0.2)
    return log


def wait_for(driver, script, what, *args):
    """Wait until the JavaScript ``script`` returns something truthy;
    fail with ``what`` otherwise."""
    try:
        return WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(
            lambda d: d.execute_script(script, *args)
        )
    except TimeoutException:
        pytest.fail(f"timed out after {WAIT_S} s waiting for {what}", pytrace=False)


def is_favicon(url):
    # A page without <link rel="icon"> makes Chromium ask for /favicon.ico at the site root by
    # itself; the book never references that file, so its 404 (and the console line about it) is
    # the browser's doing, not the book's.
    return urlsplit(url).path == "/favicon.ico"


def assert_offline_and_clean(log, port):
    """Every request went to our server, none failed, and the console shows no error."""

    def local(url):
        parts = urlsplit(url)
        return parts.scheme in LOCAL_SCHEMES or (parts.hostname, parts.port) == ("127.0.0.1", port)

    external = sorted({u for u in log.urls.values() if not local(u)})
    http_errors = [(u, s) for u, s in log.http_errors if not is_favicon(u)]
    console = [
        e["message"]
        for e in log.console
        if e["level"] == "SEVERE"
        and not is_favicon(e["message"].split(" ", 1)[0])
        and not any(known.search(e["message"]) for known in KNOWN_CONSOLE_ERRORS)
    ]
    # Report every kind of problem at once: an external stylesheet also shows up as a failed
    # request and a console error, and seeing them together says which caused which.
    problems = [
        f"{what}:\n  " + "\n  ".join(map(str, items))
        for what, items in [
            (f"requests leaving 127.0.0.1:{port}", external),
            ("failed requests", log.failed),
            ("HTTP errors", http_errors),
            ("console errors", console),
        ]
        if items
    ]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- plotly helpers

DRAWN = """
const gd = document.getElementById(arguments[0]);
return !!(window.Plotly && gd && gd.classList.contains('js-plotly-plot') && gd._fullData
          && gd.querySelector('svg.main-svg'));
"""
TRACES = """
const gd = document.getElementById(arguments[0]);
return gd._fullData.map(t => ({name: t.name, visible: t.visible === true}));
"""

# A plotly updatemenu (plotly.js 4): the header shows the current choice and opens the list, whose
# buttons exist only while it is open.
MENU_HEADER = ".updatemenu-header-group"
MENU_BUTTON = ".updatemenu-dropdown-button-group .updatemenu-dropdown-button"


def wait_drawn(driver, div_id):
    wait_for(driver, DRAWN, f"the plotly plot #{div_id} to be drawn", div_id)


def traces(driver, div_id):
    """(name, visible) of every trace plotly actually drew, after defaults and restyles."""
    return [(t["name"], t["visible"]) for t in driver.execute_script(TRACES, div_id)]


def svg_text(driver, element):
    # SVG <text> has no innerText; textContent is what the user reads.
    return driver.execute_script("return arguments[0].textContent", element).strip()


def click(driver, element):
    """A real pointer click at the element's centre, scrolled clear of the sticky header first."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    ActionChains(driver).move_to_element(element).click().perform()


# --------------------------------------------------------------------------- tests


def port_of(site):
    return urlsplit(site).port


def test_network_is_blocked(site, browser):
    """The offline flags work: other hosts fail, each for the flag
    that blocks it; 127.0.0.1 loads."""
    log = open_page(browser, site + "book/intro.html")
    blocked = {
        # a name: sent to the dead proxy
        "https://example.com/": "net::ERR_PROXY_CONNECTION_FAILED",
        "http://1.1.1.1/": "net::ERR_PROXY_CONNECTION_FAILED",  # an IP literal: the same
        # Loopback bypasses the proxy, so only the resolver rule stops this one: without the rule
        # it would load, like the 127.0.0.1 URL below.
        site.replace("127.0.0.1", "localhost") + "index.html": "net::ERR_NAME_NOT_RESOLVED",
    }
    urls = [*blocked, site + "index.html"]
    results = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const probe = u => fetch(u, {mode: 'no-cors', cache: 'no-store'})
            .then(() => 'ok', () => 'blocked');
        Promise.all(arguments[0].map(probe)).then(done);
    """,
        urls,
    )
    assert dict(zip(urls, results)) == {
        **{u: "blocked" for u in blocked},
        site + "index.html": "ok",
    }
    assert {u: err for u, err in settle(browser, log).failed if u in blocked} == blocked


@pytest.mark.parametrize(
    "page",
    ["index.html", "book/10m_asymmetry.html", "book/joint_collapse.html", "book/mechanism.html"],
)
def test_page_is_offline_and_clean(site, browser, page):
    """The page, its plots, its typeset math and their fonts load from 127.0.0.1 alone, cleanly."""
    log = open_page(browser, site + page)
    if page == "index.html":  # a meta refresh to the first chapter
        wait_for(
            browser,
            "return location.pathname.endsWith('/book/intro.html')",
            "index.html to redirect",
        )
        wait_for(browser, "return document.readyState === 'complete'", "book/intro.html to load")
    for div_id in browser.execute_script(
        "return [...document.querySelectorAll('.plotly-graph-div')].map(d => d.id)"
    ):
        wait_drawn(browser, div_id)
    # MathJax typesets asynchronously and fetches its fonts afterwards: wait for both.
    wait_for(
        browser,
        (
            "return [...document.querySelectorAll('.math')].every(m => "
            "m.querySelector('mjx-container'))"
        ),
        f"MathJax to typeset {page}",
    )
    browser.execute_async_script("document.fonts.ready.then(arguments[arguments.length - 1])")
    assert_offline_and_clean(settle(browser, log), port_of(site))


def test_seed_dropdown_switches_traces(site, browser):
    """Choosing the last seed in the 10M seed plot's dropdown shows exactly that seed's curves."""
    log = open_page(browser, site + "book/10m_asymmetry.html")
    wait_drawn(browser, "10m-best-val")
    wait_drawn(browser, "10m-seeds")
    before = traces(browser, "10m-seeds")

    seeds = browser.find_element(By.ID, "10m-seeds")
    click(browser, seeds.find_element(By.CSS_SELECTOR, MENU_HEADER))
    wait_for(
        browser,
        f"return arguments[0].querySelector('{MENU_BUTTON}')",
        "the seed dropdown to open",
        seeds,
    )
    buttons = seeds.find_elements(By.CSS_SELECTOR, MENU_BUTTON)
    labels = [svg_text(browser, b) for b in buttons]
    assert labels[0] == "all", labels
    seed_buttons = [(b, lab) for b, lab in zip(buttons, labels) if lab.startswith("seed ")]

    if not seed_buttons:
        # The released runs hold several 10M seeds, so a dropdown with only "all" is a book built
        # without them (or a plot that lost its traces): nothing here would be tested.
        pytest.fail(
            (
                f"the built 10m page's seed dropdown offers no seed (labels {labels}, "
                f"{len(before)} traces): rebuild the book with the released runs (make book)"
            ),
            pytrace=False,
        )
    button, label = seed_buttons[-1]
    click(browser, button)
    # Plotly writes the chosen label into the dropdown's header once it has applied the update.
    wait_for(
        browser,
        (
            f"return arguments[0].querySelector('{MENU_HEADER} .updatemenu-item-text')"
            ".textContent.trim() === arguments[1]"
        ),
        f"the dropdown to show {label!r}",
        seeds,
        label,
    )
    after = traces(browser, "10m-seeds")
    # "seed 1" must not match "seed 1337": the number ends at a non-digit.
    of_seed = sorted(name for name, _ in after if re.search(rf"\b{re.escape(label)}(?!\d)", name))
    visible = sorted(name for name, shown in after if shown)
    assert of_seed and visible == of_seed, f"{label}: visible {visible}, expected {of_seed}"
    assert len(seed_buttons) >= 2, (
        f"only {len(seed_buttons)} seed in the dropdown: switching cannot be compared"
    )
    assert len(visible) != sum(shown for _, shown in before), "switching the seed changed nothing"

    # A choice folds the menu (plotly fades the buttons out, then removes them).
    wait_for(
        browser,
        f"return !arguments[0].querySelector('{MENU_BUTTON}')",
        "the seed dropdown to close",
        seeds,
    )
    wait_drawn(browser, "10m-seeds")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", seeds)
    browser.save_screenshot(str(SCREENSHOT))  # for a human look: the plot after the switch
    assert_offline_and_clean(settle(browser, log), port_of(site))


def test_joint_collapse_plot_is_drawn(site, browser):
    log = open_page(browser, site + "book/joint_collapse.html")
    wait_drawn(browser, "joint-collapse-seeds")
    assert_offline_and_clean(settle(browser, log), port_of(site))


def _screenshots():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "screenshots", HTML.parents[1] / "scripts" / "screenshots.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def every_page_at_1400_px(site, browser):
    """Each chapter loaded once at a 1,400 px window, and what the three checks below read from it:
    the overflows scripts/screenshots.py looks for, each plotly figure's caption number and each
    image's size (one load per page, not three)."""
    shots = _screenshots()
    browser.set_window_size(1400, 1000)
    try:
        found = {}
        for page in shots.pages():
            open_page(browser, site + page)
            captions = browser.execute_script("""
                return [...document.querySelectorAll('.plotly-graph-div')].map(d => {
                  const fig = d.closest('figure');
                  const cap = fig && fig.querySelector('figcaption .caption-number');
                  return [d.id, cap ? cap.textContent.trim() : null];
                });""")
            found[page] = (
                browser.execute_script(shots.OVERFLOW_JS),
                captions,
                browser.execute_script(IMAGE_SIZES),
            )
        return found
    finally:
        browser.set_window_size(1280, 1400)


def test_no_table_or_output_overflows_at_1400_px(every_page_at_1400_px):
    """What scripts/screenshots.py checks on every chapter: at a 1,400 px window the page does not
    scroll sideways and no table or output is wider than its box."""
    problems = {page: over for page, (over, _, _) in every_page_at_1400_px.items() if over}
    assert not problems, problems


def test_every_plotly_figure_on_a_page_has_a_numbered_caption(every_page_at_1400_px):
    figures = [
        (page, div_id, cap)
        for page, (_, caps, _) in every_page_at_1400_px.items()
        for div_id, cap in caps
    ]
    missing = [
        f"{page}#{div_id}"
        for page, div_id, cap in figures
        if not (cap and cap.startswith("Book fig."))
    ]
    assert len(figures) >= 7 and not missing, missing


# Each image in a chapter: its figure's caption number (or its file), the size it is drawn at, the
# width its inline style asks for and its PNG's own size. The page has loaded (open_page), so every
# image has its natural size.
IMAGE_SIZES = """
return [...document.querySelectorAll('main img')].map(img => {
  const cap = img.closest('figure')?.querySelector('figcaption .caption-number');
  const box = img.getBoundingClientRect();
  return {name: cap ? cap.textContent.trim() : img.getAttribute('src'), width: box.width,
          height: box.height, styled: parseFloat(img.style.width) || null,
          natural_width: img.naturalWidth, natural_height: img.naturalHeight};
});
"""


def test_every_image_keeps_its_shape_at_1400_px(every_page_at_1400_px):
    """A figure wider than the text column is drawn narrower, and its height follows: each image's
    height-to-width ratio is its PNG's, within 2%. myst-nb's inline style fixes both width and
    height; without book/static/custom.css's height: auto the column narrowed only the width
    (figures drawn up to 2.04 times too tall)."""
    images = [(page, img) for page, (_, _, imgs) in every_page_at_1400_px.items() for img in imgs]

    def stretch(img):  # drawn height-to-width over the PNG's own; an image not drawn or loaded: 0
        if not (img["width"] and img["natural_width"]):
            return 0.0
        natural = img["natural_height"] / img["natural_width"]
        return img["height"] / img["width"] / natural

    stretched = [
        f"{page} {img['name']}: x{stretch(img):.2f}"
        for page, img in images
        if abs(stretch(img) - 1) > 0.02
    ]
    # the case that stretched them: a figure the column draws narrower than its style's width
    narrowed = [img for _, img in images if img["styled"] and img["width"] < img["styled"] - 1]
    assert len(images) >= 15 and narrowed and not stretched, stretched


# Every word of every table header in one piece: a header narrower than its longest word breaks it
# across lines ("confi / g"). A Range over one word has one client rect per line it is drawn on.
BROKEN_HEADER_WORDS = """
const broken = [];
for (const th of document.querySelectorAll('th')) {
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const r = document.createRange();
      r.setStart(node, m.index);
      r.setEnd(node, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter(b => b.width > 0)
        .map(b => Math.round(b.top)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
}
return broken;
"""


def viewport(driver, width, height):
    """The page's own viewport at exactly ``width`` x ``height`` CSS pixels (a window size would
    include the browser's frame)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


def test_the_first_screen_holds_the_answer_the_summarys_first_part_and_the_tally_by_scale(
    site, browser
):
    """At 1,400 x 800, what a reader sees before scrolling (issue 56): the answer
    sentence, the reproducibility summary's first part (its scope) and the tally split
    by scale, which closes the summary."""
    viewport(browser, 1400, 800)
    try:
        open_page(browser, site + "book/intro.html")
        where = browser.execute_script("""
            const box = el => el ? el.getBoundingClientRect() : null;
            const ps = [...document.querySelectorAll('main p')];
            const find = re => ps.find(p => re.test(p.textContent.trim()));
            return {answer: box(find(/^At the paper.s .*10M shape, .*puzzle/)),
                    scope: box(find(/^Scope of reproducibility\\./)),
                    tally: box(find(
                        /^At the paper.s own 10M shape \\(\\d+ claims?\\):.*At CPU stand-ins/)),
                    first: box(ps[0]), height: window.innerHeight};""")
        assert where["height"] == 800
        for part in ("answer", "scope", "tally"):
            assert where[part] is not None, f"no {part} on the front page"
            assert where[part]["bottom"] <= 800, (part, where)
        # the answer is the page's first paragraph, under the title
        assert where["answer"] == where["first"], where
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_lead_figures_type_is_legible_and_captions_are_in_the_body_colour_at_1400_px(
    site, browser
):
    """The lead figure's smallest type drawn at no less than 11 px at a 1,400 px window, from its
    width on the page (``book.plots.lead``: LEAD_FONT_PT points on a LEAD_WIDTH_IN-inch figure); its
    caption in the body text's colour."""
    from lib.book.plots.lead import LEAD_FONT_PT, LEAD_WIDTH_IN

    viewport(browser, 1400, 800)
    try:
        open_page(browser, site + "book/intro.html")
        got = browser.execute_script("""
            const img = document.querySelector('#fig-lead img');
            const cap = document.querySelector('#fig-lead figcaption .caption-text');
            return {width: img.getBoundingClientRect().width, caption: getComputedStyle(cap).color,
                    body: getComputedStyle(document.querySelector('main p')).color};""")
        assert LEAD_FONT_PT * got["width"] / (LEAD_WIDTH_IN * 72) >= 11, got
        assert got["caption"] == got["body"], got
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_no_table_header_breaks_inside_a_word_at_1400_px(site, browser):
    shots = _screenshots()
    viewport(browser, 1400, 900)
    try:
        broken = {}
        for page in shots.pages():
            open_page(browser, site + page)
            if words := browser.execute_script(BROKEN_HEADER_WORDS):
                broken[page] = words
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not broken, broken
