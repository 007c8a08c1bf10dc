"""Chromium launched headless on its DevTools pipe (fds 3 and 4 of the child), for the probes
in this folder: `launch(chromium, flag)` gives the process, its temporary profile and the two
pipe ends (write commands to the first, read messages from the second)."""
import json, os, subprocess, tempfile


def launch(chromium, flag='--remote-debugging-pipe', extra=()):
    r1, w1 = os.pipe()  # the browser reads
    r2, w2 = os.pipe()  # the browser writes
    # dup2 onto the same number would keep close-on-exec: the child's ends must survive exec.
    os.set_inheritable(r1, True)
    os.set_inheritable(w2, True)
    def fds():
        os.dup2(r1, 3)
        os.dup2(w2, 4)
    profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
    process = subprocess.Popen(
        [chromium, '--headless', '--no-sandbox', flag, '--user-data-dir=' + profile.name,
         *extra, 'about:blank'],
        preexec_fn=fds, close_fds=False, stderr=subprocess.DEVNULL)
    os.close(r1)
    os.close(w2)
    return process, profile, os.fdopen(w1, 'wb', buffering=0), os.fdopen(r2, 'rb', buffering=0)


class JsonBrowser:
    """Chromium on its DevTools pipe in JSON mode (NUL-terminated messages): commands sent one
    by one or several at once (`send`, then `replies`)."""

    def __init__(self, chromium, extra=()):
        self.process, self.profile, self.out, self.inp = launch(chromium, extra=extra)
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

    def open(self, url):
        """A new page loading `url`, with the Page domain on: its flat session id."""
        target = self.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        session = self.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        self.call('Page.enable', {}, session)
        self.call('Page.navigate', {'url': url}, session)
        return session

    def close(self):
        self.process.kill()
        self.process.wait()
        self.profile.cleanup()
