#!/usr/bin/env python3
"""Where a full snapshot of a page just loaded waits, seen from the server's own trace:
`python3 bench/probes/snapshot-after-navigate.py SERVER URL [ROUNDS] [PAUSE_S]` starts the
devtools-mcp binary SERVER (headless, isolated, `RUST_LOG=devtools_mcp=trace`), and each round
calls `navigate_page` to URL, waits PAUSE_S seconds (default 0, as the bench does), then
`take_snapshot`. It prints each round's client times and the browser commands the snapshot sent
with how long each took to be answered (the trace's `micros`), then the medians.

A page whose scripts keep working after `load` (a rustdoc page: its sidebar, its settings)
makes the renderer answer late: that wait shows on the snapshot's first command, whichever it
is, and shrinks with a pause before the snapshot.
"""
import json, os, re, statistics, subprocess, sys, tempfile, time

TRACE = re.compile(r'answered method="([^"]+)" micros=(\d+)')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    server, url = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    log = tempfile.NamedTemporaryFile('w+', suffix='.log')
    env = {**os.environ, 'RUST_LOG': 'warn,devtools_mcp=trace'}
    args = [server, '--headless', '--isolated', '--no-page-id-routing']
    if os.geteuid() == 0:
        args.append('--chromeArg=--no-sandbox')
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=log, text=True, env=env)
    ids = iter(range(1, 1 << 30))

    def call(method, params):
        request = next(ids)
        message = {'jsonrpc': '2.0', 'id': request, 'method': method, 'params': params}
        process.stdin.write(json.dumps(message) + '\n')
        process.stdin.flush()
        while True:
            reply = json.loads(process.stdout.readline())
            if reply.get('id') == request:
                return reply

    def traced_since(offset):
        log.flush()
        log.seek(offset)
        text = log.read()
        return [(m.group(1), int(m.group(2)) / 1000) for m in TRACE.finditer(text)], log.tell()

    try:
        call('initialize', {'protocolVersion': '2025-06-18', 'capabilities': {},
                            'clientInfo': {'name': 'probe', 'version': '1'}})
        process.stdin.write(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/initialized'}) + '\n')
        process.stdin.flush()
        call('tools/call', {'name': 'list_pages', 'arguments': {}})
        snapshots, offset = [], 0
        for _ in range(rounds):
            started = time.perf_counter()
            call('tools/call', {'name': 'navigate_page', 'arguments': {'url': url}})
            navigated = (time.perf_counter() - started) * 1000
            time.sleep(pause)
            _, offset = traced_since(offset)
            started = time.perf_counter()
            reply = call('tools/call', {'name': 'take_snapshot', 'arguments': {}})
            took = (time.perf_counter() - started) * 1000
            commands, offset = traced_since(offset)
            size = len(reply['result']['content'][0]['text'])
            steps = ', '.join(f'{method} {ms:.0f} ms' for method, ms in commands)
            print(f'navigate {navigated:.0f} ms, snapshot {took:.0f} ms ({size} B): {steps}')
            snapshots.append(took)
        print(f'median snapshot: {statistics.median(snapshots):.0f} ms of {rounds}')
    finally:
        process.stdin.close()
        process.wait(timeout=10)


if __name__ == '__main__':
    main()
