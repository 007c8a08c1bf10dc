#!/usr/bin/env python3
"""How long Accessibility.getFullAXTree takes on the browser's DevTools pipe in its JSON mode
(`--remote-debugging-pipe`) and in its CBOR mode (`--remote-debugging-pipe=cbor`, the form the
browser keeps messages in, which the server uses): `python3 bench/probes/pipe-modes.py URL
[CHROMIUM] [ROUNDS] [SAVE]`. With SAVE, the last CBOR reply is written there, for
`cargo run -p devtools-cbor --example convert -- SAVE`. Each round launches one browser per mode, alternating, loads URL, and
times five calls until the whole reply has arrived (the reply is framed, not parsed).
Chromium's CBOR: every map and array in an envelope (tag 24 over a byte string with a 4-byte
length), see crates/cbor.
"""
import json, struct, sys, time

from chromium_pipe import launch

def head(major, n):
    """A CBOR item's head: its major type and argument."""
    if n < 24:
        return bytes([major << 5 | n])
    if n < 256:
        return bytes([major << 5 | 24, n])
    if n < 65536:
        return bytes([major << 5 | 25]) + struct.pack('>H', n)
    return bytes([major << 5 | 26]) + struct.pack('>I', n)


def envelope(content):
    """Chromium's envelope: tag 24 over a byte string with a 4-byte length."""
    return b'\xd8\x18\x5a' + struct.pack('>I', len(content)) + content


def enc(value):
    """A command's value as Chromium reads it (maps in envelopes; what the probe sends only)."""
    if isinstance(value, bool):
        return b'\xf5' if value else b'\xf4'
    if isinstance(value, int) and value >= 0:
        return head(0, value)
    if isinstance(value, str):
        data = value.encode()
        return head(3, len(data)) + data
    if isinstance(value, dict):
        entries = b''.join(enc(key) + enc(item) for key, item in value.items())
        return envelope(b'\xbf' + entries + b'\xff')
    raise TypeError(value)


class Dec:
    """Reads one CBOR item of a (small) reply into Python values."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def argument(self, info):
        if info < 24:
            return info
        width = 1 << (info - 24)
        value = int.from_bytes(self.data[self.at:self.at + width], 'big')
        self.at += width
        return value

    def item(self):
        initial = self.data[self.at]
        self.at += 1
        major, info = initial >> 5, initial & 31
        if major == 7:
            if info in (20, 21, 22):
                return {20: False, 21: True, 22: None}[info]
            width = {25: 2, 26: 4, 27: 8}[info]
            raw = self.data[self.at:self.at + width]
            self.at += width
            return struct.unpack({2: '>e', 4: '>f', 8: '>d'}[width], raw)[0]
        argument = None if info == 31 else self.argument(info)
        if major == 0:
            return argument
        if major == 1:
            return -1 - argument
        if major == 6:  # an envelope (24) or binary data (22): the item inside
            return self.item()
        if major in (2, 3):
            raw = self.data[self.at:self.at + argument]
            self.at += argument
            if major == 3:
                return raw.decode()
            if raw[:1] in (b'\xbf', b'\x9f'):  # an envelope's content
                return Dec(raw).item()
            return raw.decode('utf-16-le', 'replace')
        # Indefinite-length maps and arrays, as Chromium writes them.
        items = []
        while self.data[self.at] != 0xff:
            items.append(self.item())
        self.at += 1
        return items if major == 4 else dict(zip(items[::2], items[1::2]))


class Browser:
    def __init__(self, mode, chromium):
        self.mode = mode
        flag = '--remote-debugging-pipe' + ('=cbor' if mode == 'cbor' else '')
        self.process, self.profile, self.out, self.inp = launch(chromium, flag)
        self.buf = bytearray()
        self.next_id = 0
        self.last_big = b''

    def read(self):
        """The next whole message's bytes."""
        while True:
            if self.mode == 'json':
                end = self.buf.find(b'\0')
                if end >= 0:
                    message = bytes(self.buf[:end])
                    del self.buf[:end + 1]
                    return message
            elif len(self.buf) >= 7:
                end = 7 + struct.unpack('>I', self.buf[3:7])[0]
                if len(self.buf) >= end:
                    message = bytes(self.buf[:end])
                    del self.buf[:end]
                    return message
            chunk = self.inp.read(1 << 20)
            if not chunk:
                raise SystemExit('the browser closed its pipe')
            self.buf += chunk

    def call(self, method, params=None, session=None, big=False):
        """Sends a command; its result (or, with `big`, the size of the first large message)."""
        self.next_id += 1
        message = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            message['sessionId'] = session
        self.out.write(json.dumps(message).encode() + b'\0' if self.mode == 'json' else enc(message))
        while True:
            reply = self.read()
            if big and len(reply) > 100000:
                self.last_big = reply
                return len(reply)
            decoded = json.loads(reply) if self.mode == 'json' else Dec(reply).item()
            if decoded.get('id') == self.next_id:
                if 'error' in decoded:
                    raise SystemExit(str(decoded['error']))
                return decoded['result']

    def close(self):
        self.process.kill()
        self.process.wait()
        self.profile.cleanup()


def main():
    if len(sys.argv) < 2:
        raise SystemExit('usage: pipe-modes.py URL [CHROMIUM] [ROUNDS] [SAVE]')
    url = sys.argv[1]
    chromium = sys.argv[2] if len(sys.argv) > 2 else '/usr/bin/chromium'
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    save = sys.argv[4] if len(sys.argv) > 4 else None
    times = {'json': [], 'cbor': []}
    for _ in range(rounds):
        for mode in ('json', 'cbor'):
            browser = Browser(mode, chromium)
            try:
                target = browser.call('Target.createTarget', {'url': 'about:blank'})['targetId']
                session = browser.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
                browser.call('Page.navigate', {'url': url}, session)
                time.sleep(3)
                for _ in range(5):
                    started = time.perf_counter()
                    size = browser.call('Accessibility.getFullAXTree', {}, session, big=True)
                    elapsed = (time.perf_counter() - started) * 1000
                    times[mode].append(elapsed)
                    print(f'{mode}: {elapsed:.0f} ms, {size} bytes', flush=True)
                if save and mode == 'cbor':
                    with open(save, 'wb') as file:
                        file.write(browser.last_big)
            finally:
                browser.close()
    for mode, values in times.items():
        values.sort()
        print(f'{mode}: median {values[len(values) // 2]:.0f} ms of {len(values)} ({values[0]:.0f}-{values[-1]:.0f})')


if __name__ == '__main__':
    main()
