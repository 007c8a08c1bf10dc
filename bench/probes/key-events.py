#!/usr/bin/env python3
"""How long Chromium takes to handle the key events of a `fill`, with no server in between:
`python3 bench/probes/key-events.py [TEXT] [CHROMIUM] [ROUNDS]` opens a page with a text box,
and each round clears and focuses it, sends a keyDown and a keyUp for every character of TEXT
(default "Ada Lovelace", as the bench's fill step types) all at once over the browser's JSON
pipe, as the server does, and times until the last is answered. Prints each round and the
median: the floor of typing key by key, which the reference does and Playwright MCP does not.
"""
import statistics, sys, time

from chromium_pipe import JsonBrowser

PAGE = 'data:text/html,<!doctype html><title>Keys</title><input id="name" type="text">'
FOCUS = "const e = document.getElementById('name'); e.value = ''; e.focus(); true"


def main():
    text = sys.argv[1] if len(sys.argv) > 1 else 'Ada Lovelace'
    chromium = sys.argv[2] if len(sys.argv) > 2 else '/usr/bin/chromium'
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    browser = JsonBrowser(chromium, extra=['--headless=new'])
    try:
        session = browser.open(PAGE)
        time.sleep(1)
        times = []
        for _ in range(rounds):
            browser.call('Runtime.evaluate', {'expression': FOCUS}, session)
            events = []
            for ch in text:
                events.append({'type': 'keyDown', 'key': ch, 'text': ch, 'unmodifiedText': ch})
                events.append({'type': 'keyUp', 'key': ch})
            start = time.perf_counter()
            ids = [browser.send('Input.dispatchKeyEvent', event, session) for event in events]
            browser.replies(ids)
            times.append((time.perf_counter() - start) * 1000)
            time.sleep(0.3)
        print(' '.join(f'{ms:.1f}' for ms in times))
        print(f'{len(text) * 2} key events: median {statistics.median(times):.1f} ms')
    finally:
        browser.close()


if __name__ == '__main__':
    main()
