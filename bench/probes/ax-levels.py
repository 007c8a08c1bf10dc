#!/usr/bin/env python3
"""Would fetching only what a snapshot prints make it faster? `python3 bench/probes/ax-levels.py
URL [CHROMIUM] [ROUNDS]` loads URL and times, alternately, `Accessibility.getFullAXTree` and the
same tree fetched level by level with `Accessibility.getChildAXNodes` (each level's requests sent
at once), not descending into text leaves (`StaticText`, whose `InlineTextBox` children 1.11.0's
snapshot never prints: on `std::string::String`'s page they are 48% of the nodes). It prints each
time (the reply parsed as JSON, over the browser's JSON pipe), the node counts, the roles of the
nodes the level-by-level walk skipped, and whether every node it fetched equals the full tree's.
"""
import collections, json, sys, time

from chromium_pipe import JsonBrowser

LEAVES = {'StaticText', 'InlineTextBox', 'LineBreak', 'text'}


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
    browser = JsonBrowser(chromium)
    try:
        session = browser.open(url)
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
