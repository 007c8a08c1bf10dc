// Recomputes the expected texts and JSON of `form.json` and `sequence.json` with
// chrome-devtools-mcp's own code: the stored raw `Accessibility.getFullAXTree` nodes are
// fed to its Puppeteer's `Accessibility.snapshot` (through a stand-in CDP client), then to
// its `TextSnapshot.create` and `SnapshotFormatter`, exactly as `take_snapshot` runs them.
//
//   node crates/snapshot/src/testdata/rerun-reference.mjs /path/to/node_modules/chrome-devtools-mcp
//
// A real Chromium is launched once (headless), only to reach Puppeteer's `Accessibility`
// class, which the bundle does not export.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const reference = process.argv[2] ?? '/work/ref/node_modules/chrome-devtools-mcp';
const { puppeteer } = await import(join(reference, 'build/src/third_party/index.js'));
const { TextSnapshot } = await import(join(reference, 'build/src/TextSnapshot.js'));
const { SnapshotFormatter } = await import(join(reference, 'build/src/formatters/SnapshotFormatter.js'));

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
const Accessibility = Object.getPrototypeOf((await browser.newPage()).accessibility).constructor;
await browser.close();

/** A Puppeteer `Accessibility` whose CDP client answers from stored nodes. */
function storedAccessibility(nodes, loaderId, frames = {}) {
  const realm = {
    environment: {
      _loaderId: loaderId,
      client: { send: async () => ({ nodes: structuredClone(nodes) }) },
    },
    // Every Iframe node's frame is the stored child frame with that backend id.
    adoptBackendNode: async backendNodeId => {
      const frame = frames[backendNodeId];
      return {
        contentFrame: async () => frame && { accessibility: storedAccessibility(frame.nodes, frame.loaderId) },
        [Symbol.dispose]() {},
      };
    },
  };
  return new Accessibility(realm, '');
}

async function snapshot(accessibility, id, verbose, uids) {
  TextSnapshot.nextSnapshotId = id;
  const page = {
    pptrPage: { accessibility },
    uniqueBackendNodeIdToMcpId: uids,
    extraHandles: [],
    getDevToolsData: async () => undefined,
  };
  const taken = await TextSnapshot.create(page, { verbose, devtoolsData: {} });
  const formatter = new SnapshotFormatter(taken);
  return { text: formatter.toString(), json: formatter.toJSON() };
}

/** JSON with one raw node per line, so a new capture diffs node by node. */
function pretty(value) {
  const nodes = [];
  const text = JSON.stringify(
    value,
    (key, v) => (key === 'nodes' ? `@nodes${nodes.push(v) - 1}@` : v),
    2,
  );
  return (
    text.replace(/"@nodes(\d+)@"/g, (_, i) => `[\n${nodes[i].map(n => JSON.stringify(n)).join(',\n')}\n]`) + '\n'
  );
}

const formPath = join(here, 'form.json');
const form = JSON.parse(readFileSync(formPath, 'utf8'));
const iframe = form.nodes.find(n => n.role?.value === 'Iframe');
const frames = { [iframe.backendDOMNodeId]: form.frames[0] };
const formAccessibility = storedAccessibility(form.nodes, form.loaderId, frames);
const plain = await snapshot(formAccessibility, form.default.id, false, new Map());
form.default.text = plain.text;
form.default.json = plain.json;
form.verbose.text = (await snapshot(formAccessibility, form.verbose.id, true, new Map())).text;
writeFileSync(formPath, pretty(form));

const sequencePath = join(here, 'sequence.json');
const sequence = JSON.parse(readFileSync(sequencePath, 'utf8'));
const uids = new Map();
for (const step of sequence) {
  step.text = (await snapshot(storedAccessibility(step.nodes, step.loaderId), step.id, false, uids)).text;
}
writeFileSync(sequencePath, pretty(sequence));
console.log('updated', formPath, 'and', sequencePath);
