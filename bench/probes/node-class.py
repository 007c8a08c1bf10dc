#!/usr/bin/env python3
"""Whether a page can change the class `DOM.resolveNode` names for a node, which the server
reads to tell a text node from an element (`McpPage::resolve_element`):
`python3 bench/probes/node-class.py [CHROMIUM]` prints the `className` of `DOM.resolveNode`'s
answer, asked as the server asks it (by backend node id), for a text node, an element, a text
node given an element's prototype, and an element given `Symbol.toStringTag` and `constructor`
of `Text`.
"""
import sys
from chromium_pipe import JsonBrowser

CASES = {
    'a text node': "document.getElementById('p').firstChild",
    'an element': "document.getElementById('d')",
    "a text node with HTMLDivElement's prototype":
        "(() => { const t = document.getElementById('d').firstChild;"
        " Object.setPrototypeOf(t, HTMLDivElement.prototype); return t; })()",
    "an element claiming to be Text":
        "(() => { const e = document.createElement('span'); e[Symbol.toStringTag] = 'Text';"
        " Object.defineProperty(e, 'constructor', { value: Text }); return e; })()",
}


def main():
    browser = JsonBrowser(sys.argv[1] if len(sys.argv) > 1 else '/usr/bin/chromium')
    try:
        session = browser.open('data:text/html,<p id=p>hello <b>x</b></p><div id=d>t</div>')
        for label, expression in CASES.items():
            found = browser.call('Runtime.evaluate', {'expression': expression}, session)['result']
            node = browser.call('DOM.describeNode', {'objectId': found['objectId']}, session)['node']
            resolved = browser.call('DOM.resolveNode', {'backendNodeId': node['backendNodeId']},
                                    session)['object']
            print(f"{label}: className {resolved.get('className')!r}")
    finally:
        browser.close()


if __name__ == '__main__':
    main()
