#!/usr/bin/env python3
"""Would fetching only what a snapshot prints make it faster? `python3 bench/probes/ax-levels.py
URL [CHROMIUM] [ROUNDS]` loads URL and times, alternately, `Accessibility.getFullAXTree` and the
same tree fetched level by level with `Accessibility.getChildAXNodes` (each level's requests sent
at once), not descending into text leaves (`StaticText`, whose `InlineTextBox` children 1.11.0's
snapshot never prints: on `std::string::String`'s page they are 48% of the nodes). It prints each
time (the reply parsed as JSON, over the browser's JSON pipe), the node counts, the roles of the
nodes the level-by-level walk skipped, and whether every node it fetched equals the full tree's.
"""
import collections, json, os, subprocess, sys, tempfile, time

LEAVES = {'StaticText', 'InlineTextBox', 'LineBreak', 'text'}


class Browser:
    """Chromium on its DevTools pipe in JSON mode (NUL-terminated messages)."""

    def __init__(self, chromium):
        r1, w1 = os.pipe()  # the browser reads
        r2, w2 = os.pipe()  # the browser writes
        # dup2 onto the same number would keep close-on-exec: the child's ends must survive exec.
        os.set_inheritable(r1, True)
        os.set_inheritable(w2, True)
        def fds():
            os.dup2(r1, 3)
            os.dup2(w2, 4)
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.process = subprocess.Popen(
            [chromium, '--headless', '--no-sandbox', '--remote-debugging-pipe',
             '--user-data-dir=' + self.profile.name, 'about:blank'],
            preexec_fn=fds, close_fds=False, stderr=subprocess.DEVNULL)
        os.close(r1)
        os.close(w2)
        self.out = os.fdopen(w1, 'wb', buffering=0)
        self.inp = os.fdopen(r2, 'rb', buffering=0)
        self.buf = bytearray()
        self.next_id = 0

    def send(self, method, params, session):
        self.next_id += 1
        message = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            message['sessionId'] = session
        self.out.write(json.dumps(message).encode() + b'\0')
        return self.next_id

    def replies(self, ids):
        """The results of the commands `ids`, in their order."""
        wanted, got = set(ids), {}
        while wanted:
            end = self.buf.find(b'\0')
            if end < 0:
                chunk = self.inp.read(1 << 22)
                if not chunk:
                    raise SystemExit('the browser closed its pipe')
                self.buf += chunk
                continue
            message = json.loads(bytes(self.buf[:end]))
            del self.buf[:end + 1]
            if message.get('id') in wanted:
                if 'error' in message:
                    raise SystemExit(f"{message['error']}")
                wanted.discard(message['id'])
                got[message['id']] = message['result']
        return [got[i] for i in ids]

    def call(self, method, params=None, session=None):
        return self.replies([self.send(method, params or {}, session)])[0]

    def close(self):
        self.process.kill()
        self.process.wait()
        self.profile.cleanup()


def by_levels(browser, session):
    """The tree as a snapshot needs it, one level of unignored nodes at a time."""
    root = browser.call('Accessibility.getRootAXNode', {}, session)['node']
    nodes, level, rounds = [root], [root], 0
    while level:
        parents = [n for n in level if n.get('childIds') and n['role']['value'] not in LEAVES]
        if not parents:
            break
        rounds += 1
        ids = [browser.send('Accessibility.getChildAXNodes', {'id': n['nodeId']}, session)
               for n in parents]
        level = []
        for result in browser.replies(ids):
            nodes += result['nodes']
            level += [n for n in result['nodes'] if not n.get('ignored')]
    return nodes, rounds


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    url = sys.argv[1]
    chromium = sys.argv[2] if len(sys.argv) > 2 else '/usr/bin/chromium'
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    browser = Browser(chromium)
    try:
        target = browser.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        attached = browser.call('Target.attachToTarget', {'targetId': target, 'flatten': True})
        session = attached['sessionId']
        browser.call('Page.enable', {}, session)
        browser.call('Page.navigate', {'url': url}, session)
        time.sleep(3)
        browser.call('Accessibility.enable', {}, session)  # getChildAXNodes needs it
        for _ in range(rounds):
            start = time.perf_counter()
            full = browser.call('Accessibility.getFullAXTree', {}, session)['nodes']
            full_ms = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            walked, levels = by_levels(browser, session)
            walked_ms = (time.perf_counter() - start) * 1000
            print(f'getFullAXTree {full_ms:.0f} ms ({len(full)} nodes); by levels '
                  f'{walked_ms:.0f} ms ({len(walked)} nodes, {levels} rounds)')
        whole = {n['nodeId']: n for n in full}
        fetched = {n['nodeId']: n for n in walked}
        skipped = collections.Counter(whole[i]['role']['value'] for i in whole if i not in fetched)
        differ = sum(1 for i, n in fetched.items() if whole.get(i) != n)
        print(f'skipped: {dict(skipped)}; fetched nodes unlike the full tree\'s: {differ}')
    finally:
        browser.close()


if __name__ == '__main__':
    main()
