#!/usr/bin/env python3
"""What a screenshot costs right after typed keys, Chromium alone:
`python3 bench/probes/capture-after-keys.py [CHROMIUM] [ROUNDS]` launches Chromium on its pipe
with the servers' flags (Puppeteer 24's defaults from `host/src/browser/cdp/launch/puppeteer.rs`
and `--screen-info={3840x2160}`, so the 1905 x 2053 viewport both servers capture), loads the
bench's small form, and for each round clicks, types "Ada Lovelace" with Puppeteer's key
events and times `Page.captureScreenshot` as the servers send it:

1. after a pause of 0, 20, 50, 100, 200 or 500 ms (a warm browser);
2. awaiting one or two rendered frames first, the time of the wait and the capture together;
3. the first capture of a fresh browser, with no warm-up, after a one-pixel capture, or after a
   whole capture before the keys, and the next capture 500 ms later.
"""
import os, re, statistics, sys, time
from chromium_pipe import JsonBrowser

HERE = os.path.dirname(os.path.abspath(__file__))
PUPPETEER = os.path.join(HERE, '..', '..', 'host', 'src', 'browser', 'cdp', 'launch', 'puppeteer.rs')
PAGE = ("data:text/html,<!doctype html><html lang=en><head><meta charset=utf-8><title>Small form"
        "</title></head><body><h1>Benchmark form</h1><p>A page with a heading, a link, a text box "
        "and a button.</p><a href='/start.html'>Back to start</a><label>Name <input id=name "
        "type=text></label><button id=go onclick=\"document.getElementById('out').textContent = "
        "'Clicked'\">Go</button><p id=out>Not clicked</p></body></html>")
CAPTURE = {'format': 'png', 'optimizeForSpeed': True, 'fromSurface': True,
           'captureBeyondViewport': False}
RESET = ("(() => { const n = document.getElementById('name'); n.value = ''; n.focus(); "
         "document.getElementById('out').textContent = 'Not clicked'; })()")
FRAMES = "new Promise(r => {const f = n => n ? requestAnimationFrame(() => f(n - 1)) : setTimeout(r, 0); f(%d);})"


def flags():
    source = open(PUPPETEER).read()

    def listed(name):
        body = source[source.index(name):]
        return re.findall(r'"([^"]+)"', body[body.index('['):body.index('];')])

    return (listed('ARGS: [') + listed('HEADLESS_ARGS')[1:]
            + ['--disable-features=' + ','.join(listed('DISABLED_FEATURES')),
               '--enable-features=' + ','.join(listed('ENABLED_FEATURES')),
               '--disable-extensions', '--screen-info={3840x2160}'])


def opened(chromium):
    browser = JsonBrowser(chromium, extra=flags())
    session = browser.open(PAGE)
    time.sleep(1)
    return browser, session


def type_keys(browser, session, text):
    ids = []
    for ch in text:
        code, key_code = ('Space', 32) if ch == ' ' else ('Key' + ch.upper(), ord(ch.upper()))
        ids.append(browser.send('Input.dispatchKeyEvent', {
            'type': 'keyDown', 'key': ch, 'text': ch, 'unmodifiedText': ch, 'code': code,
            'windowsVirtualKeyCode': key_code}, session))
        ids.append(browser.send('Input.dispatchKeyEvent', {
            'type': 'keyUp', 'key': ch, 'code': code, 'windowsVirtualKeyCode': key_code}, session))
    browser.replies(ids)


def edit(browser, session, text):
    browser.call('Runtime.evaluate', {'expression': RESET}, session)
    time.sleep(0.6)
    browser.call('Runtime.evaluate', {'expression': "document.getElementById('go').click()"}, session)
    type_keys(browser, session, text)


def timed(action):
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def show(label, times):
    print(f'{label:28} median {statistics.median(times):6.1f} ms  {[round(t) for t in times]}')


def main():
    chromium = sys.argv[1] if len(sys.argv) > 1 else '/usr/bin/chromium'
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    browser, session = opened(chromium)
    capture = lambda: browser.call('Page.captureScreenshot', CAPTURE, session)
    by_pause, by_frames = {}, {}
    for round_ in range(rounds):
        text = 'Ada Lovelace' if round_ % 2 else 'Bob Marley x'
        for pause in (0, 20, 50, 100, 200, 500):
            edit(browser, session, text)
            time.sleep(pause / 1000)
            by_pause.setdefault(pause, []).append(timed(capture))
        for frames in (0, 1, 2):
            edit(browser, session, text)

            def wait_and_capture():
                if frames:
                    browser.call('Runtime.evaluate',
                                 {'expression': FRAMES % frames, 'awaitPromise': True}, session)
                capture()
            by_frames.setdefault(frames, []).append(timed(wait_and_capture))
    browser.close()
    for pause, times in by_pause.items():
        show(f'captured {pause} ms after', times)
    for frames, times in by_frames.items():
        show(f'{frames} frame(s) awaited, then', times)

    firsts = {}
    for _ in range(max(rounds // 2, 3)):
        for warm_up in ('none', 'one pixel', 'whole page'):
            browser, session = opened(chromium)
            if warm_up == 'one pixel':
                clip = {'x': 0, 'y': 0, 'width': 1, 'height': 1, 'scale': 1}
                browser.call('Page.captureScreenshot', {**CAPTURE, 'clip': clip}, session)
            elif warm_up == 'whole page':
                browser.call('Page.captureScreenshot', CAPTURE, session)
            edit(browser, session, 'Ada Lovelace')
            first = timed(lambda: browser.call('Page.captureScreenshot', CAPTURE, session))
            time.sleep(0.5)
            second = timed(lambda: browser.call('Page.captureScreenshot', CAPTURE, session))
            firsts.setdefault(warm_up, []).append((first, second))
            browser.close()
    for warm_up, pairs in firsts.items():
        show(f'fresh, warm-up {warm_up}: first', [first for first, _ in pairs])
        show(f'fresh, warm-up {warm_up}: next', [second for _, second in pairs])


if __name__ == '__main__':
    main()
